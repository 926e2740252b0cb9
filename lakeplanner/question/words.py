"""The words of a question, a step's text or a name: the one tokeniser, the one singular, the one stem,
whole-word mentions, and the lexicon's word lists as sets. Every stage that compares words with names
or values takes them from here, so a plural or a hyphen is read alike everywhere."""

from __future__ import annotations

import functools
import re
import unicodedata

from lakeplanner.question.lexicon import lexicon

TOKEN = re.compile(r"[a-z0-9]+")
HYPHENATED = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MARKED = re.compile(r"[a-z0-9@.%-]+")  # e-mail addresses, decimals and percentages stay whole
ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
ONE_LETTER_PREFIX = re.compile(r"\b([a-z])-(?=[a-z]{2})")
CAPITALISED_OR_CODED = re.compile(r"\b(?:[A-Z][\w'-]*|\w*\d\w*)")


def tokens(text: str) -> list[str]:
    """Its lower-case words and numbers, in order ('total_weight' is two words; 'e-mail' is one, as a
    column name writes it: email)."""
    return TOKEN.findall(ONE_LETTER_PREFIX.sub(r"\1", text.lower()))


def hyphenated_tokens(text: str) -> list[str]:
    """Its lower-case words with hyphenated words kept whole ('year-end' is one word)."""
    return HYPHENATED.findall(text.lower())


def marked_tokens(text: str) -> list[str]:
    """Its lower-case words, keeping '@', '.', '%' and '-' inside them ('ops@acme.io', '12.5%')."""
    return MARKED.findall(text.lower())


def alnum_runs(name: str) -> list[str]:
    """The runs of letters and digits of a name, case kept ('LineItem', 'v2')."""
    return ALNUM_RUN.findall(name)


def identifier_words(name: str) -> list[str]:
    """The lower-case words of a table, column or file name ('orderLines.v2' -> order, lines, v2):
    split at every character that is not a letter or digit and where lower case meets upper case."""
    spaced = "".join(f" {c}" if c.isupper() and i and name[i - 1].islower() else c for i, c in enumerate(name))
    return tokens(spaced)


def named_words(text: str) -> list[str]:
    """Its capitalised words and words holding a digit ('Hamburg', 'LN-204', 'Q3'): what names a thing."""
    return CAPITALISED_OR_CODED.findall(text)


def singular(word: str) -> str:
    """'loans' -> 'loan', 'libraries' -> 'library', 'addresses' -> 'address'; 'status', 'class',
    'analysis' and words of three letters or fewer stay as written."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1]


def is_plural(word: str) -> bool:
    return singular(word) != word


def mention_pattern(phrase: str) -> re.Pattern:
    """`phrase` as a whole word or words, case-insensitively: not inside a longer word or a
    hyphenated one ('LN-1' is not mentioned by 'LN-12')."""
    return _mention_pattern(phrase.casefold())


@functools.lru_cache(maxsize=4096)  # phrases include values questions name: bounded
def _mention_pattern(phrase: str) -> re.Pattern:
    return re.compile(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", re.I)


def word_position(text: str, phrase: str) -> int | None:
    """Where `text` first holds `phrase` as whole words, case aside (a hyphen may touch it: '1-90' in
    '1-90 days'); None when it does not."""
    found = re.search(rf"(?<!\w){re.escape(phrase.lower())}(?!\w)", text.lower())
    return found.start() if found else None


def word_ends(text: str, word: str) -> list[int]:
    """Where each whole-word `word` in `text` ends, case aside."""
    return [m.end() for m in re.finditer(rf"\b{re.escape(word)}\b", text, re.I)]


def mentions(text: str, phrase: str) -> bool:
    """Whether `text` holds `phrase` as whole words (see `mention_pattern`)."""
    return bool(phrase) and mention_pattern(phrase).search(text) is not None


@functools.cache
def word_set(name: str) -> frozenset[str]:
    """A word list of the lexicon (function_words, filler, not_concepts, stopwords) as a set."""
    return frozenset(getattr(lexicon(), name))


@functools.cache
def synonym_group() -> dict[str, str]:
    return {word: group for group, words in lexicon().synonyms.items() for word in words}


def stem(word: str) -> str:
    """Synonyms to the name of the group they belong to ('largest' and 'highest' to max); plurals and past participles
    to the stem."""
    if (group := synonym_group().get(word)) is not None:
        return group
    if word.endswith("ed") and len(word) > 4:
        return word[:-1]
    return singular(word)


def content_words(text: str) -> set[str]:
    """Its words of two characters or more, accents folded, function words left out."""
    return set(content_sequence(text))


def content_stems(text: str) -> set[str]:
    """The stems of its content words."""
    return {stem(w) for w in content_words(text)}


def content_sequence(text: str) -> list[str]:
    """Its content words (see `content_words`) in the order written."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return [w for w in tokens(plain) if len(w) > 1 and w not in word_set("function_words")]
