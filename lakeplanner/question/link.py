"""The schema linker: which of the lake's tables, columns and named things a question's or a step's
words name, by the stems of their words (a table 'loan_events' is named by 'loan events' and 'loan
event'), and how many words a question shares with a table's description."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lakeplanner.question.words import named_words, singular, stem, tokens, word_set

if TYPE_CHECKING:
    from lakeplanner.plan.lake_schema import LakeSchema


def names(text: str) -> set[str]:
    """Capitalised words or words with digits after the first word: the named things a text is about."""
    return {w.lower() for w in named_words(text.split(" ", 1)[1] if " " in text else "")}


def names_tables(text: str, schema: LakeSchema) -> bool:
    """The text names a table or a column of the lake (by the stems of their names' words)."""
    return bool(about(text) & schema_words(schema))


def schema_words(schema: LakeSchema) -> set[str]:
    """The stems of the words of the lake's table and column names."""
    return {w for table, columns in schema.tables.items() for n in (table, *columns) for w in name_stems(n)}


def about(text: str) -> set[str]:
    """What a text is about: its named things and the stems of its other words but stop words."""
    return names(text) | {stem(w) for w in tokens(text) if w not in word_set("filler") and not w.isdigit()}


def tables_named(text: str, schema: LakeSchema) -> list[str]:
    """The tables whose names the text says, in the order it says them ("number of loans taken out by
    the member": loans, then members)."""
    words = [stem(w) for w in tokens(text)]
    first = {t: min((i for i, w in enumerate(words) if w in name_stems(t)), default=-1) for t in schema.tables}
    said = [t for t in schema.tables if name_stems(t) <= set(words)]
    return sorted(said, key=first.__getitem__)


def name_stems(name: str) -> set[str]:
    return {stem(w) for w in tokens(name)}


def long_words(text: str) -> set[str]:
    """Its words of three letters or more, singular."""
    return {singular(w) for w in tokens(text) if len(w) > 2}


def shared_word_scores(question: str, descriptions: Sequence[str]) -> list[float]:
    """For each description, the share of the question's words it holds (0 to 1)."""
    asked = long_words(question)
    return [len(asked & long_words(d)) / (1 + len(asked)) for d in descriptions]
