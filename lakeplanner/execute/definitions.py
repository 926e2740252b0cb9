"""What a passage says a thing is: "What do open holds represent?" read off "Open holds
represent an estimate of reserved copies not yet collected ...". The span is copied from the evidence,
never written by the LLM; synthesis uses it when the LLM's answer only repeats the question or is not
grounded (a 1.5B model often answers "open holds")."""

from __future__ import annotations

import re

from lakeplanner.execute.results import NodeResult
from lakeplanner.question import QuestionFrame

_STATES = r"(?:\b(?:is|are|was|were|include|includes|represent|represents|means)\b|:)"
_HEDGES = r"(?:(?:mainly|primarily|largely|principally)\s+)?(?:(?:comprised|made up)\s+)?(?:of\s+)?"
_SENTENCE_END = re.compile(r"\.(?=\s+[A-Z(]|\s*$)")
MAX_SUBJECT_GAP = 3  # words between the subject and its verb ("plan that allows", "approach: ")
MIN_SPAN_CHARS = 12


def asked_subject(frame: QuestionFrame) -> tuple[str, str | None] | None:
    """(subject, verb) of a question asking what a thing is, represents, consists of...; None otherwise."""
    asked = frame.predicate
    if asked is None or not asked.defines or len(asked.subject.text.split()) > 8:
        return None
    if any(c.isdigit() for c in asked.subject.text):
        return None
    return asked.subject.text, asked.verb


def defined_span(frame: QuestionFrame, results: list[NodeResult]) -> tuple[NodeResult, int, str] | None:
    """(result, evidence index, span): the first passage stating the subject's definition; the span runs
    from after the verb to the end of its sentence."""
    asked = asked_subject(frame)
    if asked is None:
        return None
    subject, verb = asked
    said = r"\s+".join(re.escape(w) for w in subject.split())
    states = rf"\b{verb}\w*\b" if verb else _STATES
    pattern = re.compile(
        rf"(?<!\w){said}(?:\s+\S+){{0,{MAX_SUBJECT_GAP}}}?\s*{states}\s*{_HEDGES}(?P<span>.+)", re.I | re.S
    )
    for result in results:
        for i, item in enumerate(result.evidence):
            found = pattern.search(item.snippet)
            if found is None:
                continue
            tail = found["span"]
            end = _SENTENCE_END.search(tail)
            span = (tail[: end.start()] if end else tail).strip()
            if len(span) >= MIN_SPAN_CHARS:
                return result, i, span
    return None
