"""Which words of a question the lake's schema names (seed 002 §3.5, App. C.2.1): the schema's
vocabulary, a term's spellings, and the sufficiency gate that lists the concepts nothing names."""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING

from pydantic import BaseModel

from lakeplanner.question.frame import QuestionFrame
from lakeplanner.question.lexicon import Lexicon, lexicon
from lakeplanner.question.words import identifier_words, singular, tokens, word_set
from lakeplanner.question.years import is_year_text, years_in

if TYPE_CHECKING:
    from lakeplanner.contract.models import Contract, FieldEntry

TERM = re.compile(r"[A-Za-z][A-Za-z0-9-]{3,}")  # a concept: four letters or more, hyphens kept
ONE_TERM = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


class Sufficiency(BaseModel):
    sufficient: bool
    unresolved: list[str]


def concept_terms(text: str) -> list[str]:
    """Its words that may name a concept (four letters or more, as written)."""
    return TERM.findall(text)


def is_one_term(name: str) -> bool:
    """A term a user may add: one word of letters, digits and hyphens, starting with a letter."""
    return ONE_TERM.fullmatch(name) is not None


def vocabulary(contract: Contract, known: set[str] = frozenset()) -> set[str]:
    """The words the schema names things by: its sources', fields' and entities' names and the fields'
    example values, singular."""
    words: set[str] = set(known)
    for source in contract.sources:
        words |= set(identifier_words(source.name))
    for entry in contract.fields:
        words |= set(identifier_words(entry.path))
        words |= {w for e in entry.examples for w in tokens(e)}
    for entity in contract.entities:
        words |= {entity.name.lower(), *(a.name.lower() for a in entity.attributes)}
    return {singular(w) for w in words if w}


def spellings(term: str) -> set[str]:
    """A term as the vocabulary holds it: singular, and joined when hyphenated (e-mail names email)."""
    lower = term.lower()
    return {singular(lower), singular(lower.replace("-", ""))}


def sufficiency(question: str, contract: Contract, known: set[str] = frozenset()) -> Sufficiency:
    """Content words of the question that nothing in the schema names are unresolved (App. C.2.1).

    Words with digits are values (slots), not concepts, and are not checked."""
    vocab = vocabulary(contract, {k.lower() for k in known})
    terms = [
        t
        for t in concept_terms(question)
        if t.lower() not in word_set("not_concepts") and not any(c.isdigit() for c in t)
    ]
    unresolved = [t for t in dict.fromkeys(terms) if not spellings(t) & vocab]
    return Sufficiency(sufficient=not unresolved, unresolved=unresolved)


def answer_shapes(words: Lexicon) -> frozenset[str]:
    """Words that shape an answer rather than name what it is about: the operations' one-word cues,
    the answer forms and the shapes the lexicon (and the lake's packs) list."""
    cues = {phrase for phrases in words.operations.values() for phrase in phrases if " " not in phrase}
    return frozenset(cues | set(words.answer_forms) | set(words.answer_shapes))


def is_concept(term: str, words: Lexicon) -> bool:
    """Roughly a noun: not a past form, superlative, adverb or adjective ("annual", "nominal",
    "historic"), nor a preposition or determiner (no tagger here)."""
    lower = term.lower()
    if lower.endswith(tuple(words.qualifier_endings)):
        return False
    return lower not in {*words.prepositions, *words.not_attribute_words, *words.qualifiers}


def is_row_name(term: str, frame: QuestionFrame) -> bool:
    """A capitalised word inside the question ("Sanne" in "What is Sanne Mulder's salary?") names a
    row, not the attribute asked: that the lake holds the row says nothing about the attribute."""
    return term[:1].isupper() and not frame.text.lstrip().startswith(term)


def asked_concepts(frame: QuestionFrame) -> list[str]:
    """The words of the attribute a what-question asks ("what is the X of ...") that name something
    the lake must hold, lower case: no answer shape, qualifier or name of a row."""
    if frame.attribute is None:
        return []
    words = lexicon(frame.packs)
    shapes = answer_shapes(words) | word_set("not_concepts")
    return [
        t.lower()
        for t in concept_terms(frame.attribute.text)
        if is_concept(t, words) and t.lower() not in shapes and not is_row_name(t, frame)
    ]


def holds_years_elsewhere(contract: Contract) -> bool:
    """Years the contract cannot bound: a printed report's year columns, a column of year numbers, or
    text cells that name years (a profile keeps a few examples, not every year such a column holds)."""

    def names_years(f: FieldEntry) -> bool:
        return is_year_text(f.path) or any(years_in(e) for e in f.examples)

    reports = any(s.format == "report" for s in contract.sources)
    return reports or any(names_years(f) for f in contract.fields if f.column and f.first is None)


def period_gap(frame: QuestionFrame, contract: Contract) -> str | None:
    """Why the lake cannot hold what a period the question names asks: no date column's days, nor a
    year its documents name, reach the period. None when every period is reached, when the question
    sets a threshold ("after 2024-06-01": nothing after it is an answer), or when the lake holds years
    the contract cannot bound."""
    spans = [(date.fromisoformat(f.first), date.fromisoformat(f.last)) for f in contract.fields if f.first and f.last]
    if not spans or frame.comparison is not None or holds_years_elsewhere(contract):
        return None
    told = {y for s in contract.sources for y in s.years}
    asked = [(p.span.text, date(p.year, 1, 1), date(p.year, 12, 31)) for p in frame.periods]
    asked += [(r.span.text, r.start, date.fromordinal(r.end.toordinal() - 1)) for r in frame.ranges]
    missed = [
        words
        for words, start, end in asked
        if not any(first <= end and start <= last for first, last in spans) and not told & {start.year, end.year}
    ]
    if not missed:
        return None
    first, last = min(f for f, _ in spans), max(last for _, last in spans)
    said = f"; its documents name {', '.join(map(str, sorted(told)))}" if told else ""
    return f"the lake holds nothing for {', '.join(missed)}: its dates run from {first} to {last}{said}"
