"""The lake's storage handle: create / open, ingest, info, SQL over the lake's tables. It sits below
the stages that read it (plan, execute); asking is `lakeplanner.lake.Lake`, above them."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Self

import pyarrow as pa
from pydantic import BaseModel
from sqlglot import exp

from lakeplanner.config import IngestConfig
from lakeplanner.contract.models import (
    Contract,
    CrossLink,
    ExclusionManifest,
    ForeignKey,
    HierarchyEdge,
    IdentityKey,
)
from lakeplanner.contract.store import contract_problems, load_contract, load_manifest, save_contract
from lakeplanner.errors import (
    DiskFullError,
    IngestRunningError,
    LakeExistsError,
    LakeNotFoundError,
    LakeplannerError,
    is_disk_full,
)
from lakeplanner.ingest.journal import clear_journal, ingest_lock, read_journal, write_journal
from lakeplanner.ingest.pipeline import Ingestor, IngestReport, ProgressHook, noop_progress
from lakeplanner.ingest.segments import delete_source_segments
from lakeplanner.ingest.settings import LakeSettings
from lakeplanner.ingest.tables import TABLE_NAMESPACE, drop_table, open_catalog, snapshot_of, table_identifier
from lakeplanner.ingest.vectors import VectorStore
from lakeplanner.llm.base import LLM, get_llm
from lakeplanner.llm.embeddings import default_embedder
from lakeplanner.policy.readonly import locked_duckdb, parse_select, read_only_select

if TYPE_CHECKING:
    from lakeplanner.policy import Access

MARKER = "lake.json"
DEFAULT_MANIFEST = "exclude.yaml"


class TableInfo(BaseModel):
    name: str
    identifier: str
    rows: int
    snapshot_id: int | None
    snapshots: int


class CollectionInfo(BaseModel):
    name: str
    chunks: int


class LakeInfo(BaseModel):
    path: str
    contract_revision: int
    signature: str
    tables: list[TableInfo]
    collections: list[CollectionInfo]
    identity_keys: list[IdentityKey]
    foreign_keys: list[ForeignKey]
    links: list[CrossLink]
    hierarchy: list[HierarchyEdge]


SAMPLE_LAKES = {"sales": "sample_lake", "logistics": "sample_lake_logistics"}


def sample_lake_path(name: str = "sales") -> Path:
    """A small lake shipped with the package, by name: 'sales' or 'logistics', each a few tables and
    folders of documents; the README.md in its folder tells what it holds."""
    if name not in SAMPLE_LAKES:
        raise ValueError(f"no sample lake '{name}'; choose one of {', '.join(SAMPLE_LAKES)}")
    return Path(str(resources.files("lakeplanner") / SAMPLE_LAKES[name]))


class LakeStorage:
    """A lake directory: schema.yaml, an Iceberg catalog + its table files, and a Milvus Lite file. The storage
    handle every stage reads through; `lakeplanner.lake.Lake` adds asking on top."""

    def __init__(self, path: Path, config: IngestConfig | None = None) -> None:
        self.path = path
        self.config = config or IngestConfig()
        self.scoped_contract: Contract | None = None

    @classmethod
    def create(cls, path: str | Path, *, config: IngestConfig | None = None, exist_ok: bool = False) -> Self:
        path = Path(path)
        if (path / MARKER).exists():
            if not exist_ok:
                raise LakeExistsError(
                    f"a lake already exists at {path}", hint="use Lake.open(path), or pick another directory"
                )
            return cls.open(path, config=config)
        path.mkdir(parents=True, exist_ok=True)
        (path / MARKER).write_text(json.dumps({"format": 1}))
        return cls(path, config)

    @classmethod
    def open(cls, path: str | Path, *, config: IngestConfig | None = None) -> Self:
        path = Path(path)
        if not (path / MARKER).exists():
            raise LakeNotFoundError(
                f"no lake at {path}", hint=f"create one with `lakeplanner ingest SRC --lake {path}`"
            )
        lake = cls(path, config)
        lake.settle_interrupted_ingest()
        return lake

    @cached_property
    def storage(self) -> LakeSettings:
        return LakeSettings()

    @cached_property
    def catalog(self):
        return open_catalog(self.path, self.storage.catalog_uri, self.storage.warehouse)

    @cached_property
    def vectors(self) -> VectorStore:
        return VectorStore(self.storage.milvus_target(self.path), token=self.storage.milvus_token)

    @property
    def contract(self) -> Contract:
        """schema.yaml, or the query-scoped extension of it while one is active."""
        return self.scoped_contract or load_contract(self.path)

    def ingest(
        self,
        source: str | Path,
        *,
        exclusions: ExclusionManifest | Path | None = None,
        progress: ProgressHook = noop_progress,
        discover: bool = False,
        llm: LLM | None = None,
    ) -> IngestReport:
        """Ingest a folder (or one file); bad files are reported, valid ones committed."""
        root = Path(source)
        if not root.exists():
            raise LakeNotFoundError(
                f"source {root} does not exist", hint="pass a folder of CSV/JSON/Parquet/text files"
            )
        only = None
        if root.is_file():
            root, only = root.parent, {root.name}
        manifest = self.manifest_for(root, exclusions)
        llm_problem = None
        if discover and llm is None:
            try:
                llm = get_llm()
            except LakeplannerError as e:  # structural ingestion still runs without its LLM
                llm_problem = f"LLM discovery skipped: {e.message}" + (f" ({e.hint})" if e.hint else "")
        with ingest_lock(self.path), self.stop_on_full_disk():
            self.settle()
            ingestor = Ingestor(
                self.catalog, self.vectors, default_embedder(), self.contract, self.config, progress, llm=llm
            )
            report, contract = ingestor.run(
                root, manifest, only=only, before_commit=lambda journal: write_journal(self.path, journal)
            )
            save_contract(self.path, contract)
            self.settle()
        if llm_problem:
            report.warnings.insert(0, llm_problem)
        return report

    @contextmanager
    def stop_on_full_disk(self) -> Iterator[None]:
        try:
            yield
        except Exception as e:
            if not is_disk_full(e):
                raise
            raise DiskFullError(
                f"the disk holding {self.path} is full (or a file-size limit was hit) during the ingest: "
                f"{getattr(e, 'message', e)}",
                hint="free space there (or raise the limit), then run the ingest again; sources committed "
                "before the disk filled are kept, the rest was not written",
            ) from e

    def settle_interrupted_ingest(self) -> None:
        """If an ingest died before saving its contract, drop what it created beyond the contract."""
        if read_journal(self.path) is None:
            return
        try:
            with ingest_lock(self.path):
                self.settle()
        except IngestRunningError:  # the journal belongs to an ingest that is still running
            return

    def settle(self) -> None:
        """Under the ingest lock: remove the journalled new sources the contract does not record, then the journal."""
        journal = read_journal(self.path)
        if journal is None:
            return
        recorded = {s.name for s in load_contract(self.path).sources}
        for source in journal.sources:
            if source.name in recorded:
                continue
            if source.table:
                drop_table(self.catalog, source.table)
            if source.collection:
                self.vectors.drop(source.collection)
            delete_source_segments(self.catalog, source.name)
        clear_journal(self.path)

    def manifest_for(self, root: Path, exclusions: ExclusionManifest | Path | None) -> ExclusionManifest:
        if isinstance(exclusions, ExclusionManifest):
            manifest = exclusions
        elif exclusions is not None:
            manifest = load_manifest(Path(exclusions))
        elif root.is_dir() and (root / DEFAULT_MANIFEST).exists():
            manifest = load_manifest(root / DEFAULT_MANIFEST)
        else:
            manifest = ExclusionManifest()
        saved = self.contract.exclusions
        return ExclusionManifest(
            files=sorted({*saved.files, *manifest.files}),
            fields=sorted({*saved.fields, *manifest.fields}),
            foreign_keys=sorted({*saved.foreign_keys, *manifest.foreign_keys}),
        )

    def table(self, name: str):
        return self.catalog.load_table(table_identifier(name))

    def table_names(self, namespace: str = TABLE_NAMESPACE) -> list[str]:
        return sorted(name for _, name in self.catalog.list_tables(namespace))

    def sql(self, query: str) -> pa.Table:
        """Run one read-only DuckDB SELECT over the tables it names (read through pyiceberg scans)."""
        statement = read_only_select(parse_select(query), self.table_names())
        con = locked_duckdb()
        for name in {t.name for t in statement.find_all(exp.Table)}:
            con.register(name, self.table(name).scan().to_arrow())
        try:
            return con.sql(statement.sql(dialect="duckdb")).to_arrow_table()
        finally:
            con.close()

    def info(self) -> LakeInfo:
        contract = self.contract
        tables = []
        for name in self.table_names():
            table = self.table(name)
            snapshot = table.current_snapshot()
            rows = int(snapshot.summary["total-records"]) if snapshot and snapshot.summary else 0
            tables.append(
                TableInfo(
                    name=name,
                    identifier=f"{TABLE_NAMESPACE}.{name}",
                    rows=rows,
                    snapshot_id=snapshot_of(table),
                    snapshots=len(table.snapshots()),
                )
            )
        collections = [CollectionInfo(name=c, chunks=self.vectors.count(c)) for c in self.vectors.collections()]
        return LakeInfo(
            path=str(self.path),
            contract_revision=contract.revision,
            signature=contract.signature(),
            tables=tables,
            collections=collections,
            identity_keys=contract.identity_keys,
            foreign_keys=contract.foreign_keys,
            links=contract.links,
            hierarchy=contract.hierarchy,
        )

    def validate(self) -> list[str]:
        """Problems that make schema.yaml disagree with the lake; empty when it is executable."""
        tables = {f"{TABLE_NAMESPACE}.{n}": [f.name for f in self.table(n).schema().fields] for n in self.table_names()}
        return contract_problems(self.contract, tables, set(self.vectors.collections()))

    def seen_by(self, access: Access) -> Self:
        """The lake as `access` sees it: its contract without what the role may not read."""
        if not access.restricted:
            return self
        from lakeplanner.policy import scoped_contract

        view = copy.copy(self)
        view.scoped_contract = scoped_contract(self.contract, access)
        return view

    def opener(self) -> Callable[[], Self]:
        """A picklable way to open this lake again (in a Ray actor or worker), of this handle's class."""
        return functools.partial(type(self).open, str(self.path.resolve()))

    def release_vectors(self) -> None:
        """Disconnect from Milvus (Milvus Lite admits one process per file); reconnects on next use."""
        if "vectors" in self.__dict__:
            self.vectors.close()
            del self.__dict__["vectors"]

    def close(self) -> None:
        self.release_vectors()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
