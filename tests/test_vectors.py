"""Real Milvus Lite tests of the chunk store, with real embeddings (no mocks)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pydantic
import pytest

from lakeplanner.errors import EngineError
from lakeplanner.ingest.vectors import ChunkRecord, VectorStore
from lakeplanner.llm.embeddings import Embedder, default_embedder

COLLECTION = "documents"
CONTRACT_TEXTS = [
    "Payment terms: invoices are due within thirty days of receipt.",
    "Late payments accrue interest of two percent per month.",
    "Either party may terminate this agreement with ninety days notice.",
]
MANUAL_TEXTS = [
    "Unpack the pump and mount it on a level concrete base.",
    "Calibrate the flow sensor with the quokkaflux tool before first use.",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return default_embedder()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VectorStore]:
    opened = VectorStore(str(tmp_path / "milvus.db"))
    yield opened
    opened.close()


def make_chunks(document_id: str, texts: list[str], **extra: object) -> list[ChunkRecord]:
    chunks, offset = [], 0
    for position, text in enumerate(texts):
        chunks.append(
            ChunkRecord(
                chunk_id=f"{document_id}#{position}",
                document_id=document_id,
                source="docs",
                source_file=f"docs/{document_id}.txt",
                position=position,
                start=offset,
                end=offset + len(text),
                title=document_id,
                heading="",
                text=text,
                content_hash=f"hash-{document_id}-{position}",
                **extra,
            )
        )
        offset += len(text) + 1
    return chunks


def ingest(store: VectorStore, embedder: Embedder, chunks: list[ChunkRecord]) -> None:
    store.replace_documents(COLLECTION, chunks, embedder.embed_passages([chunk.text for chunk in chunks]))


def ingest_both(store: VectorStore, embedder: Embedder) -> None:
    ingest(store, embedder, make_chunks("contract", CONTRACT_TEXTS))
    ingest(store, embedder, make_chunks("manual", MANUAL_TEXTS))


def search(store: VectorStore, embedder: Embedder, query: str, **options: object) -> list[str]:
    hits = store.hybrid_search(COLLECTION, query, embedder.embed_query(query), **options)
    return [hit.chunk.chunk_id for hit in hits]


def test_missing_collection_reads_as_empty(store: VectorStore) -> None:
    assert store.collections() == []
    assert store.count(COLLECTION) == 0
    assert store.document_ids(COLLECTION) == set()
    assert store.hybrid_search(COLLECTION, "anything", np.ones(384, dtype=np.float32)) == []


def test_reingesting_same_documents_does_not_duplicate(store: VectorStore, embedder: Embedder) -> None:
    ingest_both(store, embedder)
    ingest_both(store, embedder)
    assert store.collections() == [COLLECTION]
    assert store.count(COLLECTION) == len(CONTRACT_TEXTS) + len(MANUAL_TEXTS)
    assert store.document_ids(COLLECTION) == {"contract", "manual"}


def test_shrunk_document_loses_stale_chunks(store: VectorStore, embedder: Embedder) -> None:
    quoted_id = 'report "Q3"\\draft'  # quotes and backslashes must survive filter expressions
    ingest(store, embedder, make_chunks(quoted_id, CONTRACT_TEXTS))
    ingest(store, embedder, make_chunks("manual", MANUAL_TEXTS))
    ingest(store, embedder, make_chunks(quoted_id, CONTRACT_TEXTS[:1]))
    assert store.count(COLLECTION) == 1 + len(MANUAL_TEXTS)
    hits = search(store, embedder, "terminate agreement notice", filter='source == "docs"')
    assert f"{quoted_id}#2" not in hits
    assert f"{quoted_id}#0" in hits


def test_rare_keyword_is_found_by_bm25_alone(store: VectorStore, embedder: Embedder) -> None:
    ingest_both(store, embedder)
    target = make_chunks("manual", MANUAL_TEXTS)[1]
    fillers = make_chunks("filler", [f"Routine maintenance log entry {i}." for i in range(12)])
    ingest(store, embedder, fillers)
    # A query vector pointing away from the target keeps it out of the dense candidates.
    target_vector = embedder.embed_passages([target.text])[0]
    hits = store.hybrid_search(COLLECTION, "quokkaflux", -target_vector, limit=3)
    assert target.chunk_id in [hit.chunk.chunk_id for hit in hits]
    assert all(hit.score > 0 for hit in hits)


def test_semantic_query_ranks_relevant_chunk_first(store: VectorStore, embedder: Embedder) -> None:
    ingest_both(store, embedder)
    assert search(store, embedder, "When do invoices have to be paid?", limit=3)[0] == "contract#0"


def test_filter_restricts_hits_to_one_document(store: VectorStore, embedder: Embedder) -> None:
    ingest_both(store, embedder)
    hits = store.hybrid_search(
        COLLECTION,
        "payment terms",
        embedder.embed_query("payment terms"),
        filter='document_id == "manual"',
    )
    assert {hit.chunk.document_id for hit in hits} == {"manual"}
    assert len(hits) == len(MANUAL_TEXTS)


def test_hits_carry_full_provenance(store: VectorStore, embedder: Embedder) -> None:
    chunks = make_chunks("contract", CONTRACT_TEXTS, linked_table="orders", linked_keys=["o-1"])
    ingest(store, embedder, chunks)
    hits = store.hybrid_search(
        COLLECTION,
        "interest",
        embedder.embed_query("interest"),
        filter='array_contains(linked_keys, "o-1")',
    )
    hit_chunks = [hit.chunk for hit in hits]
    assert len(hit_chunks) == len(CONTRACT_TEXTS)
    assert chunks[1] in hit_chunks  # every field round-trips, linked_keys included


def test_close_and_reopen_keeps_data(tmp_path: Path, embedder: Embedder) -> None:
    uri = str(tmp_path / "milvus.db")
    first = VectorStore(uri)
    ingest_both(first, embedder)
    first.close()
    # Closing released the file: a second process can open it and sees the data.
    count_elsewhere = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from {VectorStore.__module__} import VectorStore; print(VectorStore({uri!r}).count({COLLECTION!r}))",
        ],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
    )
    assert count_elsewhere.stdout.strip() == str(len(CONTRACT_TEXTS) + len(MANUAL_TEXTS))
    reopened = VectorStore(uri)
    try:
        assert reopened.document_ids(COLLECTION) == {"contract", "manual"}
        assert search(reopened, embedder, "flow sensor calibration", limit=1) == ["manual#1"]
    finally:
        reopened.close()


def test_failed_write_removes_chunks_it_added(store: VectorStore, embedder: Embedder) -> None:
    ingest_both(store, embedder)
    chunks = make_chunks("bulk", [f"line {i}" for i in range(1200)])
    # Unvalidated record: Milvus itself rejects the over-long primary key in the second batch.
    chunks[1100] = ChunkRecord.model_construct(**(chunks[1100].model_dump() | {"chunk_id": "x" * 300}))
    vectors = np.tile(embedder.embed_passages(["line"]), (len(chunks), 1))
    with pytest.raises(EngineError, match="'documents'"):
        store.replace_documents(COLLECTION, chunks, vectors)
    assert store.count(COLLECTION) == len(CONTRACT_TEXTS) + len(MANUAL_TEXTS)
    assert store.document_ids(COLLECTION) == {"contract", "manual"}


def test_bad_vectors_are_rejected_before_writing(store: VectorStore) -> None:
    chunks = make_chunks("contract", CONTRACT_TEXTS)
    with pytest.raises(ValueError, match="shape"):
        store.replace_documents(COLLECTION, chunks, np.zeros((2, 384), dtype=np.float32))
    with pytest.raises(ValueError, match="finite"):
        store.replace_documents(COLLECTION, chunks, np.full((3, 384), np.nan, dtype=np.float32))
    assert store.count(COLLECTION) == 0


def test_chunk_fields_must_fit_milvus_limits() -> None:
    with pytest.raises(pydantic.ValidationError, match="chunk_id"):
        make_chunks("é" * 100, ["text"])  # 100 characters but 200+ UTF-8 bytes


def test_reopening_with_another_dimension_is_refused(tmp_path: Path, embedder: Embedder) -> None:
    uri = str(tmp_path / "milvus.db")
    first = VectorStore(uri)
    ingest_both(first, embedder)
    first.close()
    other = VectorStore(uri, dim=768)
    try:
        with pytest.raises(EngineError, match="384-d"):
            other.count(COLLECTION)
    finally:
        other.close()


def test_unreachable_server_raises_engine_error() -> None:
    with pytest.raises(EngineError) as raised:
        VectorStore("http://127.0.0.1:1")
    assert "http://127.0.0.1:1" in raised.value.message
    assert "running" in (raised.value.hint or "")
