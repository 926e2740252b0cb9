"""Read raw files into Arrow tables and plain-text documents; every failure names file and reason."""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import charset_normalizer
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from lakeplanner.config import LimitsConfig
from lakeplanner.contract.discover import sanitize_name
from lakeplanner.contract.models import CsvDialect, ExclusionManifest
from lakeplanner.errors import BadSourceError
from lakeplanner.ingest.dialect import sniff_dialect
from lakeplanner.ingest.report_tables import read_report_csv
from lakeplanner.ingest.typed import typed_text_columns
from lakeplanner.injection import name_addresses_the_model

PROVENANCE_FILE, PROVENANCE_RECORD, PROVENANCE_PARENT = "_lp_file", "_lp_record", "_lp_parent"
RESERVED_PREFIX = "_lp_"  # the lake's provenance columns; a source column must not pass for one
_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
CSV_BLOCK_BYTES = 8 << 20


@dataclass(frozen=True)
class TableData:
    """One table read from a source: data columns plus provenance columns."""

    name: str
    table: pa.Table
    paths: dict[str, str]
    parent: str | None = None
    json_paths: list[str] = field(default_factory=list)
    dialect: CsvDialect | None = None


@dataclass(frozen=True)
class Document:
    document_id: str
    title: str
    text: str
    file: str
    format: str


def read_bytes(path: Path, rel: str, limits: LimitsConfig) -> bytes:
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise BadSourceError(
            rel,
            f"file is {size / 1e6:.0f} MB, over the {limits.max_file_bytes / 1e6:.0f} MB limit",
            hint="split the file or raise limits.max_file_bytes",
        )
    data = path.read_bytes()
    if not data.strip():
        raise BadSourceError(rel, "empty file (no content)", hint="remove it or fill it, then ingest again")
    return data


def looks_like_utf16(data: bytes) -> bool:
    sample = data[:4096]
    return sample.count(0) * 3 > len(sample) and (
        sample[1::2].count(0) > len(sample) // 3 or sample[0::2].count(0) > len(sample) // 3
    )


def decode_text(data: bytes, rel: str) -> str:
    """UTF-8 (with or without BOM), UTF-16 with BOM, or one legacy encoding; never a mix."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    elif data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return data.decode("utf-16")
    if b"\x00" in data:
        if looks_like_utf16(data):
            raise BadSourceError(
                rel,
                "unsupported encoding: looks like UTF-16 without a byte-order mark",
                hint="re-save the file as UTF-8",
            )
        offset = data.index(b"\x00")
        raise BadSourceError(
            rel,
            f"binary content: NUL byte at offset {offset}",
            hint="only text, CSV, JSON and Parquet files can be ingested",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        if _UTF8_MULTIBYTE.search(data):
            raise BadSourceError(
                rel,
                f"mixed encodings: UTF-8 text with an invalid byte 0x{data[e.start]:02x} at line {line}",
                hint="re-save the whole file in one encoding (UTF-8)",
            ) from e
        guess = legacy_encoding(data)
        if guess is None or guess.encoding in ("utf_8", "ascii"):
            raise BadSourceError(
                rel,
                f"undecodable text: invalid byte 0x{data[e.start]:02x} at line {line}",
                hint="re-save the file as UTF-8",
            ) from e
        return str(guess)


def legacy_encoding(data: bytes) -> charset_normalizer.CharsetMatch | None:
    """charset-normalizer's best guess; on a tie, Windows-1252, the most common legacy encoding."""
    matches = charset_normalizer.from_bytes(data)
    best = matches.best()
    if best is None:
        return None
    ties = [m for m in matches if (m.chaos, m.coherence) == (best.chaos, best.coherence)]
    return next((m for m in ties if m.encoding == "cp1252"), best)


# ---------------------------------------------------------------- CSV and Parquet


def malformed_csv(rel: str, error: csv.Error) -> BadSourceError:
    return BadSourceError(rel, f"malformed CSV: {error}", hint="look for an unclosed quote or a cell of over 128 KB")


def check_csv_header(text: str, rel: str, dialect: CsvDialect) -> list[str]:
    try:
        first = text.split("\n", 1)[0]
        header = next(csv.reader(io.StringIO(first), delimiter=dialect.delimiter, quotechar=dialect.quote), [])
    except csv.Error as e:
        raise malformed_csv(rel, e) from e
    names = [h.strip() for h in header]
    if not names or all(not n for n in names):
        raise BadSourceError(rel, "no header row", hint="the first line must name the columns")
    empty = [i + 1 for i, n in enumerate(names) if not n]
    if empty:
        raise BadSourceError(
            rel,
            f"empty header name in column {empty[0]}",
            hint="name every column in the first line",
        )
    seen: set[str] = set()
    duplicate = next((n for n in names if n in seen or seen.add(n)), None)
    if duplicate:
        raise BadSourceError(rel, f"duplicate header name '{duplicate}'", hint="give every column a unique name")
    return names


def read_csv(data: bytes, rel: str, limits: LimitsConfig, delimiter: str | None = None) -> tuple[pa.Table, CsvDialect]:
    """The file's table and the dialect it was read in: sniffed, with `delimiter` fixed where the format says."""
    text = decode_text(data, rel)
    dialect = sniff_dialect(text, delimiter)
    check_csv_header(text, rel, dialect)
    raw = data if text.encode() == data else text.encode()
    try:
        table = pacsv.read_csv(
            io.BytesIO(raw),
            read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(
                delimiter=dialect.delimiter, quote_char=dialect.quote, newlines_in_values=True
            ),
            convert_options=pacsv.ConvertOptions(strings_can_be_null=True, decimal_point=dialect.decimal),
        )
    except pa.ArrowInvalid as e:
        message = str(e).removeprefix("CSV parse error: ")
        if "straddling" in message or "block size" in message:
            raise BadSourceError(
                rel,
                f"a cell is larger than {CSV_BLOCK_BYTES >> 20} MB",
                hint="large blobs belong in documents, not table cells",
            ) from e
        raise BadSourceError(
            rel,
            f"malformed CSV (read as {dialect_words(dialect)}): {message.splitlines()[0]}",
            hint="every row needs as many fields as the header: look for ragged rows or an unclosed quote",
        ) from e
    if table.num_rows == 0:
        raise BadSourceError(rel, "header only, no rows of data", hint="add rows or remove the file")
    return table, dialect


def dialect_words(dialect: CsvDialect) -> str:
    names = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "pipes"}
    return f"fields split by {names.get(dialect.delimiter, repr(dialect.delimiter))}, quoted with {dialect.quote}"


def read_report(data: bytes, rel: str) -> pa.Table:
    try:
        return read_report_csv(decode_text(data, rel), rel)
    except csv.Error as e:
        raise malformed_csv(rel, e) from e


def read_parquet(data: bytes, rel: str) -> pa.Table:
    try:
        table = pq.read_table(io.BytesIO(data))
        table.column_names  # noqa: B018 -- decoded lazily: a damaged footer may hold names that are no UTF-8
        return table
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
        raise BadSourceError(
            rel,
            f"not a readable Parquet file: {str(e).splitlines()[0]}",
            hint="re-export the file; it may be truncated",
        ) from e


def check_cell_sizes(table: pa.Table, rel: str, limits: LimitsConfig) -> None:
    for name in table.column_names:
        column = table.column(name)
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            continue
        lengths = pc.binary_length(column)
        longest = pc.max(lengths).as_py()
        if longest and longest > limits.max_cell_bytes:
            row = pc.index(lengths, longest).as_py()
            raise BadSourceError(
                rel,
                f"cell too large: column '{name}' row {row + 1} holds {longest / 1e6:.1f} MB "
                f"(limit {limits.max_cell_bytes / 1e6:.1f} MB)",
                hint="store large text as a document, or raise limits.max_cell_bytes",
            )


def check_not_reserved(column: str, rel: str) -> None:
    if column.startswith(RESERVED_PREFIX):
        raise BadSourceError(
            rel,
            f"column '{column}' starts with {RESERVED_PREFIX}, which the lake keeps for provenance",
            hint="rename the column",
        )


def check_unique_columns(columns: list[str], rel: str) -> None:
    """Source names become lake column names (sanitized): two of them must not become one."""
    seen: dict[str, str] = {}
    for original in columns:
        name = column_name(original)
        if name in seen:
            raise BadSourceError(
                rel, f"columns '{seen[name]}' and '{original}' both become column '{name}'", hint="rename one of them"
            )
        seen[name] = original


def drop_excluded_columns(table: pa.Table, manifest: ExclusionManifest) -> pa.Table:
    keep = [c for c in table.column_names if not is_excluded_path(c, manifest)]
    return table.select(keep)


# ---------------------------------------------------------------- JSON


def is_excluded_path(path: str, manifest: ExclusionManifest) -> bool:
    plain = path.replace("[*]", "")
    return any(plain == f or plain.startswith(f + ".") or path.startswith(f + "[") for f in manifest.fields)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON literal {name}")


def parse_json(text: str, rel: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        truncated = " (file truncated?)" if "\n" not in text[e.pos :].rstrip() else ""
        raise BadSourceError(
            rel,
            f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}{truncated}",
            hint="fix the JSON syntax; a validator such as `python -m json.tool` shows where",
        ) from e
    except ValueError as e:
        raise BadSourceError(rel, f"invalid JSON: {e}", hint="write NaN/Infinity as null or a string") from e
    except RecursionError as e:
        raise BadSourceError(rel, "JSON nesting depth exceeds what can be parsed", hint="flatten the structure") from e


def json_records(data: bytes, rel: str, fmt: str) -> list[dict[str, Any]]:
    text = decode_text(data, rel)
    if fmt == "jsonl":
        records = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append(parse_json(line, rel))
                except BadSourceError as e:
                    raise BadSourceError(rel, f"line {number}: {e.reason}", hint=e.hint) from e
    else:
        document = parse_json(text, rel)
        if not isinstance(document, list | dict):
            raise BadSourceError(
                rel,
                f"top-level JSON value is a scalar ({json_kind(document)}), not records",
                hint="a table file holds an object or an array of objects",
            )
        records = document if isinstance(document, list) else [document]
    if not records:
        raise BadSourceError(rel, "no records", hint="the file holds an empty array")
    for position, record in enumerate(records):
        if not isinstance(record, dict):
            raise BadSourceError(
                rel,
                f"record {position + 1} is a {json_kind(record)}, not an object: tables need records",
                hint="write one JSON object per record",
            )
    return records


def json_kind(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", type(None): "null"}.get(
        type(value), type(value).__name__
    )


class _Flattener:
    """Flattens nested objects into columns and nested arrays of objects into child tables."""

    def __init__(self, rel: str, manifest: ExclusionManifest) -> None:
        self.rel = rel
        self.manifest = manifest
        self.rows: dict[str, list[dict[str, Any]]] = defaultdict(list, {"": []})
        self.shapes: dict[str, dict[str, int]] = defaultdict(dict)
        self.json_paths: set[str] = set()

    def note_shape(self, path: str, shape: str, record: int) -> None:
        seen = self.shapes[path]
        seen.setdefault(shape, record)
        if len(seen) > 1:
            (a, ra), (b, rb) = list(seen.items())[:2]
            raise BadSourceError(
                self.rel,
                f"conflicting types: field '{path}' is {a} in record {ra + 1} and {b} in record {rb + 1}",
                hint="make the field one type, or hide it with the exclusion manifest",
            )

    def walk(
        self,
        obj: dict[str, Any],
        prefix: str,
        table_path: str,
        row: dict[str, Any],
        record_id: str,
        record: int,
    ) -> None:
        for key, value in obj.items():
            local = f"{prefix}.{key}" if prefix else key
            check_not_reserved(local, self.rel)
            full = f"{table_path}[*].{local}" if table_path else local
            if is_excluded_path(full, self.manifest):
                continue
            if isinstance(value, dict):
                self.note_shape(full, "an object", record)
                self.json_paths.add(full)
                self.walk(value, local, table_path, row, record_id, record)
            elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                self.note_shape(full, "an array of objects", record)
                child_path = f"{full}"
                self.json_paths.add(f"{child_path}[*]")
                for index, item in enumerate(value):
                    child_id = f"{record_id}/{local}/{index}"
                    child_row = {PROVENANCE_RECORD: child_id, PROVENANCE_PARENT: record_id}
                    self.walk(item, "", child_path, child_row, child_id, record)
                    self.rows[child_path].append(child_row)
            elif isinstance(value, list):
                if value:
                    self.note_shape(full, "an array", record)
                    self.json_paths.add(f"{full}[*]")
                    row[local] = value
            else:
                if value is not None:
                    self.note_shape(full, "a scalar", record)
                row[local] = value

    def flatten(self, records: list[dict[str, Any]]) -> None:
        for position, record in enumerate(records):
            record_id = f"{self.rel}#{position}"
            row = {PROVENANCE_RECORD: record_id}
            self.walk(record, "", "", row, record_id, position)
            self.rows[""].append(row)


def infer_arrow_column(values: list[Any], rel: str, path: str) -> pa.Array:
    """JSON values -> the narrowest Arrow type: bool, int64, double, else string (dates, timestamps
    and formatted numbers in strings are typed by `typed_text_columns`, as for every format)."""
    present = [v for v in values if v is not None]
    if any(isinstance(v, list | dict) for v in present):
        return pa.array([None if v is None else json.dumps(v, ensure_ascii=False) for v in values], pa.string())
    kinds = {
        bool if isinstance(v, bool) else int if isinstance(v, int) else float if isinstance(v, float) else str
        for v in present
    }
    if kinds == {bool}:
        return pa.array(values, pa.bool_())
    if kinds == {int}:
        try:
            return pa.array(values, pa.int64())
        except OverflowError:
            return pa.array([None if v is None else str(v) for v in values], pa.string())
    if kinds <= {int, float}:
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def rows_to_arrow(rows: list[dict[str, Any]], rel: str) -> pa.Table:
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return pa.table({c: infer_arrow_column([r.get(c) for r in rows], rel, c) for c in columns})


def column_name(path: str) -> str:
    return path if path.startswith("_lp_") else sanitize_name(path)


def read_json_tables(data: bytes, rel: str, fmt: str, source: str, manifest: ExclusionManifest) -> list[TableData]:
    flattener = _Flattener(rel, manifest)
    flattener.flatten(json_records(data, rel, fmt))
    tables = []
    for table_path, rows in flattener.rows.items():
        name = source if not table_path else f"{source}__{sanitize_name(table_path)}"
        parent = None
        if table_path:
            outer = table_path.rsplit("[*]", 1)[0] if "[*]" in table_path else ""
            parent = source if not outer else f"{source}__{sanitize_name(outer)}"
        arrow = rows_to_arrow(rows, rel)
        check_unique_columns(arrow.column_names, rel)
        paths = {}
        renamed = []
        for local in arrow.column_names:
            col = column_name(local)
            renamed.append(col)
            paths[col] = f"{table_path}[*].{local}" if table_path else local
        own = sorted(p for p in flattener.json_paths if p.startswith(table_path))
        tables.append(
            TableData(
                name=name,
                table=arrow.rename_columns(renamed),
                paths=paths,
                parent=parent,
                json_paths=own,
            )
        )
    return tables


def with_provenance(table: pa.Table, rel: str) -> pa.Table:
    """Add _lp_file and, for flat files, _lp_record = file#position."""
    n = table.num_rows
    if PROVENANCE_RECORD not in table.column_names:
        positions = pc.cast(pa.array(range(n), pa.int64()), pa.string())
        table = table.append_column(PROVENANCE_RECORD, pc.binary_join_element_wise(f"{rel}#", positions, ""))
    return table.append_column(
        PROVENANCE_FILE,
        pa.array([rel] * n, pa.string()) if n < 1000 else pa.repeat(pa.scalar(rel), n).cast(pa.string()),
    )


def read_table_file(
    root: Path, rel: str, fmt: str, source: str, manifest: ExclusionManifest, limits: LimitsConfig
) -> list[TableData]:
    """All tables one file yields: the file's own, plus one per nested array of objects."""
    check_name(rel, source)
    data = read_bytes(root / rel, rel, limits)
    dialect = None
    if fmt in ("json", "jsonl"):
        tables = read_json_tables(data, rel, fmt, source, manifest)
    else:
        if fmt == "report":
            arrow = read_report(data, rel)
        elif fmt == "parquet":
            arrow = read_parquet(data, rel)
        else:
            arrow, dialect = read_csv(data, rel, limits, "\t" if fmt == "tsv" else None)
        arrow = drop_excluded_columns(arrow, manifest)
        for column in arrow.column_names:
            check_not_reserved(column, rel)
        check_unique_columns(arrow.column_names, rel)
        renamed = [column_name(c) for c in arrow.column_names]
        tables = [
            TableData(
                name=source,
                table=arrow.rename_columns(renamed),
                paths=dict(zip(renamed, arrow.column_names, strict=True)),
                dialect=dialect,
            )
        ]
    for t in tables:
        check_cell_sizes(t.table, rel, limits)
    return [
        replace(t, table=with_provenance(t.table if fmt == "report" else typed_text_columns(t.table, t.dialect), rel))
        for t in tables
    ]


# ---------------------------------------------------------------- documents


class _HtmlText(HTMLParser):
    BLOCKS = frozenset({"p", "div", "section", "article", "li", "tr", "br", "table", "ul", "ol", "pre", "blockquote"})
    SKIP = frozenset({"script", "style", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self.SKIP:
            self._skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag in self.BLOCKS or re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data.strip()
        elif not self._skip:
            self.parts.append(re.sub(r"\s+", " ", data))

    def text(self) -> str:
        joined = "".join(self.parts)
        lines = [line.strip() for line in joined.splitlines()]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


def html_to_text(html: str) -> tuple[str, str]:
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return parser.title, parser.text()


def first_heading(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.lstrip("#").strip()[:200]
    return ""


def check_name(rel: str, name: str) -> None:
    """A file whose name would reach prompts as a table name or a document id must not address the model."""
    if name_addresses_the_model(name):
        raise BadSourceError(
            rel, "its name reads as an instruction to a model, and names reach the model's prompts", hint="rename it"
        )


def read_document(root: Path, rel: str, limits: LimitsConfig) -> Document:
    check_name(rel, Path(rel).stem)
    data = read_bytes(root / rel, rel, limits)
    text = decode_text(data, rel)
    fmt = Path(rel).suffix.lower().lstrip(".")
    title = ""
    if fmt in ("html", "htm"):
        title, text = html_to_text(text)
    if not text.strip():
        raise BadSourceError(rel, "empty document: no text left after removing markup", hint="fill it or remove it")
    return Document(
        document_id=Path(rel).stem,
        title=title or first_heading(text),
        text=text,
        file=rel,
        format="html" if fmt in ("html", "htm") else "markdown" if fmt in ("md", "markdown") else "text",
    )
