"""The one way a user's question becomes its frame: read under the lake's packs, the fields the
reader left open filled by the LLM, the lake's values it names bound to their columns."""

from __future__ import annotations

from contextlib import suppress
from typing import Protocol

from lakeplanner.errors import LLMOutputError
from lakeplanner.llm.base import LLM
from lakeplanner.question.fill import fill_frame
from lakeplanner.question.frame import QuestionFrame
from lakeplanner.question.read import read_question, with_values

Found = list[tuple[int, int, str]]


class HeldValues(Protocol):
    """The lake's values a text names (start, end, table.column): in full, and by part of their words."""

    def find(self, text: str) -> Found: ...

    def mentions(self, text: str, found: Found | None = None) -> Found: ...


def frame_question(
    text: str, packs: tuple[str, ...] = (), *, llm: LLM | None = None, held: HeldValues | None = None
) -> QuestionFrame:
    """The frame every later stage is handed. Without `llm` open fields stay open (as when its reply is
    unusable: the question is then answered without them); without `held` no value is bound."""
    frame = read_question(text, packs)
    if llm is not None:
        with suppress(LLMOutputError):
            frame = fill_frame(frame, llm)
    if held is not None:
        found = held.find(text)
        frame = with_values(frame, found, held.mentions(text, found))
    return frame
