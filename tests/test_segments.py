import itertools
import json

import pyarrow as pa
import pytest

from lakeplanner import sample_lake_path
from lakeplanner.config import ChunkingConfig, IngestConfig
from lakeplanner.ingest.chunking import chunk_text
from lakeplanner.ingest.readers import Document, read_document
from lakeplanner.ingest.segments import (
    document_segments,
    paragraph_spans,
    rebuild_document,
    rebuild_table,
    table_segments,
)
from lakeplanner.ingest.tables import with_row_hashes

TEXT = "# Title\n\nFirst paragraph. Second sentence!\n\n\n## Terms\nNet 30 days.  Late fee 1%.\n"


def test_paragraphs_partition_the_text():
    spans = paragraph_spans(TEXT)
    assert spans[0][0] == 0 and spans[-1][1] == len(TEXT)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


def test_document_segments_are_hierarchical_and_reversible():
    doc = Document("d1", "Title", TEXT, "d1.md", "markdown")
    segments = document_segments("docs", doc)
    by_id = {s["segment_id"]: s for s in segments}
    assert segments[0]["level"] == "document" and segments[0]["parent_id"] is None
    for s in segments[1:]:
        parent = by_id[s["parent_id"]]
        assert parent["start"] <= s["start"] <= s["end"] <= parent["end"]
        assert TEXT[s["start"] : s["end"]] == s["content"]
    sentences = [s["content"] for s in segments if s["level"] == "sentence"]
    assert sentences == ["# Title", "First paragraph.", "Second sentence!", "## Terms", "Net 30 days.", "Late fee 1%."]
    assert rebuild_document(segments) == TEXT


@pytest.mark.parametrize(
    "rel",
    [
        "documents/contracts/CTR-C001.md",
        "documents/memo-collections-2024Q3.txt",
        "documents/invoices/DOC-INV-1046.html",
    ],
)
def test_sample_documents_rebuild_exactly(rel):
    doc = read_document(sample_lake_path(), rel, IngestConfig().limits)
    assert rebuild_document(document_segments("docs", doc)) == doc.text


def test_table_segments_rebuild_the_table():
    table = pa.table(
        {"id": [3, 1, 2], "name": ["c", "a", None], "_lp_record": ["f#0", "f#1", "f#2"], "_lp_file": ["f"] * 3}
    )
    hashed = with_row_hashes(table, ["id", "name"])
    segments = table_segments("t", hashed, ["id", "name"], ["id"], "lake.t").to_pylist()
    assert [s["row_key"] for s in segments[1:]] == ["3", "1", "2"]
    header, rows = rebuild_table(segments)
    assert header == ["id", "name"]
    assert rows == table.select(header).to_pylist()


def test_short_documents_are_one_chunk_and_long_ones_split_at_headings():
    assert len(chunk_text(TEXT, ChunkingConfig())) == 1
    long_text = "".join(f"## Section {i}\n\n" + ("word " * 400 + "\n\n") * 3 for i in range(6))
    chunks = chunk_text(long_text, ChunkingConfig())
    assert len(chunks) > 1
    assert all(c.end - c.start <= 8000 for c in chunks)
    assert chunks[0].start == 0 and chunks[-1].end == len(long_text)
    assert all(long_text[c.start :].startswith("## Section") for c in chunks)


def test_a_paragraph_longer_than_a_chunk_is_windowed_with_overlap():
    text = "x" * 20_000
    chunks = chunk_text(text, ChunkingConfig())
    assert [(c.start, c.end) for c in chunks] == [(0, 8000), (7500, 15500), (15000, 20000)]


def test_a_title_over_a_line_of_dashes_is_a_heading_of_its_own():
    """Plain-text memos underline their titles: the title is a section, not text of the passage under it."""
    from dataclasses import replace

    from lakeplanner.execute.hseq import Segment
    from lakeplanner.execute.vector import is_heading
    from lakeplanner.ingest.segments import heading_of

    memo = "MEMO\nDate: 2025-01-08\n\n1. Volumes\n----------\nWe shipped 115 pallets.\n\nTotals\n======\nNone.\n"
    paragraphs = [memo[a:b] for a, b in paragraph_spans(memo)]
    assert paragraphs[1:] == ["1. Volumes\n----------\n", "We shipped 115 pallets.\n\n", "Totals\n======\n", "None.\n"]
    assert [heading_of(p) for p in paragraphs] == [None, "1. Volumes", None, "Totals", None]
    assert heading_of("a - b\n\n---\n") is None  # a rule after a blank line titles nothing
    segments = document_segments("memos", Document(document_id="m", text=memo, title="m", format="txt", file="m"))
    titled = [s for s in segments if s["level"] == "paragraph" and s["meta"]]
    assert [json.loads(s["meta"])["heading"] for s in titled] == ["1. Volumes", "Totals"]
    paragraph = Segment(id="p", level="paragraph", parent=None, source="memos", container="m", position=0, content="")
    assert [is_heading(replace(paragraph, content=p)) for p in paragraphs] == [False, True, False, True, False]
