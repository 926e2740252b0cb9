"""Structure-aware chunking (seed 002 App. B.7.4): short documents stay whole; long ones split at
section headings, then paragraphs, then a sliding window with overlap."""

from __future__ import annotations

from dataclasses import dataclass

from lakeplanner.config import ChunkingConfig
from lakeplanner.ingest.segments import heading_of, paragraph_spans


@dataclass(frozen=True)
class ChunkSpan:
    start: int
    end: int
    heading: str


def sections(text: str) -> list[tuple[int, int, str]]:
    """(start, end, heading) runs of paragraphs, a new run at each heading."""
    runs: list[tuple[int, int, str]] = []
    for a, b in paragraph_spans(text):
        heading = heading_of(text[a:b])
        if heading is not None or not runs:
            runs.append((a, b, heading or ""))
        else:
            start, _, title = runs[-1]
            runs[-1] = (start, b, title)
    return runs


def window(start: int, end: int, config: ChunkingConfig) -> list[tuple[int, int]]:
    step = max(1, config.max_chars - config.overlap_chars)
    spans = []
    cursor = start
    while cursor < end:
        spans.append((cursor, min(end, cursor + config.max_chars)))
        if cursor + config.max_chars >= end:
            break
        cursor += step
    return spans


def pieces_of_section(text: str, start: int, end: int, config: ChunkingConfig) -> list[tuple[int, int]]:
    """A section that is too long: pack whole paragraphs, window a paragraph that alone is too long."""
    pieces: list[tuple[int, int]] = []
    for a, b in (p for p in paragraph_spans(text[start:end])):
        a, b = a + start, b + start
        if b - a > config.max_chars:
            pieces.extend(window(a, b, config))
        elif pieces and b - pieces[-1][0] <= config.max_chars and pieces[-1][1] == a:
            pieces[-1] = (pieces[-1][0], b)
        else:
            pieces.append((a, b))
    return pieces


def chunk_text(text: str, config: ChunkingConfig) -> list[ChunkSpan]:
    if len(text) <= config.threshold_chars:
        return [ChunkSpan(0, len(text), "")]
    chunks: list[ChunkSpan] = []
    for start, end, heading in sections(text):
        if end - start <= config.max_chars:
            last = chunks[-1] if chunks else None
            if last and last.end == start and end - last.start <= config.max_chars:
                chunks[-1] = ChunkSpan(last.start, end, last.heading or heading)
            else:
                chunks.append(ChunkSpan(start, end, heading))
        else:
            chunks.extend(ChunkSpan(a, b, heading) for a, b in pieces_of_section(text, start, end, config))
    return chunks
