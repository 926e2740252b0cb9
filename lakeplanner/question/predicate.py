"""Where a text states what the question's predicate asks: a passage saying what the subject is
("Open holds represent an estimate of ..."), or an answer restating the question's words before its
value ("Goodwill is X" to "what is goodwill?")."""

from __future__ import annotations

import re

from lakeplanner.question.frame import QuestionFrame

STATES = r"(?:\b(?:is|are|was|were|include|includes|represent|represents|means)\b|:)"
HEDGES = r"(?:(?:mainly|primarily|largely|principally)\s+)?(?:(?:comprised|made up)\s+)?(?:of\s+)?"
MAX_SUBJECT_GAP = 3  # words between the subject and its verb ("plan that allows", "approach: ")
MAX_SUBJECT_WORDS = 8


def asked_subject(frame: QuestionFrame) -> tuple[str, str | None] | None:
    """(subject, verb) of a question asking what a thing is, represents, consists of...; None otherwise."""
    asked = frame.predicate
    if asked is None or not asked.defines or len(asked.subject.text.split()) > MAX_SUBJECT_WORDS:
        return None
    if any(c.isdigit() for c in asked.subject.text):
        return None
    return asked.subject.text, asked.verb


def definition_pattern(frame: QuestionFrame) -> re.Pattern | None:
    """A pattern whose group `span` is what a sentence says the asked subject is (to the text's end);
    None when the question asks no definition."""
    asked = asked_subject(frame)
    if asked is None:
        return None
    subject, verb = asked
    said = r"\s+".join(re.escape(w) for w in subject.split())
    states = rf"\b{verb}\w*\b" if verb else STATES
    return re.compile(
        rf"(?<!\w){said}(?:\s+\S+){{0,{MAX_SUBJECT_GAP}}}?\s*{states}\s*{HEDGES}(?P<span>.+)", re.I | re.S
    )


def unrestated(frame: QuestionFrame, item: str) -> str:
    """What follows the question's words in an answer that restates them: "The table shows X" to "what
    does the table show?", "Goodwill is X" to "what is goodwill?"."""
    item = item.strip()
    asked = frame.predicate
    if asked is None:
        return item
    verb = rf"{re.escape(asked.verb)}(?:s|es|ed|d)?\b(?:\s+of\b)?" if asked.verb else ""
    if asked.auxiliary == "be":
        verb = rf"(?:is|are|was|were)\b(?:\s+\w+ly)?(?:\s+{verb})?" if verb else r"(?:is|are|was|were)\b"
    said = re.compile(rf"(?:the\s+)?(?:[\w-]+'s\s+)?{re.escape(asked.subject.text)}\s+{verb}[\s:,]*", re.I)
    restated = said.match(item)
    return item[restated.end() :] or item if restated else item
