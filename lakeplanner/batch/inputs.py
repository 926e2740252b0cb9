"""The questions of a batch: read from a lake table or a Parquet, CSV or JSONL file (or expanded from a
template over a table's rows), checked before any work starts."""

from __future__ import annotations

import string
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq
from pydantic import BaseModel

from lakeplanner.errors import LakeplannerError

SHOWN = 5  # offending rows named in an error


class BatchInputError(LakeplannerError):
    """The questions cannot be read, or their ids are missing or repeated."""


class BatchQuestion(BaseModel):
    id: str
    question: str
    role: str | None = None
    principal: str | None = None


def read_source(source: str, lake) -> pa.Table:
    """A lake table by name, else a .parquet, .csv or .jsonl file."""
    path = Path(source)
    if not path.exists():
        if source in lake.table_names():
            return lake.table(source).scan().to_arrow()
        raise BatchInputError(
            f"no file or lake table {source!r}",
            hint=f"pass a .parquet/.csv/.jsonl file or one of the lake's tables: {', '.join(lake.table_names())}",
        )
    readers = {".parquet": pq.read_table, ".csv": pacsv.read_csv, ".jsonl": pajson.read_json, ".json": pajson.read_json}
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise BatchInputError(f"cannot read {path.name}", hint="questions come as .parquet, .csv or .jsonl")
    try:
        return reader(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise BatchInputError(f"{path.name} is not readable: {e}", hint="check the file's format") from e


def expand_template(rows: pa.Table, template: str, id_column: str | None, first_row: int = 1) -> list[tuple[str, str]]:
    """(id, question) per row: the template's {column} fields filled from the row; a row without an id
    column or filled fields is known by its number (`first_row` for the first)."""
    fields = [name for _, name, _, _ in string.Formatter().parse(template) if name]
    missing = [f for f in fields if f not in rows.column_names]
    if missing:
        raise BatchInputError(
            f"the template names {', '.join(missing)}, which the rows lack",
            hint=f"use columns of: {', '.join(rows.column_names)}",
        )
    out = []
    for n, row in enumerate(rows.to_pylist(), first_row - 1):
        key = row.get(id_column) if id_column else "-".join(str(row[f]) for f in fields) or str(n)
        out.append((str(key) if key is not None else "", template.format(**row)))
    return out


def questions_of(
    table: pa.Table,
    *,
    id_column: str = "id",
    question_column: str = "question",
    template: str | None = None,
    role_column: str | None = "role",
    principal_column: str | None = "principal",
    first_row: int = 1,
    seen: dict[str, int] | None = None,
) -> list[BatchQuestion]:
    """The batch's questions; BatchInputError naming the rows (the first numbered `first_row`) when
    an id is missing or repeated, here or among the rows `seen` holds (id -> row) from earlier blocks."""
    if template is not None:
        pairs = expand_template(table, template, id_column if id_column in table.column_names else None, first_row)
        extra = [{}] * len(pairs)
    else:
        for column in (id_column, question_column):
            if column not in table.column_names:
                raise BatchInputError(
                    f"the questions have no column {column!r}",
                    hint=f"name it with --id-column/--question-column; columns: {', '.join(table.column_names)}",
                )
        rows = table.to_pylist()
        pairs = [(None if r[id_column] is None else str(r[id_column]), r[question_column] or "") for r in rows]
        extra = rows
    missing = [n for n, (key, _) in enumerate(pairs, first_row) if not key]
    if missing:
        raise BatchInputError(
            f"{len(missing)} rows have no id (rows {', '.join(map(str, missing[:SHOWN]))})",
            hint="give every question an id: answers are kept by it, exactly once",
        )
    seen = {} if seen is None else seen
    repeated = []
    for n, (key, _) in enumerate(pairs, first_row):
        if key in seen:
            repeated.append(f"{key!r} (rows {seen[key]} and {n})")
        seen.setdefault(key, n)
    if repeated:
        raise BatchInputError(
            f"{len(repeated)} ids repeat: {'; '.join(repeated[:SHOWN])}", hint="ids must be unique within a batch"
        )
    return [
        BatchQuestion(
            id=key,
            question=question,
            role=(row.get(role_column) if role_column else None) or None,
            principal=(row.get(principal_column) if principal_column else None) or None,
        )
        for (key, question), row in zip(pairs, extra, strict=True)
    ]
