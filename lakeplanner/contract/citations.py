"""Documents that cite rows: identity-key values written in a document's text (a visit note
naming patient PT-20931 and ward WD-112) become document -> row links with their offsets.

Keys are matched exactly and only between word boundaries, with one Aho-Corasick automaton over
every citable key of the lake. A key is citable when it reads as an identifier: at least
`citation_min_chars` long, holding a digit, or an all-capitals code; pure numbers are never citable
(amounts, years and counts in prose would match them). A key cited by most documents of a
collection (nearly all) is boilerplate, a letterhead, not a citation, and is dropped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import ahocorasick
import pyarrow as pa
import pyarrow.compute as pc

from lakeplanner.config import StructureConfig
from lakeplanner.contract.keys import KeyedTable, is_code_column
from lakeplanner.contract.models import CrossLink

BOUNDARY_CHARS = frozenset("-_/")
COMMON_SHARE = 0.9  # a key in more than this share of a collection's documents is boilerplate (a letterhead)
COMMON_MIN_DOCUMENTS = 6  # ... when the collection has at least this many documents


@dataclass(frozen=True)
class Citation:
    """One mention of a row's key in a document, at text[start:end]."""

    document_id: str
    table: str
    column: str
    key: str
    start: int
    end: int


def is_citable(value: str, config: StructureConfig) -> bool:
    if len(value) < config.citation_min_chars or value.isdigit() or any(c.isspace() for c in value):
        return False
    return any(c.isdigit() for c in value) or (value.isupper() and sum(c.isalpha() for c in value) >= 3)


def citable_columns(keyed: KeyedTable) -> list[str]:
    """Single-column identity keys of code-like values (not names, dates or numbers)."""
    return [
        k.columns[0]
        for k in keyed.keys
        if len(k.columns) == 1
        and not k.columns[0].startswith("_lp_")
        and pa.types.is_string(keyed.table.column(k.columns[0]).type)
        and is_code_column(keyed.table.column(k.columns[0]))
    ]


def key_automaton(tables: list[KeyedTable], config: StructureConfig) -> ahocorasick.Automaton | None:
    """value -> [(table, column)] for every citable key value of the tables."""
    owners: dict[str, list[tuple[str, str]]] = {}
    for keyed in tables:
        for column in citable_columns(keyed):
            values = pc.unique(keyed.table.column(column).drop_null()).to_pylist()
            for value in values:
                if is_citable(value, config):
                    owners.setdefault(value, []).append((keyed.source, column))
    if not owners:
        return None
    automaton = ahocorasick.Automaton()
    for value, where in owners.items():
        automaton.add_word(value, (value, tuple(where)))
    automaton.make_automaton()
    return automaton


def is_bounded(text: str, start: int, end: int) -> bool:
    """The match is a whole token: no letter, digit or joiner ('-', '_', '/') touches either side."""

    def joins(i: int) -> bool:
        return 0 <= i < len(text) and (text[i].isalnum() or text[i] in BOUNDARY_CHARS)

    return not joins(start - 1) and not joins(end)


def cited_rows(document_id: str, text: str, automaton: ahocorasick.Automaton) -> list[Citation]:
    out = []
    for last, (value, owners) in automaton.iter(text):
        start, end = last - len(value) + 1, last + 1
        if is_bounded(text, start, end) and value.casefold() != document_id.casefold():
            out += [Citation(document_id, table, column, value, start, end) for table, column in owners]
    return out


def collection_citations(
    documents: list[tuple[str, str]],
    automaton: ahocorasick.Automaton | None,
    naming: set[tuple[str, str]] = frozenset(),
) -> dict[str, list[Citation]]:
    """document_id -> its citations; left out: a document naming itself, values of the columns that
    `naming` says name documents (a mention of one cites that document, not a row), and
    boilerplate keys (cited by most documents)."""
    if automaton is None:
        return {}
    found = {
        doc_id: [c for c in cited_rows(doc_id, text, automaton) if (c.table, c.column) not in naming]
        for doc_id, text in documents
    }
    if len(documents) >= COMMON_MIN_DOCUMENTS:
        spread = Counter(key for cites in found.values() for key in {c.key for c in cites})
        common = {key for key, n in spread.items() if n > COMMON_SHARE * len(documents)}
        found = {d: [c for c in cites if c.key not in common] for d, cites in found.items()}
    return {d: cites for d, cites in found.items() if cites}


def citation_links(collection: str, documents: int, citations: dict[str, list[Citation]]) -> list[CrossLink]:
    """One contract link per (table, key column) the collection's documents cite."""
    citing: dict[tuple[str, str], set[str]] = {}
    for doc_id, cites in citations.items():
        for c in cites:
            citing.setdefault((c.table, c.column), set()).add(doc_id)
    return [
        CrossLink(
            source=table,
            column=column,
            collection=collection,
            match="cited",
            match_rate=round(len(docs) / max(documents, 1), 4),
            confidence=round(min(0.95, 0.6 + 0.3 * len(docs) / max(documents, 1)), 4),
            documents=len(docs),
        )
        for (table, column), docs in sorted(citing.items())
    ]
