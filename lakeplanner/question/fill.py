"""Where the reader cannot decide a frame field, one schema-constrained LLM call may propose it; what
it proposes is kept only as a span of the question (the model may point at words, never write them)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lakeplanner.llm.base import LLM, system, user
from lakeplanner.question.frame import Operation, QuestionFrame, Span
from lakeplanner.question.lexicon import lexicon
from lakeplanner.question.read import attribute_of

INSTRUCTIONS = (
    "Copy from the question the words that name what it asks for (the thing whose value is the answer), "
    "exactly as written, without the question's other words. Reply with JSON."
)
NEEDS_NO_SUBJECT = (Operation.yes_no, Operation.reason, Operation.definition)


class AskedWords(BaseModel):
    asked: str = Field(max_length=120, description="words copied from the question")


def undecided(frame: QuestionFrame) -> list[str]:
    """The fields the reader left open: the subject of a question with no question word to find it
    by ("Give the contact e-mail of member M001", "Total volume of spoiled batches in 2024?")."""
    if frame.subject is None and frame.wh is None and frame.operation not in NEEDS_NO_SUBJECT:
        return ["subject"]
    return []


def fill_frame(frame: QuestionFrame, llm: LLM) -> QuestionFrame:
    """The frame with its open fields proposed by the LLM and checked against the question's text; the
    frame as read when nothing is open or the proposal is not a span of the question."""
    if not undecided(frame):
        return frame
    proposal = llm.complete(
        [system(INSTRUCTIONS), user(f"Question: {frame.text}")], AskedWords, max_tokens=60
    ).value.asked
    subject = span_in(frame.text, proposal)
    if subject is None:
        return frame
    return frame.model_copy(
        update={
            "subject": subject,
            "attribute": attribute_of(subject, lexicon(frame.packs)),
            "filled": (*frame.filled, "subject"),
        }
    )


def span_in(text: str, proposal: str) -> Span | None:
    """Where `proposal` stands in `text` (case aside, trimmed of punctuation), or None."""
    words = proposal.strip().strip("?.,;:!\"'").strip()
    start = text.casefold().find(words.casefold()) if len(words) > 1 else -1
    if start < 0:
        return None
    return Span(start=start, end=start + len(words), text=text[start : start + len(words)])
