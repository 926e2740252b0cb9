"""The words of a question or a step's text: the one tokeniser, the one stem, and the lexicon's word
lists as sets."""

from __future__ import annotations

import functools
import re
import unicodedata

from lakeplanner.question.lexicon import lexicon

TOKEN = re.compile(r"[a-z0-9]+")
ONE_LETTER_PREFIX = re.compile(r"\b([a-z])-(?=[a-z]{2})")


def tokens(text: str) -> list[str]:
    """Its lower-case words and numbers, in order ('total_weight' is two words; 'e-mail' is one, as a
    column name writes it: email)."""
    return TOKEN.findall(ONE_LETTER_PREFIX.sub(r"\1", text.lower()))


@functools.cache
def word_set(name: str) -> frozenset[str]:
    """A word list of the lexicon (function_words, filler, not_concepts, stopwords) as a set."""
    return frozenset(getattr(lexicon(), name))


@functools.cache
def synonym_group() -> dict[str, str]:
    return {word: group for group, words in lexicon().synonyms.items() for word in words}


def stem(word: str) -> str:
    """Synonyms to their group's name ('largest' and 'highest' to max); plurals and past participles
    to the stem."""
    if (group := synonym_group().get(word)) is not None:
        return group
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("ed") and len(word) > 4:
        return word[:-1]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def content_words(text: str) -> set[str]:
    """Its words of two characters or more, accents folded, function words left out."""
    return set(content_sequence(text))


def content_sequence(text: str) -> list[str]:
    """Its content words (see `content_words`) in the order written."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return [w for w in tokens(plain) if len(w) > 1 and w not in word_set("function_words")]
