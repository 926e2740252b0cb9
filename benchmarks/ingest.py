"""Ingest throughput benchmark: tables (rows/s) and documents (chunks/s vs the bare encoder).

    python benchmarks/ingest.py            # full run: 1,000,000 CSV rows + 5,000 markdown documents
    python benchmarks/ingest.py --quick    # smoke run: 20,000 rows + 200 documents

Writes <out>/ingest.md and <out>/ingest.json. See benchmarks/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import importlib.metadata
import json
import os
import platform
import random
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
SEED = 20240611
TARGET_ROWS_PER_S = 100_000.0
TARGET_DOCS_VS_ENCODER = 0.8
PACKAGES = ["lakeplanner", "pyiceberg", "duckdb", "pymilvus", "milvus-lite", "onnxruntime", "pyarrow", "tokenizers"]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# ---------------------------------------------------------------- data generation

STATUSES = ["pending", "paid", "shipped", "delivered", "cancelled", "returned", "refunded"]
STATUS_P = [0.08, 0.12, 0.18, 0.50, 0.05, 0.04, 0.03]
COUNTRIES = ["US", "DE", "FR", "GB", "JP", "CA", "AU", "BR", "IN", "NL", "ES", "IT", "SE", "MX", "PL", "KR"]
ADJECTIVES = [
    "Classic",
    "Ultra",
    "Compact",
    "Deluxe",
    "Eco",
    "Smart",
    "Mini",
    "Pro",
    "Vintage",
    "Rugged",
    "Wireless",
    "Organic",
    "Portable",
    "Premium",
    "Basic",
    "Solar",
]
NOUNS = [
    "Kettle",
    "Backpack",
    "Lamp",
    "Headphones",
    "Blender",
    "Notebook",
    "Jacket",
    "Drill",
    "Mug",
    "Speaker",
    "Tent",
    "Keyboard",
    "Sneakers",
    "Watch",
    "Charger",
    "Scarf",
    "Grinder",
    "Pillow",
    "Bottle",
    "Router",
]
COLOURS = ["Black", "White", "Red", "Blue", "Green", "Grey", "Navy", "Olive"]


def generate_csv(path: Path, rows: int) -> None:
    """~8 realistic order columns; deterministic for a given row count."""
    rng = np.random.default_rng(SEED)
    order_ids = pa.array([f"ORD-{i:08d}" for i in range(1, rows + 1)], pa.string())
    customers = rng.integers(1, max(2, rows // 10) + 1, rows)  # ~10 orders per customer
    customer_ids = pa.array([f"CUST-{c:07d}" for c in customers.tolist()], pa.string())
    epoch = np.datetime64("2021-01-01")
    dates = (epoch + rng.integers(0, 4 * 365, rows).astype("timedelta64[D]")).astype("datetime64[D]")
    amounts = np.round(rng.lognormal(3.5, 0.9, rows), 2)
    statuses = np.array(STATUSES)[rng.choice(len(STATUSES), rows, p=STATUS_P)]
    countries = np.array(COUNTRIES)[rng.zipf(1.6, rows) % len(COUNTRIES)]
    products = np.array([f"{a} {n} {c}" for a in ADJECTIVES for n in NOUNS for c in COLOURS])
    product = products[rng.integers(0, len(products), rows)]
    quantity = np.minimum(rng.geometric(0.45, rows), 50)
    table = pa.table(
        {
            "order_id": order_ids,
            "customer_id": customer_ids,
            "order_date": pa.array(dates, pa.date32()),
            "amount": pa.array(amounts, pa.float64()),
            "status": pa.array(statuses.tolist(), pa.string()),
            "country": pa.array(countries.tolist(), pa.string()),
            "product": pa.array(product.tolist(), pa.string()),
            "quantity": pa.array(quantity, pa.int64()),
        }
    )
    pacsv.write_csv(table, path)


TOPICS = [
    "supply chain",
    "data retention",
    "customer onboarding",
    "incident response",
    "quarterly forecast",
    "warehouse automation",
    "vendor assessment",
    "pricing strategy",
    "security audit",
    "release planning",
    "field maintenance",
    "energy usage",
    "returns handling",
    "fraud detection",
    "hiring plan",
    "market entry",
    "network upgrade",
    "compliance review",
    "product recall",
    "fleet logistics",
    "cloud migration",
    "loyalty programme",
    "payment failures",
    "inventory accuracy",
    "service levels",
]
SECTION_TITLES = [
    "Background",
    "Scope",
    "Findings",
    "Analysis",
    "Risks",
    "Recommendations",
    "Next steps",
    "Timeline",
    "Open questions",
    "Method",
    "Results",
    "Decision",
    "Budget",
    "Stakeholders",
    "Lessons learned",
]
SUBJECTS = [
    "the regional team",
    "our largest customer",
    "the finance group",
    "the night shift",
    "the vendor",
    "the pilot site",
    "the platform team",
    "each warehouse",
    "the support desk",
    "management",
    "the auditors",
    "the new system",
    "the legacy scheduler",
    "the logistics partner",
    "the sales organisation",
    "the board",
    "the data team",
    "every store",
    "the integration layer",
    "the field engineers",
]
VERBS = [
    "reported",
    "reduced",
    "delayed",
    "measured",
    "approved",
    "rejected",
    "reviewed",
    "doubled",
    "replaced",
    "tracked",
    "escalated",
    "automated",
    "simplified",
    "documented",
    "benchmarked",
    "migrated",
    "forecast",
    "questioned",
    "consolidated",
    "prioritised",
    "validated",
    "flagged",
    "scheduled",
    "estimated",
]
OBJECTS = [
    "shipping costs",
    "ticket backlog",
    "lead times",
    "error rates",
    "the refund queue",
    "stock levels",
    "contract terms",
    "the rollout plan",
    "capacity limits",
    "the retention policy",
    "carrier invoices",
    "late deliveries",
    "duplicate orders",
    "the onboarding checklist",
    "power consumption",
    "spare parts",
    "the access review",
    "price changes",
    "supplier scores",
    "the quarterly targets",
    "customer churn",
    "batch jobs",
    "label printing",
    "storage usage",
    "the escalation path",
    "warranty claims",
]
TAILS = [
    "after the spring review",
    "across three regions",
    "without extra staff",
    "ahead of the deadline",
    "for the second time this year",
    "despite the holiday peak",
    "as the pilot showed",
    "in most cases",
    "by roughly twelve percent",
    "once the data was cleaned",
    "before the audit",
    "at two of the sites",
    "with help from finance",
    "during the migration window",
    "under the new contract",
    "for premium accounts",
]
EXTRAS = [
    "However, the figures need another look.",
    "This matches what customers told us.",
    "The root cause is still unclear.",
    "A follow-up meeting is planned.",
    "Costs stayed within budget.",
    "Nobody expected this outcome.",
    "The change is reversible.",
    "Two teams disagree on the numbers.",
    "Details are in the appendix.",
    "The trend has held for six months.",
]


def sentence(rng: random.Random, serial: int) -> str:
    text = f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}"
    if rng.random() < 0.3:
        text += f", affecting {rng.randint(2, 9_999)} orders in batch {serial}-{rng.randint(1, 999)}"
    text += "."
    if rng.random() < 0.2:
        text += " " + rng.choice(EXTRAS)
    return text


def document(i: int) -> str:
    """A markdown document: title, 2-3 sections, ~150-300 words; deterministic per index."""
    rng = random.Random(SEED * 100_003 + i)
    topic = rng.choice(TOPICS)
    words_wanted = rng.randint(150, 300)
    sections = rng.sample(SECTION_TITLES, rng.choice([2, 3]))
    lines = [f"# {topic.title()} note {i:05d}", "", f"Prepared for the {topic} working group, item {i}.", ""]
    words = len(lines[2].split())
    per_section = words_wanted // len(sections)
    for s, heading in enumerate(sections):
        lines += [f"## {heading}", ""]
        budget = per_section if s < len(sections) - 1 else words_wanted - words
        used = 0
        paragraph: list[str] = []
        while used < budget:
            sent = sentence(rng, i)
            paragraph.append(sent)
            used += len(sent.split())
            if len(paragraph) >= rng.randint(3, 5):
                lines += [" ".join(paragraph), ""]
                paragraph = []
        if paragraph:
            lines += [" ".join(paragraph), ""]
        words += used
    return "\n".join(lines)


def generate_documents(folder: Path, count: int) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    words = 0
    for i in range(count):
        text = document(i)
        words += len(text.split())
        (folder / f"note_{i:05d}.md").write_text(text, encoding="utf-8")
    return words


# ---------------------------------------------------------------- timed runs


def timed(fn):
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def bench_pyarrow_read(csv_path: Path) -> tuple[int, float]:
    table, seconds = timed(lambda: pacsv.read_csv(csv_path))
    return table.num_rows, seconds


def bench_plain_iceberg(csv_path: Path, workdir: Path) -> tuple[int, float]:
    """pyarrow read + a fresh SqlCatalog + create_table + append: what a bare Iceberg load costs."""
    from pyiceberg.catalog.sql import SqlCatalog

    lake = workdir / "plain_iceberg"
    shutil.rmtree(lake, ignore_errors=True)
    (lake / "warehouse").mkdir(parents=True)

    def run() -> int:
        table = pacsv.read_csv(csv_path)
        catalog = SqlCatalog(
            "plain", uri=f"sqlite:///{(lake / 'catalog.db').resolve()}", warehouse=(lake / "warehouse").as_uri()
        )
        catalog.create_namespace("bench")
        iceberg = catalog.create_table("bench.orders", schema=table.schema)
        iceberg.append(table)
        return table.num_rows

    rows, seconds = timed(run)
    return rows, seconds


def bench_lake_ingest(source: Path, lake_dir: Path):
    from lakeplanner import Lake

    shutil.rmtree(lake_dir, ignore_errors=True)
    lake = Lake.create(lake_dir)
    try:
        report, seconds = timed(lambda: lake.ingest(source))
        failed = [s for s in report.sources if s.status == "failed"] + list(report.bad_files)
        if failed:
            raise SystemExit(f"ingest of {source} reported failures: {failed}")
        counts = {c: lake.vectors.count(c) for c in lake.vectors.collections()}
        return report, seconds, counts
    finally:
        lake.close()


def chunk_texts(docs_dir: Path) -> list[str]:
    """The exact texts the pipeline embeds: same files, same order, same chunking."""
    from lakeplanner.config import IngestConfig
    from lakeplanner.contract.discover import discover_sources
    from lakeplanner.contract.models import ExclusionManifest
    from lakeplanner.ingest.chunking import chunk_text
    from lakeplanner.ingest.readers import read_document

    config = IngestConfig()
    texts: list[str] = []
    for source in discover_sources(docs_dir, ExclusionManifest(), config.discovery):
        for rel in source.files:
            doc = read_document(docs_dir, rel, config.limits)
            texts += [doc.text[s.start : s.end] for s in chunk_text(doc.text, config.chunking)]
    return texts


def pipeline_batch_size() -> int:
    """Ingestor.embed's batch: max(embed_batch_size * 8, 256) texts per embed_passages call."""
    from lakeplanner.config import IngestConfig

    return max(IngestConfig().embed_batch_size * 8, 256)


def bench_encoder(texts: list[str]) -> float:
    from lakeplanner.llm.embeddings import default_embedder

    embedder = default_embedder()
    batch = pipeline_batch_size()

    def run() -> None:
        for start in range(0, len(texts), batch):
            embedder.embed_passages(texts[start : start + batch])

    _, seconds = timed(run)
    return seconds


# ---------------------------------------------------------------- report


def machine_info() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "not installed"
    try:
        import subprocess

        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "lakeplanner"], cwd=ROOT, capture_output=True, text=True
        )
        commit = head.stdout.strip() + (" (lakeplanner/ has uncommitted changes)" if dirty.stdout.strip() else "")
    except OSError:
        commit = "unknown"
    return {
        "commit": commit,
        "nproc": os.cpu_count(),
        "cpu": cpu or platform.processor(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "versions": versions,
    }


def fmt(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def markdown(result: dict) -> str:
    b, m, t = result["baselines"], result["machine"], result["timings_s"]
    rows_ok = result["tables_rows_per_s"] >= TARGET_ROWS_PER_S
    docs_ok = result["docs_vs_encoder"] >= TARGET_DOCS_VS_ENCODER
    enc_runs = ", ".join(fmt(r, 1) for r in result["encoder_runs_passages_per_s"])
    lines = [
        "# Ingest benchmark",
        "",
        f"{result['rows']:,} CSV rows (8 columns, {result['csv_mb']:.1f} MB) and {result['docs']:,} markdown "
        f"documents ({result['chunks']:,} chunks, {result['doc_words']:,} words).",
        "",
        "## Results",
        "",
        "| figure | value | seconds | target |",
        "|---|---:|---:|---|",
        f"| **tables_rows_per_s** (`lake.ingest(csv folder)`, end to end) | {fmt(result['tables_rows_per_s'])} rows/s"
        f" | {t['lake_ingest_table']:.2f} | >= {fmt(TARGET_ROWS_PER_S)}: **{verdict(rows_ok)}** |",
        f"| baseline: `pyarrow.csv.read_csv` alone | {fmt(b['pyarrow_read_csv']['rows_per_s'])} rows/s"
        f" | {b['pyarrow_read_csv']['seconds']:.2f} | |",
        f"| baseline: pyarrow read + plain pyiceberg `create_table` + `append` |"
        f" {fmt(b['pyiceberg_plain_append']['rows_per_s'])} rows/s | {b['pyiceberg_plain_append']['seconds']:.2f} | |",
        f"| lakeplanner time / plain pyiceberg time | {result['tables_vs_plain_iceberg_time']:.2f}x | | |",
        f"| **docs_chunks_per_s** (`lake.ingest(docs folder)`, end to end) | {fmt(result['docs_chunks_per_s'], 1)}"
        f" chunks/s | {t['lake_ingest_docs']:.2f} | |",
        f"| **encoder_passages_per_s** (`embed_passages`, same texts, batches of {result['embed_batch']}) |"
        f" {fmt(result['encoder_passages_per_s'], 1)} passages/s | {t['encoder_mean']:.2f} | |",
        f"| **docs_vs_encoder** (chunks/s / passages/s) | {result['docs_vs_encoder']:.3f} | |"
        f" >= {TARGET_DOCS_VS_ENCODER}: **{verdict(docs_ok)}** |",
        "",
        f"Encoder runs (passages/s; the figure above is chunks / mean seconds): {enc_runs}. "
        f"The encoder was warmed (model loaded, one batch run) before every timing; the table ingest "
        f"also starts with the model loaded. Each `lake.ingest` goes into a fresh lake and includes starting "
        f"Milvus Lite and the Iceberg SQLite catalog.",
        "",
        f"Load average at start / end: {result['loadavg_start']} / {result['loadavg_end']} "
        "(2-core machine shared with other work; treat small differences as noise).",
        "",
        "## Command",
        "",
        "```",
        result["command"],
        "```",
        "",
        "## Machine",
        "",
        f"- lakeplanner commit: {m['commit']}",
        f"- nproc: {m['nproc']}",
        f"- CPU: {m['cpu']}",
        f"- Python {m['python']} on {m['platform']}",
        f"- date (UTC): {m['date']}",
        "- packages: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()),
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=None, help="CSV rows (default 1,000,000; --quick 20,000)")
    parser.add_argument("--docs", type=int, default=None, help="markdown documents (default 5,000; --quick 200)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where ingest.md/json go (default benchmarks/results; --quick: benchmarks/.work/results-quick)",
    )
    parser.add_argument(
        "--workdir", type=Path, default=None, help="scratch dir (default: temp dir in benchmarks/.work)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 20,000 rows, 200 documents")
    parser.add_argument(
        "--encoder-runs",
        type=int,
        default=2,
        help="bare-encoder passes; 2 = one before and one after the pipeline pass, averaged (default 2)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch dir")
    args = parser.parse_args(argv)
    rows = args.rows if args.rows is not None else (20_000 if args.quick else 1_000_000)
    docs = args.docs if args.docs is not None else (200 if args.quick else 5_000)
    out = args.out or (BENCH_DIR / ".work" / "results-quick" if args.quick else BENCH_DIR / "results")
    command = shlex.join(["python", "benchmarks/ingest.py", *(sys.argv[1:] if argv is None else argv)])

    if args.workdir is None:
        (BENCH_DIR / ".work").mkdir(parents=True, exist_ok=True)
        workdir, temporary = Path(tempfile.mkdtemp(prefix="ingest-", dir=BENCH_DIR / ".work")), not args.keep
    else:
        workdir, temporary = args.workdir, False
        workdir.mkdir(parents=True, exist_ok=True)
    log(f"workdir {workdir}; rows={rows:,} docs={docs:,}")
    loadavg_start = [round(x, 2) for x in os.getloadavg()]
    machine = machine_info()  # at the start: the commit measured, not the one at the end

    try:
        # ---- data
        table_src, docs_src = workdir / "tables_src", workdir / "docs_src"
        shutil.rmtree(table_src, ignore_errors=True)
        shutil.rmtree(docs_src, ignore_errors=True)
        table_src.mkdir(parents=True)
        csv_path = table_src / "orders.csv"
        _, s = timed(lambda: generate_csv(csv_path, rows))
        log(f"generated {csv_path.name}: {csv_path.stat().st_size / 1e6:.1f} MB in {s:.1f}s")
        doc_words, s = timed(lambda: generate_documents(docs_src, docs))
        log(f"generated {docs:,} documents ({doc_words:,} words) in {s:.1f}s")

        # ---- warm the encoder (model load + one batch) so no timing pays it
        from lakeplanner.llm.embeddings import default_embedder

        _, s = timed(lambda: default_embedder().embed_passages(["warm-up passage about shipping costs."] * 8))
        log(f"encoder loaded and warmed in {s:.1f}s")

        # ---- tables
        n, s = bench_pyarrow_read(csv_path)
        baseline_read = {"rows": n, "seconds": s, "rows_per_s": n / s}
        log(f"pyarrow read_csv: {s:.2f}s = {n / s:,.0f} rows/s")
        n, s = bench_plain_iceberg(csv_path, workdir)
        baseline_iceberg = {"rows": n, "seconds": s, "rows_per_s": n / s}
        log(f"pyarrow + plain pyiceberg append: {s:.2f}s = {n / s:,.0f} rows/s")
        report, table_s, _ = bench_lake_ingest(table_src, workdir / "lake_tables")
        written = sum(src.rows_written for src in report.sources)
        if written != rows:
            raise SystemExit(f"lake ingest wrote {written} rows, expected {rows}")
        log(f"lake.ingest(tables): {table_s:.2f}s = {rows / table_s:,.0f} rows/s")

        # ---- documents
        texts = chunk_texts(docs_src)
        batch = pipeline_batch_size()
        encoder_runs: list[float] = []
        first = args.encoder_runs - args.encoder_runs // 2  # sandwich the pipeline pass
        for _ in range(first):
            encoder_runs.append(bench_encoder(texts))
            log(f"encoder alone: {encoder_runs[-1]:.2f}s = {len(texts) / encoder_runs[-1]:,.1f} passages/s")
        report, docs_s, counts = bench_lake_ingest(docs_src, workdir / "lake_docs")
        chunks = sum(src.chunks for src in report.sources)
        stored = sum(counts.values())
        if chunks != stored or chunks != len(texts):
            raise SystemExit(f"chunk counts disagree: report {chunks}, Milvus {stored}, rebuilt {len(texts)}")
        log(f"lake.ingest(docs): {docs_s:.2f}s = {chunks / docs_s:,.1f} chunks/s ({chunks:,} chunks)")
        for _ in range(args.encoder_runs - first):
            encoder_runs.append(bench_encoder(texts))
            log(f"encoder alone: {encoder_runs[-1]:.2f}s = {len(texts) / encoder_runs[-1]:,.1f} passages/s")

        encoder_s = sum(encoder_runs) / len(encoder_runs)
        docs_chunks_per_s = chunks / docs_s
        encoder_passages_per_s = len(texts) / encoder_s
        result = {
            "tables_rows_per_s": rows / table_s,
            "docs_vs_encoder": docs_chunks_per_s / encoder_passages_per_s,
            "docs_chunks_per_s": docs_chunks_per_s,
            "encoder_passages_per_s": encoder_passages_per_s,
            "encoder_runs_passages_per_s": [len(texts) / r for r in encoder_runs],
            "baselines": {"pyarrow_read_csv": baseline_read, "pyiceberg_plain_append": baseline_iceberg},
            "tables_vs_plain_iceberg_time": table_s / baseline_iceberg["seconds"],
            "rows": rows,
            "docs": docs,
            "chunks": chunks,
            "doc_words": doc_words,
            "csv_mb": csv_path.stat().st_size / 1e6,
            "embed_batch": batch,
            "timings_s": {
                "lake_ingest_table": table_s,
                "lake_ingest_docs": docs_s,
                "encoder_runs": encoder_runs,
                "encoder_mean": encoder_s,
            },
            "targets": {
                "tables_rows_per_s": {"min": TARGET_ROWS_PER_S, "pass": rows / table_s >= TARGET_ROWS_PER_S},
                "docs_vs_encoder": {
                    "min": TARGET_DOCS_VS_ENCODER,
                    "pass": docs_chunks_per_s / encoder_passages_per_s >= TARGET_DOCS_VS_ENCODER,
                },
            },
            "loadavg_start": loadavg_start,
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "command": command,
            "machine": {**machine, "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")},
        }
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)

    text = markdown(result)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ingest.md").write_text(text)
    (out / "ingest.json").write_text(json.dumps(result, indent=2) + "\n")
    print()
    print(text)
    log(f"wrote {out / 'ingest.md'} and {out / 'ingest.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
