"""SQL engines, registered by name: DuckDB over pyiceberg scans (embedded default) and Trino.

DuckDB never reads a whole table: each table is scanned through pyiceberg with the columns the
statement uses and the WHERE conjuncts that touch only that table, so Iceberg prunes files by their
statistics and Parquet reads only those columns. Bytes scanned are the on-disk sizes of the projected
columns in the files the scan planned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import duckdb
import pyarrow as pa
from pyiceberg import expressions as ice
from pyiceberg.expressions.visitors import bind
from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify

from lakeplanner.errors import EngineError, LakeplannerError, MissingDependencyError
from lakeplanner.execute.sql.statement import SqlRuntimeError
from lakeplanner.plan.filters import FLIPPED
from lakeplanner.policy.readonly import locked_duckdb, read_only_select
from lakeplanner.timebox import check_time, interrupt_when_spent, seconds_left

ICEBERG_COMPARISONS: dict[type[exp.Expression], Callable[[str, Any], ice.BooleanExpression]] = {
    exp.EQ: ice.EqualTo,
    exp.NEQ: ice.NotEqualTo,
    exp.GT: ice.GreaterThan,
    exp.GTE: ice.GreaterThanOrEqual,
    exp.LT: ice.LessThan,
    exp.LTE: ice.LessThanOrEqual,
}


@dataclass
class Scan:
    """What an engine read for one statement."""

    table: pa.Table
    snapshots: dict[str, int | None]
    bytes_scanned: int = 0
    bytes_total: int = 0
    pushed: dict[str, str] = field(default_factory=dict)  # table -> the pushed-down filter
    ran: exp.Expression | None = None  # the statement as run, when a policy rewrote it
    decisions: list[str] = field(default_factory=list)  # the policy decisions made for it


class SqlEngine(Protocol):
    name: str

    def run(self, statement: exp.Select, snapshots: dict[str, int | None] | None = None) -> Scan:
        """Run a checked SELECT; `snapshots` pins tables to Iceberg snapshot ids (replay)."""


EngineFactory = Callable[..., SqlEngine]
_ENGINES: dict[str, EngineFactory] = {}
SEVERAL_ROWS_IN_SUBQUERY = "More than one row returned by a subquery"


def register_engine(name: str) -> Callable[[EngineFactory], EngineFactory]:
    def register(factory: EngineFactory) -> EngineFactory:
        _ENGINES[name] = factory
        return factory

    return register


def get_engine(name: str, lake, settings) -> SqlEngine:
    if name not in _ENGINES:
        raise LakeplannerError(f"unknown SQL engine {name!r}", hint=f"choose one of {sorted(_ENGINES)}")
    return _ENGINES[name](lake, settings)


def _value(literal: exp.Expression) -> Any:
    if isinstance(literal, exp.Literal):
        if literal.is_string:
            return literal.this
        text = literal.this
        return float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(literal, exp.Boolean):
        return literal.this
    raise ValueError("not a literal")


def _conjuncts(where: exp.Expression | None) -> list[exp.Expression]:
    if where is None:
        return []
    return list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]


def iceberg_filter(condition: exp.Expression) -> tuple[str, ice.BooleanExpression] | None:
    """(table alias, pyiceberg expression) for a simple one-table predicate, else None."""
    try:
        if isinstance(condition, exp.In) and isinstance(condition.this, exp.Column) and not condition.args.get("query"):
            values = [_value(v) for v in condition.expressions]
            if any(v is None for v in values):
                return None
            return condition.this.table, ice.In(condition.this.name, values)
        if type(condition) in ICEBERG_COMPARISONS:
            left, right, kind = condition.left, condition.right, type(condition)
            if isinstance(right, exp.Column) and not isinstance(left, exp.Column):
                left, right, kind = right, left, FLIPPED[kind]
            if isinstance(left, exp.Column):
                return left.table, ICEBERG_COMPARISONS[kind](left.name, _value(right))
        if isinstance(condition, exp.Between) and isinstance(condition.this, exp.Column):
            column = condition.this
            low, high = _value(condition.args["low"]), _value(condition.args["high"])
            return column.table, ice.And(
                ice.GreaterThanOrEqual(column.name, low), ice.LessThanOrEqual(column.name, high)
            )
    except (ValueError, TypeError):
        return None
    return None


def pushdown(statement: exp.Select) -> dict[str, tuple[str, set[str], ice.BooleanExpression]]:
    """alias -> (table, columns used, filter) for a qualified statement. Tables read more than once
    (self-joins) get no filter, so one scan serves every alias."""
    tables = {t.alias_or_name: t.name for t in statement.find_all(exp.Table)}
    repeated = {name for name in tables.values() if list(tables.values()).count(name) > 1}
    plan: dict[str, tuple[str, set[str], ice.BooleanExpression]] = {
        alias: (name, set(), ice.AlwaysTrue()) for alias, name in tables.items()
    }
    for column in statement.find_all(exp.Column):
        if column.table in plan:
            plan[column.table][1].add(column.name)
    for condition in _conjuncts(statement.args.get("where")):
        if condition.find(exp.Subquery) is not None:
            continue
        found = iceberg_filter(condition)
        if found and found[0] in plan and plan[found[0]][0] not in repeated:
            name, columns, current = plan[found[0]]
            plan[found[0]] = (name, columns, ice.And(current, found[1]))
    return plan


def bindable(row_filter: ice.BooleanExpression, schema) -> ice.BooleanExpression:
    """The parts of a pushed-down filter the table's schema can bind. A literal Iceberg cannot convert
    (a date string against a timestamp-with-zone column) is left to DuckDB, which runs the whole WHERE."""
    parts = list(conjuncts(row_filter))
    kept = [p for p in parts if binds(p, schema)]
    return ice.And(*kept) if len(kept) > 1 else (kept[0] if kept else ice.AlwaysTrue())


def conjuncts(expression: ice.BooleanExpression):
    if isinstance(expression, ice.And):
        yield from conjuncts(expression.left)
        yield from conjuncts(expression.right)
    elif not isinstance(expression, ice.AlwaysTrue):
        yield expression


def binds(expression: ice.BooleanExpression, schema) -> bool:
    try:
        bind(schema, expression, case_sensitive=True)
    except (ValueError, TypeError):
        return False
    return True


def projected_bytes(scan, table, columns: set[str]) -> tuple[int, int]:
    """(bytes of the projected columns in the planned files, bytes of every column of every file)."""
    ids = {f.field_id for f in table.schema().fields if f.name in columns}
    scanned = 0
    for task in scan.plan_files():
        sizes = task.file.column_sizes or {}
        scanned += (
            sum(size for field_id, size in sizes.items() if field_id in ids) if sizes else task.file.file_size_in_bytes
        )
    snapshot = table.current_snapshot()
    total = int(snapshot.summary["total-files-size"]) if snapshot and snapshot.summary else 0
    return scanned, total


@register_engine("duckdb")
class DuckDBEngine:
    """DuckDB over pyiceberg scans with predicate and projection pushdown."""

    name = "duckdb"

    def __init__(self, lake, settings=None) -> None:
        self.lake = lake

    def run(self, statement: exp.Select, snapshots: dict[str, int | None] | None = None) -> Scan:
        snapshots = dict(snapshots or {})
        read_only_select(statement, self.lake.table_names())
        tables = {t.name: self.lake.table(t.name) for t in statement.find_all(exp.Table)}
        statement = qualified(statement, tables)
        con = locked_duckdb()
        scanned = total = 0
        pushed = {}
        try:
            for name, (columns, row_filter) in scans_by_table(pushdown(statement)).items():
                table = tables[name]
                snapshot_id = snapshots.get(name) or (
                    table.current_snapshot().snapshot_id if table.current_snapshot() else None
                )
                snapshots[name] = snapshot_id
                needed = columns or {table.schema().fields[0].name}  # count(*) still reads one column
                row_filter = bindable(row_filter, table.schema())
                scan = table.scan(row_filter=row_filter, selected_fields=tuple(sorted(needed)), snapshot_id=snapshot_id)
                read, full = projected_bytes(scan, table, needed)
                scanned, total = scanned + read, total + full
                con.register(name, scan.to_arrow())
                pushed[name] = str(row_filter)
            with interrupt_when_spent(con.interrupt):
                result = con.sql(statement.sql(dialect="duckdb")).to_arrow_table()
        except duckdb.Error as e:
            check_time()
            first_line = str(e).splitlines()[0]
            raise SqlRuntimeError(f"DuckDB: {first_line}", hint=runtime_hint(first_line)) from e
        finally:
            con.close()
        return Scan(result, snapshots, scanned, total, pushed)


def qualified(statement: exp.Select, tables: dict[str, Any]) -> exp.Select:
    """Every column tied to its table, so each scan reads only its own columns."""
    schema = {name: {f.name: "VARCHAR" for f in table.schema().fields} for name, table in tables.items()}
    try:
        return qualify(statement.copy(), schema=schema, dialect="duckdb")
    except OptimizeError as e:
        raise SqlRuntimeError(f"DuckDB: {e}", hint="the SQL names a column the table lacks") from e


def runtime_hint(message: str) -> str:
    if SEVERAL_ROWS_IN_SUBQUERY in message:  # the LLM subtracted one subquery from another
        return "a subquery used as a value found several rows: select the rows with their labels and years instead"
    return "the SQL is wrong for this data"


def scans_by_table(
    plan: dict[str, tuple[str, set[str], ice.BooleanExpression]],
) -> dict[str, tuple[set[str], ice.BooleanExpression]]:
    """One scan per table: the columns used under any of its aliases, and its pushed filter (a table
    read under several aliases has none, see `pushdown`)."""
    scans: dict[str, tuple[set[str], ice.BooleanExpression]] = {}
    for name, columns, row_filter in plan.values():
        used, first_filter = scans.get(name, (set(), row_filter))
        scans[name] = (used | columns, first_filter)
    return scans


@register_engine("trino")
class TrinoEngine:
    """Trino with the Iceberg connector: the statement is transpiled by sqlglot; snapshots pin tables
    with FOR VERSION AS OF. Snapshot ids are read from the same Iceberg catalog."""

    name = "trino"

    def __init__(self, lake, settings) -> None:
        try:
            import trino
        except ImportError as e:
            raise MissingDependencyError("the trino engine needs the trino client", hint="pip install trino") from e
        self.lake = lake
        self.settings = settings
        self.trino = trino

    def transpile(self, statement: exp.Select, snapshots: dict[str, int | None]) -> str:
        pinned = statement.copy()
        for table in pinned.find_all(exp.Table):
            if snapshots.get(table.name):
                table.set(
                    "version",
                    exp.Version(this="VERSION", kind="AS OF", expression=exp.Literal.number(snapshots[table.name])),
                )
        return pinned.sql(dialect="trino")

    def run(self, statement: exp.Select, snapshots: dict[str, int | None] | None = None) -> Scan:
        snapshots = dict(snapshots or {})
        read_only_select(statement, self.lake.table_names())
        for table in statement.find_all(exp.Table):
            if not snapshots.get(table.name):
                current = self.lake.table(table.name).current_snapshot()
                snapshots[table.name] = current.snapshot_id if current else None
        sql = self.transpile(statement, snapshots)
        s = self.settings
        check_time()
        try:
            with self.trino.dbapi.connect(
                host=s.trino_host,
                port=s.trino_port,
                user=s.trino_user,
                catalog=s.trino_catalog,
                schema=s.trino_schema,
                http_scheme=s.trino_scheme,
                request_timeout=seconds_left(s.node_timeout_s),
            ) as con:
                cursor = con.cursor()
                cursor.execute(sql)
                rows = cursor.fetchall()
                names = [d[0] for d in cursor.description]
        except self.trino.exceptions.TrinoUserError as e:
            raise SqlRuntimeError(f"Trino: {e.message}", hint="the SQL is wrong for this data") from e
        except (self.trino.exceptions.TrinoConnectionError, self.trino.exceptions.HttpError, OSError) as e:
            check_time()
            raise EngineError(
                f"Trino at {s.trino_host}:{s.trino_port} is unreachable: {e}",
                hint="check LAKEPLANNER_EXEC_TRINO_HOST/PORT, or use the duckdb engine",
            ) from e
        table = (
            pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in rows])
            if rows
            else pa.table({n: pa.array([], pa.string()) for n in names})
        )
        return Scan(table, snapshots)
