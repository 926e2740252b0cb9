"""The tables a written statement may read beyond its step's, and the nearest real names to a wrong one.

A step planned on one table may need others: a count of T's rows filtered by an attribute of a related
table, an aggregate along parcels -> couriers -> depots. When the writer's statement reads tables the
step did not name, the role may read them, and the contract's foreign keys connect every table the
statement reads, the step is widened to them (and the trace says so) instead of refusing a right
statement and asking for it again.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from sqlglot import exp

from lakeplanner.plan.lake_schema import LakeSchema

NEAREST = 3


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


def unknown_columns(statement: exp.Select, columns_of: dict[str, dict], tables: Sequence[str]) -> list[str]:
    """Column names the statement uses that none of `tables` holds and no output column is named."""
    held = {c for t in tables for c in columns_of.get(t, {})}
    named = {n for select in statement.find_all(exp.Select) for n in select.named_selects}
    return list(dict.fromkeys(c.name for c in statement.find_all(exp.Column) if c.name not in held | named))


def nearest_columns(name: str, columns_of: dict[str, dict], tables: Sequence[str]) -> list[str]:
    """The `table.column` names of `tables` closest to `name`, in its words or its spelling."""
    names = {f"{t}.{c}": c for t in tables for c in columns_of.get(t, {})}
    words = set(name.lower().split("_"))
    sharing = [q for q, c in names.items() if words & set(c.lower().split("_"))]
    spelled = difflib.get_close_matches(name.lower(), list(names.values()), n=NEAREST, cutoff=0.6)
    spelled_names = [q for q, c in names.items() if c in spelled]
    return list(dict.fromkeys([*spelled_names, *sharing]))[:NEAREST]


def unknown_names_hint(statement: exp.Select, columns_of: dict[str, dict], tables: Sequence[str]) -> str | None:
    """'no column weight: nearest parcels.weight_kg' for each name the tables lack that some real
    column is near, or None."""
    parts = []
    for name in unknown_columns(statement, columns_of, tables):
        if nearest := nearest_columns(name, columns_of, tables):
            parts.append(f"no column {name}: nearest {', '.join(nearest)}")
    return "; ".join(parts) or None
