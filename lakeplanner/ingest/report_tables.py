"""Printed-report grids (`*.report.csv`) -> one long table: a row per labelled row and column.

Reports print tables for people: headers over several rows, years as columns, section rows
("Inpatient wards:"), "$ 1,452.4", "(1,234)" for negatives, "12.5%", dashes for nil, and the
scale ("in millions") in a header. SQL wants one typed value per row, so each cell becomes
(section, row label, column label, year, value, unit, scale, text) with the printed text kept.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

import pyarrow as pa

from lakeplanner.errors import BadSourceError
from lakeplanner.question.headers import CURRENCIES, compares, scale_of
from lakeplanner.question.years import YEAR, is_year_text

_NIL = frozenset({"", "-", "—", "–", "--", "n/a", "na", "nm", "*"})
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_DATE = re.compile(r"\d{1,2}/\d{1,2}/\d{2,4}")
MAX_HEADER_ROWS = 4


@dataclass(frozen=True)
class Cell:
    value: float | None
    unit: str


def parse_cell(text: str) -> Cell:
    """'$ (1,234.5)' -> -1234.5 '$'; '12%' -> 12 '%'; '—' -> None; words -> None."""
    s = text.strip().replace("\u2212", "-")
    if s.lower() in _NIL:
        return Cell(None, "")
    unit = ""
    if s.endswith("%"):
        unit, s = "%", s[:-1].strip()
    if s and s[0] in CURRENCIES:
        unit, s = unit or s[0], s[1:].strip()
    negative = False
    if s.startswith("(") and s.endswith(")"):
        negative, s = True, s[1:-1].strip()
    if s and s[0] in CURRENCIES:
        unit, s = unit or s[0], s[1:].strip()
    if s.startswith("-") and len(s) > 1 and s[1] in CURRENCIES:
        unit, s = unit or s[1], "-" + s[2:].strip()
    s = s.replace(",", "").replace(" ", "")
    if s.endswith("%"):
        unit, s = "%", s[:-1]
    if not _NUMBER.match(s):
        return Cell(None, "")
    value = float(s)
    return Cell(-value if negative else value, unit)


def header_row_count(rows: list[list[str]]) -> int:
    """Leading rows with no number outside the first column, except years (they label columns)."""
    count, labelled = 0, False
    for row in rows[:MAX_HEADER_ROWS]:
        values = [c for c in row[1:] if c.strip()]
        if any(parse_cell(c).value is not None and not is_year_text(c) for c in values) or (labelled and not values):
            break  # a number, or a section row ("Assets") under the column labels
        labelled = labelled or bool(values)
        count += 1
    return count if count < len(rows) else 0


def column_labels(header: list[list[str]], width: int, merged: bool = True) -> list[str]:
    """Each value column's header cells top to bottom. A row with one cell spans every column; in a row
    of merged cells, a cell spans the blank ones to its right that a lower row labels ("Outpatient
    visits" over its 2019 and 2018 columns); `merged=False` leaves those out."""
    rows = [[c.strip() for c in row] + [""] * (width - len(row)) for row in header]
    labels = []
    for j in range(1, width):
        parts = []
        for r, row in enumerate(rows):
            cells = [c for c in row[1:] if c]
            if row[j]:
                parts.append(row[j])
            elif len(cells) == 1 and width > 2:
                parts.append(cells[0])
            elif merged and spans(row) and any(lower[j] for lower in rows[r + 1 :]):
                parts += [c for c in reversed(row[1:j]) if c][:1]
        labels.append(" ".join(parts) or f"column {j + 1}")
    return labels


def block_columns(header: list[list[str]], width: int, table_scale: str) -> tuple[list[str], list, list[str]]:
    """Each value column's label, year (a match, or None: "% of Total" has none) and scale under `header`."""
    labels = column_labels(header, width)
    years = [year_of_column(label) for label in column_labels(header, width, merged=False)]
    return labels, years, [scale_of([label]) or table_scale for label in labels]


def year_of_column(label: str) -> re.Match | None:
    """The year a column holds; none for a comparison of years ("2019 vs. 2018 Variance in Dollars")."""
    if compares(label) and len(set(m.group() for m in YEAR.finditer(label))) > 1:
        return None
    return YEAR.search(label)


def names_period(row: list[str]) -> bool:
    """A label-only row that heads a stacked table ("", "As of December 31, 2018", ...; "", "2018"). A
    section title written in a value column ("", "Admissions:") names no year; a labelled row's dates wrapped
    onto the next row ("", "11/4/2024") are data."""
    values = row[1:]
    return any(YEAR.search(c) for c in values) and not any(_DATE.search(c) for c in values)


def labels_only(row: list[str]) -> bool:
    """No row label, and labels or years but no other numbers in the value columns."""
    values = [c for c in row[1:] if c.strip()]
    return not row[0].strip() and bool(values) and all(parse_cell(c).value is None or is_year_text(c) for c in values)


def stacked_tables(header: list[list[str]], body: list[list[str]]) -> list[tuple[list[list[str]], list[list[str]]]]:
    """(header rows, body rows) of each table stacked in the grid: a run of label-only rows inside the
    body, one of which names a period, heads the rows after it ("As of December 31, 2018" over the
    same columns as 2019 above); other label-only rows stay rows of the table they sit in."""
    tables, current, rows, pending = [], header, [], []
    for row in body:
        if labels_only(row):
            pending.append(row)
            continue
        if any(names_period(r) for r in pending):
            tables.append((current, rows))
            current, rows = pending, []
        else:
            rows += pending
        rows.append(row)
        pending = []
    tables.append((current, rows + pending))
    return tables


def spans(row: list[str]) -> bool:
    """A header row of merged cells written at their first column: it starts at the first value column
    and a blank lies between its labels ("Adults", "", "Children", ""). A row starting further right
    ("", "School year", "", "% Change") centres its labels, and which columns they span is unknown."""
    filled = [k for k, c in enumerate(row) if k > 0 and c]
    return len(filled) > 1 and filled[0] == 1 and any(not row[k] for k in range(filled[0], filled[-1]))


def normalize_report(rows: list[list[str]], rel: str) -> pa.Table:
    """A report grid (first column = row labels) -> the long table described in the module doc."""
    rows = [[c if isinstance(c, str) else str(c) for c in row] for row in rows if any(str(c).strip() for c in row)]
    width = max((len(r) for r in rows), default=0)
    if width < 2:
        raise BadSourceError(rel, "a report table needs a label column and at least one value column")
    header_n = header_row_count(rows)
    header, body = rows[:header_n], rows[header_n:]
    if not body:
        raise BadSourceError(rel, "header only, no rows of data", hint="add rows or remove the file")
    table_scale = scale_of([c for row in rows for c in row if not parse_cell(c).value])
    records: dict[str, list] = {
        k: [] for k in ("section", "line_item", "column_label", "year", "value", "unit", "scale", "text")
    }
    for block_header, block_rows in stacked_tables(header, body):
        labels, years, scales = block_columns(block_header, width, table_scale)
        section = None
        for row in block_rows:
            row = row + [""] * (width - len(row))
            item, cells = row[0].strip(), row[1:]
            if not any(c.strip() for c in cells):
                section = item.rstrip(":").strip() or section
                continue
            for j, text in enumerate(cells):
                if not text.strip():
                    continue
                cell = parse_cell(text)
                year = years[j]
                records["section"].append(section)
                records["line_item"].append(item or section or "")
                records["column_label"].append(labels[j])
                records["year"].append(int(year.group()) if year else None)
                records["value"].append(cell.value)
                records["unit"].append(cell.unit)
                records["scale"].append("percent" if cell.unit == "%" else scales[j])
                records["text"].append(text.strip())
    types = {"year": pa.int64(), "value": pa.float64()}
    return pa.table({k: pa.array(v, types.get(k, pa.string())) for k, v in records.items()})


def read_report_csv(text: str, rel: str) -> pa.Table:
    return normalize_report(list(csv.reader(io.StringIO(text))), rel)
