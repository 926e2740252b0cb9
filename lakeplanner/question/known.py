"""The values a lake holds (ids, names, categories) found in a question's or a step's words: in full, or
by a run of their distinctive words."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable

from lakeplanner.question.words import TOKEN, stem, word_set

NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?![\w-])")
# Parts of a name that tell no value or column from another (due_date is told by 'due').
GENERIC_PARTS = frozenset({"id", "date", "amount", "name", "number", "code", "value", "type", "no", "lp"})


class KnownValues:
    """Entity values the lake holds (ids, names, categories), to find slots in a question."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values  # casefolded value -> "table.column"
        ordered = sorted(values, key=len, reverse=True)
        self.pattern = (
            re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, ordered)) + r")(?![\w-])", re.I) if ordered else None
        )

    @classmethod
    def from_columns(cls, columns: Iterable[tuple[str, str, Iterable[object]]]) -> KnownValues:
        values = {}
        for table, column, distinct in columns:
            for value in distinct:
                text = str(value).strip()
                if 2 <= len(text) <= 60 and not NUMBER.fullmatch(text):
                    values.setdefault(text.casefold(), f"{table}.{column}")
        return cls(values)

    def find(self, text: str) -> list[tuple[int, int, str]]:
        if self.pattern is None:
            return []
        return [(m.start(), m.end(), self.values[m.group(0).casefold()]) for m in self.pattern.finditer(text)]

    def named_in(self, text: str) -> list[tuple[str, str]]:
        """(the value as the text writes it, table.column) for each value the text names in full."""
        return [(text[start:end], column) for start, end, column in self.find(text)]

    @functools.cached_property
    def worded(self) -> dict[str, list[str]]:
        """value -> the stems of its words, for the values of two distinctive words or more."""
        stems = {value: [stem(w) for w in TOKEN.findall(value)] for value in self.values}
        return {value: said for value, said in stems.items() if sum(map(distinctive, said)) >= 2}

    @functools.cached_property
    def phrases(self) -> dict[tuple[str, str], set[str]]:
        """(stem, next stem) -> the worded values whose words hold that pair."""
        index: dict[tuple[str, str], set[str]] = {}
        for value, said in self.worded.items():
            for pair in itertools.pairwise(said):
                index.setdefault(pair, set()).add(value)
        return index

    def mentions(self, text: str, found: list[tuple[int, int, str]] | None = None) -> list[tuple[int, int, str]]:
        """Values the text names by a run of their words rather than in full (stems compared, two
        distinctive words or more): "cash and cash equivalents" names the row "net increase (decrease)
        in cash and cash equivalents", "Acme Tools" the supplier "Acme Tools Ltd". A run inside a
        value named in full (`found`, `find`'s spans when given), or inside a longer run, is left out; a
        run that several columns hold is bound to each."""
        words = list(TOKEN.finditer(text.lower()))
        said = [stem(w.group(0)) for w in words]
        exact = [(start, end) for start, end, _ in (self.find(text) if found is None else found)]
        runs: dict[tuple[int, int], set[str]] = {}
        for value in set().union(*(self.phrases.get(pair, set()) for pair in itertools.pairwise(said))):
            if (run := shared_run(said, self.worded[value])) is None:
                continue
            start, end = words[run[0]].start(), words[run[1]].end()
            if not any(s <= start and end <= e for s, e in exact):
                runs.setdefault((start, end), set()).add(self.values[value])
        return sorted(
            (start, end, column)
            for (start, end), columns in runs.items()
            if not any(s <= start and end <= e and (s, e) != (start, end) for s, e in runs)
            for column in columns
        )


def distinctive(word: str) -> bool:
    """A word that can tell one value from another: not a function word, a number or a generic part of
    a name (id, name, amount...)."""
    return len(word) > 1 and not word.isdigit() and word not in word_set("stopwords") and word not in GENERIC_PARTS


def shared_run(said: list[str], value: list[str]) -> tuple[int, int] | None:
    """The first and last index in `said` of its longest run of words the value holds in the same
    order, trimmed to distinctive words at both ends; None when that run has fewer than two."""
    best, at = 0, 0
    ending = [0] * (len(value) + 1)
    for i, word in enumerate(said):
        ending = [0] + [ending[j] + 1 if word == value[j] else 0 for j in range(len(value))]
        if max(ending) > best:
            best, at = max(ending), i
    run = list(range(at - best + 1, at + 1))
    while run and not distinctive(said[run[0]]):
        run.pop(0)
    while run and not distinctive(said[run[-1]]):
        run.pop()
    return (run[0], run[-1]) if sum(distinctive(said[i]) for i in run) >= 2 else None
