"""The first line of SQL safety: a statement runs only if it is one SELECT that reads the lake's tables
by name and calls no function that reaches outside the query (files, network, settings, the session).
The engines are the second line: DuckDB runs with external access, extension loading and its
configuration locked (`locked_duckdb`); Trino is reached as a read-only user (README, security)."""

from __future__ import annotations

from collections.abc import Collection

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from lakeplanner.errors import SqlError, UnsafeSqlError

MAX_SQL_CHARS = 20_000
MAX_DEPTH = 120
# Functions sqlglot does not know (exp.Anonymous) run only if named here; DuckDB's file, network,
# catalog and setting functions are all unknown to sqlglot, so they fall outside.
ANONYMOUS_ALLOWED = frozenset({"printf", "strip_accents", "hash", "list_sort", "list_distinct", "array_sort"})
DENIED_FUNCTIONS: tuple[type[exp.Expression], ...] = (
    exp.ReadCSV,
    exp.ReadParquet,
    exp.ToFile,
    exp.CurrentUser,
    exp.SessionUser,
    exp.CurrentRole,
    exp.CurrentSchema,
    exp.CurrentSchemas,
    exp.CurrentDatabase,
    exp.CurrentCatalog,
    exp.GenerateSeries,  # unbounded rows from nothing: no lake question needs it
)
LOCKED_DUCKDB = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "lock_configuration": True,
}
HINT = "write one SELECT over the listed tables, with standard SQL functions only"
FUNCTION_HINT = (
    "write it with DuckDB's functions: d - INTERVAL 30 DAY, date_diff('day', a, b), date_trunc('month', d), "
    "extract(year FROM d), strftime(d, '%Y-%m'), coalesce(a, b), round(x, 2)"
)


def refused(reason: str, hint: str = HINT) -> UnsafeSqlError:
    return UnsafeSqlError(f"refused SQL: {reason}", hint=hint)


def parse_select(sql: str, dialect: str = "duckdb") -> exp.Select:
    """`sql` as one read-only SELECT; anything else (several statements, DDL, DML, PRAGMA) is refused."""
    return read_only_select(parse_statement(sql, dialect))


def parse_statement(sql: str, dialect: str = "duckdb") -> exp.Expression:
    """`sql` as one statement, not yet judged (read_only_select judges it); several are refused."""
    if len(sql) > MAX_SQL_CHARS:
        raise refused(f"the statement is {len(sql):,} characters long (at most {MAX_SQL_CHARS:,})")
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (ParseError, TokenError) as e:
        raise SqlError(f"the SQL does not parse: {str(e).splitlines()[0]}", hint="rewrite the statement") from e
    except RecursionError as e:
        raise refused("it is nested too deeply to check") from e
    if len(statements) != 1:
        raise refused(f"{len(statements)} statements where one SELECT may run")
    return statements[0]


def read_only_select(statement: exp.Expression, tables: Collection[str] | None = None) -> exp.Select:
    """`statement` itself when it is one SELECT that reads only `tables` (any plain table name when
    None) and calls no function that reaches outside the query; UnsafeSqlError otherwise."""
    if not isinstance(statement, exp.Select):
        raise refused(f"only SELECT may run, not {statement.key.upper()}")
    if statement.args.get("into"):
        raise refused("SELECT INTO writes a table")
    check_depth(statement)
    for node in statement.walk():
        if isinstance(node, exp.Table):
            check_table(node, tables)
        elif isinstance(node, exp.Func):
            check_function(node)
        elif isinstance(node, exp.Command | exp.Pragma | exp.Set | exp.DDL | exp.DML):
            raise refused(f"it contains a {node.key.upper()} statement")
    return statement


def check_depth(statement: exp.Expression) -> None:
    stack = [(statement, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise refused(f"expressions are nested more than {MAX_DEPTH} deep")
        stack.extend((child, depth + 1) for child in node.iter_expressions())


def check_table(table: exp.Table, tables: Collection[str] | None) -> None:
    if not isinstance(table.this, exp.Identifier):
        raise refused(f"it reads from {table.this.sql(dialect='duckdb')[:80]}, not from a table of the lake")
    if table.args.get("db") or table.args.get("catalog"):
        raise refused(f"it reads {table.sql(dialect='duckdb')}, outside the lake's tables")
    if tables is not None and table.name not in tables:
        raise refused(f"it reads {table.name!r}, which it may not read", hint=f"use only {sorted(tables)}")


def check_function(function: exp.Func) -> None:
    if isinstance(function, DENIED_FUNCTIONS):
        raise refused(f"function {function.sql_name()} reaches outside the lake's tables")
    if isinstance(function, exp.Anonymous) and function.name.lower() not in ANONYMOUS_ALLOWED:
        raise refused(f"function {function.name}() is not allowed", hint=FUNCTION_HINT)


def locked_duckdb() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that cannot read or write files, load extensions or change its settings."""
    return duckdb.connect(config=LOCKED_DUCKDB)
