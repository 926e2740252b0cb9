"""Yes/no comparisons decided by code over the values each step read, not by the LLM.

"Are A and B in the same X?" with one exposed step per entity is yes when the two values share a word
the question does not already say ("Laleli, Fatih, Istanbul" vs "Ortaköy neighborhood": no).
"Are A and B both P?" with one yes/no per entity is yes when every step said yes. Anything else is left
to the LLM.
"""

from __future__ import annotations

from dataclasses import dataclass

from lakeplanner.execute.results import NodeResult
from lakeplanner.question import QuestionFrame
from lakeplanner.question.words import content_words


@dataclass(frozen=True)
class Comparison:
    value: str  # "yes" or "no"
    sentence: str  # what each step read, so the judgement can be checked


def compared(frame: QuestionFrame, exposed: list[NodeResult]) -> Comparison | None:
    if frame.judgement is None:
        return None
    read = [(r.question, (r.answer or "").strip()) for r in exposed]
    if len(read) < 2 or not all(value for _, value in read):
        return None
    said = "; ".join(f"{what}: {value}" for what, value in read)
    verdicts = [yes_or_no(value) for _, value in read]
    if frame.judgement == "all" and all(v is not None for v in verdicts):
        return Comparison("yes" if all(verdicts) else "no", said)
    if frame.judgement == "same" and len(read) == 2 and not any(v is not None for v in verdicts):
        asked = frame.content_words
        first, second = (content_words(value) - asked for _, value in read)
        if first and second:
            return Comparison("yes" if first & second else "no", said)
    return None


def yes_or_no(text: str) -> bool | None:
    word = text.strip().rstrip(".!").lower()
    return True if word == "yes" else False if word == "no" else None
