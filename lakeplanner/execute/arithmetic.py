"""Computed answers, whose expression never comes from the LLM's arithmetic.

Question-type templates (seed 002 §3.5): a change, a percentage change, an average or a ratio over the
years a question names, from one value per year in the results. "The change in X from 2018 to 2019" with rows
(2019, 1.6) and (2018, 1.2) is `1.6 - 1.2` whatever the LLM wrote. A template applies only when every
named year has exactly one value; otherwise synthesis keeps the LLM's calculation. "X in 2019 and 2018
respectively" is the list of those values in the order the question names the years.

Two items: "the difference between 1-90 and 91-180 days past due" over two rows of one value each is
the first named minus the second ("from A to B": B minus A); "what percentage of the total X is Y" is the
smaller of the two over the larger. Both apply only when the LLM's own answer is not grounded.

"In which year was X higher?" is the year of the largest value the results hold per year; "the average X"
naming no year is the mean over every year held (when the LLM's own answer is not grounded); "the change in
X" naming no year is the change between the two years held, when they are two.

Derivations: a number the LLM computed anyway (302 - 148 written as 154) is traced to a simple
expression over two cells, which the evaluator then redoes.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable

from lakeplanner.execute.results import NodeResult

_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_FROM_TO = re.compile(r"\bfrom\s+((?:19|20)\d{2})\b.*?\bto\s+((?:19|20)\d{2})\b", re.I)
_ABSOLUTE = re.compile(r"\babsolute\b", re.I)  # "the absolute percentage change" is the change in points
_PERCENT_CHANGE = re.compile(r"percent(?:age)?\s+(?:change|increase|decrease|growth)|%\s*change|growth rate", re.I)
_CHANGE = re.compile(r"\b(?:change|increase|decrease|difference|grow|growth|decline)\b", re.I)
_AVERAGE = re.compile(r"(?<!weighted[- ])\b(?:average|mean)\b", re.I)  # a weighted-average rate is a label
_CHANGE_OVER_TIME = re.compile(r"\b(?:change|increase|decrease|growth|decline)\b", re.I)  # not "difference"
_REASON = re.compile(r"\b(?:why|reasons?|caus\w*|due to|driv\w*|explain\w*)\b", re.I)
_RATIO = re.compile(r"\bratio\b", re.I)
_WHICH_YEAR = re.compile(r"\b(?:which|what) (?:fiscal |financial |calendar )?year\b", re.I)
_MOST = re.compile(r"\b(?:higher|highest|larger|largest|greater|greatest|bigger|biggest|more|most)\b(?!\s+than)", re.I)
_LEAST = re.compile(r"\b(?:lower|lowest|smaller|smallest|less|least|fewer|fewest)\b(?!\s+than)", re.I)
_FROM_ITEM = re.compile(r"\bfrom\b", re.I)
_SHARE = re.compile(
    r"\bproportion\b|\bpercentage (?:of|constitution)\b|\bshare of\b|\bwhat percent(?:age)? (?:of|does|is)\b", re.I
)
_PERCENT = re.compile(r"\bpercent|%", re.I)
_YEAR_RANGE = re.compile(r"\b((?:19|20)\d{2})(?:\s+(?:to|through)\s+|\s*[-\u2013]\s*)((?:19|20)\d{2})\b")
_SEVERAL = re.compile(
    r"\brespective(?:ly)?\b|\bcomponents\b|\b(?:which|what|the) years\b|\beach\b|\btypes\b|\bcompris|\blisted\b"
    r"|\bregions\b",
    re.I,
)
YEAR_COLUMNS = ("year", "fiscal_year", "period")
DERIVATIONS: tuple[tuple[str, Callable[[float, float], float]], ...] = (
    ("{a} - {b}", lambda a, b: a - b),
    ("{a} + {b}", lambda a, b: a + b),
    ("({a} - {b}) / {b} * 100", lambda a, b: (a - b) / b * 100),
    ("{a} / {b} * 100", lambda a, b: a / b * 100),
    ("{a} / {b}", lambda a, b: a / b),
    ("({a} + {b}) / 2", lambda a, b: (a + b) / 2),
)
MAX_OPERANDS = 40
MAX_SPANNED = 10
MAX_FROM_GAP = 12


def named_years(text: str) -> list[int]:
    return list(dict.fromkeys(int(y) for y in _YEAR.findall(text)))


def listed_years(text: str) -> list[int]:
    """The years a list question names, in its order; "2019 to 2017" lists 2019, 2018 and 2017."""
    return named_years(_YEAR_RANGE.sub(lambda m: " ".join(map(str, spanned(int(m[1]), int(m[2])))), text))


def spanned(first: int, last: int) -> list[int]:
    if abs(last - first) > MAX_SPANNED:
        return [first, last]
    return list(range(first, last + 1) if last >= first else range(first, last - 1, -1))


def asks_several(question: str) -> bool:
    """The question wants a list: respective values, components, the years of a table, each quarter."""
    return bool(_SEVERAL.search(question))


def compares(question: str) -> bool:
    """The question sets values side by side (a change, a ratio, an average, the respective values),
    rather than asking for one figure over all of them."""
    return template_for(question) is not None or bool(_RATIO.search(question) or asks_several(question))


def is_number(value: object) -> bool:
    """A usable figure: not a flag, and finite (a SQL division by zero yields inf or NaN)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def year_of(row: dict) -> int | None:
    for column in YEAR_COLUMNS:
        value = row.get(column)
        if is_number(value) and 1900 <= value <= 2100:
            return int(value)
        if isinstance(value, str) and len(years := named_years(value)) == 1:
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
            if year is None and len(result.rows) == 1 and len(years := named_years(result.question)) == 1:
                year = years[0]
            if year is None:
                continue
            if year in found and found[year] != numbers[0]:
                return None
            found[year] = float(numbers[0])
    return found


def operand(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def template_for(question: str) -> Callable[[float, float], str] | None:
    if _PERCENT_CHANGE.search(question) and not _ABSOLUTE.search(question):
        return lambda old, new: f"({operand(new)} - {operand(old)}) / {operand(old)} * 100"
    if _CHANGE.search(question):
        return lambda old, new: f"{operand(new)} - {operand(old)}"
    if _AVERAGE.search(question):
        return lambda a, b: f"({operand(a)} + {operand(b)}) / 2"
    return None


def arithmetic_years(question: str) -> list[int]:
    """The years a templated calculation reads: every listed year of an average ("2017-2019" is three),
    the two named years of a change, percentage change or ratio; none for other questions."""
    if asks_average(question):
        years = listed_years(question)
        return years if len(years) >= 2 else []
    years = named_years(question)
    return years if len(years) == 2 and (template_for(question) is not None or _RATIO.search(question)) else []


def asks_average(question: str) -> bool:
    """An average, not the change in one ("the change in the average life expectancy")."""
    return bool(_AVERAGE.search(question)) and not _CHANGE.search(question)


def asks_year_arithmetic(question: str) -> bool:
    return bool(arithmetic_years(question))


def asks_per_year(question: str) -> bool:
    """One value for each of several named years, as a list ("X in 2019 and 2018 respectively")."""
    return asks_several(question) and len(listed_years(question)) >= 2 and not asks_year_arithmetic(question)


def years_asked(question: str) -> list[int]:
    """The years a templated answer needs one value each for: those of its arithmetic, or the listed ones
    of a per-year list; none for other questions."""
    return arithmetic_years(question) or (listed_years(question) if asks_per_year(question) else [])


def asks_every_year(question: str) -> bool:
    """A templated answer that reads every year the table holds: "in which year was X higher" naming
    fewer than two years, or an average or a change naming none."""
    years = named_years(question)
    return (
        (asks_which_year(question) and len(years) < 2)
        or (asks_average(question) and not years)
        or asks_unnamed_change(question)
    )


def per_year_values(question: str, results: list[NodeResult]) -> list[float] | None:
    """The values a per-year question asks for, in the order it names the years; None when a year has
    no single value in the results."""
    if not asks_per_year(question):
        return None
    values = values_by_year(results)
    years = listed_years(question)
    return [values[y] for y in years] if values and all(y in values for y in years) else None


def year_arithmetic(question: str, results: list[NodeResult]) -> str | None:
    """The expression a change / percentage change / ratio question over two named years, or an average
    over the years named, asks for, with the results' values; None when the question or the values do not fit."""
    years = arithmetic_years(question)
    values = values_by_year(results)
    if not years and values and len(values) == 2 and asks_unnamed_change(question):
        years = sorted(values)  # "the change in the amount for Ireland": between the two years held
    if not years or not values or not all(y in values for y in years):
        return None
    if asks_average(question):
        return f"({' + '.join(operand(values[y]) for y in years)}) / {len(years)}"
    template = template_for(question)
    if template is None:  # "the ratio of X in 2019 to 2018" (the change in a ratio is a change)
        first, second = years
        return None if values[second] == 0 else f"{operand(values[first])} / {operand(values[second])}"
    ordered = _FROM_TO.search(question)
    old, new = (int(ordered.group(1)), int(ordered.group(2))) if ordered else sorted(years)
    if values[old] == 0 and _PERCENT_CHANGE.search(question):
        return None
    return template(values[old], values[new])


def item_arithmetic(question: str, results: list[NodeResult]) -> str | None:
    """The expression a change / percentage change / average / ratio / share question over two named
    items asks for, when the results hold exactly two rows of one value each and each row's distinguishing label
    appears in the question; the labels' order in the question orders the operands."""
    template, ratio = template_for(question), _RATIO.search(question)
    if template is None and not ratio and not _SHARE.search(question):
        return None
    rows = [row for r in results for row in r.rows if len(numbers_of(row)) == 1]
    if len(rows) != 2:
        return None
    at = [label_position(question, row, other) for row, other in ((rows[0], rows[1]), (rows[1], rows[0]))]
    if None in at or at[0] == at[1]:
        return None
    first, second = (numbers_of(row)[0] for row in (rows if at[0] < at[1] else rows[::-1]))
    if template is None and not ratio:  # a part of a total: the smaller of the larger
        part, total = sorted((first, second))
        scale = " * 100" if _PERCENT.search(question) else ""
        return f"{operand(part)} / {operand(total)}{scale}" if part > 0 else None
    if template is None:
        return None if second == 0 else f"{operand(first)} / {operand(second)}"
    starts = [m.end() for m in _FROM_ITEM.finditer(question) if m.end() <= min(at)]
    from_to = bool(starts) and min(at) - starts[-1] <= MAX_FROM_GAP  # "from July 7, 2019 to ..."
    difference = not from_to and _CHANGE.search(question) is not None  # "the difference between A and B": A - B
    old, new = (second, first) if difference else (first, second)
    if old == 0 and _PERCENT_CHANGE.search(question):
        return None
    return template(old, new)


def asks_which_year(question: str) -> bool:
    return bool(_WHICH_YEAR.search(question))


def extreme_year(question: str, results: list[NodeResult]) -> int | None:
    """ "In which year was X higher?": the year whose one value is the largest (or, asked lower, the
    smallest) of those the results hold, among the years the question names when it names two or more.
    None for a threshold ("less than -3,000") or a tie."""
    most, least = _MOST.search(question), _LEAST.search(question)
    if not asks_which_year(question) or bool(most) == bool(least):
        return None
    values = values_by_year(results) or {}
    named = [y for y in named_years(question) if y in values]
    if len(named) >= 2:
        values = {y: values[y] for y in named}
    if len(values) < 2:
        return None
    best = (max if most else min)(values.values())
    years = [y for y, v in values.items() if v == best]
    return years[0] if len(years) == 1 else None


def all_years_average(question: str, results: list[NodeResult]) -> str | None:
    """ "The average realized losses", naming no year: the mean over every year the results hold one
    value for (at least two)."""
    if not asks_average(question) or named_years(question):
        return None
    values = values_by_year(results) or {}
    if len(values) < 2:
        return None
    return f"({' + '.join(operand(values[y]) for y in sorted(values))}) / {len(values)}"


def asks_unnamed_change(question: str) -> bool:
    """ "The change in the amount for Ireland", naming no year and no reason: a change between years."""
    return (
        bool(_CHANGE_OVER_TIME.search(question))
        and not named_years(question)
        and not asks_average(question)
        and not _REASON.search(question)
    )


def numbers_of(row: dict) -> list[float]:
    return [float(v) for k, v in row.items() if is_number(v) and k not in YEAR_COLUMNS]


def label_position(question: str, row: dict, other: dict) -> int | None:
    """Where the question names the row: the first of its text cells that differ from the other row's,
    found whole or by its first word ("1-90" for "1-90 days past due")."""
    asked = question.lower()
    for column, value in row.items():
        if not isinstance(value, str) or not value.strip() or value == other.get(column):
            continue
        text = " ".join(value.lower().split())
        for probe in (text, text.split(" ", 1)[0]):
            if len(probe) > 1 and (m := re.search(rf"(?<!\w){re.escape(probe)}(?!\w)", asked)):
                return m.start()
    return None


def derivation(numbers: list[float], results: list[NodeResult]) -> str | None:
    """The expression over two cells of the results that gives the one number the LLM wrote
    (`numbers`, the numbers in its answer); None when there is not exactly one or no simple one does."""
    if len(numbers) != 1:
        return None
    target = round(numbers[0], 2)
    cells = [float(v) for r in results for row in r.rows for k, v in row.items() if is_number(v) and k != "year"]
    operands = list(dict.fromkeys(cells))[:MAX_OPERANDS]
    for template, apply in DERIVATIONS:
        for a, b in itertools.permutations(operands, 2):
            if b != 0 and round(apply(a, b), 2) == target:
                return template.format(a=operand(a), b=operand(b))
    return None
