"""A scripted backend for unit tests: replies come from a list or a function, calls are recorded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lakeplanner.llm.base import Backend, Message, RawCompletion, register_backend
from lakeplanner.llm.settings import LLMSettings

Script = Callable[[Sequence[Message], dict[str, Any] | None], str]


class FakeBackend(Backend):
    provider = "fake"
    model_name = "fake"
    travels = True

    def __init__(self, replies: Sequence[str] | Script = ()) -> None:
        self.replies = replies if callable(replies) else list(replies)
        self.calls: list[tuple[list[Message], dict[str, Any] | None]] = []

    def generate(self, messages: Sequence[Message], *, schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        self.calls.append((list(messages), schema))
        if callable(self.replies):
            text = self.replies(messages, schema)
        elif self.replies:
            text = self.replies.pop(0)
        else:
            raise AssertionError("FakeBackend ran out of scripted replies")
        prompt = sum(len(m.content.split()) for m in messages)
        return RawCompletion(text=text, prompt_tokens=prompt, completion_tokens=len(text.split()))


@register_backend("fake")
def fake_backend(settings: LLMSettings) -> FakeBackend:
    return FakeBackend()
