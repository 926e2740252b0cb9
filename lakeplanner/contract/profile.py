"""Field profiling (seed 002 App. A.4-A.5): Arrow columns -> the closed-world field catalog."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from lakeplanner.config import StructureConfig
from lakeplanner.contract.models import ADDRESSES_MODEL, FieldEntry, FieldType, field_id
from lakeplanner.injection import addresses_the_model, name_addresses_the_model

_ID_LIKE = re.compile(r"(^|_)(id|uid|key|uuid|guid|code|ticker|symbol|ref|number|no)$|^id_|_id_", re.I)
EXAMPLES = 3
EXAMPLE_CHARS = 80
ENTRY_OPENING_WORDS = 3  # "The Ashford Bridge is ...": an entry names its subject in its first words
ENTRIES_SHARE = 0.5


def is_id_like(name: str) -> bool:
    return bool(_ID_LIKE.search(name))


def is_provenance(column: str) -> bool:
    return column.startswith("_lp_")


def field_type(arrow_type: pa.DataType) -> FieldType:
    if pa.types.is_boolean(arrow_type):
        return FieldType.boolean
    if pa.types.is_integer(arrow_type):
        return FieldType.integer
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return FieldType.number
    if pa.types.is_date(arrow_type):
        return FieldType.date
    if pa.types.is_timestamp(arrow_type):
        return FieldType.timestamp
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return FieldType.array
    if pa.types.is_struct(arrow_type) or pa.types.is_map(arrow_type):
        return FieldType.object
    return FieldType.string


def is_stringy(column: pa.ChunkedArray) -> bool:
    return pa.types.is_string(column.type) or pa.types.is_large_string(column.type)


def mean_length(column: pa.ChunkedArray) -> float:
    if not is_stringy(column):
        return 0.0
    return pc.mean(pc.utf8_length(column)).as_py() or 0.0


def examples_of(column: pa.ChunkedArray) -> list[str]:
    head = column.slice(0, 1000).drop_null()
    values = []
    for value in pc.unique(head).to_pylist():
        text = str(value)
        if addresses_the_model(text):
            continue
        values.append(text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 1] + "…")
        if len(values) == EXAMPLES:
            break
    return values


def tags_of(name: str, path: str, column: pa.ChunkedArray, json_paths: list[str], config: StructureConfig) -> list[str]:
    tags = []
    if is_id_like(name):
        tags.append("id_like")
    if f"{path}[*]" in json_paths:
        tags.append("nested_array")
    elif mean_length(column) >= config.text_field_min_avg_chars:
        tags.append("free_text")
    if "." in path.rsplit("[*].", 1)[-1]:
        tags.append("nested_object")
    if name_addresses_the_model(name):
        tags.append(ADDRESSES_MODEL)
    return tags


def profile_table(
    source: str,
    table: pa.Table,
    paths: dict[str, str],
    json_paths: list[str],
    config: StructureConfig,
) -> list[FieldEntry]:
    """One catalog entry per data column; provenance columns are not part of the closed world."""
    entries = []
    rows = max(table.num_rows, 1)
    for name in table.column_names:
        if is_provenance(name):
            continue
        column = table.column(name)
        path = paths.get(name, name)
        entries.append(
            FieldEntry(
                id=field_id(source, path),
                source=source,
                path=path,
                column=name,
                type=field_type(column.type),
                null_rate=round(column.null_count / rows, 4),
                cardinality=pc.count_distinct(column).as_py(),
                examples=examples_of(column),
                tags=tags_of(name, path, column, json_paths, config),
                **days_spanned(column),
            )
        )
    return entries


def days_spanned(column: pa.ChunkedArray) -> dict[str, str]:
    """{'first': ..., 'last': ...}: the earliest and latest day of a date or timestamp column."""
    if not (pa.types.is_date(column.type) or pa.types.is_timestamp(column.type)) or column.null_count == len(column):
        return {}
    bounds = pc.min_max(column)
    first, last = bounds["min"].as_py(), bounds["max"].as_py()
    return {"first": first.isoformat()[:10], "last": last.isoformat()[:10]}


def profile_documents(source: str, titles: list[str], ids: list[str]) -> list[FieldEntry]:
    """Document sources expose document_id, title, heading and text to the catalog."""

    def entry(path: str, ftype: FieldType, card: int, examples: list[str], tags: list[str]) -> FieldEntry:
        return FieldEntry(
            id=field_id(source, path),
            source=source,
            path=path,
            column=None,
            type=ftype,
            null_rate=0.0,
            cardinality=card,
            examples=examples[:EXAMPLES],
            tags=tags,
        )

    shown = [t[:EXAMPLE_CHARS] for t in titles if not addresses_the_model(t)]
    return [
        entry("document_id", FieldType.string, len(set(ids)), ids, ["id_like"]),
        entry("title", FieldType.string, len(set(titles)), shown, []),
        entry("heading", FieldType.string, 0, [], []),
        entry("text", FieldType.string, len(ids), [], ["free_text"]),
    ]


def plain_words(text: str) -> list[str]:
    return "".join(c if c.isalnum() else " " for c in text.casefold()).split()


def body_of(title: str, text: str) -> str:
    """`text` without its leading headings and a first line that repeats the title."""
    lines = text.strip().splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#") or lines[0].strip() == title.strip()):
        lines.pop(0)
    return "\n".join(lines)


def opens_with_its_subject(title: str, text: str) -> bool:
    """The body's first words name the title's subject, as an encyclopedia entry does ("Ashford Bridge
    (Kent)" opening "The Ashford Bridge is a ..."); a parenthesised qualifier of the title is not its subject."""
    subject = plain_words(title.split(" (")[0]) or plain_words(title)
    return bool(subject) and subject[0] in plain_words(body_of(title, text))[:ENTRY_OPENING_WORDS]


def are_reference_entries(documents: list[tuple[str, str]]) -> bool:
    """Most of the (title, text) documents open by naming their title's subject: reference entries."""
    opening = sum(opens_with_its_subject(title, text) for title, text in documents if title)
    return bool(documents) and opening >= ENTRIES_SHARE * len(documents)
