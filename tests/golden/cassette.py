"""A recorded model: every LLM call's (messages, schema, max_tokens) -> reply, kept as JSON.

`RecordingBackend` wraps a real backend and keeps what it answered; `ReplayBackend` answers from the
recording and refuses a call it does not hold (the prompt changed since the recording).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lakeplanner.llm.base import Backend, Message, RawCompletion

RERECORD_HINT = "if the change is intended, re-record: python -m tests.golden.record --lake {lake} --force"


class PromptChanged(AssertionError):
    """The code asked the model something the cassette does not hold (an AssertionError, so no
    error handling of the code under test turns it into an answer)."""


def call_key(messages: Sequence[Message], schema: dict[str, Any] | None, max_tokens: int) -> str:
    """sha256 of the canonical JSON of one call."""
    call = {"messages": [m.model_dump() for m in messages], "schema": schema, "max_tokens": max_tokens}
    canonical = json.dumps(call, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Cassette:
    """Replies by call key, loaded from and saved to one JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.replies: dict[str, dict[str, Any]] = json.loads(path.read_text()) if path.exists() else {}

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.replies, indent=1, sort_keys=True, ensure_ascii=False) + "\n")

    def keep(self, key: str, completion: RawCompletion) -> None:
        self.replies[key] = asdict(completion)

    def reply(self, key: str) -> RawCompletion | None:
        kept = self.replies.get(key)
        return RawCompletion(**kept) if kept is not None else None


class RecordingBackend(Backend):
    """`inner`'s replies, each kept in `cassette`; the calls that failed are listed in `failures`.
    A call `reused` holds is answered from there (the model's reply to that prompt, recorded before)."""

    def __init__(self, inner: Backend, cassette: Cassette, reused: Cassette | None = None) -> None:
        self.inner = inner
        self.cassette = cassette
        self.reused = reused
        self.model_name = inner.model_name
        self.provider = inner.provider
        self.failures: list[str] = []

    def generate(self, messages: Sequence[Message], *, schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        key = call_key(messages, schema, max_tokens)
        completion = self.reused.reply(key) if self.reused is not None else None
        if completion is None:
            try:
                completion = self.inner.generate(messages, schema=schema, max_tokens=max_tokens)
            except Exception as error:
                self.failures.append(f"{type(error).__name__}: {error}")
                raise
        self.cassette.keep(key, completion)
        return completion

    def prepare(self, messages: Sequence[Message]) -> int:
        return self.inner.prepare(messages)

    def close(self) -> None:
        self.inner.close()


def described(messages: Sequence[Message]) -> str:
    """The start of a call's system message and its last message, to say which prompt changed."""
    first, last = messages[0].content, messages[-1].content
    return f"system message starting {first[:160]!r}; last message ({messages[-1].role}) {last[-400:]!r}"


class ReplayBackend(Backend):
    """Answers from a cassette; a call it does not hold raises PromptChanged (and is kept in `misses`)."""

    provider = "replay"
    model_name = "replay"
    travels = True  # to a Ray actor: the serial/Ray parity test replays the same cassette on both

    def __init__(self, cassette: Cassette, lake: str) -> None:
        self.cassette = cassette
        self.lake = lake
        self.misses: list[str] = []

    def generate(self, messages: Sequence[Message], *, schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        completion = self.cassette.reply(call_key(messages, schema, max_tokens))
        if completion is None:
            self.misses.append(described(messages))
            raise PromptChanged(self.miss_message())
        return completion

    def miss_message(self) -> str:
        return (
            f"the prompt changed: the LLM was asked something {self.cassette.path} does not hold "
            f"({self.misses[-1]}); {RERECORD_HINT.format(lake=self.lake)}"
        )
