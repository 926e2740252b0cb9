"""Generate ``tests/data/bad/``: a corpus of malformed lake inputs for ingestion tests.

Deterministic (fixed seed).  Run from anywhere:

    python tests/data/make_bad_corpus.py

Every file is small except ``huge_cell.csv`` (one 5 MiB cell).  ``EXPECTED.json``
maps each file name to ``{"reason": ..., "keyword": ...}``: ``keyword`` is a
lowercase word or phrase that a good error message for that file must contain
(case-insensitively).  Two files are valid (``keyword`` ``""``) so a test can
check they are ingested next to the bad ones.
"""

from __future__ import annotations

import io
import json
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SEED = 1337
OUT = Path(__file__).resolve().parent / "bad"

ORDERS_HEADER = "order_id,customer_id,order_date,amount\n"


def orders_rows(n: int, start: int = 1) -> str:
    return "".join(
        f"O{start + i:04d},C{(i % 7) + 1:03d},2024-0{(i % 9) + 1}-1{i % 10},{100 + 17.25 * i:.2f}\n"
        for i in range(n)
    )


def records(n: int) -> list[dict]:
    return [{"id": i + 1, "name": f"item-{i + 1}", "price": round(9.5 + i, 2), "active": i % 2 == 0}
            for i in range(n)]


def build(rng: random.Random) -> dict[str, tuple[bytes, str, str]]:
    """file name -> (content, reason, keyword)."""
    files: dict[str, tuple[bytes, str, str]] = {}

    def add(name: str, data: bytes | str, reason: str, keyword: str) -> None:
        assert name not in files, name
        assert keyword == keyword.lower()
        files[name] = (data.encode("utf-8") if isinstance(data, str) else data, reason, keyword)

    # ---------------- JSON / JSONL ----------------------------------------
    full = json.dumps(records(6), indent=2)
    cut = full.index('"name": "item-4"') + len('"name": "it')
    add("truncated_array.json", full[:cut],
        "JSON array cut off in the middle of its 4th object (unexpected end of input)", "truncated")

    lines = [json.dumps(r) for r in records(6)]
    add("truncated_last_line.jsonl", "\n".join(lines[:5]) + "\n" + lines[5][: len(lines[5]) // 2],
        "JSON Lines file whose last line (line 6) is cut off mid-object, no trailing newline", "line 6")

    lines = [json.dumps(r) for r in records(7)]
    lines[3] = "ERROR 2024-05-03T10:22:01Z upstream export failed, retrying..."
    add("non_json_line.jsonl", "\n".join(lines) + "\n",
        "JSON Lines file with a plain-text log line (line 4) between valid records", "line 4")

    add("bare_scalar.json", "42\n", "top-level JSON value is a bare number, not records", "scalar")

    add("array_of_scalars.json", json.dumps([3, 1, 4, 1, 5, 9, 2, 6]) + "\n",
        "JSON array of numbers instead of an array of objects (no columns)", "records")

    add("concatenated_objects.json", "\n".join(json.dumps(r) for r in records(3)) + "\n",
        ".json file that is really JSON Lines: several top-level objects (extra data after the first)",
        "extra data")

    add("nan_infinity.json",
        '[{"sensor": "t1", "reading": 21.5},\n {"sensor": "t2", "reading": NaN},\n'
        ' {"sensor": "t3", "reading": Infinity},\n {"sensor": "t4", "reading": -Infinity}]\n',
        "JSON with non-standard NaN / Infinity literals (invalid per RFC 8259)", "nan")

    rows = []
    for i in range(8):
        amount = {"value": 10 + i, "currency": "EUR"} if i % 3 == 2 else 10.5 + i
        rows.append(json.dumps({"txn_id": f"T{i + 1:03d}", "amount": amount}))
    add("conflicting_types.jsonl", "\n".join(rows) + "\n",
        "JSON Lines where field 'amount' is a number in some rows and an object in others", "amount")

    depth = 2000
    add("deeply_nested.json", '{"a":' * depth + "1" + "}" * depth + "\n",
        f"JSON object nested {depth} levels deep (exceeds recursion limits)", "depth")

    add("whitespace_only.json", " \n\t\n   \r\n\n", "JSON file containing only whitespace", "empty")
    add("empty.jsonl", b"", "empty (0-byte) JSON Lines file", "empty")

    # ---------------- CSV -------------------------------------------------
    add("empty.csv", b"", "empty (0-byte) CSV file", "empty")

    add("header_only.csv", "customer_id,name,segment,country\n", "CSV with a header row but no data rows",
        "no rows")

    mixed = (b"customer_id,name,city\n"
             + "C001,Müller GmbH,München\n".encode("utf-8")
             + "C002,Société Générale Tech,Besançon\n".encode("utf-8")
             + "C003,Jürgen Weiß KG,Düsseldorf\n".encode("latin-1")
             + "C004,Ørsted Handel,Århus\n".encode("latin-1")
             + "C005,Plain Name Ltd,Leeds\n".encode("utf-8"))
    add("mixed_encoding.csv", mixed,
        "CSV mixing UTF-8 rows with Latin-1 rows (bytes 0xFC, 0xDF, 0xD8, 0xC5 are invalid UTF-8)", "encoding")

    add("ragged.csv",
        "id,name,qty,price\n1,bolt,10,0.25\n2,nut,20,0.10,EXTRA,MORE\n3,washer,5\n4,screw,7,0.15\n",
        "CSV rows with too many (row 2) and too few (row 3) fields for a 4-column header", "columns")

    add("duplicate_header.csv", "id,name,amount,name\n1,alpha,10,beta\n2,gamma,20,delta\n",
        "CSV header repeats the column name 'name'", "duplicate")

    add("empty_header_name.csv", "id,,amount\n1,x,10\n2,y,20\n",
        "CSV header with an empty column name (second column)", "header")

    add("nul_byte.csv", b"id,comment\n1,fine\n2,bro\x00ken\n3,also fine\n",
        "CSV with a NUL (0x00) byte inside a field", "nul")

    add("utf16_no_bom.csv", "id,city\n1,Zürich\n2,Kraków\n3,Sevilla\n".encode("utf-16-le"),
        "UTF-16LE encoded CSV without a byte-order mark (every other byte is NUL)", "encoding")

    add("unclosed_quote.csv", 'id,note,amount\n1,ok,10\n2,"starts a quote but never ends,20\n3,plain,30\n',
        "CSV with a quoted field that is never closed (runs to end of file)", "quote")

    junk = bytearray(rng.randbytes(4096))
    for pos in range(0, len(junk), 97):
        junk[pos] = 0
    add("binary_junk.csv", bytes(junk), "random binary bytes (with NULs) under a .csv extension", "binary")

    big = "x" * (5 * 1024 * 1024)
    add("huge_cell.csv", f"id,payload,tail\n1,small,ok\n2,{big},ok\n3,small,ok\n",
        "CSV with a single 5 MiB cell (exceeds per-field limits / block sizes)", "large")

    # ---------------- Parquet ---------------------------------------------
    add("junk.parquet", rng.randbytes(2048), "random bytes with a .parquet extension (no PAR1 magic)",
        "parquet")

    tbl = pa.table({
        "id": pa.array(range(2000), pa.int64()),
        "label": pa.array([f"row-{i}" for i in range(2000)], pa.string()),
        "value": pa.array([i * 0.5 for i in range(2000)], pa.float64()),
    })
    buf = io.BytesIO()
    pq.write_table(tbl, buf, compression="none")
    whole = buf.getvalue()
    add("truncated.parquet", whole[: len(whole) // 2],
        "valid Parquet file cut in half (footer and trailing PAR1 magic missing)", "parquet")

    # ---------------- documents -------------------------------------------
    blob = bytearray(rng.randbytes(1500))
    blob[0:4] = b"\x89PNG"
    for pos in range(5, len(blob), 53):
        blob[pos] = 0
    add("binary_document.md", bytes(blob), "a .md 'document' that is binary data (PNG-like bytes with NULs)",
        "binary")

    add("empty_after_strip.html",
        "<!DOCTYPE html>\n<html><head><title></title>\n<style>body { color: #333; }</style>\n"
        "<script>window.dataLayer = [];</script></head>\n<body>\n  <div class=\"wrapper\"><div></div>"
        "<img src=\"logo.png\" alt=\"\">\n  </div>\n  <!-- generated by export tool -->\n</body></html>\n",
        "HTML with markup, script and style but no visible text once tags are stripped", "empty")

    # ---------------- two valid files -------------------------------------
    add("valid_orders.csv", ORDERS_HEADER + orders_rows(10), "valid", "")
    add("valid_notes.md",
        "# Warehouse handover notes\n\n"
        "The Rotterdam warehouse moved to the new racking layout on 2024-11-04.\n\n"
        "## Open points\n\n"
        "- Re-label aisle C before the December stock count.\n"
        "- Orders O0003 and O0007 were shipped from the interim site.\n",
        "valid", "")
    return files


def main() -> None:
    rng = random.Random(SEED)
    files = build(rng)
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    expected = {}
    for name, (data, reason, keyword) in sorted(files.items()):
        (OUT / name).write_bytes(data)
        expected[name] = {"reason": reason, "keyword": keyword}
    (OUT / "EXPECTED.json").write_text(json.dumps(expected, indent=2, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
    bad = sum(1 for v in expected.values() if v["keyword"])
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"wrote {OUT}: {bad} malformed + {len(expected) - bad} valid files, {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
