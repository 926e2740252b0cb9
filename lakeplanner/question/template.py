"""A question as a plan-cache template: its slot values (numbers, dates, quoted strings and the lake's
known values) replaced by placeholders of their kind, and the bag of content words paraphrases share."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lakeplanner.question.known import NUMBER, KnownValues
from lakeplanner.question.words import stem, word_set

DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")
TEMPLATE_TOKEN = re.compile(r"<[^>]+>|[a-z0-9_]+")
TEMPLATE_WORD = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class Slot:
    kind: str  # number, date, string, or table.column for a known entity value
    value: str


def normalise(question: str) -> str:
    return " ".join(question.lower().replace("?", " ").replace(",", " ").split())


def extract_slots(question: str, known: KnownValues) -> tuple[str, list[Slot]]:
    """The template text (placeholders in order) and the slot values, left to right."""
    spans: list[tuple[int, int, str, str]] = []
    for match in QUOTED.finditer(question):
        spans.append((match.start(), match.end(), "string", match.group(1) or match.group(2)))
    for start, end, kind in known.find(question):
        spans.append((start, end, kind, question[start:end]))
    for match in DATE.finditer(question):
        spans.append((match.start(), match.end(), "date", match.group(0)))
    for match in NUMBER.finditer(question):
        spans.append((match.start(), match.end(), "number", match.group(0)))
    chosen: list[tuple[int, int, str, str]] = []
    for span in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if not chosen or span[0] >= chosen[-1][1]:
            chosen.append(span)
    template, cursor = [], 0
    for start, end, kind, _ in chosen:
        template += [question[cursor:start], f"<{kind}>"]
        cursor = end
    template.append(question[cursor:])
    return normalise("".join(template)), [Slot(kind, value) for _, _, kind, value in chosen]


def canonical(template: str) -> str:
    """The bag of content words: function words dropped, aggregate synonyms and plurals merged.

    Paraphrases that only reword ("tell me the total for record <x>" / "what is the total of record
    <x>") share it, so they hit without an embedding; slot placeholders keep their order."""
    tokens = TEMPLATE_TOKEN.findall(template)
    slots = [t for t in tokens if t.startswith("<")]
    words = sorted(stem(t) for t in tokens if not t.startswith("<") and t not in word_set("filler"))
    return " ".join(words) + " | " + " ".join(slots)


def template_of(question: str, known: KnownValues) -> str:
    """The key a question's plan is cached under, before schema and context: questions that share it
    are answered by one plan with their own slot values."""
    return canonical(extract_slots(question, known)[0])  # its placeholders name the slots' kinds, in order


def template_words(template: str) -> frozenset[str]:
    """The template's words and their stems (placeholders left out): what names a table or column."""
    raw = set(TEMPLATE_WORD.findall(template))
    return frozenset(raw | {stem(w) for w in raw})
