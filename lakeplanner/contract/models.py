"""The executable schema contract (seed 002): pydantic models persisted as the lake's schema.yaml."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CONTRACT_FORMAT = 1


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FieldType(StrEnum):
    string = "string"
    integer = "integer"
    number = "number"
    boolean = "boolean"
    date = "date"
    timestamp = "timestamp"
    array = "array"
    object = "object"


class SourceKind(StrEnum):
    table = "table"
    documents = "documents"


def field_id(source: str, path: str) -> str:
    """Stable hash id of a field: the same source and path always give the same id."""
    return "f_" + hashlib.sha256(f"{source}\x1f{path}".encode()).hexdigest()[:12]


ADDRESSES_MODEL = "addresses_model"  # the tag of a field whose name reads as an instruction to the model


class FieldEntry(_Model):
    """One observable field of a source: the closed world the LLM may reference (App. A.5)."""

    id: str
    source: str
    path: str = Field(description="column name or JSON path, e.g. contact.email or paragraphs[*].text")
    column: str | None = Field(None, description="Iceberg column holding it, if tabled")
    type: FieldType
    null_rate: float
    cardinality: int
    examples: list[str] = []
    tags: list[str] = Field([], description="id_like, free_text, nested_array, nested_object")
    first: str | None = Field(None, description="earliest day of a date or timestamp column (ISO)")
    last: str | None = Field(None, description="latest day of a date or timestamp column (ISO)")


class CsvDialect(_Model):
    """How a delimited file was written, as sniffed at ingest: what its cells were parsed with."""

    delimiter: str = ","
    quote: str = '"'
    decimal: Literal[".", ","] = "."
    thousands: str | None = Field(",", description="digit grouping inside numbers: ',', '.', ' ', or an apostrophe")
    date_order: Literal["dmy", "mdy"] | None = Field(
        None, description="order of day and month in slashed or dotted dates, when some value settles it"
    )


class SourceSpec(_Model):
    name: str
    kind: SourceKind
    format: str
    files: list[str]
    corpus: bool = False
    records: int = 0
    table: str | None = Field(None, description="Iceberg identifier namespace.table")
    collection: str | None = Field(None, description="Milvus collection holding its chunks")
    parent: str | None = Field(None, description="source whose nested array this source was")
    json_paths: list[str] = []
    text_fields: list[str] = Field([], description="free-text columns also indexed as documents")
    label: str | None = Field(None, description="the column that names a row in words (a name or title)")
    entries: bool = Field(
        False, description="documents that are reference entries: most open by naming their title's subject"
    )
    dialect: CsvDialect | None = Field(None, description="how its CSV files were read (the first file's)")
    years: list[int] = Field([], description="the years its documents name")


class IdentityKey(_Model):
    source: str
    columns: list[str]
    uniqueness: float
    confidence: float
    identifier: bool = Field(False, description="used as the Iceberg identifier (upsert key)")


class ForeignKey(_Model):
    source: str
    column: str
    target: str
    target_column: str
    overlap: float
    confidence: float
    cardinality: Literal["1:1", "1:N", "N:1", "N:M"]
    containment: float | None = Field(None, description="share of the column's values found in the target key")
    name_similarity: float | None = Field(None, description="how far the names relate the two (1: a name match)")
    evidence: Literal["name", "values"] = Field("name", description="what proposed it: the names, or only the values")


class CrossLink(_Model):
    """Rows of `source` whose `column` names documents of `collection` (by id, title or link), or
    documents of `collection` that cite rows of `source` by the value of its key `column` ('cited')."""

    source: str
    column: str
    collection: str
    match: Literal["document_id", "title", "link", "embedded_text", "cited"]
    match_rate: float
    confidence: float
    documents: int


class HierarchyEdge(_Model):
    child: str
    parent: str
    child_column: str
    parent_column: str
    kind: Literal["nested", "foreign_key"]


class Companion(_Model):
    source: str
    companion: str
    via: str = Field(description="shared column, or 'row position'")


class ExclusionManifest(_Model):
    """Files and fields hidden from everything downstream (App. A.10)."""

    files: list[str] = Field([], description="glob patterns on paths relative to the ingest root")
    fields: list[str] = Field(
        [], description="field names or paths; 'questions' hides questions and everything under it"
    )
    foreign_keys: list[str] = Field(
        [], description="proposed keys rejected by the user: 'loans.lender -> lenders.lender_code'"
    )


class EntityAttribute(_Model):
    name: str
    field_id: str


class EntityType(_Model):
    """An entity type found by LLM discovery, grounded in catalog field ids (seed 002 §3.2)."""

    name: str = Field(description="PascalCase")
    source: str
    description: str = ""
    key_field_id: str | None = None
    attributes: list[EntityAttribute] = []
    aliases: list[str] = []


class Relationship(_Model):
    source_entity: str
    target_entity: str
    type: str = Field(description="UPPER_SNAKE")
    field_ids: list[str] = []
    source: str


class DiscoveryRecord(_Model):
    """How one source's LLM discovery went: FieldValidity (App. A.5.1) before and after repair."""

    source: str
    model: str
    calls: int
    field_validity_before: float
    field_validity_after: float
    repaired: int
    dropped: int


class Provenance(_Model):
    """Names of the provenance columns every table carries (App. A.9 SourceRecord)."""

    file_column: str = "_lp_file"
    record_column: str = "_lp_record"
    hash_column: str = "_lp_hash"
    key_column: str = "_lp_key"
    parent_column: str = "_lp_parent"


class Contract(_Model):
    format: int = CONTRACT_FORMAT
    revision: int = 0
    updated_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    sources: list[SourceSpec] = []
    fields: list[FieldEntry] = []
    identity_keys: list[IdentityKey] = []
    foreign_keys: list[ForeignKey] = []
    links: list[CrossLink] = []
    hierarchy: list[HierarchyEdge] = []
    companions: list[Companion] = []
    entities: list[EntityType] = []
    relationships: list[Relationship] = []
    discovery: list[DiscoveryRecord] = []
    exclusions: ExclusionManifest = ExclusionManifest()
    provenance: Provenance = Provenance()

    def source(self, name: str) -> SourceSpec | None:
        return next((s for s in self.sources if s.name == name), None)

    def fields_of(self, source: str) -> list[FieldEntry]:
        """The fields of `source` that prompts and plans may name (not those whose name addresses the model)."""
        return [f for f in self.fields if f.source == source and ADDRESSES_MODEL not in f.tags]

    def identifier_of(self, source: str) -> IdentityKey | None:
        return next((k for k in self.identity_keys if k.source == source and k.identifier), None)

    def signature(self) -> str:
        """Hash of what plans depend on: tables, their columns and types, keys and links."""
        parts = sorted(f"{f.source}.{f.column or f.path}:{f.type}" for f in self.fields)
        parts += sorted(f"fk:{k.source}.{k.column}->{k.target}.{k.target_column}" for k in self.foreign_keys)
        parts += sorted(f"link:{k.source}.{k.column}->{k.collection}" for k in self.links)
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
