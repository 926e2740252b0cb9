"""Structural intelligence without an LLM (seed 002 App. A.7): identity, composite and foreign keys."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from lakeplanner.config import StructureConfig
from lakeplanner.contract.models import ForeignKey, HierarchyEdge, IdentityKey
from lakeplanner.contract.profile import is_id_like, is_provenance, mean_length

KEY_TYPES = (pa.types.is_string, pa.types.is_large_string, pa.types.is_integer, pa.types.is_date)
COMPOSITE_CANDIDATES = 10
SYNONYMS = [{"ticker", "symbol"}, {"sku", "product_code", "product_id"}, {"doc_id", "document_id"}]


def can_be_key(column: pa.ChunkedArray) -> bool:
    return any(check(column.type) for check in KEY_TYPES)


def uniqueness(column: pa.ChunkedArray) -> float:
    present = len(column) - column.null_count
    return pc.count_distinct(column).as_py() / present if present else 0.0


def key_confidence(uniq: float) -> float:
    """Eq. 5."""
    return round(min(0.95, 0.7 + 0.3 * uniq), 4)


def qualifies(name: str, column: pa.ChunkedArray, config: StructureConfig) -> float | None:
    """Eq. 4 with the seed's exclusions; returns uniqueness when the field qualifies."""
    present = len(column) - column.null_count
    if present < config.identity_min_values or not can_be_key(column):
        return None
    # Free text is unique by accident, not by design; the seed's 500-char cut lets paragraphs through.
    longest_allowed = min(config.identity_max_avg_len, config.text_field_min_avg_chars)
    if pc.count_distinct(column).as_py() <= 2 or mean_length(column) >= longest_allowed:
        return None
    uniq = uniqueness(column)
    if uniq >= config.identity_unique or (uniq >= config.identity_unique_idlike and is_id_like(name)):
        return uniq
    return None


def identity_keys(source: str, table: pa.Table, config: StructureConfig) -> list[IdentityKey]:
    """Single-field keys, else composite pairs; the best exact, null-free one becomes the identifier."""
    keys = []
    for name in table.column_names:
        if is_provenance(name):
            continue
        uniq = qualifies(name, table.column(name), config)
        if uniq is not None:
            keys.append(
                IdentityKey(
                    source=source,
                    columns=[name],
                    uniqueness=round(uniq, 4),
                    confidence=key_confidence(uniq),
                )
            )
    if not any(is_exact(k, table) for k in keys):
        keys += composite_keys(source, table, config)
    return mark_identifier(keys, table)


def composite_keys(source: str, table: pa.Table, config: StructureConfig) -> list[IdentityKey]:
    candidates = [
        n
        for n in table.column_names
        if not is_provenance(n)
        and can_be_key(table.column(n))
        and table.column(n).null_count == 0
        and pc.count_distinct(table.column(n)).as_py() > 1
        and mean_length(table.column(n)) <= config.identity_max_avg_len
    ][:COMPOSITE_CANDIDATES]
    keys = []
    rows = max(table.num_rows, 1)
    for a, b in itertools.combinations(candidates, 2):
        uniq = table.select([a, b]).group_by([a, b]).aggregate([]).num_rows / rows
        if uniq >= config.composite_unique:
            keys.append(
                IdentityKey(
                    source=source,
                    columns=[a, b],
                    uniqueness=round(uniq, 4),
                    confidence=key_confidence(uniq),
                )
            )
    return keys


def is_exact(key: IdentityKey, table: pa.Table) -> bool:
    return key.uniqueness == 1.0 and all(table.column(c).null_count == 0 for c in key.columns)


def mark_identifier(keys: list[IdentityKey], table: pa.Table) -> list[IdentityKey]:
    exact = [k for k in keys if is_exact(k, table)]
    if not exact:
        return keys
    best = min(
        exact,
        key=lambda k: (
            len(k.columns),
            not all(is_id_like(c) for c in k.columns),
            table.column_names.index(k.columns[0]),
        ),
    )
    return [k.model_copy(update={"identifier": k is best}) for k in keys]


# ---------------------------------------------------------------- foreign keys


@dataclass(frozen=True)
class KeyedTable:
    source: str
    table: pa.Table
    keys: list[IdentityKey]

    def is_key(self, column: str) -> bool:
        return any(k.columns == [column] for k in self.keys)


def singular(name: str) -> str:
    for plural, single in (("ies", "y"), ("ses", "s"), ("s", "")):
        if name.endswith(plural):
            return name[: -len(plural)] + single
    return name


def name_match(a: KeyedTable, col_a: str, b: KeyedTable, col_b: str) -> str | None:
    """'exact', 'semantic' (customer_id <-> customers.id, ticker <-> symbol) or None."""
    if is_provenance(col_a) or is_provenance(col_b):
        return None
    if col_a == col_b:
        return "exact"
    if (
        col_a == f"{singular(b.source.split('__')[-1])}_{col_b}"
        or col_b == f"{singular(a.source.split('__')[-1])}_{col_a}"
    ):
        return "semantic"
    if any({col_a, col_b} <= group for group in SYNONYMS):
        return "semantic"
    return None


def distinct_values(column: pa.ChunkedArray, limit: int) -> pa.Array:
    values = pc.unique(column.drop_null())
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return values.slice(0, limit)


def side_cardinality(column: pa.ChunkedArray, shared: pa.Array) -> str:
    """'one' when the average record count per shared key is <= 1.2 and the max <= 2 (App. A.7.2)."""
    counts = pc.value_counts(column.filter(pc.is_in(column, value_set=shared)).combine_chunks())
    n = counts.field("counts")
    if len(n) == 0:
        return "one"
    return "one" if pc.mean(n).as_py() <= 1.2 and pc.max(n).as_py() <= 2 else "many"


def compare_columns(
    a: KeyedTable, col_a: str, b: KeyedTable, col_b: str, exact_name: bool, config: StructureConfig
) -> ForeignKey | None:
    """Eq. 6 overlap and confidence; the FK points from the referencing side to the keyed side."""
    column_a, column_b = a.table.column(col_a), b.table.column(col_b)
    if column_a.type != column_b.type and not (can_be_key(column_a) and can_be_key(column_b)):
        return None
    va = distinct_values(column_a, config.fk_max_distinct)
    vb = distinct_values(column_b, config.fk_max_distinct)
    if va.type != vb.type:
        va, vb = va.cast(pa.string()), vb.cast(pa.string())
    shared = va.filter(pc.is_in(va, value_set=vb))
    overlap = len(shared) / max(len(va), len(vb), 1)
    if overlap == 0 or (overlap < config.fk_min_overlap and not exact_name):
        return None
    side_a = side_cardinality(column_a.cast(va.type), shared)
    side_b = side_cardinality(column_b.cast(vb.type), shared)
    if not b.is_key(col_b) and a.is_key(col_a):
        a, col_a, b, col_b, side_a, side_b = b, col_b, a, col_a, side_b, side_a
    if not b.is_key(col_b):
        return None
    cardinality = {("one", "one"): "1:1", ("many", "one"): "N:1", ("one", "many"): "1:N"}.get((side_a, side_b), "N:M")
    confidence = round(min(0.95, 0.5 + 0.3 * overlap + 0.15 * exact_name), 4)
    return ForeignKey(
        source=a.source,
        column=col_a,
        target=b.source,
        target_column=col_b,
        overlap=round(overlap, 4),
        confidence=confidence,
        cardinality=cardinality,
    )


def foreign_keys(
    tables: list[KeyedTable], config: StructureConfig, only_with: set[str] | None = None
) -> list[ForeignKey]:
    """Candidate FKs between every pair of tables (or only pairs touching `only_with`)."""
    found: dict[tuple[str, str, str, str], ForeignKey] = {}
    for a, b in itertools.combinations(tables, 2):
        if only_with is not None and a.source not in only_with and b.source not in only_with:
            continue
        for col_a in a.table.column_names:
            for col_b in b.table.column_names:
                match = name_match(a, col_a, b, col_b)
                if match is None:
                    continue
                fk = compare_columns(a, col_a, b, col_b, match == "exact", config)
                if fk is not None:
                    found.setdefault((fk.source, fk.column, fk.target, fk.target_column), fk)
    return list(found.values())


def hierarchy(nested: list[tuple[str, str]], fks: list[ForeignKey]) -> list[HierarchyEdge]:
    """Containment from nested arrays, plus many-to-one foreign keys (child rows under a parent)."""
    edges = [
        HierarchyEdge(
            child=child,
            parent=parent,
            child_column="_lp_parent",
            parent_column="_lp_record",
            kind="nested",
        )
        for child, parent in nested
    ]
    edges += [
        HierarchyEdge(
            child=fk.source,
            parent=fk.target,
            child_column=fk.column,
            parent_column=fk.target_column,
            kind="foreign_key",
        )
        for fk in fks
        if fk.cardinality == "N:1"
    ]
    return edges
