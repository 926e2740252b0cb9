"""Text columns that hold dates, timestamps or numbers become typed columns at ingest.

A column is converted only when every value it holds parses the same way (one date format for the
whole column, one kind of timestamp); anything else stays text, so nothing is lost or guessed per cell.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache

import pyarrow as pa

from lakeplanner.contract.models import CsvDialect
from lakeplanner.contract.profile import is_provenance, is_stringy

_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(?P<zone>Z|[+-]\d{2}:?\d{2})?$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
SLASHED_DATE = re.compile(r"^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$")
WORDED_DATES = ("%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y", "%d-%b-%Y", "%Y/%m/%d")
SPACES = " \u00a0\u202f"  # a space-grouped number may use any of them
SCAN = 1000  # values sampled to choose a conversion; the conversion itself checks every value


@cache
def number_pattern(decimal: str = ".", thousands: str | None = ",") -> re.Pattern:
    """An amount with an optional currency, sign or accounting parentheses, in the given separators."""
    group = f"[{re.escape(SPACES)}]" if thousands == " " else re.escape(thousands or "")
    grouped = rf"\d{{1,3}}({group}\d{{3}})+|" if thousands else ""
    return re.compile(
        r"^(?P<neg>\()?\s*(?P<sign>[-+])?\s*(?P<cur>[$€£¥]|[A-Z]{3}\s)?\s*"
        rf"(?P<digits>{grouped}\d+)(?P<frac>{re.escape(decimal)}\d+)?\s*(?P<suffix>[A-Z]{{3}})?\s*(?(neg)\))$"
    )


def typed_text_columns(table: pa.Table, dialect: CsvDialect | None = None) -> pa.Table:
    """The table with each text column that is wholly dates, timestamps or formatted numbers typed,
    read in the file's dialect (separators and date order) where it has one."""
    for index, name in enumerate(table.column_names):
        column = table.column(name)
        if is_provenance(name) or not is_stringy(column):
            continue
        converted = typed_column(column.combine_chunks(), dialect)
        if converted is not None:
            table = table.set_column(index, name, converted)
    return table


def typed_column(column: pa.Array, dialect: CsvDialect | None = None) -> pa.Array | None:
    values = [v.strip() for v in column.drop_null().to_pylist()]
    if not values or any(not v for v in values):
        return None
    dialect = dialect or CsvDialect()
    converters = (
        lambda: as_timestamps(values, column),
        lambda: as_dates(values, column, dialect.date_order),
        lambda: as_numbers(values, column, dialect),
    )
    return next((c for c in (convert() for convert in converters) if c is not None), None)


def cells(column: pa.Array, parse) -> list:
    return [None if v is None else parse(v.strip()) for v in column.to_pylist()]


def as_timestamps(values: list[str], column: pa.Array) -> pa.Array | None:
    """ISO 8601 date-times: all with a zone or offset (stored as UTC instants), or all without."""
    matches = [_TIMESTAMP.match(v) for v in values[:SCAN]]
    if not all(matches):
        return None
    zoned = {bool(m.group("zone")) for m in matches}
    if len(zoned) > 1:
        return None  # some instants and some wall-clock times: not one measure
    try:
        parsed = cells(column, datetime.fromisoformat)
    except ValueError:
        return None
    if True in zoned:
        if any(p is not None and p.tzinfo is None for p in parsed):
            return None
        return pa.array([p and p.astimezone(UTC) for p in parsed], pa.timestamp("us", tz="UTC"))
    if any(p is not None and p.tzinfo is not None for p in parsed):
        return None
    return pa.array(parsed, pa.timestamp("us"))


def as_dates(values: list[str], column: pa.Array, order: str | None = None) -> pa.Array | None:
    """Dates in one common format for the whole column: ISO, '14 March 2016', 'Mar 14, 2016',
    or day and month with slashes or dots, whose order the values settle, or else the file's `order`."""
    sample = values[:SCAN]
    formats = [f for f in WORDED_DATES if all(parses(v, f) for v in sample)]
    if all(_ISO_DATE.match(v) for v in sample):
        formats = ["%Y-%m-%d"]
    elif all(SLASHED_DATE.match(v) for v in sample):
        formats = slashed_format(values, order)
    for fmt in formats:
        try:
            return pa.array(cells(column, lambda v, f=fmt: datetime.strptime(v, f).date()), pa.date32())
        except ValueError:
            continue
    return None


def slashed_format(values: list[str], order: str | None = None) -> list[str]:
    """'%m/%d/%Y' or '%d/%m/%Y' when some value shows which part is the day, else as the file's
    other dates showed (`order`); none when nothing does."""
    separator = "/" if "/" in values[0] else "."
    parts = [SLASHED_DATE.match(v) for v in values]
    if not all(parts):
        return []
    if any(int(p.group(1)) > 12 for p in parts):
        return [f"%d{separator}%m{separator}%Y"]
    if any(int(p.group(2)) > 12 for p in parts):
        return [f"%m{separator}%d{separator}%Y"]
    if order == "dmy":
        return [f"%d{separator}%m{separator}%Y"]
    if order == "mdy":
        return [f"%m{separator}%d{separator}%Y"]
    return []


def parses(value: str, fmt: str) -> bool:
    try:
        datetime.strptime(value, fmt)
    except ValueError:
        return False
    return True


def as_numbers(values: list[str], column: pa.Array, dialect: CsvDialect | None = None) -> pa.Array | None:
    """'1,234.50', '$1,234', 'EUR 12.00', '(350.00)', or in a decimal-comma file '1.234,50': numbers a
    spreadsheet formatted. Plain digit strings are left to the readers (a code such as '00123' must stay text)."""
    dialect = dialect or CsvDialect()
    pattern = number_pattern(dialect.decimal, dialect.thousands)
    matches = [pattern.match(v) for v in values]
    if not all(matches) or any(m.group("digits").startswith("0") and len(m.group("digits")) > 1 for m in matches):
        return None
    formatted = any(
        not m.group("digits").isdigit() or m.group("cur") or m.group("suffix") or m.group("neg") for m in matches
    ) or (dialect.decimal != "." and any(m.group("frac") for m in matches))
    if not formatted:
        return None
    if len({(m.group("cur") or m.group("suffix") or "").strip() for m in matches}) > 1:
        return None  # mixed currencies are not one measure
    decimal = any(m.group("frac") for m in matches)
    parsed = cells(column, lambda v: number_of(pattern.match(v), decimal))
    return pa.array(parsed, pa.float64() if decimal else pa.int64())


def number_of(match: re.Match, decimal: bool) -> float | int:
    digits = "".join(ch for ch in match.group("digits") if ch.isdigit())
    text = digits + "." + match.group("frac")[1:] if match.group("frac") else digits
    value = float(text) if decimal else int(text)
    return -value if match.group("neg") or match.group("sign") == "-" else value
