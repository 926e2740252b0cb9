"""The text encoders' outputs, recorded beside each lake's cassette and replayed with it.

bge-small and the MiniLM reranker are int8 ONNX models. ONNX Runtime quantizes activations per batch,
and its int8 kernels round differently on CPUs with and without AVX512-VNNI, so the same text gets
other numbers beside other texts or on another machine: the same lake can retrieve other passages and
the answer prompt the cassette holds is not asked. The tape holds whole calls, as the cassette does:
a batch of texts (or a query and its passages) recorded replays its recorded vectors (scores); a
batch not recorded is encoded live, whole.
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


def call_key(kind: str, *texts: str) -> str:
    return hashlib.sha256("\x00".join((kind, *texts)).encode("utf-8")).hexdigest()[:32]


class EncoderTape:
    """The encoders' outputs by call (`call_key`), as base64 float32, loaded from and saved to JSON."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        held = json.loads(path.read_text()) if path is not None and path.exists() else {}
        self.calls: dict[str, str] = held.get("calls", {})

    @classmethod
    def union(cls, paths: Iterable[Path]) -> EncoderTape:
        tape = cls()
        for path in paths:
            tape.calls.update(cls(path).calls)
        return tape

    def output(self, key: str) -> np.ndarray | None:
        held = self.calls.get(key)
        return None if held is None else np.frombuffer(base64.b64decode(held), dtype=np.float32)

    def keep(self, key: str, output: np.ndarray) -> None:
        self.calls[key] = base64.b64encode(np.asarray(output, dtype=np.float32).tobytes()).decode()

    def save(self) -> None:
        assert self.path is not None, "a union of tapes is replayed, never saved"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps({"calls": self.calls}, indent=0, sort_keys=True) + "\n")


LIVE_EMBED, LIVE_SCORE = Embedder.embed_passages, Reranker.score


def replayed(tape: EncoderTape, recording: bool, key: str, live: Callable[[], np.ndarray]) -> np.ndarray:
    """The call's recorded output, else the live one (kept on the tape when recording)."""
    held = tape.output(key)
    if held is not None:
        return held
    output = np.asarray(live(), dtype=np.float32)
    if recording:
        tape.keep(key, output)
    return output


def encoded(tape: EncoderTape, recording: bool, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    if not texts:
        return LIVE_EMBED(embedder, texts)
    vectors = replayed(tape, recording, call_key("embed", *texts), lambda: LIVE_EMBED(embedder, texts))
    return vectors.reshape(len(texts), embedder.dim)


def scored(tape: EncoderTape, recording: bool, reranker: Reranker, query: str, passages: Sequence[str]) -> np.ndarray:
    if not passages:
        return LIVE_SCORE(reranker, query, passages)
    return replayed(tape, recording, call_key("score", query, *passages), lambda: LIVE_SCORE(reranker, query, passages))


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
