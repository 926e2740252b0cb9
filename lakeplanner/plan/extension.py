"""Query-time schema extension (seed 002 §3.4, App. C): a sufficiency gate, a query-scoped
extension that is discarded after the query, and a persistent one merged monotonically (only
additions, never edits or removals) with a version log in the lake.

A user adds a term with `Term`: `extension_of(contract, terms)` is the extension that names them
(for `query_scoped`), `add_term(lake, term, by=...)` merges one for good, `version_log(lake.path)`
reads what was added, when, by whom and why."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from lakeplanner.contract.models import Contract, EntityAttribute, EntityType, FieldEntry, Relationship
from lakeplanner.contract.semantic import SourceDiscovery, catalog_block, ground, pascal_case
from lakeplanner.contract.store import load_contract, save_contract
from lakeplanner.errors import ContractError, IngestRunningError
from lakeplanner.ingest.journal import ingest_lock
from lakeplanner.llm.base import LLM, system, user
from lakeplanner.policy import OPEN, Access
from lakeplanner.question.coverage import is_one_term

VERSION_LOG = "schema_versions.jsonl"
QUERY = "query"  # the source of an entity type that no source of the lake holds


class Extension(BaseModel):
    """Schema additions: new entity types (and attributes) and relationships."""

    entities: list[EntityType] = []
    relationships: list[Relationship] = []

    @property
    def empty(self) -> bool:
        return not self.entities and not self.relationships

    @property
    def sources(self) -> set[str]:
        return {e.source for e in self.entities} | {r.source for r in self.relationships}


class Term(BaseModel):
    """A term a user adds to the contract: a new entity type, or (`entity`) an attribute of one.
    `source` and `field` name what it maps to; a field alone is enough when one source has it."""

    name: str = Field(description="one word, as the sufficiency gate lists it (letters, digits, hyphens)")
    description: str = Field(min_length=1, description="what the term means")
    source: str | None = Field(None, description="the table or collection the term belongs to")
    field: str | None = Field(None, description="the column or path the term (or attribute) reads")
    entity: str | None = Field(None, description="an existing entity type the term is an attribute of")


class SchemaVersion(BaseModel):
    """One line of the version log: the revision an extension for good made, who made it, when and
    why, and what it added."""

    revision: int
    at: datetime
    by: str = ""
    reason: str = ""
    added: Extension


def propose(llm: LLM, question: str, contract: Contract, unresolved: list[str]) -> Extension:
    """One LLM call: entity types for the unresolved concepts, grounded in the closed field catalog."""
    fields = [f for f in contract.fields if f.column]
    messages = [
        system(
            "You extend a data lake schema. Propose entity types (PascalCase) for the concepts the "
            "question needs that the schema does not name, with attributes that reference field ids "
            "from this list only.\n\n",
            catalog_block(fields),
        ),
        user(f"Question: {question}\nConcepts not in the schema: {', '.join(unresolved)}\nReturn JSON."),
    ]
    proposal = llm.complete(messages, SourceDiscovery, max_tokens=400).value
    entities, relationships, _ = ground("query", proposal, fields)
    return Extension(entities=entities, relationships=relationships)


def merge(contract: Contract, extension: Extension) -> tuple[Contract, Extension]:
    """Monotonic merge: new entity types and attributes are added; nothing existing changes."""
    known = {e.name.lower(): e for e in contract.entities}
    entities = list(contract.entities)
    added_entities = []
    for entity in extension.entities:
        name = pascal_case(entity.name)
        current = known.get(name.lower())
        if current is None:
            entities.append(entity)
            added_entities.append(entity)
            continue
        have = {a.field_id for a in current.attributes}
        new = [a for a in entity.attributes if a.field_id not in have]
        if new:
            grown = current.model_copy(update={"attributes": [*current.attributes, *new]})
            entities[entities.index(current)] = grown
            added_entities.append(entity.model_copy(update={"attributes": new}))
    existing = {(r.source_entity, r.target_entity, r.type) for r in contract.relationships}
    added_relationships = [
        r for r in extension.relationships if (r.source_entity, r.target_entity, r.type) not in existing
    ]
    merged = contract.model_copy(
        update={"entities": entities, "relationships": [*contract.relationships, *added_relationships]}
    )
    return merged, Extension(entities=added_entities, relationships=added_relationships)


@contextmanager
def query_scoped(lake, extension: Extension) -> Iterator[Contract]:
    """The lake sees the extended contract inside the block only; schema.yaml is never touched."""
    extended, _ = merge(lake.contract, extension)
    lake.scoped_contract = extended
    try:
        yield extended
    finally:
        lake.scoped_contract = None


@contextmanager
def schema_lock(lake_path: Path) -> Iterator[None]:
    """The ingest lock: an ingest rewrites schema.yaml, so an extension for good waits for none."""
    try:
        with ingest_lock(lake_path):
            yield
    except IngestRunningError as e:
        raise IngestRunningError(
            f"an ingest into {lake_path} is running", hint="extend the schema when it has finished"
        ) from e


def extend_persistently(lake, extension: Extension, reason: str = "", by: str = "") -> SchemaVersion | None:
    """Merge into schema.yaml with a new revision and append the version to the log; None when the
    contract already holds everything the extension adds."""
    with schema_lock(lake.path):
        contract = load_contract(lake.path)
        merged, added = merge(contract, extension)
        if added.empty:
            return None
        merged = merged.model_copy(update={"revision": contract.revision + 1, "updated_at": datetime.now(UTC)})
        save_contract(lake.path, merged)
        version = SchemaVersion(revision=merged.revision, at=merged.updated_at, by=by, reason=reason, added=added)
        with (lake.path / VERSION_LOG).open("a") as log:
            log.write(version.model_dump_json() + "\n")
    return version


def version_log(lake_path: Path) -> list[SchemaVersion]:
    """The lake's schema versions, oldest first (none before the first extension for good)."""
    path = Path(lake_path) / VERSION_LOG
    if not path.exists():
        return []
    versions = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            versions.append(SchemaVersion.model_validate_json(line))
        except ValidationError as e:
            raise ContractError(
                f"line {number} of {path} is not a schema version: {e}",
                hint="restore the file from a backup; schema.yaml itself holds the merged contract",
            ) from e
    return versions


def add_term(lake, term: Term, *, by: str = "", access: Access = OPEN) -> SchemaVersion | None:
    """Add `term` to the contract for good, as `by`, naming only what `access` may read; the
    description is the version's reason. None when the contract already holds it."""
    extension = extension_of(lake.seen_by(access).contract, [term])
    return extend_persistently(lake, extension, reason=term.description, by=by)


def extension_of(contract: Contract, terms: Sequence[Term]) -> Extension:
    """The extension that adds `terms` to `contract` (for `query_scoped` or `extend_persistently`).
    Raises ContractError naming the fix when a term is not one word or names what is not there."""
    return Extension(entities=[entity_of(contract, term) for term in terms])


def entity_of(contract: Contract, term: Term) -> EntityType:
    if not is_one_term(term.name):
        raise ContractError(
            f"the term {term.name!r} is not one word",
            hint="a term is one word, as `lakeplanner schema gaps` lists them (letters, digits, hyphens); "
            "add each word of a phrase on its own",
        )
    if term.source is not None and contract.source(term.source) is None:
        raise ContractError(
            f"the contract has no source {term.source!r}",
            hint=f"name one of: {', '.join(s.name for s in contract.sources) or '(none: ingest first)'}",
        )
    field = mapped_field(contract, term)
    source = field.source if field else term.source or QUERY
    if term.entity is None:
        attributes = [EntityAttribute(name=field.column or field.path, field_id=field.id)] if field else []
        name = pascal_case(term.name)
        aliases = [term.name] if term.name.lower() != name.lower() else []
        return EntityType(
            name=name, source=source, description=term.description, attributes=attributes, aliases=aliases
        )
    if field is None:
        raise ContractError(
            f"the attribute {term.name!r} of {term.entity} names no field",
            hint="name the column it reads: --field COLUMN (and --source TABLE when several tables have it)",
        )
    owner = existing_entity(contract, term.entity)
    return EntityType(name=owner.name, source=source, attributes=[EntityAttribute(name=term.name, field_id=field.id)])


def mapped_field(contract: Contract, term: Term) -> FieldEntry | None:
    """The field `term.field` names (a column or path), in `term.source` when given."""
    if term.field is None:
        return None
    found = [
        f
        for f in contract.fields
        if term.field in (f.column, f.path) and (term.source is None or f.source == term.source)
    ]
    if len(found) == 1:
        return found[0]
    if found:
        raise ContractError(
            f"several sources have a field {term.field!r}: {', '.join(f.source for f in found)}",
            hint="name the one meant: --source SOURCE",
        )
    known = [f.column or f.path for f in contract.fields if term.source is None or f.source == term.source]
    raise ContractError(
        f"{term.source} has no field {term.field!r}" if term.source else f"no source has a field {term.field!r}",
        hint=f"name one of: {', '.join(known[:30]) or '(none)'} (`lakeplanner schema show` lists every field)",
    )


def existing_entity(contract: Contract, name: str) -> EntityType:
    wanted = pascal_case(name).lower()
    found = next((e for e in contract.entities if e.name.lower() == wanted), None)
    if found is None:
        known = ", ".join(e.name for e in contract.entities) or "(none yet)"
        raise ContractError(
            f"the contract has no entity type {name!r}",
            hint=f"add it first as a term of its own, or name one of: {known}",
        )
    return found
