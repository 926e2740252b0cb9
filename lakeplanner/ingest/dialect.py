"""Sniff how a delimited file was written: delimiter, quote, decimal and thousands separators, date order.

An ERP export may be semicolon-delimited with decimal commas ('1.234,50'), a Swiss one groups digits
with apostrophes, a French one with spaces. The delimiter and quote are the pair that splits the
sample into rows of one width; the separators and the date order are read off the cells, and only a
cell that could be read one way settles them (a lone '1,234' says nothing).
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter

from lakeplanner.contract.models import CsvDialect
from lakeplanner.ingest.typed import SLASHED_DATE

DELIMITERS = (",", ";", "\t", "|")
QUOTES = ('"', "'")
SAMPLE_CHARS = 64 << 10

_AMOUNT = re.compile(
    r"^\(?\s*[-+]?\s*(?:[$€£¥]|[A-Z]{3}\s)?\s*(?P<n>\d[\d.,' \u00a0\u202f]*\d|\d)\s*(?:[A-Z]{3})?\s*\)?$"
)
_COMMA_DECIMAL = re.compile(r"^\d{1,3}([.' \u00a0\u202f]\d{3})+,\d+$|^\d+,(\d{1,2}|\d{4,})$")
_DOT_DECIMAL = re.compile(r"^\d{1,3}([,' \u00a0\u202f]\d{3})+\.\d+$|^\d+\.(\d{1,2}|\d{4,})$")
_GROUPED = {
    "'": re.compile(r"^\d{1,3}('\d{3})+([.,]\d+)?$"),
    " ": re.compile(r"^\d{1,3}([ \u00a0\u202f]\d{3})+([.,]\d+)?$"),
}


def sniff_dialect(text: str, delimiter: str | None = None) -> CsvDialect:
    """The dialect of a delimited text; `delimiter` fixes the delimiter (a .tsv file) and sniffs the rest."""
    sample = text[:SAMPLE_CHARS]
    delimiter, quote = split_rule(sample, (delimiter,) if delimiter else DELIMITERS)
    cells = [c.strip() for row in rows_of(sample, delimiter, quote)[1:] for c in row]
    decimal = decimal_separator(cells)
    return CsvDialect(
        delimiter=delimiter,
        quote=quote,
        decimal=decimal,
        thousands=thousands_separator(cells, decimal),
        date_order=date_order(cells),
    )


def rows_of(sample: str, delimiter: str, quote: str) -> list[list[str]]:
    """The sample's complete rows: the last is dropped when the sample was cut inside the file."""
    try:
        rows = list(csv.reader(io.StringIO(sample), delimiter=delimiter, quotechar=quote))
    except csv.Error:
        return []
    return rows[:-1] if len(sample) == SAMPLE_CHARS and len(rows) > 2 else rows


def split_rule(sample: str, delimiters: tuple[str, ...]) -> tuple[str, str]:
    """The (delimiter, quote) that gives most rows the header's width, wider than one column."""

    def score(candidate: tuple[str, str]) -> tuple[float, int]:
        rows = [r for r in rows_of(sample, *candidate) if r]
        if not rows or len(rows[0]) < 2:
            return (0.0, 0)
        width = len(rows[0])
        return (sum(len(r) == width for r in rows) / len(rows), width)

    candidates = [(d, q) for q in quotes_opening_fields(sample) for d in delimiters]
    best = max(candidates, key=score)  # max keeps the first of equals: ',' before ';', '"' before "'"
    return best if score(best)[0] > 0 else (delimiters[0], QUOTES[0])


def quotes_opening_fields(sample: str) -> tuple[str, ...]:
    """'"', and the apostrophe too when it opens fields and the double quote never does (an apostrophe
    also stands inside words, and an unclosed double quote must stay an error, not read another way)."""
    opens = {q: re.search(rf"(^|[,;\t|]){q}", sample, re.M) is not None for q in QUOTES}
    return QUOTES if opens["'"] and not opens['"'] else QUOTES[:1]


def numbers_in(cells: list[str]) -> list[str]:
    return [m.group("n") for m in map(_AMOUNT.match, cells) if m]


def decimal_separator(cells: list[str]) -> str:
    """',' when more numbers can only read with a decimal comma than with a decimal point."""
    numbers = numbers_in(cells)
    commas = sum(bool(_COMMA_DECIMAL.match(n)) for n in numbers)
    points = sum(bool(_DOT_DECIMAL.match(n)) for n in numbers)
    return "," if commas > points else "."


def thousands_separator(cells: list[str], decimal: str) -> str:
    """An apostrophe or a space where numbers are grouped so; otherwise the mark that is not the decimal."""
    grouped = Counter(mark for n in numbers_in(cells) for mark, rule in _GROUPED.items() if rule.match(n))
    if grouped:
        return grouped.most_common(1)[0][0]
    return "." if decimal == "," else ","


def date_order(cells: list[str]) -> str | None:
    """'dmy' when some slashed or dotted date has a day over 12 first, 'mdy' when second, else unknown."""
    parts = [(int(m.group(1)), int(m.group(2))) for m in map(SLASHED_DATE.match, cells) if m]
    day_first = any(first > 12 for first, _ in parts)
    month_first = any(second > 12 for _, second in parts)
    if day_first == month_first:
        return None
    return "dmy" if day_first else "mdy"
