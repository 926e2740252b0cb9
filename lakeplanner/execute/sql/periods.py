"""Statements per period: the values of the named years of the rows a statement reads, and an
aggregate per year over dated events, for arithmetic over years (execute/arithmetic.py)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from lakeplanner.contract.models import FieldType
from lakeplanner.contract.profile import is_provenance
from lakeplanner.execute.arithmetic import is_year_column
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.words import stem
from lakeplanner.question.years import years_in

NUMERIC = (FieldType.integer, FieldType.number)


def names_years(condition: exp.In) -> bool:
    return is_year_column(condition.this.name) or all(len(years_in(str(e.this))) == 1 for e in condition.expressions)


def computes_arithmetic(statement: exp.Select) -> bool:
    """A selected value is arithmetic the statement did itself (a change, a ratio), not a value it read."""
    return any(e.find(exp.Add, exp.Sub, exp.Mul, exp.Div) is not None for e in statement.expressions)


def item_filters(statement: exp.Select) -> dict[str, set[str]]:
    """column -> the strings the statement compares it with (`item = 'Total'`), wherever they sit;
    a label that names a year ('June 1, 2019') selects a year, not the item, and is left out."""
    filters: dict[str, set[str]] = {}
    for condition in statement.find_all(exp.EQ):
        sides = [condition.this, condition.expression]
        column = next((c for c in sides if isinstance(c, exp.Column)), None)
        literal = next((c for c in sides if isinstance(c, exp.Literal) and c.is_string), None)
        if column is not None and literal is not None and not years_in(literal.this):
            filters.setdefault(column.name, set()).add(literal.this)
    return filters


def year_values_statement(
    statement: exp.Select,
    tables: dict[str, dict[str, FieldType]],
    years: Sequence[int],
    named: dict[str, str] | None = None,
) -> exp.Select | None:
    """For a question over named years ("the change in X from 2018 to 2019", "X in 2019 and in 2018,
    each"): one value per year of what the statement filters on. The statement's item_filters on
    its one table are kept; it selects the year column and the one numeric column the statement reads,
    for the named years (no `years`: every year). `named` (table.column -> value: the row the question
    names) stands in for a statement that filters on no item, and the table's one numeric column for one
    that reads none. None when it reads several tables or numeric columns, or nothing names the item."""
    read = {t.name for t in statement.find_all(exp.Table)}
    if len(read) != 1:
        return None
    table = read.pop()
    columns = tables.get(table, {})
    year = next((c for c in columns if is_year_column(c)), None)
    numeric = {c.name for c in statement.find_all(exp.Column) if columns.get(c.name) in NUMERIC and c.name != year}
    if not numeric:
        numeric = {c for c, t in columns.items() if t in NUMERIC and c != year and not is_provenance(c)}
    if year is None or len(numeric) != 1:
        return None
    filters = {column: held for column, held in item_filters(statement).items() if column in columns}
    filters.pop(year, None)
    if not filters:
        filters = {key.split(".", 1)[1]: {value} for key, value in (named or {}).items() if key.startswith(f"{table}.")}
    if not filters or any(len(values) > 1 for values in filters.values()):
        return None
    where = [exp.column(name).eq(exp.Literal.string(values.pop())) for name, values in sorted(filters.items())]
    if years:
        where.append(exp.column(year).isin(*[exp.Literal.number(y) for y in years]))
    return exp.select(exp.column(year), exp.column(numeric.pop())).from_(table).where(exp.and_(*where))


MEASURE_FUNCTIONS = {Operation.sum: exp.Sum, Operation.average: exp.Avg}


DATED = (FieldType.date, FieldType.timestamp)


def period_aggregate_statement(
    statement: exp.Select,
    tables: dict[str, dict[str, FieldType]],
    years: Sequence[int],
    frame: QuestionFrame,
    named: dict[str, str] | None = None,
) -> exp.Select | None:
    """For a change between named years over a table of events (a row per event, no year column):
    the measure the question asks (frame.measure: a count, a total, an average) per year of the
    events' date, with the statement's item filters (or the row the question names). The date is the
    one the statement reads, else the one the question names ("opened"), else the table's first.
    None when the statement reads several tables, the measure is unknown, or its column is unclear."""
    read = {t.name for t in statement.find_all(exp.Table)}
    if len(read) != 1 or frame.measure is None or len(years) < 2:
        return None
    table = read.pop()
    columns = tables.get(table, {})
    date = event_date(statement, columns, frame)
    if date is None:
        return None
    if frame.measure is Operation.count:
        value: exp.Expression = exp.Count(this=exp.Star())
    else:
        column = measured_column(statement, columns, frame)
        if column is None:
            return None
        value = MEASURE_FUNCTIONS[frame.measure](this=exp.column(column))
    filters = {column: held for column, held in item_filters(statement).items() if column in columns}
    for key, held in (named or {}).items():
        if key.startswith(f"{table}."):
            filters.setdefault(key.split(".", 1)[1], {held})
    if any(len(values) > 1 for values in filters.values()):
        return None
    year = exp.Year(this=exp.column(date))
    where = [exp.column(name).eq(exp.Literal.string(next(iter(v)))) for name, v in sorted(filters.items())]
    where.append(year.copy().isin(*[exp.Literal.number(y) for y in years]))
    return (
        exp.select(exp.alias_(year.copy(), "year"), exp.alias_(value, "value"))
        .from_(table)
        .where(exp.and_(*where))
        .group_by(year.copy())
        .order_by(year.copy())
    )


def event_date(statement: exp.Select, columns: dict[str, FieldType], frame: QuestionFrame) -> str | None:
    dated = [c for c, t in columns.items() if t in DATED]
    read = [c.name for c in statement.find_all(exp.Column) if c.name in dated]
    asked = frame.content_stems
    named = [c for c in dated if {stem(p) for p in c.split("_")} & asked]
    for choice in (read, named, dated):
        if len(set(choice)) == 1 or (choice is dated and choice):
            return choice[0]
    return None


def measured_column(statement: exp.Select, columns: dict[str, FieldType], frame: QuestionFrame) -> str | None:
    """The numeric column the statement aggregates or reads, else the one the question names."""
    numeric = {c for c, t in columns.items() if t in NUMERIC and not is_provenance(c) and not is_year_column(c)}
    aggregated = {c.name for agg in statement.find_all(exp.AggFunc) for c in agg.find_all(exp.Column)} & numeric
    read = {c.name for c in statement.find_all(exp.Column)} & numeric
    asked = frame.content_stems
    named = {c for c in numeric if {stem(p) for p in c.split("_")} & asked}
    for choice in (aggregated, named, read):
        if len(choice) == 1:
            return choice.pop()
    return None
