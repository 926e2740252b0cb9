"""The golden tapes replay the encoders: a recorded text gets its recorded vector or score, whatever
this CPU's int8 kernels would compute; other texts are encoded live."""

from __future__ import annotations

import numpy as np
import pytest

from lakeplanner.llm.embeddings import default_embedder, default_reranker
from tests.golden.encoders import EncoderTape, install, replay_recorded


@pytest.fixture
def tape_path(tmp_path):
    yield tmp_path / "encoders.json"
    replay_recorded()  # the session's tapes again, for the tests after this one


def test_a_recorded_text_replays_its_vector_and_score(tape_path):
    recording = EncoderTape(tape_path)
    install(recording, recording=True)
    live = default_embedder().embed_passages(["a harbour crane", "a rail yard"])
    [live_score] = default_reranker().score("cranes", ["a harbour crane"])
    recording.save()

    replayed = EncoderTape(tape_path)
    planted = np.full(default_embedder().dim, 0.5, dtype=np.float32)
    replayed.keep_vector("a planted text", planted)
    replayed.keep_score("cranes", "a planted text", 9.5)
    install(replayed)
    vectors = default_embedder().embed_passages(["a rail yard", "a planted text", "a harbour crane"])
    assert np.array_equal(vectors[0], live[1]) and np.array_equal(vectors[2], live[0])
    assert np.array_equal(vectors[1], planted)
    assert default_reranker().score("cranes", ["a harbour crane", "a planted text"]).tolist() == [live_score, 9.5]


def test_a_text_not_recorded_is_encoded_live(tape_path):
    install(EncoderTape(tape_path))
    [vector] = default_embedder().embed_passages(["never recorded anywhere"])
    assert vector.shape == (default_embedder().dim,) and np.isclose(np.linalg.norm(vector), 1.0, atol=1e-4)
    assert len(EncoderTape(tape_path).vectors) == 0  # replaying keeps nothing
