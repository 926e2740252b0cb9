"""Ingest a folder: read every source, discover structure, then commit source by source.

Reading and structure discovery happen before anything is written, so a bad file is only
reported; each source then commits in one Iceberg transaction and one Milvus replace.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
from pydantic import BaseModel

from lakeplanner.config import IngestConfig
from lakeplanner.contract.citations import Citation, citation_links, collection_citations, key_automaton
from lakeplanner.contract.discover import DiscoveredSource, companion_links, detect_companions, discover_sources
from lakeplanner.contract.keys import KeyedTable, foreign_keys, hierarchy, identity_keys, without_rejected
from lakeplanner.contract.labels import label_column
from lakeplanner.contract.links import DocumentIndex, cross_links, linked_rows, row_key
from lakeplanner.contract.models import (
    Contract,
    CrossLink,
    ExclusionManifest,
    FieldEntry,
    FieldType,
    IdentityKey,
    SourceKind,
    SourceSpec,
)
from lakeplanner.contract.profile import are_reference_entries, is_provenance, profile_documents, profile_table
from lakeplanner.contract.semantic import DiscoveryResult, discover_source, unify
from lakeplanner.errors import BadSourceError, LakeplannerError, is_disk_full
from lakeplanner.ingest.chunking import chunk_text
from lakeplanner.ingest.journal import IngestJournal, NewSource
from lakeplanner.ingest.readers import Document, TableData, read_document, read_table_file
from lakeplanner.ingest.segments import (
    content_hash,
    document_segments,
    replace_source_segments,
    segment,
    stored_documents,
    table_segments,
)
from lakeplanner.ingest.tables import (
    KEY_COLUMN,
    TABLE_NAMESPACE,
    with_row_hashes,
    with_surrogate_key,
    write_table,
)
from lakeplanner.ingest.vectors import ChunkRecord, VectorStore
from lakeplanner.llm.base import LLM
from lakeplanner.llm.embeddings import Embedder
from lakeplanner.question.years import years_in

ProgressHook = Callable[[str, int, int], None]
KEYABLE_TYPES = {FieldType.string, FieldType.integer, FieldType.date}
MAX_LINKED_KEYS = 50


class BadFile(BaseModel):
    path: str
    reason: str
    hint: str | None = None


class SourceResult(BaseModel):
    name: str
    kind: SourceKind
    status: str
    records: int = 0
    rows_written: int = 0
    chunks: int = 0
    table: str | None = None
    collection: str | None = None
    snapshot_id: int | None = None


class IngestReport(BaseModel):
    root: str
    sources: list[SourceResult] = []
    bad_files: list[BadFile] = []
    warnings: list[str] = []
    contract_revision: int = 0

    @property
    def ingested(self) -> int:
        return sum(1 for s in self.sources if s.status != "failed")


@dataclass
class PreparedTable:
    data: TableData
    fields: list[FieldEntry]
    keys: list[IdentityKey]
    key_columns: list[str]
    files: tuple[str, ...]
    format: str
    corpus: bool
    label: str | None = None

    @property
    def name(self) -> str:
        return self.data.name


@dataclass
class PreparedDocuments:
    name: str
    documents: list[Document]
    files: tuple[str, ...]
    corpus: bool
    linked: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    cited: dict[str, list[Citation]] = field(default_factory=dict)

    def linked_keys(self, document_id: str) -> tuple[str, list[str]]:
        """The row a link column ties the document to, then the rows it cites: (table, keys)."""
        table, keys = self.linked.get(document_id, ("", []))
        cites = self.cited.get(document_id, [])
        if not table and cites:
            table = Counter(c.table for c in cites).most_common(1)[0][0]
        return table, list(dict.fromkeys([*keys, *(c.key for c in cites)]))[:MAX_LINKED_KEYS]


def citation_segments(collection: str, cited: dict[str, list[Citation]], start: int) -> list[dict]:
    """One lineage segment per citation: the key's offsets in the document and the row it names."""
    rows = []
    for doc_id, cites in cited.items():
        for n, c in enumerate(cites):
            rows.append(
                segment(
                    f"{collection}:{doc_id}/cite/{n}",
                    "citation",
                    f"{collection}:{doc_id}",
                    collection,
                    doc_id,
                    start + len(rows),
                    c.key,
                    c.start,
                    c.end,
                    meta={"table": c.table, "column": c.column, "key": c.key},
                )
            )
    return rows


def noop_progress(description: str, done: int, total: int) -> None:
    return None


def read_table_source(
    root: Path, source: DiscoveredSource, manifest: ExclusionManifest, config: IngestConfig
) -> list[TableData]:
    """All files of a table source (one, or a corpus folder) -> its table and nested child tables."""
    parts: dict[str, list[TableData]] = {}
    for rel in source.files:
        for data in read_table_file(root, rel, source.format, source.name, manifest, config.limits):
            parts.setdefault(data.name, []).append(data)
    merged = []
    for pieces in parts.values():
        table = pa.concat_tables([p.table for p in pieces], promote_options="permissive")
        paths = {k: v for p in pieces for k, v in p.paths.items()}
        json_paths = sorted({j for p in pieces for j in p.json_paths})
        merged.append(replace(pieces[0], table=table, paths=paths, json_paths=json_paths))
    return merged


def prepare_table(data: TableData, source: DiscoveredSource, config: IngestConfig) -> PreparedTable:
    fields = profile_table(data.name, data.table, data.paths, data.json_paths, config.structure)
    keys = identity_keys(data.name, data.table, config.structure)
    identifier = next((k for k in keys if k.identifier), None)
    data_columns = [c for c in data.table.column_names if not is_provenance(c)]
    table = with_row_hashes(data.table, data_columns)
    if identifier is None:
        table = with_surrogate_key(table)
    key_columns = identifier.columns if identifier else [KEY_COLUMN]
    return PreparedTable(
        replace(data, table=table),
        fields,
        keys,
        key_columns,
        source.files,
        source.format,
        source.corpus,
        label_column(data.table, keys),
    )


def free_text_documents(prepared: PreparedTable) -> list[tuple[str, Document]]:
    """Long free-text cells become documents too, each with the key of its row, so they can be searched."""
    text_columns = [f.column for f in prepared.fields if "free_text" in f.tags and f.column]
    if not text_columns:
        return []
    table = prepared.data.table.select([*prepared.key_columns, *text_columns, "_lp_file"])
    docs = []
    for row in table.to_pylist():
        key = row_key(row, prepared.key_columns)
        for column in text_columns:
            if row[column]:
                doc_id = key if len(text_columns) == 1 else f"{key}:{column}"
                docs.append(
                    (key, Document(document_id=doc_id, title="", text=row[column], file=row["_lp_file"], format="text"))
                )
    return docs


def sample_records(prepared: PreparedTable, pool: int = 500) -> list[dict]:
    """Up to `pool` rows spread evenly over the table, data columns only, for LLM sampling."""
    table = prepared.data.table
    step = max(1, table.num_rows // pool)
    columns = [c for c in table.column_names if not is_provenance(c)]
    return table.select(columns).take(list(range(0, table.num_rows, step))[:pool]).to_pylist()


def is_keyable(entry: FieldEntry) -> bool:
    """Columns that can be a key, a foreign key or a document link: short scalars, no free text."""
    return entry.type in KEYABLE_TYPES and not {"free_text", "nested_array"} & set(entry.tags)


def text_collection(source: str) -> str:
    return f"{source}_text"


class Ingestor:
    """One ingest run into an open lake (catalog + vector store + embedder)."""

    def __init__(
        self,
        catalog,
        store: VectorStore,
        embedder: Embedder,
        contract: Contract,
        config: IngestConfig,
        progress: ProgressHook = noop_progress,
        llm: LLM | None = None,
    ) -> None:
        self.llm = llm
        self.catalog = catalog
        self.store = store
        self.embedder = embedder
        self.contract = contract
        self.config = config
        self.progress = progress

    def run(
        self,
        root: Path,
        manifest: ExclusionManifest,
        only: set[str] | None = None,
        before_commit: Callable[[IngestJournal], None] = lambda journal: None,
    ) -> tuple[IngestReport, Contract]:
        """Ingest every source under root (or only the listed files) and return the merged contract.

        `before_commit` receives the sources this run will create, before anything is written."""
        report = IngestReport(root=str(root))
        discovered = discover_sources(root, manifest, self.config.discovery)
        if only is not None:
            discovered = [s.model_copy(update={"files": tuple(f for f in s.files if f in only)}) for s in discovered]
            discovered = [s for s in discovered if s.files]
        tables, documents = self.read_all(root, discovered, manifest, report)
        keyed = [KeyedTable(t.name, t.data.table, t.keys) for t in tables]
        stored = self.stored_tables(exclude={s.name for s in discovered})
        fks = foreign_keys([*keyed, *stored], self.config.structure, only_with={t.name for t in tables})
        indexes = [
            DocumentIndex.build(d.name, [(doc.document_id, doc.title) for doc in d.documents]) for d in documents
        ]
        stored_indexes = self.stored_document_indexes(exclude={s.name for s in discovered})
        links = cross_links(keyed, [*indexes, *stored_indexes], self.config.structure)
        links += cross_links(stored, indexes, self.config.structure)
        self.attach_linked_rows(tables, documents, indexes, links)
        links += self.attach_citations([*keyed, *stored], documents, links)
        text_sources, text_links = self.free_text_sources(tables)
        discoveries = self.discover(tables, documents, report) if self.llm else []
        total = len(tables) + len(documents) + len(text_sources)
        before_commit(self.new_sources(tables, [*documents, *text_sources]))
        for done, prepared in enumerate(tables):
            self.progress(f"table {prepared.name}", done, total)
            self.commit_table(prepared, report)
        for done, docs in enumerate([*documents, *text_sources], start=len(tables)):
            self.progress(f"documents {docs.name}", done, total)
            self.commit_documents(docs, report)
        self.progress("contract", total, total)
        contract = self.merge_contract(
            discovered, tables, documents, text_sources, fks, [*links, *text_links], manifest, report, discoveries
        )
        report.contract_revision = contract.revision
        return report, contract

    # ------------------------------------------------------------ read phase

    def stored_tables(self, exclude: set[str]) -> list[KeyedTable]:
        """Key-able columns of tables from earlier runs, so new sources can key and link against them."""
        stored = []
        for spec in self.contract.sources:
            if spec.kind is not SourceKind.table or spec.name in exclude or spec.table is None:
                continue
            columns = tuple(f.column for f in self.contract.fields_of(spec.name) if f.column and is_keyable(f))
            if columns:
                arrow = self.catalog.load_table(spec.table).scan(selected_fields=columns).to_arrow()
                keys = [k for k in self.contract.identity_keys if k.source == spec.name]
                stored.append(KeyedTable(spec.name, arrow, keys))
        return stored

    def stored_document_indexes(self, exclude: set[str]) -> list[DocumentIndex]:
        """Document ids and titles of collections from earlier runs, read from their segments."""
        names = [s.name for s in self.contract.sources if s.kind is SourceKind.documents and s.name not in exclude]
        if not names:
            return []
        documents = stored_documents(self.catalog, names)
        return [DocumentIndex.build(name, documents.get(name, [])) for name in names]

    def read_all(
        self, root: Path, discovered: list[DiscoveredSource], manifest: ExclusionManifest, report: IngestReport
    ) -> tuple[list[PreparedTable], list[PreparedDocuments]]:
        tables, documents = [], []
        for done, source in enumerate(discovered):
            self.progress(f"reading {source.name}", done, len(discovered))
            if source.kind is SourceKind.table:
                try:
                    datas = read_table_source(root, source, manifest, self.config)
                    tables += [prepare_table(d, source, self.config) for d in datas]
                except BadSourceError as e:
                    report.bad_files.append(BadFile(path=e.path, reason=e.reason, hint=e.hint))
                    report.sources.append(SourceResult(name=source.name, kind=source.kind, status="failed"))
                except Exception as e:  # a reader bug must not stop the other sources
                    report.bad_files.append(
                        BadFile(
                            path=", ".join(source.files),
                            reason=f"unexpected error: {e!r}",
                            hint="please report this file's shape as a lakeplanner bug",
                        )
                    )
                    report.sources.append(SourceResult(name=source.name, kind=source.kind, status="failed"))
            else:
                docs = []
                for rel in source.files:
                    try:
                        docs.append(read_document(root, rel, self.config.limits))
                    except BadSourceError as e:
                        report.bad_files.append(BadFile(path=e.path, reason=e.reason, hint=e.hint))
                if docs:
                    documents.append(PreparedDocuments(source.name, docs, source.files, source.corpus))
                else:
                    report.sources.append(SourceResult(name=source.name, kind=source.kind, status="failed"))
        return tables, documents

    def attach_linked_rows(
        self,
        tables: list[PreparedTable],
        documents: list[PreparedDocuments],
        indexes: list[DocumentIndex],
        links: list[CrossLink],
    ) -> None:
        by_name = {t.name: t for t in tables}
        for docs, index in zip(documents, indexes, strict=True):
            for link in sorted((lk for lk in links if lk.collection == docs.name), key=lambda lk: -lk.confidence):
                table = by_name[link.source]
                for doc_id, keys in linked_rows(table.data.table, link, index, table.key_columns).items():
                    docs.linked.setdefault(doc_id, (link.source, keys[:MAX_LINKED_KEYS]))

    def attach_citations(
        self, tables: list[KeyedTable], documents: list[PreparedDocuments], links: list[CrossLink]
    ) -> list[CrossLink]:
        """Record the rows each document cites by key; one contract link per cited key column."""
        automaton = key_automaton(tables, self.config.structure)
        cited_links = []
        for docs in documents:
            naming = {(lk.source, lk.column) for lk in links}  # values naming documents, not rows
            texts = [(d.document_id, d.text) for d in docs.documents]
            docs.cited = collection_citations(texts, automaton, naming)
            cited_links += citation_links(docs.name, len(docs.documents), docs.cited)
        return cited_links

    def free_text_sources(self, tables: list[PreparedTable]) -> tuple[list[PreparedDocuments], list[CrossLink]]:
        sources, links = [], []
        for table in tables:
            keyed = free_text_documents(table)
            if not keyed:
                continue
            name = text_collection(table.name)
            docs = [doc for _, doc in keyed]
            linked = {doc.document_id: (table.name, [key]) for key, doc in keyed}
            sources.append(PreparedDocuments(name, docs, table.files, False, linked))
            links.append(
                CrossLink(
                    source=table.name,
                    column=table.key_columns[0],
                    collection=name,
                    match="embedded_text",
                    match_rate=1.0,
                    confidence=0.95,
                    documents=len({d.document_id for d in docs}),
                )
            )
        return sources, links

    def discover(
        self, tables: list[PreparedTable], documents: list[PreparedDocuments], report: IngestReport
    ) -> list[DiscoveryResult]:
        """LLM discovery per source; an LLM failure is a warning, never a failed ingest."""
        results = []
        jobs = [(t.name, t.fields, sample_records(t)) for t in tables]
        jobs += [
            (
                d.name,
                profile_documents(d.name, [x.title for x in d.documents], [x.document_id for x in d.documents]),
                [{"document_id": x.document_id, "title": x.title, "text": x.text} for x in d.documents],
            )
            for d in documents
        ]
        for done, (name, fields, records) in enumerate(jobs):
            self.progress(f"LLM discovery {name}", done, len(jobs))
            try:
                results.append(discover_source(self.llm, name, fields, records))
            except LakeplannerError as e:
                report.warnings.append(f"LLM discovery skipped for {name}: {e.message}")
            except Exception as e:  # a discovery bug must not fail an ingest that is otherwise fine
                report.warnings.append(f"LLM discovery skipped for {name}: unexpected error {e!r}")
        return results

    # ------------------------------------------------------------ commit phase

    def new_sources(self, tables: list[PreparedTable], documents: list[PreparedDocuments]) -> IngestJournal:
        recorded = {s.name for s in self.contract.sources}
        sources = [NewSource(name=t.name, table=f"{TABLE_NAMESPACE}.{t.name}") for t in tables]
        sources += [NewSource(name=d.name, collection=d.name) for d in documents]
        return IngestJournal(sources=[s for s in sources if s.name not in recorded])

    def commit_table(self, prepared: PreparedTable, report: IngestReport) -> None:
        table = prepared.data.table
        stored = table.drop_columns(["_lp_row"])
        result = SourceResult(
            name=prepared.name,
            kind=SourceKind.table,
            status="failed",
            records=table.num_rows,
            table=f"{TABLE_NAMESPACE}.{prepared.name}",
        )
        try:
            write = write_table(self.catalog, prepared.name, stored, prepared.key_columns)
            data_columns = [c for c in table.column_names if not is_provenance(c)]
            replace_source_segments(
                self.catalog,
                prepared.name,
                table_segments(prepared.name, table, data_columns, prepared.key_columns, write.identifier),
            )
        except LakeplannerError as e:
            if is_disk_full(e):  # the lake's fault, not the source's: stop before the next source hits it too
                raise
            report.bad_files.append(BadFile(path=", ".join(prepared.files), reason=e.message, hint=e.hint))
            report.sources.append(result)
            return
        result.status = "created" if write.created else ("updated" if write.rows_written else "unchanged")
        result.rows_written, result.snapshot_id = write.rows_written, write.snapshot_id
        report.sources.append(result)

    def chunk_records(self, docs: PreparedDocuments) -> list[ChunkRecord]:
        records = []
        for doc in docs.documents:
            table, keys = docs.linked_keys(doc.document_id)
            for position, span in enumerate(chunk_text(doc.text, self.config.chunking)):
                text = doc.text[span.start : span.end]
                records.append(
                    ChunkRecord(
                        chunk_id=f"{docs.name}:{doc.document_id}:{position}"[:128],
                        document_id=doc.document_id,
                        source=docs.name,
                        source_file=doc.file,
                        position=position,
                        start=span.start,
                        end=span.end,
                        title=doc.title,
                        heading=span.heading,
                        text=text,
                        content_hash=content_hash(text),
                        linked_table=table,
                        linked_keys=keys,
                    )
                )
        return records

    def commit_documents(self, docs: PreparedDocuments, report: IngestReport) -> None:
        result = SourceResult(
            name=docs.name,
            kind=SourceKind.documents,
            status="failed",
            records=len(docs.documents),
            collection=docs.name,
        )
        try:
            chunks = self.chunk_records(docs)
            vectors = self.embed([c.text for c in chunks], docs.name)
            rows = [s for doc in docs.documents for s in document_segments(docs.name, doc)]
            for doc_id, (table, keys) in docs.linked.items():
                rows.append(
                    segment(
                        f"{docs.name}:{doc_id}/link",
                        "row",
                        f"{docs.name}:{doc_id}",
                        docs.name,
                        doc_id,
                        len(rows),
                        "",
                        meta={"table": table, "keys": keys},
                    )
                )
            rows += citation_segments(docs.name, docs.cited, start=len(rows))
            existing = self.store.document_ids(docs.name) if docs.name in self.store.collections() else set()
            self.store.replace_documents(docs.name, chunks, vectors)
            replace_source_segments(self.catalog, docs.name, pa.Table.from_pylist(rows))
        except LakeplannerError as e:
            if is_disk_full(e):
                raise
            report.bad_files.append(BadFile(path=", ".join(docs.files[:3]), reason=e.message, hint=e.hint))
            report.sources.append(result)
            return
        new_ids = {d.document_id for d in docs.documents}
        result.status = "updated" if existing & new_ids else "created"
        result.chunks = len(chunks)
        report.sources.append(result)

    def embed(self, texts: list[str], name: str):
        batch = max(self.config.embed_batch_size * 8, 256)
        parts = []
        for start in range(0, len(texts), batch):
            self.progress(f"embedding {name}", start, len(texts))
            parts.append(self.embedder.embed_passages(texts[start : start + batch]))
        return np.concatenate(parts) if parts else np.zeros((0, self.embedder.dim), np.float32)

    # ------------------------------------------------------------ contract

    def merge_contract(
        self,
        discovered: list[DiscoveredSource],
        tables: list[PreparedTable],
        documents: list[PreparedDocuments],
        text_sources: list[PreparedDocuments],
        fks,
        links,
        manifest: ExclusionManifest,
        report: IngestReport,
        discoveries: list[DiscoveryResult],
    ) -> Contract:
        ok = {s.name for s in report.sources if s.status != "failed"}
        rediscovered = {d.record.source for d in discoveries}
        specs, fields, keys = [], [], []
        for t in tables:
            if t.name not in ok:
                continue
            text_fields = [f.column for f in t.fields if "free_text" in f.tags and f.column]
            specs.append(
                SourceSpec(
                    name=t.name,
                    kind=SourceKind.table,
                    format=t.format,
                    files=list(t.files),
                    corpus=t.corpus,
                    records=t.data.table.num_rows,
                    table=f"{TABLE_NAMESPACE}.{t.name}",
                    parent=t.data.parent,
                    json_paths=t.data.json_paths,
                    text_fields=text_fields,
                    label=t.label,
                    dialect=t.data.dialect,
                )
            )
            fields += t.fields
            keys += t.keys
        for d in [*documents, *text_sources]:
            if d.name not in ok:
                continue
            specs.append(
                SourceSpec(
                    name=d.name,
                    kind=SourceKind.documents,
                    format="documents",
                    files=sorted({doc.file for doc in d.documents}),
                    corpus=d.corpus,
                    records=len(d.documents),
                    collection=d.name,
                    entries=are_reference_entries([(doc.title, doc.text) for doc in d.documents]),
                    years=sorted({y for doc in d.documents for y in years_in(doc.text)}),
                )
            )
            fields += profile_documents(
                d.name, [doc.title for doc in d.documents], [doc.document_id for doc in d.documents]
            )
        touched = {s.name for s in specs}
        old = self.contract

        def keep(items, *attrs):
            return [i for i in items if not any(getattr(i, a) in touched for a in attrs)]

        nested = [(t.name, t.data.parent) for t in tables if t.data.parent and t.name in ok]
        known = ok | {s.name for s in old.sources}
        rejected = sorted({*old.exclusions.foreign_keys, *manifest.foreign_keys})
        new_fks = without_rejected([fk for fk in fks if fk.source in known and fk.target in known], rejected)
        columns = {t.name: t.data.table.column_names for t in tables}
        companions = companion_links(detect_companions(discovered), columns)
        merged = Contract(
            revision=old.revision + 1,
            sources=keep(old.sources, "name") + specs,
            fields=keep(old.fields, "source") + fields,
            identity_keys=keep(old.identity_keys, "source") + keys,
            foreign_keys=keep(old.foreign_keys, "source", "target") + new_fks,
            links=keep(old.links, "source", "collection")
            + [lk for lk in links if lk.source in known and lk.collection in known],
            hierarchy=keep(old.hierarchy, "child", "parent") + hierarchy(nested, new_fks),
            companions=keep(old.companions, "source", "companion")
            + [c for c in companions if c.source in ok and c.companion in ok],
            entities=unify(
                [e for e in old.entities if e.source not in rediscovered] + [e for d in discoveries for e in d.entities]
            ),
            relationships=[r for r in old.relationships if r.source not in rediscovered]
            + [r for d in discoveries for r in d.relationships],
            discovery=[r for r in old.discovery if r.source not in rediscovered] + [d.record for d in discoveries],
            exclusions=ExclusionManifest(
                files=sorted({*old.exclusions.files, *manifest.files}),
                fields=sorted({*old.exclusions.fields, *manifest.fields}),
                foreign_keys=rejected,
            ),
        )
        return merged
