"""Query-time schema extension (seed 002 §3.4, App. C): a sufficiency gate, a query-scoped
extension that is discarded after the query, and a persistent one merged monotonically (only
additions, never edits or removals) with a version log in the lake."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from pydantic import BaseModel

from lakeplanner.contract.models import Contract, EntityType, Relationship
from lakeplanner.contract.semantic import SourceDiscovery, catalog_block, ground, pascal_case
from lakeplanner.contract.store import save_contract
from lakeplanner.llm.base import LLM, system, user
from lakeplanner.question.words import word_set

VERSION_LOG = "schema_versions.jsonl"
TERM = re.compile(r"[A-Za-z][A-Za-z0-9-]{3,}")


class Sufficiency(BaseModel):
    sufficient: bool
    unresolved: list[str]


class Extension(BaseModel):
    """Schema additions: new entity types (and attributes) and relationships."""

    entities: list[EntityType] = []
    relationships: list[Relationship] = []

    @property
    def empty(self) -> bool:
        return not self.entities and not self.relationships


def vocabulary(contract: Contract, known: set[str] = frozenset()) -> set[str]:
    words: set[str] = set(known)
    for source in contract.sources:
        words |= set(re.split(r"[_\W]+", source.name.lower()))
    for entry in contract.fields:
        words |= set(re.split(r"[_.\W\[\]*]+", entry.path.lower()))
        words |= {e.lower() for e in entry.examples for e in re.split(r"\W+", e) if e}
    for entity in contract.entities:
        words |= {entity.name.lower(), *(a.name.lower() for a in entity.attributes)}
    return {w.rstrip("s") for w in words if w}


def spellings(term: str) -> set[str]:
    """A term as the vocabulary holds it: singular, and joined when hyphenated (e-mail names email)."""
    lower = term.lower()
    return {lower.rstrip("s"), lower.replace("-", "").rstrip("s")}


def sufficiency(question: str, contract: Contract, known: set[str] = frozenset()) -> Sufficiency:
    """Content words of the question that nothing in the schema names are unresolved (App. C.2.1).

    Words with digits are values (slots), not concepts, and are not checked."""
    vocab = vocabulary(contract, {k.lower() for k in known})
    terms = [
        t
        for t in TERM.findall(question)
        if t.lower() not in word_set("not_concepts") and not any(c.isdigit() for c in t)
    ]
    unresolved = [t for t in dict.fromkeys(terms) if not spellings(t) & vocab]
    return Sufficiency(sufficient=not unresolved, unresolved=unresolved)


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


def extend_persistently(lake, extension: Extension, reason: str = "") -> Extension:
    """Merge into schema.yaml with a new revision and append the diff to the version log."""
    contract = lake.contract
    merged, added = merge(contract, extension)
    if added.empty:
        return added
    merged = merged.model_copy(update={"revision": contract.revision + 1, "updated_at": datetime.now(UTC)})
    save_contract(lake.path, merged)
    record = {
        "revision": merged.revision,
        "at": merged.updated_at.isoformat(),
        "reason": reason,
        "added": added.model_dump(mode="json"),
    }
    with (lake.path / VERSION_LOG).open("a") as log:
        log.write(json.dumps(record) + "\n")
    return added
