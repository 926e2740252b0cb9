"""Row filters and column masks enforced on the SQL itself: every scan of a governed table becomes
a derived table that keeps only the rows the role's filter admits and projects masked columns as
NULL or as their hash. The engine (DuckDB or Trino) runs the rewritten statement; nothing is asked
of the LLM."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from lakeplanner.errors import AccessDeniedError
from lakeplanner.policy.model import Access, Mask, parse_predicate

ColumnsOf = Callable[[str], list[str]]  # a table's columns, in order


def masked(column: str, mask: Mask) -> exp.Expression:
    if mask is Mask.null:
        return exp.alias_(exp.Null(), column, quoted=True)
    text = exp.cast(exp.column(column, quoted=True), exp.DataType.Type.VARCHAR)
    return exp.alias_(exp.SHA2(this=text, length=exp.Literal.number(256)), column, quoted=True)


def governed_scan(table: exp.Table, access: Access, columns_of: ColumnsOf) -> exp.Expression:
    """`table` as the role may read it: a subquery under the table's own alias (or name)."""
    name = table.name
    masks = access.masks.get(name, {})
    projections = [masked(c, masks[c]) if c in masks else exp.column(c, quoted=True) for c in columns_of(name)] or [
        exp.Star()
    ]
    scan = exp.select(*projections).from_(exp.Table(this=exp.to_identifier(name), db=table.args.get("db")))
    if name in access.row_filters:
        scan = scan.where(parse_predicate(access.row_filters[name], f"the row filter of {name}"))
    return scan.subquery(table.alias_or_name)


def guard(statement: exp.Expression, access: Access, columns_of: ColumnsOf) -> tuple[exp.Expression, list[str]]:
    """The statement as `access` may run it, and the policy decisions made (for the span).

    Raises AccessDeniedError when it reads a table the role may not read."""
    if not access.restricted:
        return statement, []
    ctes = {cte.alias_or_name for cte in statement.find_all(exp.CTE)}
    scans = [t for t in statement.find_all(exp.Table) if t.name not in ctes]
    denied = sorted({t.name for t in scans if not access.reads_table(t.name)})
    if denied:
        raise AccessDeniedError(
            f"role {access.role!r} may not read {', '.join(denied)}",
            hint="ask about tables your role may read, or ask an administrator for a role that reads them",
        )
    decisions = [f"allowed {name}" for name in sorted({t.name for t in scans})]
    governed = [t for t in scans if t.name in access.row_filters or access.masks.get(t.name)]
    if not governed:
        return statement, decisions
    statement = statement.copy()
    for table in [t for t in statement.find_all(exp.Table) if t.name not in ctes]:
        if table.name in access.row_filters or access.masks.get(table.name):
            table.replace(governed_scan(table, access, columns_of))
    for name in sorted({t.name for t in governed}):
        if name in access.row_filters:
            decisions.append(f"filtered {name}: {access.row_filters[name]}")
        for column, mask in sorted(access.masks.get(name, {}).items()):
            decisions.append(f"masked {name}.{column} ({mask})")
    return statement, decisions


class GuardedEngine:
    """A SQL engine that runs each statement as `access` may: the guard's rewrite, then the engine."""

    def __init__(self, engine, access: Access, columns_of: ColumnsOf) -> None:
        self.engine = engine
        self.name = engine.name
        self.access = access
        self.columns_of = columns_of

    def run(self, statement: exp.Expression, snapshots: dict[str, int | None] | None = None):
        ran, decisions = guard(statement, self.access, self.columns_of)
        scan = self.engine.run(ran, snapshots)
        if ran is not statement:
            scan.ran = ran
        scan.decisions = decisions
        return scan
