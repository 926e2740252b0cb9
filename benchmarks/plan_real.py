"""Planning the sample lake's questions with the real local model: how many plans validate on the
first pass, after the Fixer, after replanning; LLM time per question.

    python benchmarks/plan_real.py                 # default model (Qwen2.5-Coder-1.5B Q4_K_M)
    python benchmarks/plan_real.py --model small   # 0.5B

Writes benchmarks/results/plan_real.md and plan_real.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

from lakeplanner import Lake, sample_lake_path
from lakeplanner.llm import LLMSettings, get_llm
from lakeplanner.plan.planner import Planner
from lakeplanner.plan.validate import validate

ROOT = Path(__file__).resolve().parent.parent


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    questions = json.loads((sample_lake_path() / "questions.json").read_text())
    llm = get_llm(LLMSettings(backend="local", model=args.model))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.create(Path(tmp) / "lake")
        lake.ingest(sample_lake_path())
        planner = Planner(lake, llm, use_cache=False)
        first_pass = []
        original = planner.generator

        def recording_generator():
            generator = original()
            generate = generator.generate

            def generate_and_record(question, feedback=(), tables=None):
                plan = generate(question, feedback, tables)
                if not feedback:
                    first_pass.append(not validate(plan, planner.schema))
                return plan

            generator.generate = generate_and_record
            return generator

        planner.generator = recording_generator
        for q in questions:
            started = time.perf_counter()
            result = planner.plan_question(q["question"])
            seconds = time.perf_counter() - started
            row = {
                "question": q["question"],
                "kind": q["kind"],
                "first_pass_valid": first_pass[-1] if first_pass else False,
                "valid": result.ok,
                "edits": result.edits,
                "replans": result.replans,
                "findings": [f"{f.code.value} {f.message}" for f in result.findings],
                "seconds": round(seconds, 1),
                "plan": [n.model_dump(exclude_none=True) for n in result.plan.nodes],
            }
            rows.append(row)
            log(f"{q['kind']:<24} valid={row['valid']} first={row['first_pass_valid']} {seconds:.0f}s")
        lake.close()
    n = len(rows)
    summary = {
        "model": llm.backend.model_name,
        "questions": n,
        "first_pass_valid": round(sum(r["first_pass_valid"] for r in rows) / n, 3),
        "valid_after_repair": round(sum(r["valid"] for r in rows) / n, 3),
        "fixer_edits": sum(len(r["edits"]) for r in rows),
        "replans": sum(r["replans"] for r in rows),
        "seconds_p50": sorted(r["seconds"] for r in rows)[n // 2],
        "command": "python benchmarks/plan_real.py " + shlex.join(sys.argv[1:]),
        "machine": f"{platform.machine()}, {platform.system()}",
    }
    out = ROOT / "benchmarks" / "results"
    (out / "plan_real.json").write_text(json.dumps({"summary": summary, "questions": rows}, indent=2) + "\n")
    lines = [
        "# Planning the sample questions with the real model",
        "",
        f"`{summary['command']}` — {summary['model']}, {summary['machine']}",
        "",
        "| metric | value |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in summary.items() if k not in ("command", "machine", "model")],
        "",
        "| kind | first pass valid | valid | edits | replans | s | nodes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        nodes = "; ".join(f"{n['label']} {n['tool']}:{n['source']}" for n in r["plan"])
        lines.append(
            f"| {r['kind']} | {r['first_pass_valid']} | {r['valid']} | {len(r['edits'])} | {r['replans']} "
            f"| {r['seconds']} | {nodes} |"
        )
    (out / "plan_real.md").write_text("\n".join(lines) + "\n")
    log(json.dumps(summary))


if __name__ == "__main__":
    main()
