"""Structural intelligence without an LLM (seed 002 App. A.7): identity, composite and foreign keys."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from lakeplanner.config import StructureConfig
from lakeplanner.contract.models import ForeignKey, HierarchyEdge, IdentityKey
from lakeplanner.contract.profile import is_id_like, is_provenance, is_stringy, mean_length
from lakeplanner.question.words import singular
from lakeplanner.question.years import is_year_number

KEY_TYPES = (pa.types.is_string, pa.types.is_large_string, pa.types.is_integer, pa.types.is_date)
COMPOSITE_CANDIDATES = 10
SYNONYMS = [{"ticker", "symbol"}, {"doc_id", "document_id"}]


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


def is_temporal(column: pa.ChunkedArray) -> bool:
    return pa.types.is_date(column.type) or pa.types.is_timestamp(column.type)


def identity_keys(source: str, table: pa.Table, config: StructureConfig) -> list[IdentityKey]:
    """Single-field keys, else composite pairs; the best exact, null-free one becomes the identifier.
    A date or timestamp is unique by chance (an enrolment date, an event time), so it is a key only when
    nothing else identifies the row."""
    keys, temporal = [], []
    for name in table.column_names:
        if is_provenance(name):
            continue
        uniq = qualifies(name, table.column(name), config)
        if uniq is not None:
            key = IdentityKey(source=source, columns=[name], uniqueness=round(uniq, 4), confidence=key_confidence(uniq))
            (temporal if is_temporal(table.column(name)) else keys).append(key)
    if not any(is_exact(k, table) for k in keys):
        keys += composite_keys(source, table, config)
    if not any(is_exact(k, table) for k in keys):
        keys += temporal
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


NAME_STOPWORDS = frozenset({"id", "ids", "code", "key", "ref", "no", "number", "fk", "uid", "uuid", "guid"})
SMALL_INTEGER = 1000  # integer keys below this overlap by accident (counts, quantities, ranks)


def name_words(name: str) -> set[str]:
    return {singular(w) for w in re.split(r"[^a-z0-9]+", name.lower()) if w}


def name_tokens(name: str) -> set[str]:
    """'order_ref' -> {'order'}: words of a column or table name, singular, without key words."""
    return name_words(name) - NAME_STOPWORDS


def same_words(col_a: str, col_b: str) -> bool:
    """'part_code' and 'part_id': two key names that differ only in their key word name one thing
    ('part' and 'part_code' do not say so; their values may)."""
    words = name_tokens(col_a)
    keyed = all(name_words(c) & NAME_STOPWORDS for c in (col_a, col_b))
    return bool(keyed and words) and words == name_tokens(col_b)


def name_match(a: KeyedTable, col_a: str, b: KeyedTable, col_b: str) -> str | None:
    """'exact', 'semantic' (patient_id <-> patients.id, part_code <-> part_id, ticker <-> symbol) or None."""
    if is_provenance(col_a) or is_provenance(col_b):
        return None
    if col_a == col_b:
        return "exact"
    if (
        col_a == f"{singular(b.source.split('__')[-1])}_{col_b}"
        or col_b == f"{singular(a.source.split('__')[-1])}_{col_a}"
    ):
        return "semantic"
    if any({col_a, col_b} <= group for group in SYNONYMS) or same_words(col_a, col_b):
        return "semantic"
    return None


def name_similarity(col_a: str, b: KeyedTable, col_b: str, match: str | None) -> float:
    """1 for a name match; else the share of the referencing column's words that name the target
    table or its key ('lender' -> lenders.lender_code: 1, 'signed_by' -> clerks.clerk_id: 0)."""
    if match is not None:
        return 1.0
    words = name_tokens(col_a)
    target = name_tokens(b.source.split("__")[-1]) | name_tokens(col_b)
    return round(len(words & target) / len(words), 4) if words else 0.0


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


def is_code_column(column: pa.ChunkedArray) -> bool:
    """Values that read as identifiers: integers, or short strings without spaces."""
    if pa.types.is_integer(column.type):
        return True
    if not is_stringy(column):
        return False
    values = column.drop_null()
    if len(values) == 0 or mean_length(column) > 64:
        return False
    spaced = pc.sum(pc.match_substring_regex(values, r"\s")).as_py() or 0
    return spaced <= 0.05 * len(values)


def accidental_overlap(column: pa.ChunkedArray, values: pa.Array) -> str | None:
    """Why values shared by two columns prove nothing (None when they may): booleans, years, small
    integers, or too few distinct values."""
    if pa.types.is_boolean(column.type):
        return "boolean"
    if len(values) < 3:
        return "fewer than 3 distinct values"
    if pa.types.is_integer(values.type):
        low, high = pc.min(values).as_py(), pc.max(values).as_py()
        if is_year_number(low) and is_year_number(high):
            return "years"
        if high < SMALL_INTEGER:
            return "small integers"
    return None


@dataclass(frozen=True)
class Candidate:
    """A referencing column compared with a key column: why it was considered."""

    match: str | None  # 'exact' / 'semantic' name match, or None when only the values relate them
    similarity: float


def candidate(a: KeyedTable, col_a: str, b: KeyedTable, col_b: str) -> Candidate | None:
    """Whether a.col_a may reference b.col_b: by name, or (whatever the names) when b.col_b is a key
    of identifier-like values and a.col_a holds values of the same kind."""
    if is_provenance(col_a) or is_provenance(col_b) or (a.source == b.source and col_a == col_b):
        return None
    match = name_match(a, col_a, b, col_b) if a.source != b.source else None
    if match is None and not (b.is_key(col_b) and key_like(b, col_b) and referencing_like(a, col_a, b, col_b)):
        return None
    return Candidate(match, name_similarity(col_a, b, col_b, match))


def key_like(b: KeyedTable, col_b: str) -> bool:
    column = b.table.column(col_b)
    return can_be_key(column) and not pa.types.is_date(column.type) and is_code_column(column)


def referencing_like(a: KeyedTable, col_a: str, b: KeyedTable, col_b: str) -> bool:
    column = a.table.column(col_a)
    same_kind = pa.types.is_integer(column.type) == pa.types.is_integer(b.table.column(col_b).type)
    return same_kind and is_code_column(column)


def compare_columns(
    a: KeyedTable, col_a: str, b: KeyedTable, col_b: str, found: Candidate, config: StructureConfig
) -> ForeignKey | None:
    """Eq. 6 overlap, and a confidence extended by name similarity; the FK points from the
    referencing side to the keyed side. Without a name match, nearly every value of the referencing
    column must be a value of the key, and the shared values must not be of a kind that overlaps
    by accident."""
    column_a, column_b = a.table.column(col_a), b.table.column(col_b)
    if column_a.type != column_b.type and not (can_be_key(column_a) and can_be_key(column_b)):
        return None
    va = distinct_values(column_a, config.fk_max_distinct)
    vb = distinct_values(column_b, config.fk_max_distinct)
    if va.type != vb.type:
        va, vb = va.cast(pa.string()), vb.cast(pa.string())
    shared = va.filter(pc.is_in(va, value_set=vb))
    overlap = len(shared) / max(len(va), len(vb), 1)
    if overlap == 0 or (overlap < config.fk_min_overlap and found.match != "exact"):
        return None
    contained = len(shared) / max(len(va), 1)
    if found.match is None and (contained < config.fk_value_containment or accidental_overlap(column_a, shared)):
        return None
    side_a = side_cardinality(column_a.cast(va.type), shared)
    side_b = side_cardinality(column_b.cast(vb.type), shared)
    if not b.is_key(col_b) and a.is_key(col_a) and a.source != b.source:
        a, col_a, b, col_b, side_a, side_b = b, col_b, a, col_a, side_b, side_a
        contained = len(shared) / max(len(vb), 1)
    if not b.is_key(col_b):
        return None
    cardinality = {("one", "one"): "1:1", ("many", "one"): "N:1", ("one", "many"): "1:N"}.get((side_a, side_b), "N:M")
    confidence = round(min(0.95, 0.5 + 0.3 * overlap + 0.15 * found.similarity), 4)
    return ForeignKey(
        source=a.source,
        column=col_a,
        target=b.source,
        target_column=col_b,
        overlap=round(overlap, 4),
        confidence=confidence,
        cardinality=cardinality,
        containment=round(contained, 4),
        name_similarity=found.similarity,
        evidence="name" if found.match else "values",
    )


def foreign_keys(
    tables: list[KeyedTable], config: StructureConfig, only_with: set[str] | None = None
) -> list[ForeignKey]:
    """Candidate FKs between every pair of tables and within each table (a manager column naming
    the same table's key), or only those touching `only_with`; one per referencing column and
    target table, the most confident."""
    found: dict[frozenset, ForeignKey] = {}
    pairs = [*itertools.combinations(tables, 2), *((t, t) for t in tables)]
    for a, b in pairs:
        if only_with is not None and a.source not in only_with and b.source not in only_with:
            continue
        for col_a, col_b in itertools.product(a.table.column_names, b.table.column_names):
            directions = [(a, col_a, b, col_b)] if a is b else [(a, col_a, b, col_b), (b, col_b, a, col_a)]
            for referencing, column, keyed, key in directions:
                why = candidate(referencing, column, keyed, key)
                fk = why and compare_columns(referencing, column, keyed, key, why, config)
                slot = fk and frozenset({(fk.source, fk.column), (fk.target, fk.target_column)})
                if fk and (slot not in found or strength(fk) > strength(found[slot])):
                    found[slot] = fk
    best: dict[tuple[str, str, str], ForeignKey] = {}
    for fk in found.values():  # one key per referencing column and target table
        slot = (fk.source, fk.column, fk.target)
        if slot not in best or strength(fk) > strength(best[slot]):
            best[slot] = fk
    return sorted(best.values(), key=lambda k: (k.source, k.column, k.target))


def strength(fk: ForeignKey) -> tuple[float, bool, bool, float]:
    """Which of two keys relating the same columns to keep: the more confident, then the one the
    names propose, then the one whose column names the target table (profiles.user_id -> users.id,
    not the reverse), then the one whose values the target holds more fully."""
    names_target = bool(name_tokens(fk.column) & name_tokens(fk.target.split("__")[-1]))
    return fk.confidence, fk.evidence == "name", names_target, fk.containment or 0.0


def without_rejected(fks: list[ForeignKey], rejected: list[str]) -> list[ForeignKey]:
    """The keys a user did not reject in the exclusion manifest ('loans.lender -> lenders.code')."""
    names = {"".join(r.split()) for r in rejected}
    return [fk for fk in fks if f"{fk.source}.{fk.column}->{fk.target}.{fk.target_column}" not in names]


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
