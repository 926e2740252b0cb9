"""The lake as one role sees it: the contract without the sources it may not read and without the
columns it reads as NULL, so the planner's prompt, the validator and the SQL writer never show them.
A column it reads hashed stays (it still counts, groups and joins) with no example values, tagged
`masked` so no prompt lists its values."""

from __future__ import annotations

from lakeplanner.contract.models import Contract, FieldEntry, SourceKind
from lakeplanner.policy.model import Access, Mask

MASKED = "masked"  # the tag of a field whose values the role reads hashed


def readable(contract: Contract, access: Access, source: str) -> bool:
    spec = contract.source(source)
    if spec is None:
        return True  # not a source of the lake: the validator names it
    if spec.kind is SourceKind.documents:
        return access.reads_collection(source)
    return access.reads_table(source)


def denied_sources(contract: Contract, access: Access) -> frozenset[str]:
    return frozenset(s.name for s in contract.sources if not readable(contract, access, s.name))


def hidden_columns(contract: Contract, access: Access) -> frozenset[tuple[str, str]]:
    """(table, column) the role reads as NULL."""
    return frozenset(
        (f.source, f.column) for f in contract.fields if f.column and access.mask_of(f.source, f.column) is Mask.null
    )


def without_values(field: FieldEntry, access: Access) -> FieldEntry:
    if field.column and access.mask_of(field.source, field.column) is Mask.hash:
        return field.model_copy(update={"examples": [], "tags": [*field.tags, MASKED]})
    return field


def scoped_contract(contract: Contract, access: Access) -> Contract:
    """`contract` restricted to what `access` may read; the contract itself when it reads everything."""
    if not access.restricted:
        return contract
    denied = denied_sources(contract, access)
    hidden = hidden_columns(contract, access)

    def kept(source: str, column: str | None = None) -> bool:
        return source not in denied and (source, column) not in hidden

    sources = [
        s.model_copy(update={"label": s.label if s.label and kept(s.name, s.label) else None})
        for s in contract.sources
        if s.name not in denied
    ]
    return contract.model_copy(
        update={
            "sources": sources,
            "fields": [without_values(f, access) for f in contract.fields if kept(f.source, f.column)],
            "identity_keys": [k for k in contract.identity_keys if all(kept(k.source, c) for c in k.columns)],
            "foreign_keys": [
                k for k in contract.foreign_keys if kept(k.source, k.column) and kept(k.target, k.target_column)
            ],
            "links": [k for k in contract.links if kept(k.source, k.column) and kept(k.collection)],
            "hierarchy": [
                h for h in contract.hierarchy if kept(h.child, h.child_column) and kept(h.parent, h.parent_column)
            ],
            "companions": [c for c in contract.companions if kept(c.source) and kept(c.companion)],
            "entities": [e for e in contract.entities if kept(e.source)],
            "relationships": [r for r in contract.relationships if kept(r.source)],
        }
    )
