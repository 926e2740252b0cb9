"""Executor benchmark: parallel branches on Ray vs serial, SQL pushdown over a 10M-row Iceberg table,
and characters of lake data shown to the LLM per answer (ours vs a standard RAG baseline).

    python benchmarks/execute.py                 # all three; the last runs the real local model
    python benchmarks/execute.py --skip-llm      # the first two only (minutes, no model)
    python benchmarks/execute.py --rows 2000000  # a smaller pushdown table

Writes benchmarks/results/execute.md and execute.json.

How each figure is made:
- parallel_over_serial: a plan with two independent SQL nodes (statements given, no LLM call), each
  aggregating its own 3M-row Iceberg table, timed end to end by `Executor.run` in serial mode and on a
  local Ray (2 CPUs), best of 3 after a warm-up; ratio = Ray wall time / serial wall time. The serial
  run's process CPU time over its wall time says how many cores one branch already keeps busy.
- pushdown_bytes_fraction: a selective SQL node (one id range, 0.5% of the rows) over a 10M-row table
  written sorted by id in 8 MiB files, as a Spark job would write it; bytes = on-disk sizes of the
  projected columns in the files the pyiceberg scan planned, over all bytes of the table.
- llm_chars_vs_rag: the sample lake's questions, answered by `lake.ask` with the real model; ours =
  characters of lake data (cells, example values, passages) in every prompt of the answer; RAG = the
  characters of the top-5 chunks that hybrid search returns over all collections for the question (what
  a standard retrieve-then-generate prompt would hold; its generation is not run, as it does not
  change this count).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.qabench.methods import top_chunks
from lakeplanner import Lake, sample_lake_path
from lakeplanner.execute.engine import Executor, start_ray
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm import LLM, LLMSettings, get_llm
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.model import Plan, PlanNode

ROOT = Path(__file__).resolve().parent.parent
RAG_K = 5


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def events(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "event_id": pa.array(np.arange(rows, dtype=np.int64)),
            "category": pa.array(rng.choice(["a", "b", "c", "d", "e"], rows)),
            "amount": pa.array(rng.random(rows) * 100),
            "note": pa.array(rng.choice(["ok", "late", "returned", "disputed"], rows)),
        }
    )


def lake_with_tables(path: Path, sizes: dict[str, int], file_bytes: int = 8 << 20) -> Lake:
    """Tables ingested through the product (a 1,000-row seed file each, so the contract knows them),
    then bulk rows appended through pyiceberg sorted by event_id, in files of `file_bytes`."""
    seeds = path / "seeds"
    seeds.mkdir(parents=True)
    for name in sizes:
        pacsv.write_csv(events(1000, 0), seeds / f"{name}.csv")
    lake = Lake.create(path / "lake")
    lake.ingest(seeds)
    for i, (name, rows) in enumerate(sizes.items()):
        table = lake.table(name)
        with table.transaction() as tx:
            tx.set_properties({"write.target-file-size-bytes": str(file_bytes)})
        bulk = events(rows, i + 1)
        bulk = bulk.set_column(0, "event_id", pa.array(np.arange(1000, rows + 1000, dtype=np.int64)))
        schema = table.schema().as_arrow()
        columns = {f.name: bulk[f.name] if f.name in bulk.column_names else pa.nulls(rows, f.type) for f in schema}
        table.append(pa.table(columns, schema=schema))
    return lake


def sql_node(label: str, table: str) -> PlanNode:
    return PlanNode(
        label=label,
        tool="sql",
        source=table,
        question=f"amount per category in {table}",
        sql=f"SELECT category, count(*) AS n, sum(amount) AS total, avg(amount) AS mean FROM {table} "
        "WHERE note <> 'returned' GROUP BY category ORDER BY category",
        should_expose_answer=True,
        answer_description="totals",
    )


def parallel_over_serial(workdir: Path) -> dict:
    import ray

    lake = lake_with_tables(workdir / "parallel", {"events_a": 3_000_000, "events_b": 3_000_000})
    plan = Plan(question="two branches", nodes=(sql_node("$var_1", "events_a"), sql_node("$var_2", "events_b")))
    llm = LLM(FakeBackend([]))  # the statements are given: no LLM call happens
    times, serial_busy = {}, []
    start_ray(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        for mode in ("serial", "ray"):
            executor = Executor(lake, llm, ExecSettings(mode=mode))
            executor.run(plan)  # warm-up: Ray workers, imports, the service actor
            runs = []
            for _ in range(3):
                started, cpu = time.perf_counter(), time.process_time()
                results = executor.run(plan)
                runs.append(time.perf_counter() - started)
                if mode == "serial":  # a Ray run works in other processes
                    serial_busy.append((runs[-1], (time.process_time() - cpu) / runs[-1]))
                assert all(r.ok for r in results), [r.error for r in results]
            executor.close()
            times[mode] = min(runs)
            log(f"{mode}: {[round(r, 2) for r in runs]}")
    finally:
        ray.shutdown()
        lake.close()
    return {
        "serial_s": round(times["serial"], 3),
        "ray_s": round(times["ray"], 3),
        "parallel_over_serial": round(times["ray"] / times["serial"], 3),
        "serial_cores_busy": round(min(serial_busy)[1], 2),  # of the fastest serial run
        "cores": os.cpu_count(),
    }


def pushdown(workdir: Path, rows: int) -> dict:
    lake = lake_with_tables(workdir / "pushdown", {"events": rows})
    low = rows // 2
    high = low + rows // 200 - 1
    plan = Plan(
        question="selective",
        nodes=(
            PlanNode(
                label="$var_1",
                tool="sql",
                source="events",
                question="amount of a range of events",
                sql=f"SELECT count(*) AS n, sum(amount) AS total FROM events WHERE event_id BETWEEN {low} AND {high}",
                should_expose_answer=True,
                answer_description="n",
            ),
        ),
    )
    from lakeplanner.execute.engines import DuckDBEngine
    from lakeplanner.policy.readonly import parse_select

    started = time.perf_counter()
    [result] = Executor(lake, LLM(FakeBackend([])), ExecSettings(mode="serial")).run(plan)
    seconds = time.perf_counter() - started
    assert result.ok and result.rows[0]["n"] == rows // 200, result
    [run] = result.sql
    scan = DuckDBEngine(lake).run(parse_select(run.sql))
    full = DuckDBEngine(lake).run(parse_select("SELECT count(*) AS n, sum(amount) AS total FROM events"))
    files = len(lake.table("events").inspect.files())
    lake.close()
    return {
        "rows": rows + 1000,
        "files": files,
        "selected_rows": rows // 200,
        "bytes_scanned": scan.bytes_scanned,
        "bytes_total": scan.bytes_total,
        "bytes_full_scan_projected": full.bytes_scanned,
        "pushdown_bytes_fraction": round(scan.bytes_scanned / scan.bytes_total, 4),
        "node_seconds": round(seconds, 2),
    }


def rag_chars(lake: Lake, question: str) -> int:
    return sum(len(text) for text in top_chunks(lake, question, RAG_K))


def answered(answer, expect: list[str]) -> bool:
    if not expect:
        return answer.abstained
    text = f"{answer.value} {answer.text}".casefold()
    return not answer.abstained and all(e.casefold() in text for e in expect)


def llm_chars(workdir: Path, model: str) -> dict:
    questions = json.loads((sample_lake_path() / "questions.json").read_text())
    lake = Lake.create(workdir / "sample")
    lake.ingest(sample_lake_path())
    rag = [rag_chars(lake, q["question"]) for q in questions]
    lake.release_vectors()
    llm = get_llm(LLMSettings(backend="local", model=model))
    rows = []
    for q, rag_count in zip(questions, rag, strict=True):
        answer = lake.ask(q["question"], llm=llm, settings=ExecSettings(mode="serial"), use_cache=False)
        rows.append(
            {
                "question": q["question"],
                "kind": q["kind"],
                "correct": answered(answer, q.get("expect", [])),
                "value": answer.value,
                "abstained": answer.abstained,
                "reason": answer.reason,
                "citations": len(answer.citations),
                "confidence": answer.confidence,
                "ours_chars": answer.data_chars,
                "rag_chars": rag_count,
                "seconds": round(answer.timings.get("total_s", 0), 1),
                "trace_id": answer.trace_id,
            }
        )
        log(f"{q['kind']:<24} correct={rows[-1]['correct']} {answer.value!r} chars {answer.data_chars} vs {rag_count}")
    lake.close()
    ours, theirs = sum(r["ours_chars"] for r in rows), sum(r["rag_chars"] for r in rows)
    return {
        "model": llm.model_name,
        "questions": len(rows),
        "correct": sum(r["correct"] for r in rows),
        "ours_chars_per_answer": round(ours / len(rows)),
        "rag_chars_per_answer": round(theirs / len(rows)),
        "llm_chars_vs_rag": round(ours / theirs, 3),
        "seconds_p50": statistics.median(r["seconds"] for r in rows),
        "per_question": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--model", default="default")
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--skip-engines", action="store_true", help="keep the last parallel and pushdown figures")
    args = parser.parse_args()
    out = ROOT / "benchmarks" / "results"
    previous = json.loads((out / "execute.json").read_text()) if (out / "execute.json").exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.skip_engines:
            parallel, push = previous["parallel"], previous["pushdown"]
        else:
            log("parallel branches")
            parallel = parallel_over_serial(workdir)
            log(json.dumps(parallel))
            log(f"pushdown over {args.rows:,} rows")
            push = pushdown(workdir, args.rows)
            log(json.dumps(push))
        chars = previous.get("llm_chars") if args.skip_llm else None
        if not args.skip_llm:
            chars = llm_chars(workdir, args.model)
    result = {
        "parallel_over_serial": parallel["parallel_over_serial"],
        "pushdown_bytes_fraction": push["pushdown_bytes_fraction"],
        "llm_chars_vs_rag": chars["llm_chars_vs_rag"] if chars else None,
        "parallel": parallel,
        "pushdown": push,
        "llm_chars": chars,
        "command": "python benchmarks/execute.py " + shlex.join(sys.argv[1:]),
        "machine": f"{platform.machine()}, {platform.system()}, {os.cpu_count()} cores",
    }
    (out / "execute.json").write_text(json.dumps(result, indent=2) + "\n")
    write_markdown(out / "execute.md", result)
    log(json.dumps({k: result[k] for k in ("parallel_over_serial", "pushdown_bytes_fraction", "llm_chars_vs_rag")}))


def write_markdown(path: Path, r: dict) -> None:
    p, d, c = r["parallel"], r["pushdown"], r["llm_chars"]
    lines = [
        "# Executor benchmark",
        "",
        f"`{r['command']}` on {r['machine']}",
        "",
        *(
            ["The parallel and pushdown rows are from the last run that measured them, kept by --skip-engines.", ""]
            if "--skip-engines" in r["command"]
            else []
        ),
        *(
            ["The LLM rows are from the last run that measured them, kept by --skip-llm.", ""]
            if "--skip-llm" in r["command"]
            else []
        ),
        "| metric | ours | baseline | ratio | target |",
        "|---|---|---|---|---|",
        f"| two independent branches, wall time | Ray {p['ray_s']} s | serial {p['serial_s']} s "
        f"| parallel_over_serial = {p['parallel_over_serial']} | <= 0.6 |",
        f"| bytes read by a selective node over {d['rows']:,} rows ({d['files']} files) | {d['bytes_scanned']:,} "
        f"| whole table {d['bytes_total']:,} | pushdown_bytes_fraction = {d['pushdown_bytes_fraction']} | <= 0.05 |",
    ]
    if c:
        lines.append(
            f"| lake data shown to the LLM per answer ({c['questions']} questions, {c['model']}) "
            f"| {c['ours_chars_per_answer']:,} chars | top-{RAG_K} RAG {c['rag_chars_per_answer']:,} chars "
            f"| llm_chars_vs_rag = {c['llm_chars_vs_rag']} | <= 0.1 |"
        )
    if "serial_cores_busy" in p:
        busy = p["serial_cores_busy"]
        lines += [
            "",
            f"The serial run already keeps {busy} of the {p['cores']} cores busy (pyiceberg reads files and "
            f"DuckDB aggregates with threads), so two branches at once can at best take "
            f"{max(busy / p['cores'], 0.5):.2f} of its time here.",
        ]
    if c:
        lines += [
            "",
            f"Answers with the real model: {c['correct']} of {c['questions']} correct "
            f"(p50 {c['seconds_p50']:.0f} s a question, serial mode, 2 cores).",
            "",
            "| kind | correct | value | citations | confidence | ours chars | RAG chars | s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for q in c["per_question"]:
            value = "abstained: " + (q["reason"] or "")[:60] if q["abstained"] else str(q["value"])[:60]
            lines.append(
                f"| {q['kind']} | {q['correct']} | {value} | {q['citations']} | {q['confidence']} "
                f"| {q['ours_chars']} | {q['rag_chars']} | {q['seconds']} |"
            )
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
