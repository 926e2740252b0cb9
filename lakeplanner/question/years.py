"""What counts as a year, for every stage: a question's words, a cell, a SQL literal, a report's
column header and a profiled key column all use this one rule (19xx and 20xx)."""

from __future__ import annotations

import re

FIRST_YEAR, LAST_YEAR = 1900, 2099
YEAR_DIGITS = r"(?:19|20)\d{2}"
# Not part of a longer number or word, a decimal, a percentage or a code ('2019.5', '2019%', 'ISO-2019').
YEAR = re.compile(rf"(?<![\w.,])(?<![A-Za-z]-){YEAR_DIGITS}(?![\w%]|[.,]\d|-[A-Za-z])")


def is_year_number(value: object) -> bool:
    """A whole number in the years' range (2019, 2019.0), never a flag."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and FIRST_YEAR <= value <= LAST_YEAR


def is_year_text(text: str) -> bool:
    """A text that is a year and nothing else (' 2019 ')."""
    return re.fullmatch(YEAR_DIGITS, text.strip()) is not None


def names_a_year(text: str) -> bool:
    return YEAR.search(text) is not None


def years_in(text: str) -> list[int]:
    """The years a text (a question, a cell, a SQL literal) names, in order, each once."""
    return list(dict.fromkeys(int(y) for y in YEAR.findall(text)))
