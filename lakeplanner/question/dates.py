"""Periods shorter than a year, and ranges of dates: "Q3 2024", "the first half of 2024", "H2",
"in March 2024", "between May and August 2024", "from 2024-03-01 to 2024-05-31".

Each becomes a DateRange [start, end) with the words behind it. A quarter, half or month written without
a year takes the one year the question names; with none or several, it is left unread (no guess).
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from lakeplanner.question.frame import DateRange, Span
from lakeplanner.question.years import YEAR_DIGITS, years_in

_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS |= {abbr.lower(): n for n, abbr in enumerate(calendar.month_abbr) if abbr and abbr != "May"} | {"sept": 9}
_MONTH = "|".join(sorted((m.capitalize() for m in _MONTHS), key=len, reverse=True))
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": 0}
_ORDINAL = "|".join(_ORDINALS)
_YEAR = rf"(?P<year>{YEAR_DIGITS})"
_OF_YEAR = rf"(?:\s*(?:of\s+|,\s*|/|-)?{_YEAR})?"
_ISO = r"\d{4}-\d{2}-\d{2}"

QUARTERS = (
    re.compile(rf"\bQ(?P<n>[1-4]){_OF_YEAR}\b"),
    re.compile(rf"\b(?P<ord>{_ORDINAL})\s+quarter{_OF_YEAR}\b", re.I),
    re.compile(rf"\b{_YEAR}\s*[-/ ]?\s*Q(?P<n>[1-4])\b"),
)
HALVES = (
    re.compile(rf"\bH(?P<n>[12]){_OF_YEAR}\b"),
    re.compile(rf"\b(?P<ord>first|second|1st|2nd)\s+half{_OF_YEAR}\b", re.I),
)
# month names are capitalised ("May", never the verb "may"); a range of months shares the year written last
MONTH_RANGE = re.compile(
    rf"\b(?:between|from)\s+(?P<first>{_MONTH})\.?(?:\s+(?P<year1>{YEAR_DIGITS}))?\s+(?:and|to|through|until)\s+"
    rf"(?P<last>{_MONTH})\.?{_OF_YEAR}\b"
)
MONTHS = (
    re.compile(rf"\b(?P<name>{_MONTH})\.?(?:\s+|\s*,\s*){_YEAR}\b"),
    re.compile(rf"\b(?:in|during|for)\s+(?P<name>{_MONTH})\b"),
)
DATE_RANGE = re.compile(rf"\b(?:between|from)\s+(?P<first>{_ISO})\s+(?:and|to|through|until)\s+(?P<last>{_ISO})\b")


def date_ranges(text: str) -> tuple[DateRange, ...]:
    """The sub-year periods and date ranges the text names, in order, each span read once."""
    years = years_in(text)
    only_year = years[0] if len(years) == 1 else None
    found: list[DateRange] = []
    taken: list[tuple[int, int]] = []

    def add(match: re.Match, start: date | None, end: date | None, grain: str) -> None:
        if start is None or end is None or any(a < match.end() and match.start() < b for a, b in taken):
            return
        taken.append((match.start(), match.end()))
        span = Span(start=match.start(), end=match.end(), text=match.group(0))
        found.append(DateRange(start=start, end=end, grain=grain, span=span))

    for m in DATE_RANGE.finditer(text):
        first, last = iso(m.group("first")), iso(m.group("last"))
        add(m, first, last + timedelta(days=1) if last else None, "range")
    for m in MONTH_RANGE.finditer(text):
        year = int(m.group("year") or m.group("year1") or only_year or 0)
        first, last = _MONTHS[m.group("first").lower()], _MONTHS[m.group("last").lower()]
        if year and first <= last:
            add(m, date(year, first, 1), month_start(year, last + 1), "range")
    for parts, grain, patterns in ((3, "quarter", QUARTERS), (6, "half", HALVES)):
        for m in (m for pattern in patterns for m in pattern.finditer(text)):
            groups = m.groupdict()
            n = int(groups["n"]) if groups.get("n") else _ORDINALS[groups["ord"].lower()] or 12 // parts
            year = int(groups.get("year") or only_year or 0)
            if year:
                add(m, date(year, parts * (n - 1) + 1, 1), month_start(year, parts * n + 1), grain)
    for m in (m for pattern in MONTHS for m in pattern.finditer(text)):
        year = int(m.groupdict().get("year") or only_year or 0)
        if year:
            month = _MONTHS[m.group("name").lower()]
            add(m, date(year, month, 1), month_start(year, month + 1), "month")
    return tuple(sorted(found, key=lambda r: r.span.start))


def month_start(year: int, month: int) -> date:
    """The first day of `month` of `year`, month 13 being January of the next year."""
    return date(year + (month - 1) // 12, (month - 1) % 12 + 1, 1)


def iso(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None
