"""The tables a written statement may read beyond its step's.

A step planned on one table may need others: a count of T's rows filtered by an attribute of a related
table, an aggregate along parcels -> couriers -> depots. When the writer's statement reads tables the
step did not name, the role may read them, and the contract's foreign keys connect every table the
statement reads, the step is widened to them (and the trace says so) instead of refusing a right
statement and asking for it again.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from lakeplanner.plan.lake_schema import LakeSchema


def tables_read(statement: exp.Select) -> list[str]:
    return list(dict.fromkeys(t.name for t in statement.find_all(exp.Table) if isinstance(t.this, exp.Identifier)))


def widened_tables(statement: exp.Select, allowed: Sequence[str], schema: LakeSchema) -> list[str]:
    """The tables outside `allowed` the statement reads, when the role may read each and foreign keys
    join all the statement's tables into one; none otherwise (the guard then refuses as before)."""
    read = tables_read(statement)
    extra = [t for t in read if t not in allowed]
    if not extra or any(t not in schema.tables or t in schema.denied for t in extra):
        return []
    return extra if connected(read, schema.joins) else []


def connected(tables: Sequence[str], joins: dict[str, set[str]]) -> bool:
    """Whether foreign keys among `tables` alone join them all (tables read only in a subquery count too)."""
    wanted = set(tables)
    reached, frontier = {tables[0]}, [tables[0]]
    while frontier:
        for near in joins.get(frontier.pop(), set()) & (wanted - reached):
            reached.add(near)
            frontier.append(near)
    return reached == wanted
