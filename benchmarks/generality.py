"""Generality: does lakeplanner work on a lake of a domain it was not built on?

    python benchmarks/generality.py --label after                   # structure + both lakes' questions
    python benchmarks/generality.py --label after --skip-llm        # structure figures only (a minute)
    python benchmarks/generality.py --label before --lakes logistics
    python benchmarks/generality.py --report                        # generality.md and .json from the runs

The logistics lake (lakeplanner/sample_lake_logistics, made by tests/data/make_logistics_lake.py)
ships `structure.json`, what its generator built: the foreign keys, the document -> row citations
(with offsets) and id-like distractor tokens. Structure figures compare the ingested contract with it:
- fk_found / fk_expected: expected keys the contract holds (source, column, target, target column);
  fk_extra: keys it proposes that are not expected.
- links_found / links_expected: (document, table, key) citations recorded at ingest, over those the
  generator wrote (a document naming itself by its id column is a link, not a citation, and is left
  out); false_links: recorded citations the generator did not write.
Questions (questions.json of both lakes) are asked with the real local model, serially, without the
plan cache; a right answer is not abstained and holds every `expect` value (numbers compared as
numbers, so '334733' matches '334,733'); an unanswerable question is right when abstained.
Each run appends to benchmarks/results/runs/generality-<label>.jsonl and skips questions already
there at the same commit, so a run resumes. `--label before` is meant to run from a worktree of the
code before a change, with this script and the lake copied in.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lakeplanner import Lake
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm import LLMSettings, get_llm

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "benchmarks"
RUNS = HERE / "results" / "runs"
LAKES = {"logistics": ROOT / "lakeplanner" / "sample_lake_logistics", "sample": ROOT / "lakeplanner" / "sample_lake"}
CONFIDENT = 0.9
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()


def as_number(text: str) -> float | None:
    cleaned = text.replace(",", "").rstrip("%").strip()
    try:
        return float(cleaned)
    except ValueError:
        return None


def holds(expected: str, text: str) -> bool:
    """`expected` is in `text`: as a number among its numbers (to the expected precision), else as words."""
    number = as_number(expected)
    if number is None:
        return expected.casefold() in text.casefold()
    decimals = len(expected.split(".")[1]) if "." in expected else 0
    for found in _NUMBER.findall(text):
        value = as_number(found)
        if value is not None and round(abs(value), decimals) == round(abs(number), decimals):
            return True
    return False


def is_right(answer_text: str, abstained: bool, expect: list[str]) -> bool:
    if not expect:
        return abstained
    return not abstained and all(holds(e, answer_text) for e in expect)


# ---------------------------------------------------------------- structure


def expected_citations(structure: dict) -> set[tuple[str, str, str]]:
    naming = {(c["table"], c["column"]) for c in structure.get("document_id_columns", [])}
    return {
        (Path(link["document"]).stem, link["table"], link["value"])
        for link in structure["document_links"]
        if (link["table"], link["column"]) not in naming
    }


def recorded_citations(lake: Lake) -> set[tuple[str, str, str]]:
    from lakeplanner.ingest.segments import SEGMENTS_TABLE

    segments = lake.catalog.load_table(SEGMENTS_TABLE).scan().to_arrow()
    cites = segments.filter(pc.equal(segments.column("level"), "citation")).to_pylist()
    return {(row["container"], json.loads(row["meta"])["table"], row["content"]) for row in cites}


def structure_figures(lake: Lake, structure: dict) -> dict:
    expected = {(k["source"], k["column"], k["target"], k["target_column"]) for k in structure["foreign_keys"]}
    proposed = {(k.source, k.column, k.target, k.target_column) for k in lake.contract.foreign_keys}
    cites_expected, cites_found = expected_citations(structure), recorded_citations(lake)
    return {
        "fk_expected": len(expected),
        "fk_found": len(expected & proposed),
        "fk_extra": sorted("{}.{} -> {}.{}".format(*k) for k in proposed - expected),
        "fk_missed": sorted("{}.{} -> {}.{}".format(*k) for k in expected - proposed),
        "links_expected": len(cites_expected),
        "links_found": len(cites_expected & cites_found),
        "false_links": len(cites_found - cites_expected),
        "false_link_examples": sorted(" ".join(c) for c in cites_found - cites_expected)[:10],
        "contract_links": [
            f"{lk.source}.{lk.column} ~ {lk.collection} ({lk.match}, {lk.documents} docs)" for lk in lake.contract.links
        ],
    }


# ---------------------------------------------------------------- questions


def run_file(label: str) -> Path:
    return RUNS / f"generality-{label}.jsonl"


def recorded(path: Path, at: str) -> set[tuple[str, str]]:
    if not path.exists():
        return set()
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {(r["lake"], r["question"]) for r in rows if r.get("commit") == at and "question" in r}


def ask_all(lake: Lake, name: str, llm, path: Path, at: str, limit: int | None) -> None:
    questions = json.loads((LAKES[name] / "questions.json").read_text())[:limit]
    done = recorded(path, at)
    for q in questions:
        if (name, q["question"]) in done:
            continue
        started = time.perf_counter()
        try:
            answer = lake.ask(q["question"], llm=llm, settings=ExecSettings(mode="serial"), use_cache=False)
            text = f"{answer.value or ''} {answer.text}"
            row = {
                "value": answer.value,
                "text": answer.text,
                "abstained": answer.abstained,
                "reason": answer.reason,
                "confidence": answer.confidence,
                "trace_id": answer.trace_id,
                "right": is_right(text, answer.abstained, q.get("expect", [])),
            }
        except Exception as e:  # one question's crash is its record, not the run's end
            row = {"error": f"{type(e).__name__}: {e}", "abstained": True, "confidence": 0.0, "right": False}
        row |= {
            "lake": name,
            "question": q["question"],
            "kind": q["kind"],
            "expect": q.get("expect", []),
            "seconds": round(time.perf_counter() - started, 1),
            "commit": at,
        }
        append(path, row)
        log(f"{name} {q['kind']:<20} right={row['right']} conf={row['confidence']:.2f} {row.get('value')!r}")


def append(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(record, default=str) + "\n")


def run(label: str, lakes: list[str], skip_llm: bool, limit: int | None) -> None:
    at, path = commit(), run_file(label)
    llm = None if skip_llm else get_llm(LLMSettings(backend="local", model="default"))
    with tempfile.TemporaryDirectory() as work:
        for name in lakes:
            lake = Lake.create(Path(work) / name)
            report = lake.ingest(LAKES[name])
            log(f"{name}: ingested, {len(report.bad_files)} bad files")
            if name == "logistics":
                figures = structure_figures(lake, json.loads((LAKES[name] / "structure.json").read_text()))
                append(path, {"lake": name, "structure": figures, "commit": at})
                log(f"structure: {json.dumps({k: v for k, v in figures.items() if not isinstance(v, list)})}")
            if llm is not None:
                lake.release_vectors()
                ask_all(lake, name, llm, path, at, limit)
            lake.close()


# ---------------------------------------------------------------- report


def latest(label: str) -> tuple[dict, list[dict]]:
    """The last structure record and the last answer to each question, of one run file."""
    path = run_file(label)
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    structure = next((r["structure"] | {"commit": r["commit"]} for r in reversed(rows) if "structure" in r), {})
    answers = {(r["lake"], r["question"]): r for r in rows if "question" in r}
    return structure, list(answers.values())


def by_kind(answers: list[dict], lake: str) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for a in answers:
        if a["lake"] == lake:
            out.setdefault(a["kind"], [0, 0])
            out[a["kind"]][0] += a["right"]
            out[a["kind"]][1] += 1
    return out


def calibration(answers: list[dict]) -> dict:
    wrong = [a for a in answers if not a["right"]]
    right = [a for a in answers if a["right"]]
    return {
        "confident_wrong": sum(a["confidence"] >= CONFIDENT and not a["abstained"] for a in wrong),
        "right_below_half": sum(a["confidence"] < 0.5 for a in right if not a["abstained"]),
        "unanswerable_answered": sum(not a["abstained"] for a in answers if a["kind"] == "unanswerable"),
    }


def report(labels: list[str]) -> None:
    results = {}
    for label in labels:
        structure, answers = latest(label)
        kinds = by_kind(answers, "logistics")
        results[label] = {
            "structure": structure,
            "new_lake_right": sum(v[0] for v in kinds.values()),
            "new_lake_total": sum(v[1] for v in kinds.values()),
            "new_lake_by_kind": kinds,
            "sample_lake_right": sum(v[0] for v in by_kind(answers, "sample").values()),
            "sample_lake_total": sum(v[1] for v in by_kind(answers, "sample").values()),
            "commits": sorted({a["commit"] for a in answers}),
            **calibration(answers),
        }
    cache = HERE / "results" / "plan_cache_logistics.json"
    if cache.exists():  # benchmarks/plan_cache_logistics.py: the cache alone, hand-written plans
        figures = json.loads(cache.read_text())
        results["plan_cache"] = {k: figures[k] for k in ("cache_hit_rate_new_lake", "cache_false_reuse_new_lake")}
    (HERE / "results" / "generality.json").write_text(json.dumps(results, indent=2) + "\n")
    write_markdown(HERE / "results" / "generality.md", {k: v for k, v in results.items() if k != "plan_cache"})
    log("wrote benchmarks/results/generality.md and generality.json")


def write_markdown(path: Path, results: dict) -> None:
    labels = list(results)
    lines = [
        "# Generality: a lake of a new domain (logistics)",
        "",
        "Made by `python benchmarks/generality.py` (see its docstring); real local model "
        "(Qwen2.5-Coder-1.5B Q4_K_M), serial, no plan cache, 2 CPU cores.",
        "",
        "| figure | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
    ]

    def row(name: str, values: list) -> None:
        lines.append(f"| {name} | " + " | ".join(str(v) for v in values) + " |")

    def fraction(r: dict, part: str, whole: str, within: str | None = None) -> str:
        held = r[within] if within else r
        return f"{held.get(part, '-')} / {held.get(whole, '-')}" if held.get(whole) else "not run"

    row("commits", [", ".join(results[x]["commits"] or [results[x]["structure"].get("commit", "-")]) for x in labels])
    row("foreign keys found / expected", [fraction(results[x], "fk_found", "fk_expected", "structure") for x in labels])
    row("foreign keys proposed beyond those", [len(results[x]["structure"].get("fk_extra", [])) for x in labels])
    row(
        "citations found / expected",
        [fraction(results[x], "links_found", "links_expected", "structure") for x in labels],
    )
    row("false citations", [results[x]["structure"].get("false_links", "-") for x in labels])
    row("new lake right / asked", [fraction(results[x], "new_lake_right", "new_lake_total") for x in labels])
    row("sample lake right / asked", [fraction(results[x], "sample_lake_right", "sample_lake_total") for x in labels])
    row("wrong answers with confidence >= 0.9", [results[x]["confident_wrong"] for x in labels])
    row("right answers with confidence < 0.5", [results[x]["right_below_half"] for x in labels])
    row("unanswerable questions answered", [results[x]["unanswerable_answered"] for x in labels])
    kinds = sorted({k for x in labels for k in results[x]["new_lake_by_kind"]})
    if kinds:
        lines += ["", "## New lake, right / asked by kind", "", "| kind | " + " | ".join(labels) + " |"]
        lines.append("|---|" + "---|" * len(labels))
        for kind in kinds:
            row(kind, ["{} / {}".format(*results[x]["new_lake_by_kind"].get(kind, ["-", "-"])) for x in labels])
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", default="after", help="names the run file: generality-<label>.jsonl")
    parser.add_argument("--lakes", default="logistics,sample", help="comma-separated: logistics, sample")
    parser.add_argument("--skip-llm", action="store_true", help="structure figures only")
    parser.add_argument("--limit", type=int, default=None, help="first N questions of each lake")
    parser.add_argument("--report", nargs="?", const="before,after", help="labels to report, e.g. before,after")
    args = parser.parse_args()
    if args.report:
        report(args.report.split(","))
        return
    run(args.label, args.lakes.split(","), args.skip_llm, args.limit)


if __name__ == "__main__":
    main()
