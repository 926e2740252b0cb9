"""The golden tapes replay the encoders by whole call: a recorded batch gets its recorded vectors or
scores, whatever this CPU's int8 kernels would compute; a batch not recorded is encoded live, whole."""

from __future__ import annotations

import numpy as np
import pytest

from lakeplanner.llm.embeddings import default_embedder, default_reranker
from tests.golden.encoders import EncoderTape, call_key, install, replay_recorded


@pytest.fixture
def tape_path(tmp_path):
    yield tmp_path / "encoders.json"
    replay_recorded()  # the session's tapes again, for the tests after this one


def test_a_recorded_call_replays_its_vectors_and_scores(tape_path):
    recording = EncoderTape(tape_path)
    install(recording, recording=True)
    live = default_embedder().embed_passages(["a harbour crane", "a rail yard"])
    live_scores = default_reranker().score("cranes", ["a harbour crane", "a rail yard"])
    recording.save()

    replayed = EncoderTape(tape_path)
    planted = np.full((1, default_embedder().dim), 0.5, dtype=np.float32)
    replayed.keep(call_key("embed", "a planted text"), planted)
    replayed.keep(call_key("score", "cranes", "a planted text"), np.asarray([9.5]))
    install(replayed)
    assert np.array_equal(default_embedder().embed_passages(["a harbour crane", "a rail yard"]), live)
    assert np.array_equal(default_embedder().embed_passages(["a planted text"]), planted)
    assert np.array_equal(default_reranker().score("cranes", ["a harbour crane", "a rail yard"]), live_scores)
    assert default_reranker().score("cranes", ["a planted text"]).tolist() == [9.5]


def test_a_call_not_recorded_is_encoded_live_whole(tape_path):
    tape = EncoderTape(tape_path)
    planted = np.full((1, default_embedder().dim), 0.5, dtype=np.float32)
    tape.keep(call_key("embed", "a planted text"), planted)
    install(tape)
    vectors = default_embedder().embed_passages(["a planted text", "never recorded anywhere"])
    assert vectors.shape == (2, default_embedder().dim) and not np.array_equal(vectors[0], planted[0])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert list(tape.calls) == [call_key("embed", "a planted text")]  # replaying keeps nothing
