"""Where does `lake.ingest` spend its time? Per-stage wall-clock timings, without editing lakeplanner.

    python benchmarks/profile_ingest.py tables --rows 1000000
    python benchmarks/profile_ingest.py docs --docs 1000
    python benchmarks/profile_ingest.py tables --rows 1000000 --cprofile 30   # + top-30 cProfile

Stage functions are wrapped at run time (every module-level reference to them in lakeplanner is
swapped for a timing wrapper); times are inclusive (a stage includes the stages nested in it), and
the indentation shows nesting as observed at run time. Data comes from benchmarks/ingest.py's
generators, so the numbers line up with that benchmark.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import pstats
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ingest as bench

# (module, attribute) of module-level functions, and (module, class, method) of methods.
FUNCTIONS = [
    ("lakeplanner.lake", "save_contract"),
    ("lakeplanner.ingest.tables", "open_catalog"),
    ("lakeplanner.contract.discover", "discover_sources"),
    ("lakeplanner.ingest.pipeline", "read_table_source"),
    ("lakeplanner.ingest.readers", "read_bytes"),
    ("lakeplanner.ingest.readers", "decode_text"),
    ("lakeplanner.ingest.readers", "check_csv_header"),
    ("lakeplanner.ingest.readers", "read_csv"),
    ("pyarrow.csv", "read_csv"),
    ("lakeplanner.ingest.readers", "check_cell_sizes"),
    ("lakeplanner.ingest.readers", "with_provenance"),
    ("lakeplanner.ingest.readers", "read_document"),
    ("lakeplanner.ingest.pipeline", "prepare_table"),
    ("lakeplanner.contract.profile", "profile_table"),
    ("lakeplanner.contract.keys", "identity_keys"),
    ("lakeplanner.contract.keys", "composite_keys"),
    ("lakeplanner.ingest.tables", "with_row_hashes"),
    ("lakeplanner.ingest.tables", "with_surrogate_key"),
    ("lakeplanner.contract.keys", "foreign_keys"),
    ("lakeplanner.contract.links", "cross_links"),
    ("lakeplanner.ingest.pipeline", "free_text_documents"),
    ("lakeplanner.ingest.tables", "write_table"),
    ("lakeplanner.ingest.tables", "require"),
    ("lakeplanner.ingest.segments", "table_segments"),
    ("lakeplanner.ingest.segments", "document_segments"),
    ("lakeplanner.ingest.segments", "replace_source_segments"),
    ("lakeplanner.ingest.chunking", "chunk_text"),
    ("lakeplanner.contract.profile", "profile_documents"),
]
METHODS = [
    ("lakeplanner.ingest.pipeline", "Ingestor", "run"),
    ("lakeplanner.ingest.pipeline", "Ingestor", "read_all"),
    ("lakeplanner.ingest.pipeline", "Ingestor", "attach_linked_rows"),
    ("lakeplanner.ingest.pipeline", "Ingestor", "free_text_sources"),
    ("lakeplanner.ingest.pipeline", "Ingestor", "commit_table"),
    ("lakeplanner.ingest.pipeline", "Ingestor", "commit_documents"),
    ("lakeplanner.ingest.pipeline", "Ingestor", "chunk_records"),
    ("lakeplanner.ingest.pipeline", "Ingestor", "embed"),
    ("lakeplanner.ingest.pipeline", "Ingestor", "merge_contract"),
    ("lakeplanner.contract.links", "DocumentIndex", "build"),
    ("lakeplanner.llm.embeddings", "Embedder", "embed_passages"),
    ("lakeplanner.llm.embeddings", "_OnnxTextModel", "run"),
    ("lakeplanner.ingest.vectors", "VectorStore", "__init__"),
    ("lakeplanner.ingest.vectors", "VectorStore", "collections"),
    ("lakeplanner.ingest.vectors", "VectorStore", "document_ids"),
    ("lakeplanner.ingest.vectors", "VectorStore", "replace_documents"),
    ("lakeplanner.ingest.vectors", "VectorStore", "_ensure_collection"),
    ("lakeplanner.ingest.vectors", "VectorStore", "_present_chunk_ids"),
    ("lakeplanner.ingest.vectors", "VectorStore", "_chunk_ids_of_documents"),
    ("lakeplanner.ingest.vectors", "VectorStore", "_upsert_or_roll_back"),
    ("lakeplanner.ingest.vectors", "VectorStore", "_delete_chunk_ids"),
    ("pyiceberg.catalog.sql", "SqlCatalog", "create_table"),
    ("pyiceberg.catalog.sql", "SqlCatalog", "load_table"),
    ("pyiceberg.table", "Transaction", "append"),
    ("pyiceberg.table", "Transaction", "overwrite"),
    ("pyiceberg.table", "Transaction", "commit_transaction"),
    ("pyiceberg.table", "CreateTableTransaction", "commit_transaction"),
    ("pyiceberg.table", "Table", "overwrite"),
    ("pyiceberg.catalog", "MetastoreCatalog", "create_table_transaction"),
]


class Timer:
    """Inclusive wall time per call path (stage nested in the stages that were running)."""

    def __init__(self) -> None:
        self.total: dict[tuple[str, ...], float] = defaultdict(float)
        self.calls: dict[tuple[str, ...], int] = defaultdict(int)
        self.order: list[tuple[str, ...]] = []
        self.stack: list[str] = []

    def wrap(self, label: str, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if label in self.stack:  # re-entry (e.g. a wrapped function calling itself): time it once
                return fn(*args, **kwargs)
            self.stack.append(label)
            path = tuple(self.stack)
            if path not in self.calls:
                self.order.append(path)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.total[path] += time.perf_counter() - start
                self.calls[path] += 1
                self.stack.pop()

        return wrapper

    def report(self, wall: float) -> str:
        lines = [f"{'stage':<60} {'calls':>7} {'seconds':>9} {'% wall':>7}"]

        def walk(prefix: tuple[str, ...]) -> None:
            for path in self.order:
                if len(path) == len(prefix) + 1 and path[:-1] == prefix:
                    t = self.total[path]
                    name = "  " * len(prefix) + path[-1]
                    lines.append(f"{name:<60} {self.calls[path]:>7} {t:>9.3f} {100 * t / wall:>6.1f}%")
                    walk(path)

        walk(())
        return "\n".join(lines)


def install(timer: Timer) -> None:
    import importlib

    for module_name, attr in FUNCTIONS:
        original = getattr(importlib.import_module(module_name), attr)
        wrapper = timer.wrap(attr if module_name.startswith("lakeplanner") else f"{module_name}.{attr}", original)
        for name, module in list(sys.modules.items()):
            if not (name.startswith("lakeplanner") or name == module_name):
                continue
            if getattr(module, attr, None) is original:
                setattr(module, attr, wrapper)
    for module_name, cls_name, method in METHODS:
        cls = getattr(importlib.import_module(module_name), cls_name)
        original = cls.__dict__[method]
        label = f"{cls_name}.{method}"
        if isinstance(original, (classmethod, staticmethod)):
            setattr(cls, method, type(original)(timer.wrap(label, original.__func__)))
        else:
            setattr(cls, method, timer.wrap(label, original))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["tables", "docs"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--cprofile", type=int, default=0, help="also print the top N cProfile entries (cumulative)")
    args = parser.parse_args()

    import lakeplanner.lake
    import lakeplanner.llm.embeddings
    from lakeplanner import Lake

    (bench.BENCH_DIR / ".work").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="profile-", dir=bench.BENCH_DIR / ".work"))
    try:
        src = work / "src"
        src.mkdir()
        if args.what == "tables":
            bench.generate_csv(src / "orders.csv", args.rows)
            n = args.rows
        else:
            bench.generate_documents(src, args.docs)
            n = args.docs
        lakeplanner.llm.embeddings.default_embedder().embed_passages(["warm up"] * 4)
        timer = Timer()
        install(timer)
        lake = Lake.create(work / "lake")
        profiler = cProfile.Profile() if args.cprofile else None
        start = time.perf_counter()
        if profiler:
            profiler.enable()
        report = lake.ingest(src)
        if profiler:
            profiler.disable()
        wall = time.perf_counter() - start
        lake.close()
        unit = "rows" if args.what == "tables" else "chunks"
        count = n if args.what == "tables" else sum(s.chunks for s in report.sources)
        print(f"lake.ingest({args.what}): {wall:.2f}s wall, {count:,} {unit} = {count / wall:,.1f} {unit}/s")
        print(timer.report(wall))
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(args.cprofile)
            print(out.getvalue())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
