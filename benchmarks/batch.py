"""Batch benchmark: `lakeplanner batch` over 200+ questions of the sample lake, on the real local model.

The questions come from 22 templates (none of the plan-cache suite's) filled with values read from
the lake; each question's gold answer is computed from the same tables with SQL. In one run:

  one      half the questions, a pool of 1 answerer (2 model threads)   -> questions_per_min_1
  two      the other half, a pool of 2 answerers (1 model thread each)  -> questions_per_min_2
           (each with a fresh plan cache, so each plans its 22 templates once and reuses them)
  planned  one question per template, every question planned afresh (--no-plan-reuse), the driver
           SIGKILLed at a random point after its first commit and the same command run again
           -> cache_speedup (its time per question over `one`'s) and kill_resume

Every run is the CLI a user runs, in its own process, timed from start to exit (Ray and model start
included). correct_fraction compares each answer of `one` and `two` with its gold answer.

    python benchmarks/batch.py            # writes benchmarks/results/batch.{md,json}  (~80 min on 2 cores)
    python benchmarks/batch.py --per-template 2 --no-kill   # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qabench.metrics import parse_number, squad_normalize

from lakeplanner import Lake, __version__, sample_lake_path
from lakeplanner.batch.answers import table_name

RESULTS = Path(__file__).resolve().parent / "results"
LAKEPLANNER = str(Path(sys.executable).parent / "lakeplanner")


@dataclass(frozen=True)
class Template:
    """A question with {slots}; `values` selects the slot values (columns named as the slots) and
    `gold` the answer, both in SQL over the lake's tables (gold sees the slots as $name)."""

    question: str
    values: str
    gold: str


TEMPLATES = [
    Template(
        "Which city is {name} based in?", "SELECT name FROM customers", "SELECT city FROM customers WHERE name = $name"
    ),
    Template(
        "Which segment does the customer {name} belong to?",
        "SELECT name FROM customers",
        "SELECT segment FROM customers WHERE name = $name",
    ),
    Template(
        "When did the customer {customer_id} sign up?",
        "SELECT customer_id FROM customers",
        "SELECT signup_date FROM customers WHERE customer_id = $customer_id",
    ),
    Template(
        "In which country is customer {customer_id} located?",
        "SELECT customer_id FROM customers",
        "SELECT country FROM customers WHERE customer_id = $customer_id",
    ),
    Template(
        "In which currency is invoice {invoice_id} billed?",
        "SELECT invoice_id FROM invoices",
        "SELECT currency FROM invoices WHERE invoice_id = $invoice_id",
    ),
    Template(
        "When was invoice {invoice_id} issued?",
        "SELECT invoice_id FROM invoices",
        "SELECT issue_date FROM invoices WHERE invoice_id = $invoice_id",
    ),
    Template(
        "Who is the billing contact for invoice {invoice_id}?",
        "SELECT invoice_id FROM invoices",
        "SELECT billing_contact FROM invoices WHERE invoice_id = $invoice_id",
    ),
    Template(
        "What email address does the billing contact of invoice {invoice_id} use?",
        "SELECT invoice_id FROM invoices",
        "SELECT billing_email FROM invoices WHERE invoice_id = $invoice_id",
    ),
    Template(
        "How many line items does invoice {invoice_id} have?",
        "SELECT invoice_id FROM invoices",
        "SELECT count(*) FROM line_items WHERE invoice_id = $invoice_id",
    ),
    Template(
        "What is the list price of the product {product_name}?",
        "SELECT product_name FROM products",
        "SELECT list_price FROM products WHERE product_name = $product_name",
    ),
    Template(
        "Which product category does SKU {sku} fall under?",
        "SELECT sku FROM products",
        "SELECT category FROM products WHERE sku = $sku",
    ),
    Template(
        "What is the product name of SKU {sku}?",
        "SELECT sku FROM products",
        "SELECT product_name FROM products WHERE sku = $sku",
    ),
    Template(
        "How many invoices were issued to {name}?",
        "SELECT name FROM customers WHERE customer_id IN (SELECT customer_id FROM invoices)",
        "SELECT count(*) FROM invoices i JOIN customers c USING (customer_id) WHERE c.name = $name",
    ),
    Template(
        "How many customers are based in {country}?",
        "SELECT DISTINCT country FROM customers",
        "SELECT count(*) FROM customers WHERE country = $country",
    ),
    Template(
        "How many customers are based in the city of {city}?",
        "SELECT DISTINCT city FROM customers",
        "SELECT count(*) FROM customers WHERE city = $city",
    ),
    Template(
        "How many units of {sku} were sold in total across all invoices?",
        "SELECT DISTINCT sku FROM line_items",
        "SELECT sum(quantity) FROM line_items WHERE sku = $sku",
    ),
    Template(
        "How many invoices include the product {sku}?",
        "SELECT DISTINCT sku FROM line_items",
        "SELECT count(DISTINCT invoice_id) FROM line_items WHERE sku = $sku",
    ),
    Template(
        "What is the largest invoice total of customer {customer_id}?",
        "SELECT DISTINCT customer_id FROM invoices",
        "SELECT max(total_amount) FROM invoices WHERE customer_id = $customer_id",
    ),
    Template(
        "What is the date of the earliest invoice issued to customer {customer_id}?",
        "SELECT DISTINCT customer_id FROM invoices",
        "SELECT min(issue_date) FROM invoices WHERE customer_id = $customer_id",
    ),
    Template(
        "What is the due date of the latest invoice of customer {customer_id}?",
        "SELECT DISTINCT customer_id FROM invoices",
        "SELECT due_date FROM invoices WHERE customer_id = $customer_id ORDER BY issue_date DESC LIMIT 1",
    ),
    Template(
        "How many invoices of customer {customer_id} are overdue?",
        "SELECT DISTINCT customer_id FROM invoices",
        "SELECT count(*) FROM invoices WHERE customer_id = $customer_id AND status = 'overdue'",
    ),
    Template(
        "What is the contract document id of the customer {name}?",
        "SELECT name FROM customers",
        "SELECT contract_document_id FROM customers WHERE name = $name",
    ),
]


class Question(dict):
    """id, question, template (its index), gold."""


def lake_tables(lake: Lake) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for name in lake.table_names():
        con.register(name, lake.table(name).scan().to_arrow())
    return con


def questions_of(
    con: duckdb.DuckDBPyConnection, templates: list[Template], per_template: int, seed: int
) -> list[Question]:
    """`per_template` questions of each template, values drawn at random, gold answers by SQL."""
    rng = random.Random(seed)
    out: list[Question] = []
    for t, template in enumerate(templates):
        values = con.sql(template.values).to_arrow_table().to_pylist()
        for n, slots in enumerate(rng.sample(values, min(per_template, len(values)))):
            gold = con.execute(template.gold, slots).fetchall()[0][0]
            text = template.question.format(**slots)
            out.append(Question(id=f"t{t:02d}-{n:02d}", question=text, template=t, gold=str(gold)))
    return out


def matches(value: str | None, items: list[str] | None, gold: str) -> bool:
    """An item equals the gold answer: as numbers (to the cent), else as normalised text."""
    gold_number = parse_number(gold)
    for item in [*(items or []), value or ""]:
        number = parse_number(str(item))
        if gold_number is not None and number is not None and abs(number - gold_number) < 0.005:
            return True
        if squad_normalize(str(item)) == squad_normalize(gold):
            return True
    return False


def write_jsonl(path: Path, questions: list[Question]) -> Path:
    path.write_text("".join(json.dumps({"id": q["id"], "question": q["question"]}) + "\n" for q in questions))
    return path


def batch_command(lake: Path, source: Path, name: str, *extra: str) -> list[str]:
    return [LAKEPLANNER, "batch", str(source), "--lake", str(lake), "--name", name, "--json", *extra]


def env_with(**settings: str) -> dict[str, str]:
    return {**os.environ, **{f"LAKEPLANNER_{k.upper()}": v for k, v in settings.items()}}


def timed_run(command: list[str], env: dict[str, str]) -> tuple[dict, float]:
    """The batch report and the wall-clock seconds of one CLI run."""
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return json.loads(done.stdout), seconds


def rows_of(lake: Path, name: str) -> list[dict]:
    opened = Lake.open(lake)
    try:
        return opened.catalog.load_table(table_name(name)).scan().to_arrow().to_pylist()
    finally:
        opened.close()


def commits_of(lake: Path, name: str) -> tuple[int, int]:
    """(snapshots, ids added again: by a snapshot after one that had already added them)."""
    opened = Lake.open(lake)
    try:
        table = opened.catalog.load_table(table_name(name))
        added: Counter = Counter()
        previous: Counter = Counter()
        again = 0
        for snapshot in table.snapshots():
            now = Counter(r["question_id"] for r in table.scan(snapshot_id=snapshot.snapshot_id).to_arrow().to_pylist())
            for key in now - previous:
                again += added[key] > 0
                added[key] += 1
            previous = now
        return len(table.snapshots()), again
    finally:
        opened.close()


def forget_plans(lake: Path) -> None:
    (lake / "plan_cache.jsonl").unlink(missing_ok=True)


def killed_and_resumed(command: list[str], env: dict[str, str], lake: Path, name: str, seed: int) -> dict:
    """Start the run, SIGKILL it at a random point after its first commit, run it again to the end,
    then once more (which must commit nothing); count what the answers table holds."""
    rng = random.Random(seed)
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.perf_counter()
    while child.poll() is None and not table_exists(lake, name):
        time.sleep(2)
    first_commit_s = time.perf_counter() - started
    time.sleep(rng.uniform(0, first_commit_s))
    killed = child.poll() is None
    if killed:
        child.send_signal(signal.SIGKILL)
    child.wait()
    before_resume = len(rows_of(lake, name))
    report, resume_s = timed_run(command, env)
    snapshots, _ = commits_of(lake, name)
    timed_run(command, env)
    snapshots_after, recommitted = commits_of(lake, name)
    ids = Counter(r["question_id"] for r in rows_of(lake, name))
    return {
        "killed": killed,
        "killed_after_s": round(first_commit_s, 1),
        "committed_before_kill": before_resume,
        "resumed_answered": report["answered"] + report["failed"],
        "duplicates": sum(n - 1 for n in ids.values() if n > 1),
        "recommitted": recommitted,
        "rerun_commits": snapshots_after - snapshots,
        "resume_s": round(resume_s, 1),
    }


def table_exists(lake: Path, name: str) -> bool:
    opened = Lake.open(lake)
    try:
        return opened.catalog.table_exists(table_name(name))
    finally:
        opened.close()


def per_question_s(rows: list[dict]) -> float:
    return sum(r["seconds"] or 0 for r in rows) / max(len(rows), 1)


def report_markdown(result: dict) -> str:
    r = result
    lines = [
        "# Batch QA benchmark",
        "",
        f"{r['questions']} questions from {r['templates']} templates over the sample lake, gold answers by SQL; "
        f"model {r['model']}, {r['machine']}, lakeplanner {r['code_version']} ({r['date']}). "
        "Each run is `lakeplanner batch` in its own process, timed from start to exit.",
        "",
        "| run | questions | actors x model threads | wall s | questions/min | plan cache hits | correct |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in r["runs"]:
        lines.append(
            f"| {run['name']} | {run['questions']} | {run['actors']} | {run['wall_s']} | {run['questions_per_min']} | "
            f"{run['cache_hits']} | {run['correct']} |"
        )
    k = r["kill_resume"]
    lines += [
        "",
        "| metric | value |",
        "|---|---|",
        f"| questions_per_min_1 | {r['questions_per_min_1']} |",
        f"| questions_per_min_2 | {r['questions_per_min_2']} |",
        f"| scaling_2_over_1 | {r['scaling_2_over_1']} |",
        f"| cache_hit_rate | {r['cache_hit_rate']} |",
        f"| cache_speedup (s/question planned each / with plan reuse) | {r['cache_speedup']} |",
        f"| correct_fraction | {r['correct_fraction']} |",
        f"| kill_resume.duplicates | {k['duplicates']} |",
        f"| kill_resume.missing | {k['missing']} |",
        f"| kill_resume.recommitted | {k['recommitted']} |",
        f"| kill_resume.rerun_commits | {k['rerun_commits']} |",
        "",
        f"Kill and resume: the `planned` run's driver was SIGKILLed {k['killed_after_s']} s after its start "
        f"(a random point after its first commit) with {k['committed_before_kill']} answers committed; the same "
        f"command answered the other {k['resumed_answered']}, and a third run committed nothing.",
        "",
        r["scaling_note"],
        "",
        "Per template (both halves): correct / asked",
        "",
        "| template | correct |",
        "|---|---|",
    ]
    lines += [f"| {t} | {c} |" for t, c in r["per_template"].items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-template", type=int, default=10, help="questions per template (both halves)")
    parser.add_argument("--templates", type=int, default=len(TEMPLATES), help="use the first N templates")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="keep the lake and the runs' tables here")
    parser.add_argument("--no-kill", action="store_true", help="skip the kill-and-resume run")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="lp-batch-"))
    lake = work / "lake"
    if not lake.exists():
        created = Lake.create(lake)
        created.ingest(sample_lake_path())
        created.close()
    opened = Lake.open(lake)
    questions = questions_of(lake_tables(opened), TEMPLATES[: args.templates], args.per_template, args.seed)
    opened.close()
    halves = [questions[0::2], questions[1::2]]
    gold = {q["id"]: q for q in questions}
    runs = []
    for name, half, actors, threads in (("one", halves[0], 1, "2"), ("two", halves[1], 2, "1")):
        forget_plans(lake)
        source = write_jsonl(work / f"{name}.jsonl", half)
        print(f"{name}: {len(half)} questions on {actors} actor(s)", flush=True)
        report, wall = timed_run(
            batch_command(lake, source, name, "--actors", str(actors)), env_with(llm_threads=threads)
        )
        rows = rows_of(lake, name)
        right = sum(matches(r["value"], r["items"], gold[r["question_id"]]["gold"]) for r in rows)
        runs.append(
            {
                "name": name,
                "questions": len(half),
                "actors": f"{actors} x {threads}",
                "wall_s": round(wall, 1),
                "questions_per_min": round(len(half) / wall * 60, 2),
                "cache_hits": report["plan_cache_hits"],
                "correct": right,
                "failed": report["failed"],
                "rows": rows,
            }
        )
    one_rows, two_rows = runs[0]["rows"], runs[1]["rows"]
    first_of_each = list({q["template"]: q for q in reversed(halves[0])}.values())
    source = write_jsonl(work / "planned.jsonl", first_of_each)
    command = batch_command(lake, source, "planned", "--no-plan-reuse", "--commit-every", "2")
    print(f"planned: {len(first_of_each)} questions, each planned afresh, killed and resumed", flush=True)
    if args.no_kill:
        timed_run(command, env_with(llm_threads="2"))
        kill = {"killed": False, "duplicates": 0, "recommitted": 0, "rerun_commits": 0}
        kill |= {"killed_after_s": 0, "committed_before_kill": 0, "resumed_answered": len(first_of_each)}
    else:
        kill = killed_and_resumed(command, env_with(llm_threads="2"), lake, "planned", args.seed)
    planned_rows = rows_of(lake, "planned")
    ids = Counter(r["question_id"] for r in planned_rows)
    kill["missing"] = sum(1 for q in first_of_each if q["id"] not in ids)
    by_template: dict[int, list[bool]] = {}
    for r in one_rows + two_rows:
        q = gold[r["question_id"]]
        by_template.setdefault(q["template"], []).append(matches(r["value"], r["items"], q["gold"]))
    all_rows = one_rows + two_rows
    per_min_1, per_min_2 = runs[0]["questions_per_min"], runs[1]["questions_per_min"]
    result = {
        "questions": len(questions),
        "templates": len(by_template),
        "questions_per_min_1": per_min_1,
        "questions_per_min_2": per_min_2,
        "scaling_2_over_1": round(per_min_2 / per_min_1, 2),
        "scaling_note": "Two answerers on a 2-core machine split the same two cores (one llama.cpp thread each "
        "instead of two for one): token generation is bound by memory bandwidth and prompt evaluation by the "
        "cores, so a second actor adds little; on a cluster each answerer gets its own cores or GPU.",
        "cache_hit_rate": round(sum(r["cache"] is not None for r in all_rows) / len(all_rows), 3),
        "seconds_per_question_reused": round(per_question_s(one_rows), 1),
        "seconds_per_question_planned": round(per_question_s(planned_rows), 1),
        "cache_speedup": round(per_question_s(planned_rows) / per_question_s(one_rows), 2),
        "correct_fraction": round(sum(sum(v) for v in by_template.values()) / len(all_rows), 3),
        "failed": sum(r["error_type"] is not None for r in all_rows),
        "kill_resume": kill,
        "per_template": {TEMPLATES[t].question: f"{sum(v)}/{len(v)}" for t, v in sorted(by_template.items())},
        "runs": [{k: v for k, v in run.items() if k != "rows"} for run in runs],
        "model": one_rows[0]["model"] if one_rows else "",
        "code_version": __version__,
        "machine": f"{os.cpu_count()} cores",
        "date": datetime.now(UTC).date().isoformat(),
        "wrong": [
            {"question": gold[r["question_id"]]["question"], "gold": gold[r["question_id"]]["gold"], "got": r["value"]}
            for r in all_rows
            if not matches(r["value"], r["items"], gold[r["question_id"]]["gold"])
        ],
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "batch.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (RESULTS / "batch.md").write_text(report_markdown(result))
    print(report_markdown(result))


if __name__ == "__main__":
    main()
