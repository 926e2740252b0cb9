"""The text encoders' outputs, recorded beside each lake's cassette and replayed with it.

bge-small and the MiniLM reranker are int8 ONNX models, and ONNX Runtime's int8 kernels round
differently on CPUs with and without AVX512-VNNI: the same lake can retrieve other passages on another
machine, so the answer prompt the cassette holds is not asked. Replayed, every machine hears the same
vectors and relevance scores for the texts recorded, as it hears the same LLM replies; a text not
recorded is encoded live.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from lakeplanner.llm.embeddings import Embedder, Reranker

TAPE_NAME = "encoders.json"


def text_key(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:32]


class EncoderTape:
    """Vectors by text and relevance scores by (query, passage), loaded from and saved to JSON."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        held = json.loads(path.read_text()) if path is not None and path.exists() else {}
        self.vectors: dict[str, str] = held.get("vectors", {})  # base64 of float32
        self.scores: dict[str, float] = held.get("scores", {})

    @classmethod
    def union(cls, paths: Iterable[Path]) -> EncoderTape:
        tape = cls()
        for path in paths:
            other = cls(path)
            tape.vectors.update(other.vectors)
            tape.scores.update(other.scores)
        return tape

    def vector(self, text: str) -> np.ndarray | None:
        held = self.vectors.get(text_key(text))
        return None if held is None else np.frombuffer(base64.b64decode(held), dtype=np.float32)

    def keep_vector(self, text: str, vector: np.ndarray) -> None:
        self.vectors[text_key(text)] = base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode()

    def score(self, query: str, passage: str) -> float | None:
        return self.scores.get(text_key(query, passage))

    def keep_score(self, query: str, passage: str, score: float) -> None:
        self.scores[text_key(query, passage)] = float(score)

    def save(self) -> None:
        assert self.path is not None, "a union of tapes is replayed, never saved"
        held = {"vectors": self.vectors, "scores": self.scores}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(held, indent=0, sort_keys=True) + "\n")


LIVE_EMBED, LIVE_SCORE = Embedder.embed_passages, Reranker.score


def replayed(items: list, held: Callable, live: Callable, keep: Callable | None) -> list:
    """Each item's value from the tape (`held`), else from one live call over the items it lacks,
    kept on the tape when recording (`keep`)."""
    found = [held(item) for item in items]
    missing = [item for item, value in zip(items, found, strict=True) if value is None]
    computed = iter(live(missing) if missing else ())
    values = []
    for item, value in zip(items, found, strict=True):
        if value is None:
            value = next(computed)
            if keep is not None:
                keep(item, value)
        values.append(value)
    return values


def encoded(tape: EncoderTape, recording: bool, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    keep = tape.keep_vector if recording else None
    vectors = replayed(list(texts), tape.vector, lambda missing: LIVE_EMBED(embedder, missing), keep)
    return np.stack(vectors) if vectors else np.zeros((0, embedder.dim), dtype=np.float32)


def scored(tape: EncoderTape, recording: bool, reranker: Reranker, query: str, passages: Sequence[str]) -> np.ndarray:
    keep = (lambda passage, score: tape.keep_score(query, passage, score)) if recording else None
    scores = replayed(
        list(passages),
        lambda passage: tape.score(query, passage),
        lambda missing: LIVE_SCORE(reranker, query, missing),
        keep,
    )
    return np.asarray([float(score) for score in scores], dtype=np.float32)


def install(tape: EncoderTape, *, recording: bool = False) -> None:
    """Every Embedder and Reranker of this process answers from `tape` first (recording: and keeps
    what it computed there)."""
    Embedder.embed_passages = lambda self, texts: encoded(tape, recording, self, list(texts))
    Reranker.score = lambda self, query, passages: scored(tape, recording, self, query, list(passages))


def recorded_tapes() -> list[Path]:
    from tests.golden.golden import LAKES, lake_dir

    return [lake_dir(lake) / TAPE_NAME for lake in LAKES]


def replay_recorded() -> None:
    """Replay every sample lake's recorded encoder outputs in this process (also a Ray worker's
    setup hook, so node tasks on Ray hear what the driver hears)."""
    install(EncoderTape.union(recorded_tapes()))
