"""Row <-> document cross-links: a column whose values name documents by id, title or link."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.compute as pc

from lakeplanner.config import StructureConfig
from lakeplanner.contract.keys import KeyedTable, distinct_values
from lakeplanner.contract.models import CrossLink
from lakeplanner.contract.profile import is_provenance, is_stringy


@dataclass(frozen=True)
class DocumentIndex:
    """How the documents of one collection can be named from a table cell."""

    collection: str
    by_id: dict[str, str]
    by_title: dict[str, str]

    @classmethod
    def build(cls, collection: str, docs: list[tuple[str, str]]) -> DocumentIndex:
        return cls(collection, {d.casefold(): d for d, _ in docs}, {t.casefold(): d for d, t in docs if t})

    def resolve(self, value: str) -> tuple[str, str] | None:
        """(document_id, how) for a cell value, trying id, title, then link forms."""
        key = value.strip().casefold()
        if key in self.by_id:
            return self.by_id[key], "document_id"
        if key in self.by_title:
            return self.by_title[key], "title"
        target = link_target(value)
        if target:
            for candidate in (target, target.replace("_", " ")):
                hit = self.by_id.get(candidate.casefold()) or self.by_title.get(candidate.casefold())
                if hit:
                    return hit, "link"
        return None


def link_target(value: str) -> str | None:
    """'/wiki/Great_Smoky_Mountains' or 'https://x/y/DOC-1.html' -> the page name."""
    text = value.strip()
    if text.startswith(("http://", "https://")):
        text = urlparse(text).path
    if "/" not in text:
        return None
    name = PurePosixPath(unquote(text)).name
    return PurePosixPath(name).stem if "." in name else name or None


def link_confidence(match_rate: float, column: str) -> float:
    """Same shape as the FK formula (seed Eq. 6): rate plus a bonus for a document-naming column."""
    named = any(w in column.lower() for w in ("doc", "link", "url", "page", "title"))
    return round(min(0.95, 0.5 + 0.3 * match_rate + 0.15 * named), 4)


def cross_links(tables: list[KeyedTable], indexes: list[DocumentIndex], config: StructureConfig) -> list[CrossLink]:
    links = []
    for keyed in tables:
        for column in keyed.table.column_names:
            values_column = keyed.table.column(column)
            if is_provenance(column) or not is_stringy(values_column):
                continue
            values = distinct_values(values_column, config.fk_max_distinct).to_pylist()
            if not values:
                continue
            for index in indexes:
                hits = [index.resolve(v) for v in values]
                matched = [h for h in hits if h]
                rate = len(matched) / len(values)
                if rate >= config.link_min_match:
                    how = Counter(h[1] for h in matched).most_common(1)[0][0]
                    links.append(
                        CrossLink(
                            source=keyed.source,
                            column=column,
                            collection=index.collection,
                            match=how,
                            match_rate=round(rate, 4),
                            confidence=link_confidence(rate, column),
                            documents=len({h[0] for h in matched}),
                        )
                    )
    return links


def linked_rows(table: pa.Table, link: CrossLink, index: DocumentIndex, key_columns: list[str]) -> dict[str, list[str]]:
    """document_id -> row keys of the rows whose link column names it."""
    out: dict[str, list[str]] = {}
    column = table.column(link.column)
    mask = pc.invert(pc.is_null(column))
    rows = table.filter(mask).select([link.column, *key_columns]).to_pylist()
    for row in rows:
        hit = index.resolve(str(row[link.column]))
        if hit:
            out.setdefault(hit[0], []).append(row_key(row, key_columns))
    return out


def row_key(row: dict, key_columns: list[str]) -> str:
    return "|".join(str(row[c]) for c in key_columns)
