"""Semantic schema discovery (seed 002 §3.2, App. A.4-A.6): two LLM passes per source, closed world.

Pass 1 reads a token-budgeted representative sample with the field catalog and proposes entity
types, attributes (catalog field ids) and relationships; pass 2 reads positionally diverse samples
and adds what pass 1 missed. References are linted against the catalog (FieldValidity), repaired
to the closest catalog field or dropped, and the result merged into the contract.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from lakeplanner.contract.models import DiscoveryRecord, EntityAttribute, EntityType, FieldEntry, Relationship
from lakeplanner.llm.base import LLM, Usage, system, user
from lakeplanner.question.words import alnum_runs

SAMPLE_BUDGET_CHARS = 4000
MAX_SAMPLE_CHARS = 1200
MAX_OUTPUT_TOKENS = 700

INSTRUCTIONS = """You design the schema of a data lake. You are given the closed list of fields of one \
source (id, path, type, examples) and sample records. Identify the kinds of real-world things \
(entity types) the records describe, which fields are their attributes, and how entity types relate.
Rules:
- Refer to fields ONLY by an id from the field list (they look like f_0123abcd4567). Never invent ids.
- Entity names are PascalCase nouns (Person, Account). Relationship types are UPPER_SNAKE verbs \
(PLACED_BY, CONTAINS).
- key_field_id is the field that identifies one entity, or null.
- Keep it small: the few entity types the data really holds."""


class ProposedAttribute(BaseModel):
    name: str
    field_id: str


class ProposedEntity(BaseModel):
    name: str
    description: str = ""
    key_field_id: str | None = None
    attributes: list[ProposedAttribute] = Field(default_factory=list, max_length=12)


class ProposedRelationship(BaseModel):
    source: str
    target: str
    type: str
    field_ids: list[str] = Field(default_factory=list, max_length=4)


class SourceDiscovery(BaseModel):
    """What the LLM returns for one source; list bounds keep a small model from running on."""

    entities: list[ProposedEntity] = Field(default_factory=list, max_length=6)
    relationships: list[ProposedRelationship] = Field(default_factory=list, max_length=6)


@dataclass(frozen=True)
class DiscoveryResult:
    entities: list[EntityType]
    relationships: list[Relationship]
    record: DiscoveryRecord
    usage: Usage


# ---------------------------------------------------------------- sampling (App. A.4.2-A.4.3)


def sample_score(record: dict[str, Any], position: int, total: int) -> int:
    """Eq. 2: 10 per non-null field, +50 rich (> 1 K chars) / -30 thin (< 100), +10 in the middle 60%."""
    filled = sum(1 for v in record.values() if v not in (None, "", [], {}))
    size = len(json.dumps(record, default=str))
    rich = 50 if size > 1000 else -30 if size < 100 else 0
    middle = 10 if 0.2 * total <= position < 0.8 * total else 0
    return 10 * filled + rich + middle


def clip(record: dict[str, Any]) -> str:
    text = json.dumps(record, default=str, ensure_ascii=False)
    return text if len(text) <= MAX_SAMPLE_CHARS else text[: MAX_SAMPLE_CHARS - 1] + "…"


def pack(records: Sequence[dict[str, Any]], budget: int) -> list[str]:
    packed, used = [], 0
    for record in records:
        text = clip(record)
        if packed and used + len(text) > budget:
            break
        packed.append(text)
        used += len(text)
    return packed


def representative_samples(records: Sequence[dict[str, Any]], budget: int = SAMPLE_BUDGET_CHARS) -> list[str]:
    ranked = sorted(range(len(records)), key=lambda i: -sample_score(records[i], i, len(records)))
    return pack([records[i] for i in ranked], budget)


def diverse_samples(records: Sequence[dict[str, Any]], budget: int = SAMPLE_BUDGET_CHARS) -> list[str]:
    """Beginning, middle and end, then quarter points, until the budget is used."""
    n = len(records)
    order = [0, n // 2, n - 1, n // 4, (3 * n) // 4, n // 8, (7 * n) // 8]
    seen, picked = set(), []
    for i in order:
        if 0 <= i < n and i not in seen:
            seen.add(i)
            picked.append(records[i])
    return pack(picked, budget)


# ---------------------------------------------------------------- prompts


def catalog_block(fields: Sequence[FieldEntry]) -> str:
    lines = [f"{f.id} | {f.path} | {f.type} | e.g. {', '.join(f.examples[:2])[:80]}" for f in fields]
    return "Fields (id | path | type | examples):\n" + "\n".join(lines)


def deep_prompt(source: str, fields: Sequence[FieldEntry], samples: list[str]):
    return [
        system(INSTRUCTIONS + "\n\n", catalog_block(fields)),
        user(
            f"Source: {source}\nRepresentative records:\n"
            + "\n".join(samples)
            + "\n\nReturn the entity types and relationships as JSON."
        ),
    ]


def validation_prompt(source: str, fields: Sequence[FieldEntry], draft: SourceDiscovery, samples: list[str]):
    names = ", ".join(e.name for e in draft.entities) or "(none)"
    return [
        system(INSTRUCTIONS + "\n\n", catalog_block(fields)),
        user(
            f"Source: {source}\nA first pass found these entity types: {names}.\nMore records from other "
            "positions of the source:\n"
            + "\n".join(samples)
            + "\n\nReturn ONLY entity types, attributes or relationships that the first pass missed, as JSON "
            "(empty lists if nothing is missing)."
        ),
    ]


# ---------------------------------------------------------------- merge, lint, repair (App. A.6.1)


def pascal_case(name: str) -> str:
    words = alnum_runs(name)
    return "".join(w[:1].upper() + w[1:] for w in words) or "Entity"


def upper_snake(name: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return "_".join(alnum_runs(spaced)).upper() or "RELATED_TO"


def merge_passes(first: SourceDiscovery, second: SourceDiscovery) -> SourceDiscovery:
    """New entities are appended, new attributes extend known ones, relationships dedupe by tuple."""
    entities = {pascal_case(e.name): e.model_copy(deep=True) for e in first.entities}
    for entity in second.entities:
        key = pascal_case(entity.name)
        if key not in entities:
            entities[key] = entity
            continue
        known = {a.field_id for a in entities[key].attributes}
        entities[key].attributes += [a for a in entity.attributes if a.field_id not in known]
    relationships = {}
    for rel in [*first.relationships, *second.relationships]:
        relationships.setdefault((pascal_case(rel.source), pascal_case(rel.target), upper_snake(rel.type)), rel)
    # Each pass is bounded; their union may exceed the bound, so it is not re-validated.
    return SourceDiscovery.model_construct(entities=list(entities.values()), relationships=list(relationships.values()))


def referenced_ids(discovery: SourceDiscovery) -> list[str]:
    ids = [a.field_id for e in discovery.entities for a in e.attributes]
    ids += [e.key_field_id for e in discovery.entities if e.key_field_id]
    ids += [f for r in discovery.relationships for f in r.field_ids]
    return ids


def field_validity(ids: Sequence[str], catalog: set[str]) -> float:
    """Eq. 3: the share of referenced ids that exist in the catalog (1.0 when nothing is referenced)."""
    return sum(1 for i in ids if i in catalog) / len(ids) if ids else 1.0


class Repairer:
    """Maps an invalid reference to a catalog field: by path or column name, else the closest id."""

    def __init__(self, fields: Sequence[FieldEntry]) -> None:
        self.ids = {f.id for f in fields}
        self.by_name = {}
        for f in fields:
            for name in (f.path, f.column, f.path.rsplit(".", 1)[-1]):
                if name:
                    self.by_name.setdefault(name.lower(), f.id)
        self.repaired = 0
        self.dropped = 0

    def fix(self, ref: str | None) -> str | None:
        if ref is None or ref in self.ids:
            return ref
        match = self.by_name.get(ref.strip().lower())
        if match is None:
            close = difflib.get_close_matches(ref.strip(), list(self.ids), n=1, cutoff=0.85)
            close = close or difflib.get_close_matches(ref.strip().lower(), list(self.by_name), n=1, cutoff=0.85)
            match = (close[0] if close[0] in self.ids else self.by_name[close[0]]) if close else None
        if match is None:
            self.dropped += 1
        else:
            self.repaired += 1
        return match


def ground(
    source: str, discovery: SourceDiscovery, fields: Sequence[FieldEntry]
) -> tuple[list[EntityType], list[Relationship], Repairer]:
    """Repair or drop invalid field references; drop relationships whose endpoints are not entities."""
    repairer = Repairer(fields)
    entities = []
    for proposed in discovery.entities:
        attributes, seen = [], set()
        for attribute in proposed.attributes:
            fixed = repairer.fix(attribute.field_id)
            if fixed and fixed not in seen:
                seen.add(fixed)
                attributes.append(EntityAttribute(name=attribute.name, field_id=fixed))
        name = pascal_case(proposed.name)
        entities.append(
            EntityType(
                name=name,
                source=source,
                description=proposed.description[:300],
                key_field_id=repairer.fix(proposed.key_field_id),
                attributes=attributes,
                aliases=[proposed.name] if proposed.name != name else [],
            )
        )
    names = {e.name for e in entities}
    relationships = []
    for rel in discovery.relationships:
        ends = pascal_case(rel.source), pascal_case(rel.target)
        if ends[0] in names and ends[1] in names:
            fixed = [f for f in (repairer.fix(i) for i in rel.field_ids) if f]
            relationships.append(
                Relationship(
                    source_entity=ends[0],
                    target_entity=ends[1],
                    type=upper_snake(rel.type),
                    field_ids=fixed,
                    source=source,
                )
            )
    return entities, relationships, repairer


def discover_source(
    llm: LLM, source: str, fields: Sequence[FieldEntry], records: Sequence[dict[str, Any]]
) -> DiscoveryResult:
    """Two passes, merge, lint, repair. Raises LLMOutputError / LLMUnavailableError from the LLM."""
    first = llm.complete(
        deep_prompt(source, fields, representative_samples(records)), SourceDiscovery, max_tokens=MAX_OUTPUT_TOKENS
    )
    second = llm.complete(
        validation_prompt(source, fields, first.value, diverse_samples(records)),
        SourceDiscovery,
        max_tokens=MAX_OUTPUT_TOKENS,
    )
    merged = merge_passes(first.value, second.value)
    catalog = {f.id for f in fields}
    before = field_validity(referenced_ids(merged), catalog)
    entities, relationships, repairer = ground(source, merged, fields)
    after_ids = [a.field_id for e in entities for a in e.attributes]
    after_ids += [e.key_field_id for e in entities if e.key_field_id]
    after_ids += [f for r in relationships for f in r.field_ids]
    record = DiscoveryRecord(
        source=source,
        model=llm.model_name,
        calls=first.usage.calls + second.usage.calls,
        field_validity_before=round(before, 4),
        field_validity_after=round(field_validity(after_ids, catalog), 4),
        repaired=repairer.repaired,
        dropped=repairer.dropped,
    )
    return DiscoveryResult(entities, relationships, record, first.usage + second.usage)


def unify(entities: Sequence[EntityType]) -> list[EntityType]:
    """Entities with the same name across sources merge: first name wins, attributes union (App. A.9)."""
    merged: dict[str, EntityType] = {}
    for entity in entities:
        key = entity.name.lower()
        if key not in merged:
            merged[key] = entity
            continue
        known = merged[key]
        ids = {a.field_id for a in known.attributes}
        merged[key] = known.model_copy(
            update={
                "attributes": known.attributes + [a for a in entity.attributes if a.field_id not in ids],
                "aliases": sorted({*known.aliases, f"{entity.source}:{entity.name}"}),
            }
        )
    return list(merged.values())
