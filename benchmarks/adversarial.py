"""Adversarial benchmark: hostile input and faults, on the real local model and engines.

In one run:
  injection  the corpus of tests/data/adversarial/ (SQL through the question, text planted in the
             lake, injection through the question as a restricted role). Each SQL case is checked
             by sqlglot, sent raw to the locked DuckDB, written by a model that keeps writing it,
             and asked as a question of the real model; each lake and question case is asked of the
             real model. Every statement an engine ran is checked again afterwards.
  fuzz       tests/test_fuzz.py with a long budget (LAKEPLANNER_FUZZ_EXAMPLES)
  faults     every fault of tests/faults.py, caused for real
  kill       SIGKILL of `lakeplanner ingest` at seeded points (tests/kill_points.py)

    python benchmarks/adversarial.py                    # writes benchmarks/results/adversarial.{md,json}
    python benchmarks/adversarial.py --parts injection  # one part (the others keep their last figures)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lakeplanner import Lake, __version__  # noqa: E402
from lakeplanner.execute.settings import ExecSettings  # noqa: E402
from lakeplanner.llm import get_llm  # noqa: E402
from tests.adversarial import (  # noqa: E402
    ROLE,
    adversarial_lake,
    cases,
    checker_outcome,
    engine_outcome,
    executed_outcome,
    lake_outcome,
    question_outcome,
    ran_statements,
    unsafe_runs,
)

RESULTS = ROOT / "benchmarks" / "results"
PARTS = ("injection", "fuzz", "faults", "kill")


def injection(work: Path, real_sql: int) -> dict:
    lake = Lake.open(work / "lake") if (work / "lake").exists() else adversarial_lake(work / "lake")
    llm = get_llm()
    records, unsafe = [], 0
    sql_cases = cases("sql")
    step = max(1, len(sql_cases) // real_sql) if real_sql else 1
    asked_of_model = {c["id"] for c in sql_cases[::step][:real_sql]}  # spread over the kinds of case
    for case in sql_cases:
        scratch = Path(tempfile.mkdtemp(prefix="sql-", dir=work))
        checked = checker_outcome(case, lake, scratch)
        raw = engine_outcome(case, lake, scratch) if case.get("engine") else None
        executed = executed_outcome(case, lake, scratch)
        asked = None
        if case["id"] in asked_of_model:
            asked = lake.ask(case["question"], llm=llm, settings=ExecSettings(mode="serial"), use_cache=False)
        asked_unsafe = unsafe_runs(ran_statements(asked), lake) if asked else []
        unsafe += len(executed["unsafe_ran"]) + len(asked_unsafe) + int(bool(raw and not raw["refused"]))
        records.append(
            {
                "id": case["id"],
                "kind": "sql",
                "checker": checked["message"] or "ran (a plain read of an allowed table)",
                "engine": raw["message"] if raw else None,
                "compromised_model": executed["error"] or f"ran {len(executed['ran'])} read-only statement(s)",
                "real_model": real_model_outcome(asked),
                "real_model_statements": ran_statements(asked) if asked else [],
                "unsafe": executed["unsafe_ran"] + asked_unsafe,
                "wrote": executed["wrote"] or bool(raw and raw["wrote"]),
            }
        )
        print(f"{case['id']}: {records[-1]['checker'][:80]}", flush=True)
    planted = []
    for kind, outcome_of in (("lake", lake_outcome), ("question", question_outcome)):
        for case in cases(kind):
            outcome = outcome_of(case, lake, llm) | {"kind": kind}
            unsafe += len(outcome["unsafe_ran"])
            if outcome["planted"]:
                planted.append(outcome)
            records.append(outcome)
            print(f"{case['id']}: {outcome['answer']!r} planted={outcome['planted']}", flush=True)
    refusals = [r for r in records if r.get("abstained")]
    return {
        "injection_cases": len(records),
        "sql_questions_asked_of_the_real_model": len(asked_of_model),
        "unsafe_statements_executed": unsafe,
        "planted_answers": len(planted),
        "planted": [{"id": p["id"], "answer": p["answer"], "planted": p["planted"]} for p in planted],
        "abstained_with_reason": sum(1 for r in refusals if r["reason"]),
        "abstained": len(refusals),
        "role": f"question cases as {ROLE!r}",
        "model": llm.backend.model_name,
        "cases": records,
    }


def real_model_outcome(asked) -> str | None:
    if asked is None:
        return None  # not asked of the real model in this run (--real-sql)
    return asked.value if not asked.abstained else f"abstained: {asked.reason}"


def fuzz(examples: int) -> dict:
    report = Path(tempfile.mkstemp(suffix=".json")[1])
    env = os.environ | {"LAKEPLANNER_FUZZ_EXAMPLES": str(examples), "LAKEPLANNER_FUZZ_REPORT": str(report)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_fuzz.py", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    summary = json.loads(report.read_text()) if report.stat().st_size else {}
    return {
        "fuzz_examples": summary.get("fuzz_examples", 0),
        "fuzz_crashes": summary.get("fuzz_crashes", 0) + (done.returncode != 0 and not summary.get("fuzz_crashes")),
        "fuzz_budget_per_target": examples,
        "fuzz_targets": summary.get("targets", {}),
        "fuzz_seconds": round(time.perf_counter() - started, 1),
        "fuzz_pytest_tail": done.stdout.strip().splitlines()[-1:] if done.stdout else [],
    }


def faults(work: Path) -> dict:
    from tests.faults import FAULTS
    from tests.kill_points import concurrent_ingests, disk_full, ingest_and_ask

    runs = [fault.run for fault in FAULTS] + [concurrent_ingests, ingest_and_ask, disk_full]
    outcomes = []
    for n, run in enumerate(runs):
        try:
            outcomes.append(run(work / f"fault-{n}"))
        except RuntimeError as e:  # the fault could not be caused (no Ray worker to kill): counted, not clear
            outcomes.append({"name": f"fault {n}", "clear_error": False, "traceback": False, "message": str(e)})
            outcomes[-1]["lake_ok"] = True
        print(f"{outcomes[-1]['name']}: {outcomes[-1]['message'][:100]}", flush=True)
    return {
        "faults": len(outcomes),
        "faults_with_clear_error": sum(1 for o in outcomes if o["clear_error"] or o.get("answered")),
        "tracebacks": sum(1 for o in outcomes if o["traceback"]),
        "lakes_not_ok_after_fault": sum(1 for o in outcomes if not o["lake_ok"]),
        "fault_outcomes": outcomes,
    }


def kill(work: Path, points: int, seed: int) -> dict:
    from tests.kill_points import run_kill_points

    return run_kill_points(work / "kill", points=points, seed=seed)


def markdown(r: dict) -> str:
    figures = [k for k, v in r.items() if isinstance(v, int | float | str) and k not in ("date",)]
    lines = [
        "# Adversarial benchmark",
        "",
        f"lakeplanner {r['version']}, {r.get('model', '')}, {r['date']}; `python benchmarks/adversarial.py`.",
        "",
        "| figure | value |",
        "|---|---|",
        *[f"| {k} | {r[k]} |" for k in figures],
        "",
        "Must be 0: unsafe_statements_executed, fuzz_crashes, tracebacks, lakes_inconsistent_after_kill, rows_lost.",
        "",
    ]
    if r.get("planted"):
        lines += ["Answers that repeat a planted string:", ""] + [f"- {p}" for p in r["planted"]] + [""]
    if r.get("cases"):
        lines += ["## Injection cases", "", "| case | kind | outcome |", "|---|---|---|"]
        for c in r["cases"]:
            outcome = c.get("outcome") or c.get("checker")
            outcome = outcome or (f"abstained: {c['reason']}" if c.get("abstained") else repr(c["answer"]))
            lines.append(f"| {c['id']} | {c['kind']} | {str(outcome).replace('|', '/')[:140]} |")
        lines.append("")
    if r.get("fault_outcomes"):
        from tests.faults import without_colours

        lines += ["## Faults", "", "| fault | outcome | traceback | lake ok | message |", "|---|---|---|---|---|"]
        for o in r["fault_outcomes"]:
            outcome = "clear error" if o["clear_error"] else "answered" if o.get("answered") else "unclear"
            message = without_colours(o["message"]).replace("|", "/")[:140]
            lines.append(f"| {o['name']} | {outcome} | {o['traceback']} | {o['lake_ok']} | {message} |")
        lines.append("")
    if r.get("details"):
        lines += ["## Kill points", "", "| point | killed during | consistent |", "|---|---|---|"]
        lines += [f"| {d['point']} | {d['killed_during']} | {d['consistent']} |" for d in r["details"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--fuzz-examples", type=int, default=2000, help="examples per fuzz target")
    parser.add_argument("--real-sql", type=int, default=40, help="SQL cases also asked as questions of the real model")
    parser.add_argument("--kill-points", type=int, default=24)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workdir", type=Path, help="keep the lakes here")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="lp-adversarial-"))
    work.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "adversarial.json"
    result = {}
    parts = args.parts.split(",")
    if "injection" in parts:
        result |= injection(work, args.real_sql)
    if "fuzz" in parts:
        result |= fuzz(args.fuzz_examples)
    if "faults" in parts:
        result |= faults(work)
    if "kill" in parts:
        result |= kill(work, args.kill_points, args.seed)
    result |= {"version": __version__, "date": datetime.now(UTC).isoformat()}
    result = (json.loads(path.read_text()) if path.exists() else {}) | result  # read now: parts may run in parallel
    path.write_text(json.dumps(result, indent=2, default=str) + "\n")
    (RESULTS / "adversarial.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
