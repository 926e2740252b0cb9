"""What a passage says a thing is: "What do open holds represent?" read off "Open holds
represent an estimate of reserved copies not yet collected ...". The span is copied from the evidence,
never written by the LLM; synthesis uses it when the LLM's answer only repeats the question or is not
grounded (a 1.5B model often answers "open holds")."""

from __future__ import annotations

import re

from lakeplanner.execute.results import NodeResult
from lakeplanner.question import QuestionFrame
from lakeplanner.question.predicate import definition_pattern

_SENTENCE_END = re.compile(r"\.(?=\s+[A-Z(]|\s*$)")
MIN_SPAN_CHARS = 12


def defined_span(frame: QuestionFrame, results: list[NodeResult]) -> tuple[NodeResult, int, str] | None:
    """(result, evidence index, span): the first passage stating the subject's definition; the span runs
    from after the verb to the end of its sentence."""
    pattern = definition_pattern(frame)
    if pattern is None:
        return None
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
