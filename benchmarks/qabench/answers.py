"""From a method's answer to what the metric compares: answer items and a scale word.

Every method goes through the same two functions, so no method is favoured by formatting."""

from __future__ import annotations

import re
from collections.abc import Iterable

from benchmarks.qabench.metrics import Score, hotpot_score, parse_number, tatqa_score
from lakeplanner.ingest.report_tables import scale_of

_PERCENT_WORDS = re.compile(r"percent|%", re.I)
_COUNT_WORDS = re.compile(r"\bhow many\b", re.I)
_DECLARED = re.compile(r"\(\s*(?:amounts\s+|dollars\s+|\$\s*)?in\s+(thousands|millions|billions)\b", re.I)
_SCALED = re.compile(r"(\d[\d,]*\.?\d*)\s*(million|billion)\b", re.I)
_YEAR = re.compile(r"^(?:19|20)\d{2}$")


def prediction_items(value: str | list[str] | None) -> list[str]:
    """A list as is; a string split on ';' or newlines, or on ',' / 'and' when every part is a number."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    parts = [p.strip() for p in re.split(r";|\n", value) if p.strip()]
    if len(parts) == 1:
        numbers = [p.strip() for p in re.split(r",\s+|\s+and\s+", parts[0]) if p.strip()]
        if len(numbers) > 1 and all(parse_number(p) is not None for p in numbers):
            return numbers
    return parts


def predicted_scale(question: str, items: list[str], texts: Iterable[str], paragraphs: Iterable[str] = ()) -> str:
    """'percent' for a percentage, else the scale the context declares for numeric answers (years and
    counts have none): its first "(in thousands)", else a scale word of the table (`texts`), else the
    scale a paragraph implies for the table ("$24.2 million of net income" beside a cell 24,193: thousand),
    else a paragraph's first scale word ("$23 million" about something else is only a fallback)."""
    if not items or any(parse_number(i) is None for i in items) or _COUNT_WORDS.search(question):
        return ""
    if all(_YEAR.match(i.strip()) for i in items):
        return ""
    if any(i.strip().endswith("%") for i in items) or _PERCENT_WORDS.search(question):
        return "percent"
    texts, paragraphs = list(texts), list(paragraphs)
    declared = [m[1] for t in texts + paragraphs if (m := _DECLARED.search(t))]
    return scale_of(declared[:1]) or scale_of(texts) or implied_scale(texts, paragraphs) or scale_of(paragraphs)


def implied_scale(cells: list[str], paragraphs: list[str]) -> str:
    """'thousand' when a paragraph restates a cell in millions (24,193 as "$24.2 million"), 'million'
    when in billions; '' when none does."""
    numbers = [abs(n) for c in cells if (n := parse_number(c)) is not None and abs(n) >= 1000]
    for text in paragraphs:
        for amount, word in _SCALED.findall(text):
            stated = float(amount.replace(",", ""))
            if stated >= 1 and any(abs(n / 1000 - stated) <= 0.05 for n in numbers):
                return "thousand" if word.lower() == "million" else "million"
    return ""


def judge(question, context, value: str | list[str] | None) -> tuple[list[str], str, Score]:
    """The items, the scale word and the score of one prediction (run time and report alike)."""
    items = prediction_items(value)
    if question.dataset == "hotpotqa":
        return items, "", hotpot_score(str(question.answer), "; ".join(items))
    cells, paragraphs = [c for row in context.table for c in row], [text for _, text in context.paragraphs]
    scale = predicted_scale(question.question, items, cells, paragraphs)
    return items, scale, tatqa_score(question.answer, question.answer_type, question.scale, items, scale)
