"""The SQL writer's prompt: the step's tables with their columns, joins and example values, the lake
values the step names or lost, and the shape of a statement over periods."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from lakeplanner.contract.models import Contract, FieldType, ForeignKey
from lakeplanner.llm.base import Message, system, user
from lakeplanner.plan.model import PlanNode
from lakeplanner.question.years import years_in

SQL_INSTRUCTIONS = """You write one DuckDB SELECT statement that answers a sub-question from the tables \
below. Use only these tables and columns. Join only along the listed joins. When the sub-question \
mentions $var_N.column, those are values computed earlier: write them literally, as in \
`WHERE customer_id IN ($var_1.customer_id)`; never invent their values. Return the columns that \
answer the sub-question (and the listed `returns` columns). Text comparisons are case-sensitive: use \
ILIKE for names. For a change or difference between years or items, or the values of several years, \
select the rows of each with the year or item and the value ("""


# what follows depends on the tables, so the part above is the SQL writer's fixed prefix
SQL_PERIOD_INSTRUCTIONS = """{period_example}); the arithmetic is done later. Reply with JSON {{"sql": "..."}}."""


class SqlDraft(BaseModel):
    sql: str = Field(max_length=1200)


def schema_block(contract: Contract, tables: Sequence[str]) -> str:
    lines = []
    for name in tables:
        fields = [f for f in contract.fields_of(name) if f.column]
        columns = ", ".join(
            f"{f.column} {f.type}" + (f" (e.g. {f.examples[0][:25]})" if f.examples else "") for f in fields
        )
        lines.append(f"{name}({columns})")
    joins = [join_line(fk) for fk in contract.foreign_keys if fk.source in tables and fk.target in tables]
    if joins:
        lines.append("Joins: " + "; ".join(joins))
    return "\n".join(lines)


def join_line(fk: ForeignKey) -> str:
    """A join as the SQL prompt lists it; a table's reference to itself with the two aliases it needs
    (a small model otherwise reaches the other row through unrelated tables)."""
    line = f"{fk.source}.{fk.column} = {fk.target}.{fk.target_column}"
    if fk.source != fk.target:
        return line
    table, other = fk.source, fk.column
    aliased = f"FROM {table} AS t JOIN {table} AS {other} ON t.{fk.column} = {other}.{fk.target_column}"
    return f"{line} (another {table} row: {aliased})"


def period_example(contract: Contract, tables: Sequence[str]) -> str:
    """How to select per-year values, written with the tables' own period column: a date or timestamp
    column (its year), else an integer column of years; the years are two its examples hold."""
    for table in tables:
        for f in contract.fields_of(table):
            years = sorted({y for e in f.examples for y in years_in(e)})
            years = years[-2:] if len(years) >= 2 else [years[0] - 1, years[0]] if years else [2023, 2024]
            held = ", ".join(map(str, years))
            if f.column and f.type in (FieldType.date, FieldType.timestamp):
                return f"`SELECT YEAR({f.column}) AS year, ... WHERE YEAR({f.column}) IN ({held}) GROUP BY year`"
            if f.column and f.type is FieldType.integer and f.examples and all(years_in(e) for e in f.examples):
                return f"`WHERE {f.column} IN ({held})`"
    return "`SELECT item, value ... WHERE item IN ('A', 'B')`"


def examples_chars(contract: Contract, tables: Sequence[str]) -> int:
    """Characters of lake data (example values) the SQL prompt shows."""
    return sum(len(f.examples[0][:25]) for t in tables for f in contract.fields_of(t) if f.column and f.examples)


def values_block(values: dict[str, list[str]]) -> str:
    return "\n".join(f"{column}: " + " | ".join(held) for column, held in values.items())


def values_chars(values: dict[str, list[str]]) -> int:
    return sum(len(" | ".join(held)) for held in values.values())


def sql_messages(
    node: PlanNode,
    contract: Contract,
    tables: Sequence[str],
    bound: dict[str, int],
    feedback: str | None = None,
    categories: dict[str, list[str]] | None = None,
    lost: dict[str, list[str]] | None = None,
) -> list[Message]:
    """bound: `$var_n.column` -> number of values it holds (the values stay out of the prompt);
    categories: the values to list, as named_values chose them; lost: lost_values."""
    ask = f"Sub-question: {node.question}"
    if lost:
        named = "; ".join(f"{column} = " + " or ".join(f"'{v}'" for v in values) for column, values in lost.items())
        ask += f"\nThe question names the rows: {named} (filter on them)"
    if node.returns:
        ask += f"\nReturn at least: {', '.join(node.returns)}"
    if bound:
        ask += "\nBound values: " + "; ".join(f"{ref} holds {n} value(s)" for ref, n in bound.items())
    catalog = schema_block(contract, tables)
    if categories:
        catalog += "\nValues:\n" + values_block(categories)
    period = SQL_PERIOD_INSTRUCTIONS.format(period_example=period_example(contract, tables))
    messages = [system(SQL_INSTRUCTIONS, period + "\n\nTables:\n" + catalog), user(ask)]
    if feedback:
        messages.append(user(f"The previous statement failed: {feedback}\nWrite a corrected statement."))
    return messages
