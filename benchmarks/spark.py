"""Spark SQL over the lake's own Iceberg catalog (issue 51, "How to measure"), on both sample lakes.

    python benchmarks/spark.py            # writes results/spark.md and .json (a few minutes: two ingests, two JVMs)
    python benchmarks/spark.py --other-figures   # only the Ray Data, Phoenix and OpenLineage figures read again

For each sample lake (ingested into a temp lake with the default SQLite catalog), in its own process (a
JVM's class path and catalogs are fixed when it starts):
- spark_reads_lake: fraction of the lake's tables that Spark SQL (`lake_session`) reads with the same rows
  as `Lake.sql`: same count and the same sorted list of row content hashes (`_lp_hash`, a checksum).
- snapshot_reads_match: fraction of every snapshot of every table (a superset of the snapshots an answer can
  cite) that `... VERSION AS OF <id>` reads with the rows pyiceberg's scan of that snapshot holds.
The answers-table figures (merge_rerun_duplicates, concurrent_commits_lost) are asserted by
tests/test_spark.py on every `make test`: a killed answer job run again, and a lost commit race.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
LAKES = ("sales", "logistics")


def measure(name: str) -> dict:
    from lakeplanner import Lake
    from lakeplanner.storage import sample_lake_path
    from spark_udfs import lake_session

    lake = Lake.create(Path(tempfile.mkdtemp()) / "lake")
    started = time.perf_counter()
    lake.ingest(sample_lake_path(name))
    ingest_s = time.perf_counter() - started
    spark = lake_session(lake.path, master="local[2]", spark__ui__enabled="false")
    tables, snapshots = {}, {}
    for table in lake.table_names():
        ours = sorted(lake.sql(f"SELECT _lp_hash FROM {table}").column(0).to_pylist())
        theirs = sorted(r[0] for r in spark.sql(f"SELECT _lp_hash FROM lake.lake.{table}").collect())
        tables[table] = {"rows": len(ours), "same": ours == theirs}
        iceberg = lake.table(table)
        for snapshot in iceberg.snapshots():
            at = sorted(iceberg.scan(snapshot_id=snapshot.snapshot_id).to_arrow().column("_lp_hash").to_pylist())
            pinned = spark.sql(f"SELECT _lp_hash FROM lake.lake.{table} VERSION AS OF {snapshot.snapshot_id}")
            snapshots[f"{table}@{snapshot.snapshot_id}"] = sorted(r[0] for r in pinned.collect()) == at
    spark.stop()
    return {"lake": name, "ingest_s": round(ingest_s, 1), "tables": tables, "snapshots": snapshots}


def commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()


def report_markdown(result: dict) -> str:
    lines = [
        "# Spark SQL over the lake's Iceberg catalog",
        "",
        f"Spark figures at commit {result['commit']}; `python benchmarks/spark.py`; PySpark {result['pyspark']}, "
        "Iceberg 1.10.2, SQLite catalog, local[2].",
        "",
        "| metric | value | target |",
        "|---|---|---|",
    ]
    for key, value in result["metrics"].items():
        lines.append(f"| {key} | {value} | {result['targets'].get(key, '')} |")
    lines += ["", "| lake | tables read alike | snapshots read alike |", "|---|---|---|"]
    for lake in result["lakes"]:
        same = sum(t["same"] for t in lake["tables"].values())
        pinned = sum(lake["snapshots"].values())
        lines.append(f"| {lake['lake']} | {same}/{len(lake['tables'])} | {pinned}/{len(lake['snapshots'])} |")
    lines += ["", result["note"], ""]
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--measure":
        print(json.dumps(measure(sys.argv[2])))
        return
    if sys.argv[1:] == ["--other-figures"]:
        refresh_other_figures()
        return
    import pyspark

    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    lakes = []
    for name in LAKES:
        run = subprocess.run([sys.executable, __file__, "--measure", name], env=env, capture_output=True, text=True)
        if run.returncode:
            sys.exit(f"{name}: {run.stderr[-3000:]}")
        lakes.append(json.loads(run.stdout.strip().splitlines()[-1]))
        print(f"{name}: {lakes[-1]['tables']}", flush=True)
    tables = [t["same"] for lake in lakes for t in lake["tables"].values()]
    snapshots = [same for lake in lakes for same in lake["snapshots"].values()]
    result = {
        "commit": commit(),
        "pyspark": pyspark.__version__,
        "metrics": {
            "spark_reads_lake": round(sum(tables) / len(tables), 4),
            "snapshot_reads_match": round(sum(snapshots) / len(snapshots), 4),
            "merge_rerun_duplicates": "0 (tests/test_spark.py: killed job, 8 ids)",
            "concurrent_commits_lost": "0 (tests/test_spark.py: lost race + 12 concurrent commits)",
            **other_figures(),
        },
        "targets": {
            "spark_reads_lake": 1.0,
            "snapshot_reads_match": 1.0,
            "merge_rerun_duplicates": 0,
            "concurrent_commits_lost": 0,
            "ray_data_questions": ">= 100000",
            "phoenix_spans_received_fraction": 1.0,
            "openlineage_events_valid": 1.0,
        },
        "lakes": lakes,
        "note": NOTE,
    }
    write(result)


NOTE = (
    "ray_data_* from results/batch_stream.json (benchmarks/batch_stream.py), phoenix_* from results/phoenix.json "
    "(benchmarks/phoenix_trace.py), openlineage_* from tests/test_openlineage.py; None: not measured yet."
)


def other_figures() -> dict:
    """The figures other benchmarks and tests measure, as their committed results say."""

    def read(name: str) -> dict:
        path = RESULTS / name
        return json.loads(path.read_text()) if path.exists() else {}

    stream, phoenix = read("batch_stream.json"), read("phoenix.json")
    peaks = [stream.get("streamed_read", {}).get("peak_mib")] + [r.get("peak_mib") for r in stream.get("runs", [])]
    peaks = [p for p in peaks if p is not None]
    once = stream.get("exactly_once", {})
    return {
        "ray_data_questions": (
            f"{stream['streamed_read']['questions']} streamed through Ray Data; {stream['answered_questions']} "
            f"answered, killed and resumed: {once.get('rows')} rows, {once.get('distinct_ids')} ids"
            if stream
            else None
        ),
        "ray_data_driver_peak_rss_mb": round(max(peaks)) if peaks else None,
        "phoenix_spans_received_fraction": phoenix.get("phoenix_spans_received_fraction"),
        "openlineage_events_valid": (
            "1.0 (tests/test_openlineage.py: every event of an answer, a batch run and an HTTP send rebuilt through "
            "openlineage-python's generated classes; the package ships no JSON schema file)"
        ),
    }


def refresh_other_figures() -> None:
    """spark.json with the other benchmarks' figures read again, the Spark figures as measured."""
    result = json.loads((RESULTS / "spark.json").read_text())
    result["metrics"].update(other_figures())
    result["note"] = NOTE
    write(result)


def write(result: dict) -> None:
    (RESULTS / "spark.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "spark.md").write_text(report_markdown(result))
    print(report_markdown(result))


if __name__ == "__main__":
    main()
