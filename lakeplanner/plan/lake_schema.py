"""The lake as plans may reference it: tables and their column types, collections, joins, document
links and citations, row keys, labels and the sources a role may not read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from lakeplanner.contract.models import Contract, FieldType, SourceKind
from lakeplanner.ingest.tables import KEY_COLUMN
from lakeplanner.plan.filters import COLLECTION_FIELDS

NAMED_FILES = 200  # file names that describe a collection; a corpus of thousands adds nothing
VECTOR_ANSWER = "answer"  # a vector node's result also carries the value it read in the evidence
SEARCH_COLUMNS = frozenset({"document_id", "title", "linked_table", "linked_keys", "linked_key"})


@dataclass(frozen=True)
class LakeSchema:
    """What plans may reference, derived from the contract: tables -> column types, collections."""

    tables: dict[str, dict[str, FieldType]]
    collections: set[str]
    linked: set[str] = field(default_factory=set)
    joins: dict[str, set[str]] = field(default_factory=dict)  # table -> tables one foreign key away
    document_links: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (table, collection) -> link columns
    identifiers: dict[str, tuple[str, ...]] = field(default_factory=dict)  # table -> its key columns, in order
    collection_names: dict[str, set[str]] = field(default_factory=dict)  # collection -> its name and file stems
    citations: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (table, collection) -> keys cited
    labels: dict[str, str] = field(default_factory=dict)  # table -> the column that names its rows
    denied: frozenset[str] = frozenset()  # sources of the lake the asking role may not read
    references: dict[tuple[str, str], str] = field(default_factory=dict)  # (table, foreign key column) -> its target

    @classmethod
    def from_contract(cls, contract: Contract, denied: frozenset[str] = frozenset()) -> LakeSchema:
        tables: dict[str, dict[str, FieldType]] = {}
        for source in contract.sources:
            if source.kind is SourceKind.table:
                tables[source.name] = {f.column: f.type for f in contract.fields_of(source.name) if f.column}
        collections = {s.name for s in contract.sources if s.kind is SourceKind.documents}
        linked = {fk.source for fk in contract.foreign_keys} | {fk.target for fk in contract.foreign_keys}
        linked |= {lk.source for lk in contract.links} | {lk.collection for lk in contract.links}
        joins: dict[str, set[str]] = {}
        for fk in contract.foreign_keys:
            joins.setdefault(fk.source, set()).add(fk.target)
            joins.setdefault(fk.target, set()).add(fk.source)
        identifiers = {k.source: tuple(k.columns) for k in contract.identity_keys if k.identifier}
        document_links: dict[tuple[str, str], set[str]] = {}
        citations: dict[tuple[str, str], set[str]] = {}
        for lk in contract.links:
            held = citations if lk.match == "cited" else document_links
            held.setdefault((lk.source, lk.collection), set()).add(lk.column)
        collection_names = {
            s.name: {s.name, *(PurePosixPath(f).stem for f in s.files[:NAMED_FILES])}
            for s in contract.sources
            if s.kind is SourceKind.documents
        }
        labels = {s.name: s.label for s in contract.sources if s.kind is SourceKind.table and s.label}
        references = {(fk.source, fk.column): fk.target for fk in contract.foreign_keys}
        return cls(
            tables,
            collections,
            linked,
            joins,
            document_links,
            identifiers,
            collection_names,
            citations,
            labels,
            denied,
            references,
        )

    def columns(self, source: str) -> dict[str, FieldType]:
        if source in self.tables:
            return self.tables[source]
        if source in self.collections:
            return dict.fromkeys(COLLECTION_FIELDS, FieldType.string)
        return {}

    def link_columns(self, table: str, collection: str) -> set[str]:
        """Columns of `table` or its join partners whose values name documents of `collection`."""
        tables = {table, *self.joins.get(table, ())}
        return {c for t in tables for c in self.document_links.get((t, collection), ())}

    def columns_naming_documents(self, table: str, collection: str) -> set[str]:
        """The link columns, and the keys of linked rows (chunks carry them as linked_keys)."""
        tables = {table, *self.joins.get(table, ())}
        linked = self.document_links.keys() | self.citations.keys()
        keys = {c for t in tables if (t, collection) in linked for c in self.identifiers.get(t, ())}
        return self.link_columns(table, collection) | keys

    def collection_for(self, table: str) -> str | None:
        """The collection linked to `table`, else to its join partners, else the only collection."""
        linked = self.linked_collection(table)
        if linked is None and len(self.collections) == 1:
            return next(iter(self.collections))
        return linked

    def linked_collection(self, table: str) -> str | None:
        """The collection whose documents a column of `table` names, else of one of its join
        partners; else, in the same order, one whose documents cite their rows by key."""
        for links in (self.document_links, self.citations):
            for tables in ({table}, set(self.joins.get(table, ()))):
                linked = sorted({c for (t, c) in links if t in tables})
                if linked:
                    return linked[0]
        return None

    def sql_tables(self, table: str) -> list[str]:
        """A sql node's table, then the tables it may join to along foreign keys."""
        return [table, *sorted(self.joins.get(table, set()) - {table})]

    def row_key(self, table: str) -> list[str]:
        """The columns that identify a row of `table`: its Iceberg identifier, else the surrogate key."""
        if table in self.identifiers:
            return list(self.identifiers[table])
        return [KEY_COLUMN] if KEY_COLUMN in self.tables.get(table, {}) else []

    def reachable_columns(self, table: str) -> dict[str, FieldType]:
        """Columns a sql node on `table` can return: its own and those of tables it joins to."""
        out: dict[str, FieldType] = {}
        for name in sorted(self.joins.get(table, ())):
            out.update(self.tables.get(name, {}))
        return {**out, **self.tables.get(table, {})}
