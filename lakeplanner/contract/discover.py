"""Source discovery (seed 002 App. A.3): files -> logical sources, corpus folders, companions."""

from __future__ import annotations

import fnmatch
import itertools
import json
import random
import re
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from lakeplanner.config import DiscoveryConfig
from lakeplanner.contract.models import Companion, ExclusionManifest, SourceKind

TABLE_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
}
DOCUMENT_FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
}
REPORT_SUFFIX = ".report.csv"  # annual-report grids, normalised by ingest/report_tables.py
COMPANION_SUFFIXES = ("metadata", "meta", "labels", "info", "details", "attributes")


class DiscoveredSource(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    kind: SourceKind
    format: str
    files: tuple[str, ...]
    corpus: bool = False


def sanitize_name(text: str) -> str:
    """A lowercase identifier usable as an Iceberg table or Milvus collection name."""
    name = re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower() or "source"
    return f"t_{name}" if name[0].isdigit() else name


def is_report(path: Path) -> bool:
    return path.name.lower().endswith(REPORT_SUFFIX)


def format_of(path: Path) -> str | None:
    if is_report(path):
        return "report"
    suffix = path.suffix.lower()
    return TABLE_FORMATS.get(suffix) or DOCUMENT_FORMATS.get(suffix)


def source_stem(rel: str) -> str:
    path = Path(rel)
    return path.name[: -len(REPORT_SUFFIX)] if is_report(path) else path.stem


def is_excluded(rel: str, manifest: ExclusionManifest) -> bool:
    return any(fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(Path(rel).name, pattern) for pattern in manifest.files)


def list_supported_files(root: Path, manifest: ExclusionManifest) -> list[str]:
    files = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if (
            path.is_file()
            and not any(p.startswith(".") for p in path.relative_to(root).parts)
            and format_of(path)
            and not is_excluded(rel, manifest)
        ):
            files.append(rel)
    return files


def structure_signature(path: Path, fmt: str) -> frozenset[str]:
    """Keys a file's records carry (JSON) or its header (CSV); the format alone for documents."""
    try:
        if fmt in ("csv", "tsv"):
            with path.open(encoding="utf-8", errors="replace") as fh:
                header = fh.readline()
            return frozenset(h.strip() for h in header.split("," if fmt == "csv" else "\t"))
        if fmt == "jsonl":
            with path.open(encoding="utf-8", errors="replace") as fh:
                record = json.loads(fh.readline())
            return frozenset(record) if isinstance(record, dict) else frozenset()
        if fmt == "json":
            data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
            record = data[0] if isinstance(data, list) and data else data
            return frozenset(record) if isinstance(record, dict) else frozenset()
    except (OSError, ValueError):
        return frozenset()
    return frozenset({fmt})


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def structural_similarity(root: Path, files: list[str], config: DiscoveryConfig) -> float:
    """Mean pairwise similarity of a few sampled files (seed: k=5)."""
    sample = random.Random(0).sample(files, min(config.corpus_sample, len(files)))
    signatures = [structure_signature(root / f, format_of(Path(f)) or "") for f in sample]
    pairs = list(itertools.combinations(signatures, 2))
    return sum(jaccard(a, b) for a, b in pairs) / len(pairs) if pairs else 0.0


def kind_of(fmt: str) -> SourceKind:
    return SourceKind.documents if fmt in DOCUMENT_FORMATS.values() else SourceKind.table


def detect_corpora(root: Path, files: list[str], config: DiscoveryConfig) -> dict[str, list[str]]:
    """Folders of >= corpus_min_files same-kind files whose structure agrees become one source."""
    by_dir: dict[str, list[str]] = defaultdict(list)
    for rel in files:
        by_dir[Path(rel).parent.as_posix()].append(rel)
    corpora = {}
    for folder, members in by_dir.items():
        kinds = {kind_of(format_of(Path(m)) or "") for m in members}
        if (
            len(members) >= config.corpus_min_files
            and len(kinds) == 1
            and structural_similarity(root, members, config) >= config.corpus_similarity
        ):
            corpora[folder] = members
    return corpora


def unique_name(base: str, taken: set[str]) -> str:
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def shared_stems(files: list[str]) -> set[str]:
    """Table file stems that files of more than one folder share (two databases' clinics.csv)."""
    folders: dict[str, set[str]] = defaultdict(set)
    for rel in files:
        if kind_of(format_of(Path(rel)) or "") is SourceKind.table:
            folders[sanitize_name(source_stem(rel))].add(Path(rel).parent.as_posix())
    return {stem for stem, held in folders.items() if len(held) > 1}


def table_name(rel: str, shared: set[str]) -> str:
    """A table file's name: its stem, or, where another folder holds a file of the same stem, its folder
    path and stem (`north/clinics.csv` -> north_clinics), so each name says where it comes from."""
    stem, folder = sanitize_name(source_stem(rel)), Path(rel).parent.as_posix()
    return sanitize_name(f"{folder.replace('/', '_')}_{stem}") if stem in shared and folder != "." else stem


def discover_sources(root: Path, manifest: ExclusionManifest, config: DiscoveryConfig) -> list[DiscoveredSource]:
    """Group a folder's supported files into logical sources (Algorithm 1)."""
    files = list_supported_files(root, manifest)
    corpora = detect_corpora(root, files, config)
    in_corpus = {f for members in corpora.values() for f in members}
    taken: set[str] = set()
    sources = []
    for folder, members in sorted(corpora.items()):
        fmt = format_of(Path(members[0])) or ""
        base = sanitize_name(folder if folder != "." else root.name)
        sources.append(
            DiscoveredSource(
                name=unique_name(base, taken),
                kind=kind_of(fmt),
                format=fmt,
                files=tuple(members),
                corpus=True,
            )
        )
    documents_by_dir: dict[str, list[str]] = defaultdict(list)
    shared = shared_stems([rel for rel in files if rel not in in_corpus])
    for rel in files:
        if rel in in_corpus:
            continue
        fmt = format_of(Path(rel)) or ""
        if kind_of(fmt) is SourceKind.documents:
            documents_by_dir[Path(rel).parent.as_posix()].append(rel)
        else:
            sources.append(
                DiscoveredSource(
                    name=unique_name(table_name(rel, shared), taken),
                    kind=SourceKind.table,
                    format=fmt,
                    files=(rel,),
                )
            )
    for folder, members in sorted(documents_by_dir.items()):
        base = "documents" if folder == "." else sanitize_name(folder)
        sources.append(
            DiscoveredSource(
                name=unique_name(base, taken),
                kind=SourceKind.documents,
                format="documents",
                files=tuple(members),
            )
        )
    return sources


def detect_companions(sources: list[DiscoveredSource]) -> list[tuple[str, str]]:
    """Pairs like queries.jsonl + queries_metadata.jsonl (App. A.8.2), as (source, companion)."""
    by_stem = {
        Path(s.files[0]).with_suffix("").as_posix(): s for s in sources if s.kind is SourceKind.table and not s.corpus
    }
    pairs = []
    for stem, source in by_stem.items():
        for suffix in COMPANION_SUFFIXES:
            other = by_stem.get(f"{stem}_{suffix}") or by_stem.get(f"{stem}-{suffix}")
            if other:
                pairs.append((source.name, other.name))
    return pairs


def companion_links(pairs: list[tuple[str, str]], columns: dict[str, list[str]]) -> list[Companion]:
    """Link each companion pair by a column both share, else by row position."""
    links = []
    for source, companion in pairs:
        shared = [c for c in columns.get(source, []) if c in columns.get(companion, []) and not c.startswith("_lp_")]
        links.append(Companion(source=source, companion=companion, via=shared[0] if shared else "row position"))
    return links
