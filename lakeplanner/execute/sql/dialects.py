"""Functions the writer spelled in another SQL dialect, read in that dialect and written as DuckDB's.

A small model writes MySQL's `DATE_SUB(d, INTERVAL 30 DAY)`, Spark's `DATE_SUB(d, 30)` or T-SQL's
`DATEADD(day, -30, d)` as often as DuckDB's `d - INTERVAL 30 DAY`. DuckDB's reading keeps such a call as
a function it does not know, which the guard refuses; sqlglot reads each of those dialects, so the call
is read in the first dialect that knows it and whose DuckDB spelling loses nothing, before it is judged.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError, UnsupportedError

from lakeplanner.policy.readonly import ANONYMOUS_ALLOWED

WRITTEN_DIALECTS = ("mysql", "postgres", "snowflake", "spark", "tsql", "bigquery", "sqlite", "trino")


def unknown_calls(statement: exp.Expression) -> list[exp.Anonymous]:
    """Calls of functions DuckDB's reading does not know and the guard does not allow by name."""
    return [f for f in statement.find_all(exp.Anonymous) if f.name.lower() not in ANONYMOUS_ALLOWED]


def as_duckdb(call: exp.Anonymous) -> tuple[exp.Expression, str] | None:
    """The call as the first dialect that knows it reads it, and that dialect; None when none does."""
    text = call.sql("duckdb")
    for dialect in WRITTEN_DIALECTS:
        try:
            read = sqlglot.parse_one(text, read=dialect)
            duckdb = read.sql("duckdb", unsupported_level=ErrorLevel.RAISE)
            again = sqlglot.parse_one(duckdb, read="duckdb")
        except (ParseError, TokenError, UnsupportedError, ValueError):
            continue
        if not unknown_calls(again):
            return again, dialect
    return None


def read_other_dialects(statement: exp.Select) -> list[str]:
    """Each unknown call that another dialect knows, replaced by its DuckDB spelling, in place."""
    edits = []
    for call in unknown_calls(statement):
        found = as_duckdb(call)
        if found is None:
            continue
        duckdb, dialect = found
        edits.append(f"{call.sql('duckdb')} read as {dialect}: {duckdb.sql('duckdb')}")
        call.replace(duckdb)
    return edits
