"""The LLM plan audit (seed 000 §3.3, `LAKEPLANNER_PLAN_AUDIT=1`): does it pay on the sample lakes?

    python benchmarks/generality.py --label after                              # audit off (the default)
    LAKEPLANNER_PLAN_AUDIT=1 python benchmarks/generality.py --label audit     # audit on
    python benchmarks/audit.py                                                 # results/audit.md and .json

Both runs ask the 43 questions of the two sample lakes (benchmarks/generality.py: real local model,
serial, no plan cache) at one commit; this script compares their answers question by question: right
with and without the audit, seconds per question, and the questions the audit changed.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = HERE / "results" / "runs"


def answers(label: str, commit: str | None) -> dict[tuple[str, str], dict]:
    rows = [json.loads(line) for line in (RUNS / f"generality-{label}.jsonl").read_text().splitlines() if line]
    at = commit or next(r["commit"] for r in reversed(rows) if "question" in r)
    return {(r["lake"], r["question"]): r for r in rows if "question" in r and r["commit"] == at}


def summary(found: dict[tuple[str, str], dict]) -> dict:
    seconds = [r["seconds"] for r in found.values()]
    return {
        "asked": len(found),
        "right": sum(r["right"] for r in found.values()),
        "right_by_lake": {
            lake: sum(r["right"] for (name, _), r in found.items() if name == lake)
            for lake in sorted({name for name, _ in found})
        },
        "seconds_mean": round(statistics.mean(seconds), 1) if seconds else 0.0,
        "seconds_p50": round(statistics.median(seconds), 1) if seconds else 0.0,
        "seconds_total": round(sum(seconds), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", help="the commit both runs ran at (default: the audit run's last)")
    args = parser.parse_args()
    on = answers("audit", args.commit)
    commit = next(iter(on.values()))["commit"]
    off = answers("after", commit)
    shared = sorted(set(on) & set(off))
    changed = [
        {"lake": lake, "question": q, "off": off[(lake, q)]["right"], "on": on[(lake, q)]["right"]}
        for lake, q in shared
        if off[(lake, q)]["right"] != on[(lake, q)]["right"]
    ]
    figures = {
        "commit": commit,
        "off": summary({k: off[k] for k in shared}),
        "on": summary({k: on[k] for k in shared}),
        "changed": changed,
    }
    (HERE / "results" / "audit.json").write_text(json.dumps(figures, indent=2) + "\n")
    lines = [
        "# The LLM plan audit on the sample lakes",
        "",
        f"`python benchmarks/audit.py` over two runs of benchmarks/generality.py at {commit} (real "
        "Qwen2.5-Coder-1.5B Q4_K_M, serial, no plan cache, 2 CPU cores), audit off and on.",
        "",
        "| figure | audit off | audit on |",
        "|---|---:|---:|",
    ]
    for key in ("asked", "right", "seconds_mean", "seconds_p50", "seconds_total"):
        lines.append(f"| {key} | {figures['off'][key]} | {figures['on'][key]} |")
    for lake in figures["off"]["right_by_lake"]:
        lines.append(
            f"| right on {lake} | {figures['off']['right_by_lake'][lake]} | {figures['on']['right_by_lake'][lake]} |"
        )
    lines += ["", "Questions the audit changed (right off -> right on):", ""]
    lines += [f"- {c['lake']}: {c['off']} -> {c['on']}: {c['question']}" for c in changed] or ["- none"]
    (HERE / "results" / "audit.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
