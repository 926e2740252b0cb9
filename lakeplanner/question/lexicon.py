"""The words questions are read by (lexicon.yaml), with the domain packs a lake switches on."""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import TYPE_CHECKING

import yaml
from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:  # the question stage sits below the contract: it reads a contract, never builds one
    from lakeplanner.contract.models import Contract

PACK_FOR_FORMAT = {"report": "report_grid"}  # a source of this ingest format switches the pack on
ENTRIES_PACK = "reference_entries"  # a collection of reference entries (SourceSpec.entries) switches it on
NOT_LEXICON = ("name", "description", "document_plan_examples")  # what a pack holds beside its words


class Lexicon(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    operations: dict[str, list[str]]
    label_prefixes: list[str]
    owners_of_one: list[str] = []
    direction: dict[str, list[str]]
    superlative_only: list[str]
    first_last: dict[str, list[str]]
    comparison: dict[str, list[str]]
    negation: list[str]
    reason: list[str]
    prose: list[str]
    method: dict[str, list[str]]
    document_cues: list[str]
    document_nouns: list[str]
    not_documents: list[str]
    several: list[str]
    joined_asks: list[str]
    which_year: list[str]
    yes_no_openers: list[str]
    judgement: dict[str, list[str]]
    person_openers: list[str]
    count_openers: list[str]
    time_units: dict[str, int]
    quantity_units: list[str]
    question_words: list[str]
    relative_words: list[str] = []
    answer_forms: list[str] = []
    answer_shapes: list[str] = []
    qualifiers: list[str] = []
    qualifier_endings: list[str] = []
    prepositions: list[str] = []
    not_attribute_words: list[str] = []
    stopwords: list[str]
    computed_heads: list[str]
    attribute_ends: list[str]
    definition_verbs: list[str]
    hedges: list[str]
    alternatives: list[str]
    subject_owners: list[str] = []
    function_words: list[str]
    filler: list[str]
    not_concepts: list[str]
    synonyms: dict[str, list[str]]
    absolute: list[str] = []

    def with_pack(self, pack: dict) -> Lexicon:
        """This lexicon with a pack's words added to the lists it names."""
        merged = self.model_dump()
        for key, words in pack.items():
            if key in NOT_LEXICON:
                continue
            if isinstance(words, dict):
                for sub, more in words.items():
                    merged[key][sub] = [*merged[key].get(sub, []), *more]
            else:
                merged[key] = [*merged[key], *words]
        return Lexicon.model_validate(merged)


def phrase_pattern(phrases: list[str], joined: bool = False) -> re.Pattern | None:
    """One regex matching any phrase as whole words; '*' stands for one to four words; `joined`: also
    as the first part of a hyphenated word ('highest' in 'highest-rated')."""
    if not phrases:
        return None
    parts = []
    for phrase in sorted(phrases, key=len, reverse=True):
        words = [r"(?:[\w'&.-]+\s+){0,3}[\w'&.-]+" if w == "*" else re.escape(w) for w in phrase.split()]
        parts.append(r"\s+".join(words))
    after = r"(?!\w)" if joined else r"(?![\w-])"
    return re.compile(rf"(?<![\w-])(?:{'|'.join(parts)}){after}", re.I)


@functools.cache
def cached_pattern(phrases: tuple[str, ...], joined: bool = False) -> re.Pattern | None:
    return phrase_pattern(list(phrases), joined)


@functools.cache
def lexicon(packs: tuple[str, ...] = ()) -> Lexicon:
    base = yaml.safe_load((resources.files("lakeplanner.question") / "lexicon.yaml").read_text())
    found = Lexicon.model_validate(base)
    for name in packs:
        found = found.with_pack(load_pack(name))
    return found


@functools.cache
def load_pack(name: str) -> dict:
    """A pack's YAML (read once per process: the planner asks for its examples on every call)."""
    path = resources.files("lakeplanner.question") / "packs" / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"no question pack '{name}'")
    return yaml.safe_load(path.read_text())


def packs_for(contract: Contract | None) -> tuple[str, ...]:
    """The packs the lake's sources switch on (a report-grid source: the report_grid pack; a collection
    of reference entries: the reference_entries pack)."""
    if contract is None:
        return ()
    packs = {PACK_FOR_FORMAT[s.format] for s in contract.sources if s.format in PACK_FOR_FORMAT}
    packs |= {ENTRIES_PACK for s in contract.sources if s.entries}
    return tuple(sorted(packs))


def names_computed_value(name: str) -> bool:
    """`count`, `total_weight`, `number_of_stops`: the alias of an aggregate a step computes, not a column."""
    head = re.split(r"[_\W]+", name.casefold().strip(), maxsplit=1)[0]
    return head in lexicon().computed_heads
