"""Calibration: does an answer's confidence say how often such answers are right?

    python benchmarks/calibration.py          # results/calibration.md and .json from the qa runs' traces

For every answered question of the lakeplanner QA runs (benchmarks/results/runs/<dataset>-lakeplanner.jsonl,
and runs/partial/ where a rerun is under way) whose trace its lake still holds (benchmarks/.work/qa), it
reads the path the answer took from the trace and reports, per dataset and over all: right answers by
confidence bucket, the Brier score, and the right-rate of answers with and without each path signal (a
signal that separates right from wrong is what confidence should weigh). No model is run.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lakeplanner.lineage.tracing import attribute_values, read_spans

HERE = Path(__file__).resolve().parent
RUNS, WORK = HERE / "results" / "runs", HERE / ".work" / "qa"
DATASETS = ("tatqa", "tatqa-holdout", "hotpotqa")
BUCKETS = ((0.0, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01))
SIGNALS = {
    "planned by the LLM": "the plan came from a planning call, not a rule or template",
    "repaired": "a SQL statement rewritten after an error or an empty result, a DataOps replan, or a repaired answer",
    "fallback search": "no planned step answered; the question was searched as it is",
    "read documents": "an exposed step searched documents",
    "values per named year": "the engine read one value per named year for the arithmetic template",
}


def records(dataset: str) -> list[dict]:
    """The dataset's lakeplanner records, of its run and of a partial rerun kept beside it (runs/partial),
    one per question: the rerun's where it got that far."""
    paths = [RUNS / f"{dataset}-lakeplanner.jsonl", RUNS / "partial" / f"{dataset}-lakeplanner.jsonl"]
    latest = {}
    for path in paths:
        for line in path.read_text().splitlines() if path.exists() else []:
            if line:
                record = json.loads(line)
                latest[record["uid"]] = record
    return list(latest.values())


def lakes_of(dataset: str) -> dict[str, Path]:
    """trace id -> the lake whose traces hold it (one lake per question or per table)."""
    found = {}
    for lake in sorted((WORK / dataset).glob("*/lake")):
        runs = lake / "traces" / "runs"
        found |= {run.stem: lake for run in runs.glob("*.json")} if runs.exists() else {}
    return found


def path_signals(spans: list[dict]) -> dict[str, bool]:
    """The path signals of one answer, from its trace."""
    attributes = [(s["name"], attribute_values(s)) for s in spans]
    purposes = Counter(a.get("lakeplanner.llm.purpose") for name, a in attributes if name.startswith("chat"))
    attempts = [int(a["lakeplanner.sql.attempt"]) for name, a in attributes if a.get("lakeplanner.sql.attempt")]
    plans = [a for name, a in attributes if name == "lakeplanner.plan"]
    replans = sum(int(a.get("lakeplanner.dataops.replans") or 0) for a in plans)
    nodes = [(name, a) for name, a in attributes if name.startswith("node ")]
    return {
        "planned by the LLM": purposes["plan"] > 0,
        "repaired": max(attempts, default=1) > 1 or replans > 0 or purposes["synthesize.repair"] > 0,
        "fallback search": any("fallback search" in name for name, _ in nodes),
        "read documents": any(a.get("lakeplanner.node.tool") == "vector" for _, a in nodes),
        "values per named year": any(a.get("lakeplanner.sql.purpose") for _, a in attributes),
    }


def answered(dataset: str) -> list[dict]:
    """{right, confidence, signals} of each answered question whose trace is kept."""
    lakes = lakes_of(dataset)
    out = []
    for r in records(dataset):
        if r["abstained"] or r.get("error") or r.get("confidence") is None or not r.get("trace"):
            continue
        lake = lakes.get(r["trace"][0])
        spans = read_spans(lake, r["trace"][0]) if lake else []
        if spans:
            out.append({"right": r["em"] == 1, "confidence": r["confidence"], "signals": path_signals(spans)})
    return out


def figures(answers: list[dict]) -> dict:
    n = len(answers)
    buckets = []
    for low, high in BUCKETS:
        inside = [a for a in answers if low <= a["confidence"] < high]
        buckets.append(
            {
                "confidence": f"{low:.1f}-{min(high, 1.0):.1f}",
                "answers": len(inside),
                "right_rate": round(sum(a["right"] for a in inside) / len(inside), 2) if inside else None,
            }
        )
    signals = {}
    for name in SIGNALS:
        on = [a["right"] for a in answers if a["signals"][name]]
        off = [a["right"] for a in answers if not a["signals"][name]]
        signals[name] = {
            "with": len(on),
            "right_with": round(sum(on) / len(on), 2) if on else None,
            "without": len(off),
            "right_without": round(sum(off) / len(off), 2) if off else None,
        }
    return {
        "answers": n,
        "right": sum(a["right"] for a in answers),
        "brier": round(sum((a["confidence"] - a["right"]) ** 2 for a in answers) / n, 3) if n else None,
        "confident_wrong": sum(a["confidence"] >= 0.9 and not a["right"] for a in answers),
        "right_below_half": sum(a["confidence"] < 0.5 and a["right"] for a in answers),
        "buckets": buckets,
        "signals": signals,
    }


def markdown(result: dict) -> str:
    lines = [
        "# Calibration: confidence against right and wrong answers",
        "",
        "Made by `python benchmarks/calibration.py` from the lakeplanner QA runs (`results/runs/`) and the traces",
        "their lakes keep (answered questions only; EM decides right). No model is run.",
        "",
        "| set | answers | right | Brier | wrong at >= 0.9 | right below 0.5 |",
        "|---|---|---|---|---|---|",
    ]
    for name, f in result["by_set"].items():
        row = [name, f["answers"], f["right"], f["brier"], f["confident_wrong"], f["right_below_half"]]
        lines.append("| " + " | ".join(str(x) for x in row) + " |")
    every = result["by_set"]["all"]
    lines += ["", "Right-rate by confidence (all sets):", "", "| confidence | answers | right-rate |", "|---|---|---|"]
    lines += [f"| {b['confidence']} | {b['answers']} | {b['right_rate']} |" for b in every["buckets"]]
    lines += [
        "",
        "Right-rate with and without each path signal (all sets):",
        "",
        "| signal | with | right-rate with | without | right-rate without | what it is |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in every["signals"].items():
        row = [name, s["with"], s["right_with"], s["without"], s["right_without"], SIGNALS[name]]
        lines.append("| " + " | ".join(str(x) for x in row) + " |")
    return "\n".join(lines) + "\n"


def report() -> dict:
    by_set = {dataset: answered(dataset) for dataset in DATASETS}
    by_set = {name: answers for name, answers in by_set.items() if answers}
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "by_set": {name: figures(answers) for name, answers in by_set.items()}
        | {"all": figures([a for answers in by_set.values() for a in answers])},
    }
    (HERE / "results" / "calibration.json").write_text(json.dumps(result, indent=2) + "\n")
    (HERE / "results" / "calibration.md").write_text(markdown(result))
    return result


if __name__ == "__main__":
    print(markdown(report()))
