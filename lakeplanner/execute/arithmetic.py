"""Computed answers, whose expression never comes from the LLM's arithmetic.

Question-type templates (seed 002 §3.5): a change, a percentage change, an average or a ratio over the
years a question names, from one value per year in the results. "The change in X from 2018 to 2019" with rows
(2019, 1.6) and (2018, 1.2) is `1.6 - 1.2` whatever the LLM wrote. A template applies only when every
named year has exactly one value; otherwise synthesis keeps the LLM's calculation. A value asked for each
of several years ("X in 2019 and in 2018, each") is the list of those values in the order the question names
the years.

Two shapes over named rows: "the difference between the 0-14 and 15-64 age groups" over two rows of one value
each is the first named minus the second ("from A to B": B minus A); "what percentage of the total X is Y" is the
smaller of the two over the larger. Both apply only when the LLM's own answer is not grounded.

"In which year was X higher?" is the year of the largest value the results hold per year; "the average X"
naming no year is the mean over every year held (when the LLM's own answer is not grounded); "the change in
X" naming no year is the change between the two years held, when they are two.

Elapsed time: "how many hours did batch X take from mashing to bottling" over the one row read, holding
two moments, is the time between them in the unit asked.

Derivations: a number the LLM computed anyway (302 - 148 written as 154) is traced to a simple
expression over two cells, which the evaluator then redoes.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re
from collections.abc import Callable

from lakeplanner.execute.results import NodeResult
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.years import is_year_number, years_in

YEAR_COLUMN = re.compile(r"^(?:period|yr|year)$|(?:^|_)year$|^year_", re.I)  # year, school_year, intake_year
DERIVATIONS: tuple[tuple[str, Callable[[float, float], float]], ...] = (
    ("{a} - {b}", lambda a, b: a - b),
    ("{a} + {b}", lambda a, b: a + b),
    ("({a} - {b}) / {b} * 100", lambda a, b: (a - b) / b * 100),
    ("{a} / {b} * 100", lambda a, b: a / b * 100),
    ("{a} / {b}", lambda a, b: a / b),
    ("({a} + {b}) / 2", lambda a, b: (a + b) / 2),
)
MAX_OPERANDS = 40
KEY_LABEL = "key of "  # a row key set beside a row's cells (with_keys)
MAX_FROM_GAP = 12
SUBTRACTIONS = (Operation.change, Operation.difference)


def compares(frame: QuestionFrame) -> bool:
    """The question sets values side by side (a change, a ratio, an average, one value for each),
    rather than asking for one figure over all of them."""
    return template_for(frame) is not None or frame.operation is Operation.ratio or frame.several


def is_number(value: object) -> bool:
    """A usable figure: not a flag, and finite (a SQL division by zero yields inf or NaN)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def year_of(row: dict) -> int | None:
    for column in (c for c in row if is_year_column(c)):
        value = row.get(column)
        if is_year_number(value):
            return int(value)
        if isinstance(value, str) and len(years := years_in(value)) == 1:
            return years[0]
    return None


def values_by_year(results: list[NodeResult]) -> dict[int, float] | None:
    """One value per year: from a year column, or from a one-row result whose sub-question names one
    year. None when a year has two different values (the rows mix items)."""
    found: dict[int, float] = {}
    for result in results:
        for row in result.rows:
            numbers = numbers_of(row)
            if len(numbers) != 1:
                continue
            year = year_of(row)
            if year is None and len(result.rows) == 1 and len(result.years) == 1:
                year = result.years[0]
            if year is None:
                continue
            if year in found and found[year] != numbers[0]:
                return None
            found[year] = float(numbers[0])
    return found


def operand(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def template_for(frame: QuestionFrame) -> Callable[[float, float], str] | None:
    if frame.operation is Operation.percent_change:
        return lambda old, new: f"({operand(new)} - {operand(old)}) / {operand(old)} * 100"
    if frame.operation in SUBTRACTIONS:
        return lambda old, new: f"{operand(new)} - {operand(old)}"
    if frame.operation is Operation.average:
        return lambda a, b: f"({operand(a)} + {operand(b)}) / 2"
    return None


def arithmetic_years(frame: QuestionFrame) -> list[int]:
    """The years a templated calculation reads: every listed year of an average ("2017-2019" is three),
    the two named years of a change, percentage change or ratio; none for other questions."""
    if frame.operation is Operation.average:
        return list(frame.listed_years) if len(frame.listed_years) >= 2 else []
    years = frame.years
    applies = template_for(frame) is not None or frame.operation is Operation.ratio
    return years if len(years) == 2 and applies else []


def asks_per_year(frame: QuestionFrame) -> bool:
    """One value for each of several named years, as a list ("X in 2019 and in 2018, each")."""
    return frame.several and len(frame.listed_years) >= 2 and not arithmetic_years(frame)


def years_asked(frame: QuestionFrame) -> list[int]:
    """The years a templated answer needs one value each for: those of its arithmetic, or the listed ones
    of a per-year list; none for other questions."""
    return arithmetic_years(frame) or (list(frame.listed_years) if asks_per_year(frame) else [])


def asks_every_year(frame: QuestionFrame) -> bool:
    """A templated answer that reads every year the table holds: "in which year was X higher" naming
    fewer than two years, or an average or a change naming none."""
    return (
        (frame.asks_year and len(frame.years) < 2)
        or (frame.operation is Operation.average and not frame.years)
        or asks_unnamed_change(frame)
    )


def per_year_values(frame: QuestionFrame, results: list[NodeResult]) -> list[float] | None:
    """The values a per-year question asks for, in the order it names the years; None when a year has
    no single value in the results."""
    if not asks_per_year(frame):
        return None
    values = values_by_year(results)
    years = frame.listed_years
    return [values[y] for y in years] if values and all(y in values for y in years) else None


def year_arithmetic(frame: QuestionFrame, results: list[NodeResult]) -> str | None:
    """The expression a change / percentage change / ratio question over two named years, or an average
    over the years named, asks for, with the results' values; None when the question or the values do not fit."""
    years = arithmetic_years(frame)
    values = values_by_year(results)
    if not years and values and len(values) == 2 and asks_unnamed_change(frame):
        years = sorted(values)  # "the change in visits for the north wing": between the two years held
    if not years or not values or not all(y in values for y in years):
        return None
    if frame.operation is Operation.average:
        return f"({' + '.join(operand(values[y]) for y in years)}) / {len(years)}"
    template = template_for(frame)
    if template is None:  # "the ratio of X in 2019 to 2018" (the change in a ratio is a change)
        first, second = years
        return None if values[second] == 0 else f"{operand(values[first])} / {operand(values[second])}"
    old, new = frame.year_order or sorted(years)
    if values[old] == 0 and frame.operation is Operation.percent_change:
        return None
    return template(values[old], values[new])


def item_arithmetic(frame: QuestionFrame, results: list[NodeResult]) -> str | None:
    """The expression a change / percentage change / average / ratio / share question over two named
    items asks for, when the results hold exactly two rows of one value each and each row's distinguishing label
    appears in the question; the labels' order in the question orders the operands."""
    template, ratio = template_for(frame), frame.operation is Operation.ratio
    if template is None and not ratio and frame.operation is not Operation.share:
        return None
    rows = [with_keys(row, r) for r in results for row in r.rows if len(numbers_of(row)) == 1]
    if len(rows) != 2:
        return None
    at = [label_position(frame, row, other) for row, other in ((rows[0], rows[1]), (rows[1], rows[0]))]
    if None in at or at[0] == at[1]:
        return None
    first, second = (numbers_of(row)[0] for row in (rows if at[0] < at[1] else rows[::-1]))
    if template is None and not ratio:  # a part of a total: the smaller of the larger
        part, total = sorted((first, second))
        scale = " * 100" if frame.percent else ""
        return f"{operand(part)} / {operand(total)}{scale}" if part > 0 else None
    if template is None:
        return None if second == 0 else f"{operand(first)} / {operand(second)}"
    starts = [end for end in frame.word_ends("from") if end <= min(at)]
    from_to = bool(starts) and min(at) - starts[-1] <= MAX_FROM_GAP  # "from July 7, 2019 to ..."
    difference = not from_to and frame.operation in SUBTRACTIONS  # "the difference between A and B": A - B
    old, new = (second, first) if difference else (first, second)
    if old == 0 and frame.operation is Operation.percent_change:
        return None
    return template(old, new)


def extreme_year(frame: QuestionFrame, results: list[NodeResult]) -> int | None:
    """ "In which year was X higher?": the year whose one value is the largest (or, asked lower, the
    smallest) of those the results hold, among the years the question names when it names two or more.
    None for a threshold ("less than -3,000") or a tie."""
    if not frame.asks_year or frame.direction is None:
        return None
    values = values_by_year(results) or {}
    named = [y for y in frame.years if y in values]
    if len(named) >= 2:
        values = {y: values[y] for y in named}
    if len(values) < 2:
        return None
    best = (max if frame.direction == "max" else min)(values.values())
    years = [y for y, v in values.items() if v == best]
    return years[0] if len(years) == 1 else None


def all_years_average(frame: QuestionFrame, results: list[NodeResult]) -> str | None:
    """ "The average realized losses", naming no year: the mean over every year the results hold one
    value for (at least two)."""
    if frame.operation is not Operation.average or frame.years:
        return None
    values = values_by_year(results) or {}
    if len(values) < 2:
        return None
    return f"({' + '.join(operand(values[y]) for y in sorted(values))}) / {len(values)}"


def asks_unnamed_change(frame: QuestionFrame) -> bool:
    """ "The change in visits for the north wing", naming no year (a why question is a reason, not a change)."""
    return frame.operation in (Operation.change, Operation.percent_change) and not frame.years


def with_keys(row: dict, result: NodeResult) -> dict:
    """The row with the keys of its table beside its cells, when its result is that one row: a row
    read for a key the question names ("loan LN-20013") is told apart by that key."""
    if len(result.rows) != 1:
        return row
    return {**row, **{f"{KEY_LABEL}{table}": k[0] for table, k in result.row_keys.items() if len(k) == 1}}


def numbers_of(row: dict) -> list[float]:
    return [float(v) for k, v in row.items() if is_number(v) and not is_year_column(k)]


def is_year_column(name: str) -> bool:
    return bool(YEAR_COLUMN.search(name))


def label_position(frame: QuestionFrame, row: dict, other: dict) -> int | None:
    """Where the question names the row: the first of its text cells that differ from the other row's,
    found whole or by its first word ("1-90" for "1-90 days past due")."""
    for column, value in row.items():
        if not isinstance(value, str) or not value.strip() or value == other.get(column):
            continue
        text = " ".join(value.lower().split())
        for probe in (text, text.split(" ", 1)[0]):
            if len(probe) > 1 and (at := frame.position_of(probe)) is not None:
                return at
    return None


def elapsed_time(frame: QuestionFrame, results: list[NodeResult]) -> tuple[float, str] | None:
    """The time between the two moments (dates or timestamps) of the one row the results hold, in the
    time unit the question asks in, and how it was taken; None unless exactly that is there."""
    if frame.seconds_per_unit is None or frame.unit is None:
        return None
    rows = [row for r in results for row in r.rows]
    if len(rows) != 1:
        return None
    moments = [(column, moment) for column, value in rows[0].items() if (moment := as_moment(value)) is not None]
    if len(moments) != 2:
        return None
    (first, start), (last, end) = sorted(moments, key=lambda m: m[1])
    value = (end - start).total_seconds() / frame.seconds_per_unit
    return value, f"{last} {end.isoformat()} - {first} {start.isoformat()}, in {frame.unit.text}"


def as_moment(value: object) -> dt.datetime | None:
    """A date or timestamp cell as a naive UTC datetime (a date is its midnight); None for anything else."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    return None


def derivation(numbers: list[float], results: list[NodeResult]) -> str | None:
    """The expression over two cells of the results that gives the one number the LLM wrote
    (`numbers`, the numbers in its answer); None when there is not exactly one or no simple one does."""
    if len(numbers) != 1:
        return None
    target = round(numbers[0], 2)
    cells = [float(v) for r in results for row in r.rows for v in numbers_of(row)]
    operands = list(dict.fromkeys(cells))[:MAX_OPERANDS]
    for template, apply in DERIVATIONS:
        for a, b in itertools.permutations(operands, 2):
            if b != 0 and round(apply(a, b), 2) == target:
                return template.format(a=operand(a), b=operand(b))
    return None
