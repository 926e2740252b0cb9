"""HSEQ segments (seed 001 §2.3, App. 9.1): a reversible, typed linearisation of tables and documents.

Every segment is (id, level, parent, content, metadata). Document paragraphs partition the text,
so concatenating them in offset order rebuilds it exactly; rows keep the header in their table
segment and their values as JSON, so the matrix can be reassembled.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.expressions import And, EqualTo, In

from lakeplanner.errors import EngineError
from lakeplanner.ingest.readers import Document
from lakeplanner.ingest.tables import INTERNAL_NAMESPACE

SEGMENTS_TABLE = f"{INTERNAL_NAMESPACE}.segments"
SEGMENT_SCHEMA = pa.schema(
    [
        pa.field("segment_id", pa.string(), nullable=False),
        pa.field("level", pa.string()),
        pa.field("parent_id", pa.string()),
        pa.field("source", pa.string()),
        pa.field("container", pa.string()),
        pa.field("position", pa.int64()),
        pa.field("content", pa.string()),
        pa.field("start", pa.int64()),
        pa.field("end", pa.int64()),
        pa.field("row_index", pa.int64()),
        pa.field("row_key", pa.string()),
        pa.field("meta", pa.string()),
        pa.field("file", pa.string()),
        pa.field("record", pa.string()),
        pa.field("content_hash", pa.string()),
    ]
)
_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")
# a markdown heading line ("## Terms"), or a title over a line of = or - (setext, as plain-text memos write them)
_HEADING = re.compile(r"^#{1,6} .*$|^[^\n]*\w[^\n]*\n[ \t]*(?:={3,}|-{3,})[ \t]*$", re.M)
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")


def content_hash(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Spans that partition the text: breaks after blank-line runs and around heading lines."""
    starts = {0}
    starts.update(m.end() for m in _BLANK_LINES.finditer(text))
    for heading in _HEADING.finditer(text):
        starts.add(heading.start())
        starts.add(min(len(text), heading.end() + 1))
    ordered = sorted(s for s in starts if s < len(text))
    return list(zip(ordered, [*ordered[1:], len(text)], strict=True))


def sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Stripped sentence spans inside text[start:end], as absolute offsets."""
    spans, cursor = [], start
    piece = text[start:end]
    for match in [*SENTENCE_END.finditer(piece), None]:
        stop = start + match.start() if match else end
        chunk = text[cursor:stop]
        left = len(chunk) - len(chunk.lstrip())
        right = len(chunk.rstrip())
        if chunk.strip():
            spans.append((cursor + left, cursor + right))
        cursor = start + match.end() if match else end
    return spans


def heading_of(paragraph: str) -> str | None:
    """The title of a paragraph that is a heading alone; None for any other."""
    block = paragraph.strip()
    return block.splitlines()[0].lstrip("#").strip() if _HEADING.fullmatch(block) else None


def document_segments(source: str, doc: Document) -> list[dict]:
    """document -> paragraphs -> sentences, parent before child, with absolute offsets."""
    text = doc.text
    root_id = f"{source}:{doc.document_id}"
    rows = [
        segment(
            root_id,
            "document",
            None,
            source,
            doc.document_id,
            0,
            doc.title,
            0,
            len(text),
            meta={"title": doc.title, "format": doc.format, "length": len(text)},
            file=doc.file,
            record=doc.file,
            digest=content_hash(text),
        )
    ]
    for p, (a, b) in enumerate(paragraph_spans(text)):
        paragraph_id = f"{root_id}/p{p}"
        heading = heading_of(text[a:b])
        rows.append(
            segment(
                paragraph_id,
                "paragraph",
                root_id,
                source,
                doc.document_id,
                len(rows),
                text[a:b],
                a,
                b,
                meta={"heading": heading} if heading else None,
                file=doc.file,
                record=doc.file,
            )
        )
        for s, (u, v) in enumerate(sentence_spans(text, a, b)):
            rows.append(
                segment(
                    f"{paragraph_id}/s{s}",
                    "sentence",
                    paragraph_id,
                    source,
                    doc.document_id,
                    len(rows),
                    text[u:v],
                    u,
                    v,
                    file=doc.file,
                    record=doc.file,
                )
            )
    return rows


def segment(
    segment_id: str,
    level: str,
    parent: str | None,
    source: str,
    container: str,
    position: int,
    content: str,
    start: int | None = None,
    end: int | None = None,
    *,
    meta: dict | None = None,
    file: str = "",
    record: str = "",
    digest: str | None = None,
) -> dict:
    return {
        "segment_id": segment_id,
        "level": level,
        "parent_id": parent,
        "source": source,
        "container": container,
        "position": position,
        "content": content,
        "start": start,
        "end": end,
        "row_index": None,
        "row_key": None,
        "meta": json.dumps(meta) if meta else None,
        "file": file,
        "record": record,
        "content_hash": digest or content_hash(content),
    }


def table_segments(
    source: str,
    table: pa.Table,
    data_columns: list[str],
    key_columns: list[str],
    iceberg_table: str,
) -> pa.Table:
    """A table segment with the header, then one row segment per row (content = the row as JSON).

    Built in DuckDB from the _lp_row/_lp_hash columns so a million rows stay vectorised.
    """
    root_id = f"{source}:table"
    header = segment(
        root_id,
        "table",
        None,
        source,
        source,
        0,
        iceberg_table,
        meta={"schema": data_columns, "table": iceberg_table, "keys": key_columns},
        file="",
        record="",
        digest=content_hash(json.dumps(data_columns)),
    )
    key_sql = " || '|' || ".join(f'CAST("{c}" AS VARCHAR)' for c in key_columns) or "NULL"
    con = duckdb.connect()
    con.register("source_rows", table.append_column("_lp_index", pa.array(range(table.num_rows), pa.int64())))
    rows = con.sql(
        f"""SELECT '{source}:' || _lp_record AS segment_id, 'row' AS level, '{root_id}' AS parent_id,
                   '{source}' AS source, '{source}' AS container, _lp_index + 1 AS position,
                   _lp_row AS content, CAST(NULL AS BIGINT) AS start, CAST(NULL AS BIGINT) AS "end",
                   _lp_index AS row_index, {key_sql} AS row_key,
                   CAST(NULL AS VARCHAR) AS meta, _lp_file AS file, _lp_record AS record,
                   _lp_hash AS content_hash
            FROM source_rows"""
    ).to_arrow_table()
    con.close()
    return pa.concat_tables([pa.Table.from_pylist([header], SEGMENT_SCHEMA), rows.cast(SEGMENT_SCHEMA)])


def replace_source_segments(catalog: Catalog, source: str, segments: pa.Table) -> None:
    """Swap one source's segments in a single Iceberg commit (delete + append)."""
    segments = segments.cast(SEGMENT_SCHEMA)
    try:
        try:
            table = catalog.load_table(SEGMENTS_TABLE)
        except NoSuchTableError:
            table = catalog.create_table(SEGMENTS_TABLE, schema=SEGMENT_SCHEMA)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Delete operation did not match any records")
            table.overwrite(segments, overwrite_filter=EqualTo("source", source))
    except Exception as e:
        raise EngineError(
            f"writing segments of {source} failed: {e}",
            hint="the source's previous segments are unchanged; ingest it again",
        ) from e


def delete_source_segments(catalog: Catalog, source: str) -> None:
    """Remove one source's segments (one commit; nothing to do when it has none)."""
    try:
        table = catalog.load_table(SEGMENTS_TABLE)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Delete operation did not match any records")
            table.delete(EqualTo("source", source))
    except NoSuchTableError:
        return
    except Exception as e:
        raise EngineError(
            f"deleting segments of {source} failed: {e}",
            hint="the source's segments are unchanged; open the lake again to retry",
        ) from e


def stored_documents(catalog: Catalog, sources: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(document_id, title) per document source, from the document-level segments."""
    try:
        table = catalog.load_table(SEGMENTS_TABLE)
    except NoSuchTableError:
        return {}
    rows = (
        table.scan(
            row_filter=And(EqualTo("level", "document"), In("source", sources)),
            selected_fields=("source", "container", "content"),
        )
        .to_arrow()
        .to_pylist()
    )
    out: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        out.setdefault(row["source"], []).append((row["container"], row["content"]))
    return out


MENTION_SCAN_ROWS = 2_000_000  # past this, mentioned() declines to scan and says so (None)


def mentioned(catalog: Catalog, terms: list[str], max_rows: int = MENTION_SCAN_ROWS) -> set[str] | None:
    """The terms that some document title or paragraph, table header or row of the lake contains
    (any case; a term matches at the start of a word, so 'operation' finds 'operations'). None when
    the lake's segments are too many to scan."""
    try:
        table = catalog.load_table(SEGMENTS_TABLE)
    except NoSuchTableError:
        return set()
    snapshot = table.current_snapshot()
    if snapshot is None or not terms:
        return set()
    if int((snapshot.summary or {}).get("total-records", 0)) > max_rows:
        return None
    content = (
        table.scan(row_filter=In("level", ("document", "paragraph", "table", "row")), selected_fields=("content",))
        .to_arrow()
        .column("content")
    )
    found = set()
    for term in terms:
        spellings = "|".join(re.escape(v) for v in dict.fromkeys((term.lower(), term.lower().replace("-", ""))))
        if pc.any(pc.match_substring_regex(content, rf"\b(?:{spellings})", ignore_case=True)).as_py():
            found.add(term)
    return found


def rebuild_document(segments: list[dict]) -> str:
    """Inverse of document_segments: concatenate paragraphs by offset."""
    paragraphs = sorted((s for s in segments if s["level"] == "paragraph"), key=lambda s: s["start"])
    return "".join(s["content"] for s in paragraphs)


def rebuild_table(segments: list[dict]) -> tuple[list[str], list[dict]]:
    """Inverse of table_segments: (header, rows in original order)."""
    header = json.loads(next(s for s in segments if s["level"] == "table")["meta"])["schema"]
    rows = sorted((s for s in segments if s["level"] == "row"), key=lambda s: s["row_index"])
    return header, [json.loads(s["content"]) for s in rows]
