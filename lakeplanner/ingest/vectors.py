"""Milvus store for document chunks: dense + BM25 hybrid search, per-document replacement.

The same code serves an embedded Milvus Lite file (a URI ending in ``.db``) and a Milvus
server (``http://host:19530``). Each collection holds the chunk fields of ``ChunkRecord``,
a ``dense`` COSINE vector and a ``sparse`` BM25 vector that Milvus derives from ``text``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator
from pymilvus import (
    AnnSearchRequest,
    CollectionSchema,
    DataType,
    Function,
    FunctionType,
    MilvusClient,
    MilvusException,
    RRFRanker,
)
from pymilvus.milvus_client.index import IndexParams

from lakeplanner.errors import EngineError, LakeLockedError

# UTF-8 byte limits of the VARCHAR fields; Milvus counts bytes, so they are checked on the
# record rather than discovered halfway through an insert.
_VARCHAR_BYTES = {
    "chunk_id": 128,
    "document_id": 512,
    "source": 256,
    "source_file": 1024,
    "title": 1024,
    "heading": 1024,
    "text": 65535,
    "content_hash": 128,
    "linked_table": 256,
}
# Every Milvus failure reaches the caller as an EngineError that names it and its fix; pymilvus and
# Milvus Lite also log each one with a traceback, which a user would see on stderr.
for _library in ("pymilvus", "milvus_lite"):
    logging.getLogger(_library).setLevel(logging.CRITICAL)
_LINKED_KEY_BYTES = 512
_MAX_LINKED_KEYS = 4096
_WRITE_BATCH = 1000
_CANDIDATES_PER_RETRIEVER = 3  # each retriever feeds RRF this many times `limit` candidates
_COUNT = "count(*)"


class ChunkRecord(BaseModel):
    """One chunk of a document, with its provenance in the lake."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    document_id: str
    source: str
    source_file: str
    position: int
    start: int
    end: int
    title: str
    heading: str
    text: str
    content_hash: str
    linked_table: str = ""
    linked_keys: list[str] = []

    @model_validator(mode="after")
    def _fits_milvus_fields(self) -> ChunkRecord:
        for name, limit in _VARCHAR_BYTES.items():
            _check_utf8_bytes(name, getattr(self, name), limit)
        if len(self.linked_keys) > _MAX_LINKED_KEYS:
            raise ValueError(f"linked_keys holds {len(self.linked_keys)} keys, max {_MAX_LINKED_KEYS}")
        for key in self.linked_keys:
            _check_utf8_bytes("linked_keys item", key, _LINKED_KEY_BYTES)
        return self


class SearchHit(BaseModel):
    """A chunk found by hybrid search; ``score`` is its RRF score (higher is better)."""

    chunk: ChunkRecord
    score: float


def _check_utf8_bytes(name: str, value: str, limit: int) -> None:
    size = len(value.encode("utf-8"))
    if size > limit:
        raise ValueError(f"{name} is {size} UTF-8 bytes, max {limit}")


_CHUNK_FIELDS = list(ChunkRecord.model_fields)
_EXPR_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _string_literal(value: str) -> str:
    return '"' + value.translate(_EXPR_ESCAPES) + '"'


def _in_filter(field: str, values: Iterable[str]) -> str:
    """``field in [...]``, quoted here because pymilvus does not escape VARCHAR keys."""
    return f"{field} in [{', '.join(_string_literal(value) for value in values)}]"


def _batches(items: Sequence[Any], size: int = _WRITE_BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _lite_path(uri: str) -> str | None:
    """The absolute data path when ``uri`` names a Milvus Lite file, else None."""
    return os.path.abspath(uri) if uri.endswith(".db") else None


def _chunk_schema(dim: int) -> CollectionSchema:
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("chunk_id", DataType.VARCHAR, is_primary=True, max_length=_VARCHAR_BYTES["chunk_id"])
    for name in ("document_id", "source", "source_file"):
        schema.add_field(name, DataType.VARCHAR, max_length=_VARCHAR_BYTES[name])
    for name in ("position", "start", "end"):
        schema.add_field(name, DataType.INT64)
    for name in ("title", "heading"):
        schema.add_field(name, DataType.VARCHAR, max_length=_VARCHAR_BYTES[name])
    schema.add_field("text", DataType.VARCHAR, max_length=_VARCHAR_BYTES["text"], enable_analyzer=True)
    for name in ("content_hash", "linked_table"):
        schema.add_field(name, DataType.VARCHAR, max_length=_VARCHAR_BYTES[name])
    schema.add_field(
        "linked_keys",
        DataType.ARRAY,
        element_type=DataType.VARCHAR,
        max_capacity=_MAX_LINKED_KEYS,
        max_length=_LINKED_KEY_BYTES,
    )
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        Function(
            name="text_bm25",
            function_type=FunctionType.BM25,
            input_field_names=["text"],
            output_field_names=["sparse"],
        )
    )
    return schema


def _chunk_indexes() -> IndexParams:
    index_params = MilvusClient.prepare_index_params()
    index_params.add_index(field_name="dense", index_type="AUTOINDEX", metric_type="COSINE")
    index_params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    return index_params


LITE_LOCK = "LOCK"  # the file Milvus Lite flocks inside its data folder


def held_elsewhere(lock: Path) -> bool:
    """Whether another open file holds an exclusive flock on `lock` (Milvus Lite's data-folder lock)."""
    if not lock.exists():
        return False
    import fcntl

    with lock.open("rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
    return False


class _LiteServers:
    """Counts the open stores per Milvus Lite file so the last one to close releases it.

    pymilvus starts one in-process Lite server per file and never stops it, which keeps the
    file locked against other processes until this one exits.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()

    def opened(self, path: str) -> None:
        with self._lock:
            self._open[path] += 1

    def closed(self, path: str) -> None:
        with self._lock:
            self._open[path] -= 1
            if self._open[path] > 0:
                return
            del self._open[path]
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_server(path)


_LITE_SERVERS = _LiteServers()


class VectorStore:
    """Chunk collections in one Milvus instance; every Milvus failure surfaces as EngineError."""

    def __init__(self, uri: str, *, dim: int = 384, token: str | None = None) -> None:
        self._uri = uri
        self._dim = dim
        self._lite_path = _lite_path(uri)
        self._ready: set[str] = set()  # collections known to exist and be loaded
        if self._lite_path:
            Path(self._lite_path).parent.mkdir(parents=True, exist_ok=True)
        with self._engine_errors("connecting"):
            self._client: MilvusClient | None = MilvusClient(uri, token=token or "")
        if self._lite_path:
            _LITE_SERVERS.opened(self._lite_path)

    def collections(self) -> list[str]:
        with self._engine_errors("listing collections"):
            return sorted(self._connected().list_collections())

    def count(self, collection: str) -> int:
        """Exact number of chunks; count(*) sees unflushed writes and honours deletes."""
        if not self._open_existing(collection):
            return 0
        with self._engine_errors("counting chunks", collection):
            rows = self._connected().query(collection, filter="", output_fields=[_COUNT], consistency_level="Strong")
        return int(rows[0][_COUNT])

    def document_ids(self, collection: str) -> set[str]:
        if not self._open_existing(collection):
            return set()
        found: set[str] = set()
        with self._engine_errors("listing documents", collection):
            iterator = self._connected().query_iterator(
                collection, batch_size=_WRITE_BATCH, filter="", output_fields=["document_id"]
            )
            while batch := iterator.next():
                found.update(row["document_id"] for row in batch)
            iterator.close()
        return found

    def replace_documents(self, collection: str, chunks: Sequence[ChunkRecord], vectors: np.ndarray) -> None:
        """Make ``collection`` hold exactly ``chunks`` for every document_id they mention.

        Chunks are upserted by chunk_id, then the documents' chunks missing from ``chunks``
        are deleted. If writing fails, chunk_ids this call added are removed again (chunks
        that existed before keep whatever version was last written) and EngineError is raised.
        """
        self._check_batch(chunks, vectors)
        if not chunks:
            return
        self._ensure_collection(collection)
        new_ids = [chunk.chunk_id for chunk in chunks]
        document_ids = sorted({chunk.document_id for chunk in chunks})
        previously_present = self._present_chunk_ids(collection, new_ids)
        previous_of_documents = self._chunk_ids_of_documents(collection, document_ids)
        self._upsert_or_roll_back(collection, chunks, vectors, previously_present)
        self._delete_chunk_ids(collection, sorted(previous_of_documents - set(new_ids)))

    def drop(self, collection: str) -> None:
        """Remove ``collection`` and its chunks; a missing one is already gone."""
        client = self._connected()
        with self._engine_errors("dropping", collection):
            if client.has_collection(collection):
                client.drop_collection(collection)
        self._ready.discard(collection)

    def hybrid_search(
        self,
        collection: str,
        query_text: str,
        query_vector: np.ndarray,
        *,
        limit: int = 10,
        filter: str = "",
    ) -> list[SearchHit]:
        """Dense ANN and BM25 full-text results fused by reciprocal rank (RRF).

        ``filter`` is a Milvus boolean expression over the chunk fields, e.g.
        ``document_id == "contract-7"``. A missing collection has no hits.
        """
        if not self._open_existing(collection):
            return []
        requests = self._search_requests(query_text, query_vector, limit, filter)
        with self._engine_errors("hybrid search", collection):
            results = self._connected().hybrid_search(
                collection, requests, RRFRanker(), limit=limit, output_fields=_CHUNK_FIELDS
            )
        return [SearchHit(chunk=ChunkRecord(**hit["entity"]), score=hit["distance"]) for hit in results[0]]

    def close(self) -> None:
        """Disconnect; closing twice is harmless."""
        client, self._client = self._client, None
        if client is None:
            return
        try:
            with self._engine_errors("closing"):
                client.close()
        finally:
            if self._lite_path:
                _LITE_SERVERS.closed(self._lite_path)

    def _connected(self) -> MilvusClient:
        if self._client is None:
            raise EngineError(
                f"the Milvus store at {self._uri} is closed",
                hint="open a new VectorStore instead of reusing a closed one",
            )
        return self._client

    @contextlib.contextmanager
    def _engine_errors(self, action: str, collection: str = "") -> Iterator[None]:
        try:
            yield
        except MilvusException as exc:
            if action == "connecting" and self._lite_path and held_elsewhere(Path(self._lite_path) / LITE_LOCK):
                raise LakeLockedError(
                    f"another process holds the lake's Milvus Lite file {self._lite_path}",
                    hint="stop the other lakeplanner process on this lake (a CLI ask, another serve), "
                    "or point every process at a Milvus server (LAKEPLANNER_LAKE_MILVUS_URI)",
                ) from exc
            if action == "connecting" and self._lite_path:
                raise EngineError(
                    f"the lake's Milvus Lite file {self._lite_path} cannot be opened: {exc.message}",
                    hint=f"it may be damaged: delete {self._lite_path} and re-ingest the lake's documents "
                    "to rebuild it",
                ) from exc
            raise EngineError(
                f"Milvus {action} failed for {self._where(collection)}: {exc.message}",
                hint=self._hint(),
            ) from exc

    def _where(self, collection: str) -> str:
        return f"collection {collection!r} at {self._uri}" if collection else self._uri

    def _hint(self) -> str:
        if self._lite_path:
            return (
                f"only one process may open {self._lite_path}: stop the other one; "
                f"if the file is damaged, delete {self._lite_path} and re-ingest to rebuild it"
            )
        return f"is the Milvus server at {self._uri} running and reachable? (LAKEPLANNER_LAKE_MILVUS_URI)"

    def _open_existing(self, collection: str) -> bool:
        """Load ``collection`` if it exists; a reopened Milvus holds collections released."""
        if collection in self._ready:
            return True
        client = self._connected()
        with self._engine_errors("opening", collection):
            if not client.has_collection(collection):
                return False
            self._check_dimension(collection)
            client.load_collection(collection)
        self._ready.add(collection)
        return True

    def _ensure_collection(self, collection: str) -> None:
        if self._open_existing(collection):
            return
        with self._engine_errors("creating", collection):
            self._connected().create_collection(
                collection,
                schema=_chunk_schema(self._dim),
                index_params=_chunk_indexes(),
                consistency_level="Strong",
            )
        self._ready.add(collection)

    def _check_dimension(self, collection: str) -> None:
        fields = self._connected().describe_collection(collection)["fields"]
        stored = next(int(f["params"]["dim"]) for f in fields if f["name"] == "dense")
        if stored != self._dim:
            raise EngineError(
                f"{self._where(collection)} stores {stored}-d vectors, "
                f"but this store was opened for {self._dim}-d vectors",
                hint=f"open the store with dim={stored}, or drop the collection and re-ingest",
            )

    def _check_batch(self, chunks: Sequence[ChunkRecord], vectors: np.ndarray) -> None:
        if vectors.shape != (len(chunks), self._dim):
            raise ValueError(f"expected vectors of shape ({len(chunks)}, {self._dim}), got {vectors.shape}")
        if not (np.issubdtype(vectors.dtype, np.floating) and np.isfinite(vectors).all()):
            raise ValueError("vectors must be finite floating-point numbers")
        duplicates = [cid for cid, n in Counter(c.chunk_id for c in chunks).items() if n > 1]
        if duplicates:
            raise ValueError(f"chunk_ids repeated in one call: {sorted(duplicates)[:5]}")

    def _present_chunk_ids(self, collection: str, chunk_ids: Sequence[str]) -> set[str]:
        present: set[str] = set()
        for batch in _batches(chunk_ids):
            present |= self._query_chunk_ids(collection, _in_filter("chunk_id", batch))
        return present

    def _chunk_ids_of_documents(self, collection: str, document_ids: Sequence[str]) -> set[str]:
        # Small batches: each document can contribute many chunks to one query result.
        found: set[str] = set()
        for batch in _batches(document_ids, size=50):
            found |= self._query_chunk_ids(collection, _in_filter("document_id", batch))
        return found

    def _query_chunk_ids(self, collection: str, expression: str) -> set[str]:
        with self._engine_errors("reading chunk ids", collection):
            rows = self._connected().query(collection, filter=expression, output_fields=["chunk_id"])
        return {row["chunk_id"] for row in rows}

    def _upsert_or_roll_back(
        self,
        collection: str,
        chunks: Sequence[ChunkRecord],
        vectors: np.ndarray,
        previously_present: set[str],
    ) -> None:
        attempted: list[str] = []
        try:
            for start in range(0, len(chunks), _WRITE_BATCH):
                batch = chunks[start : start + _WRITE_BATCH]
                attempted.extend(chunk.chunk_id for chunk in batch)
                rows = [
                    chunk.model_dump() | {"dense": vector.tolist()}
                    for chunk, vector in zip(batch, vectors[start : start + _WRITE_BATCH], strict=True)
                ]
                self._connected().upsert(collection, rows)
        except Exception as exc:
            self._delete_chunk_ids(collection, [c for c in attempted if c not in previously_present])
            raise EngineError(
                f"writing {len(chunks)} chunks to {self._where(collection)} failed "
                f"(chunks added by this call were removed): {exc}",
                hint=self._hint(),
            ) from exc

    def _delete_chunk_ids(self, collection: str, chunk_ids: Sequence[str]) -> None:
        with self._engine_errors("deleting chunks", collection):
            for batch in _batches(chunk_ids):
                self._connected().delete(collection, filter=_in_filter("chunk_id", batch))

    def _search_requests(
        self, query_text: str, query_vector: np.ndarray, limit: int, filter: str
    ) -> list[AnnSearchRequest]:
        candidates = limit * _CANDIDATES_PER_RETRIEVER
        requests = [
            AnnSearchRequest(
                data=[np.asarray(query_vector, dtype=np.float32).tolist()],
                anns_field="dense",
                param={"metric_type": "COSINE"},
                limit=candidates,
                expr=filter,
            )
        ]
        if query_text.strip():  # BM25 of an empty query matches nothing and may be rejected
            requests.append(
                AnnSearchRequest(
                    data=[query_text],
                    anns_field="sparse",
                    param={"metric_type": "BM25"},
                    limit=candidates,
                    expr=filter,
                )
            )
        return requests
