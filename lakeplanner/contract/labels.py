"""The label column of an entity table: the column that names a row in words (a name or a title), found
from the data, so an answer that is a key can be shown as the entity it identifies."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from lakeplanner.contract.models import IdentityKey
from lakeplanner.contract.profile import is_id_like, is_provenance, is_stringy, mean_length

NAMING = re.compile(r"(^|_)(name|title|label|full_name|display_name)$", re.I)
MIN_UNIQUE = 0.9
MAX_MEAN_CHARS = 80
MIN_WORDY = 0.8  # share of values that read as words: letters, and a space or a capital


def label_column(table: pa.Table, keys: list[IdentityKey]) -> str | None:
    """The best column that names rows: mostly unique words, not an id or free text; a column named
    like a name or title first, then the one nearest the left."""
    identifier = next((k.columns for k in keys if k.identifier), [])
    candidates = [
        name
        for name in table.column_names
        if not is_provenance(name) and name not in identifier and names_rows(name, table.column(name))
    ]
    named = [c for c in candidates if NAMING.search(c)]
    return (named or candidates or [None])[0]


def names_rows(name: str, column: pa.ChunkedArray) -> bool:
    if not is_stringy(column) or is_id_like(name) or not 2 <= mean_length(column) <= MAX_MEAN_CHARS:
        return False
    values = column.drop_null()
    if len(values) < 2 or pc.count_distinct(values).as_py() < MIN_UNIQUE * len(values):
        return False
    wordy = pc.and_(
        pc.match_substring_regex(values, r"[A-Za-z]{2}"), pc.match_substring_regex(values, r"\s|^[A-Z][a-z]")
    )
    return (pc.sum(wordy).as_py() or 0) >= MIN_WORDY * len(values)
