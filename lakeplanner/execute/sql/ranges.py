"""The quarter, half, month or range of dates a step names, filtered on the statement's date column
where the statement left it out: "parcels sent in Q3 2024" is not every parcel, nor every parcel of
2024. Two named ranges compared ("how much higher in H2 than in H1 2024") get the statement's one
figure once per range, each row labelled with the range's words, for the arithmetic over two labelled
rows (execute/arithmetic.py). A timestamp is compared by its calendar day, so a zoned instant counts on
its UTC date, as stored."""

from __future__ import annotations

from datetime import date

from sqlglot import exp

from lakeplanner.contract.models import FieldType
from lakeplanner.execute.sql.statement import conjuncts, drop_conjunct, is_aggregate
from lakeplanner.question import QuestionFrame
from lakeplanner.question.frame import DateRange

DATED = (FieldType.date, FieldType.timestamp)
COMPARISONS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.Between)


def range_the_step_names(frame: QuestionFrame, step: QuestionFrame) -> DateRange | None:
    """The one range of the question that the step's words quote; None for none or several (a
    comparison of two periods is arithmetic over both, not a filter)."""
    named = [r for r in frame.ranges if step.says(r.span.text)]
    return named[0] if len(named) == 1 else None


def dated_columns(statement: exp.Select, columns_of: dict[str, dict[str, FieldType]]) -> dict[exp.Column, FieldType]:
    """Date and timestamp columns of the statement's tables, as columns of their aliases, FROM table first."""
    found: dict[exp.Column, FieldType] = {}
    for table in statement.find_all(exp.Table):
        for name, kind in columns_of.get(table.name, {}).items():
            if kind in DATED:
                found[exp.column(name, table=table.alias_or_name)] = kind
    return found


def is_dated_literal(node: exp.Expression) -> bool:
    """A literal naming a day or month ('2024-07-01', DATE '2024-07'), not a bare year."""
    literal = node if isinstance(node, exp.Literal) else node.find(exp.Literal)
    return literal is not None and literal.is_string and "-" in literal.this


def compares_a_day(term: exp.Expression, dated: dict[exp.Column, FieldType]) -> bool:
    """The term compares one of the date columns with a day or a month."""
    names = {(c.table, c.name) for c in dated}
    columns = {(c.table, c.name) for c in term.find_all(exp.Column)}
    others = [e for e in term.iter_expressions() if not e.find(exp.Column)]
    return bool(columns & names) and any(is_dated_literal(e) for e in others)


def is_ranged(statement: exp.Select, dated: dict[exp.Column, FieldType]) -> bool:
    """Some date column is already compared with a day or a month."""
    return any(compares_a_day(c, dated) for c in statement.find_all(*COMPARISONS))


def filtered_column(statement: exp.Select, dated: dict[exp.Column, FieldType]) -> exp.Column | None:
    """The date column the statement reads already, else the FROM table's only one, else none."""
    used = {(c.table, c.name) for c in statement.find_all(exp.Column)}
    read = [c for c in dated if (c.table, c.name) in used]
    if len(read) == 1:
        return read[0]
    source = statement.args.get("from_")
    first = source.this.alias_or_name if source is not None and isinstance(source.this, exp.Table) else None
    own = [c for c in dated if c.table == first]
    return own[0] if not read and len(own) == 1 else None


def day(value: date) -> exp.Expression:
    return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.Type.DATE)


def within(statement: exp.Select, column: exp.Column, kind: FieldType, named: DateRange) -> None:
    """`column >= start AND column < end`, added to the statement's WHERE in place."""
    compared = column.copy() if kind is FieldType.date else exp.cast(column.copy(), exp.DataType.Type.DATE)
    statement.where(compared.copy() >= day(named.start), copy=False)
    statement.where(compared < day(named.end), copy=False)


def filter_named_range(
    statement: exp.Select, frame: QuestionFrame, step: QuestionFrame, columns_of: dict[str, dict[str, FieldType]]
) -> list[str]:
    """`column >= start AND column < end` for the range the step names, in place, when no date column
    of a one-SELECT statement is compared with a day or month yet."""
    named = range_the_step_names(frame, step)
    if named is None or len(list(statement.find_all(exp.Select))) != 1:
        return []
    dated = dated_columns(statement, columns_of)
    column = filtered_column(statement, dated) if dated and not is_ranged(statement, dated) else None
    if column is None:
        return []
    within(statement, column, dated[column], named)
    return [f"{column.sql('duckdb')} within {named.span.text} ({named.start} to {named.end}, end excluded)"]


def without_date_ranges(statement: exp.Select, dated: dict[exp.Column, FieldType]) -> exp.Select:
    """A copy without the WHERE terms that compare a date column with a day or a month."""
    copy = statement.copy()
    where = copy.args.get("where")
    if where is None:
        return copy
    for term in conjuncts(where.this):
        if compares_a_day(term, dated):
            if term is where.this or (isinstance(term.parent, exp.Paren) and term.parent is where.this):
                copy.set("where", None)
                break
            drop_conjunct(term)
    return copy


def per_range_statements(
    statement: exp.Select, frame: QuestionFrame, columns_of: dict[str, dict[str, FieldType]]
) -> list[exp.Select]:
    """For a question comparing two named ranges, the statement's one figure once per range, as
    `SELECT '<the range's words>' AS period, <figure>`; none when the statement is no single figure
    (one aggregate, no GROUP BY) over one date column."""
    if len(frame.ranges) != 2 or len(list(statement.find_all(exp.Select))) != 1:
        return []
    if not is_aggregate(statement) or statement.args.get("group") or len(statement.expressions) != 1:
        return []
    dated = dated_columns(statement, columns_of)
    column = filtered_column(statement, dated) if dated else None
    if column is None:
        return []
    statements = []
    for named in frame.ranges:
        each = without_date_ranges(statement, dated)
        within(each, column, dated[column], named)
        figure = each.expressions[0]
        each.set("expressions", [exp.alias_(exp.Literal.string(named.span.text), "period"), figure])
        statements.append(each)
    return statements
