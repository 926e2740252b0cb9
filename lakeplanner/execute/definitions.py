"""What a passage says a thing is: "What do purchase obligations represent?" read off "Purchase
obligations represent an estimate of open purchase orders ...". The span is copied from the evidence,
never written by the LLM; synthesis uses it when the LLM's answer only repeats the question or is not
grounded (a 1.5B model often answers "purchase obligations")."""

from __future__ import annotations

import re

from lakeplanner.execute.results import NodeResult

_ASKED = re.compile(
    r"^\s*what (?:is|are|was|were|do|does|did) (?:the )?(?:(?:company|group)'s )?(?P<subject>.+?)"
    r"(?: (?:mainly |primarily |largely )?(?P<verb>represent|consist|comprise|include|allow|mean|cover|contain)\w*"
    r"(?: primarily| mainly)?(?: of)?)?\s*\??\s*$",
    re.I,
)
_STATES = r"(?:\b(?:is|are|was|were|include|includes|represent|represents|means)\b|:)"
_HEDGES = r"(?:(?:mainly|primarily|largely|principally)\s+)?(?:(?:comprised|made up)\s+)?(?:of\s+)?"
_SENTENCE_END = re.compile(r"\.(?=\s+[A-Z(]|\s*$)")
MAX_SUBJECT_GAP = 3  # words between the subject and its verb ("plan that allows", "approach: ")
MIN_SPAN_CHARS = 12


def asked_subject(question: str) -> tuple[str, str | None] | None:
    """(subject, verb) of a question asking what a thing is, represents, consists of...; None otherwise."""
    asked = _ASKED.match(question)
    if asked is None or len(asked["subject"].split()) > 8 or re.search(r"\d", asked["subject"]):
        return None
    verb = asked["verb"]
    if verb is None and re.match(r"^\s*what (?:do|does|did)\b", question, re.I):
        return None  # "what does the table show": another verb, not a definition
    return asked["subject"], verb.lower() if verb else None


def defined_span(question: str, results: list[NodeResult]) -> tuple[NodeResult, int, str] | None:
    """(result, evidence index, span): the first passage stating the subject's definition; the span runs
    from after the verb to the end of its sentence."""
    asked = asked_subject(question)
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
