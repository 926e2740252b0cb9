"""Spider (train databases): lakeplanner against plain text-to-SQL, a lake per database and one lake of all.

    python benchmarks/spider.py --label main                          # every question, both methods, both modes
    python benchmarks/spider.py --label main --dbs browser_web --limit 2
    python benchmarks/spider.py --modes per_db --methods baseline     # the baseline alone
    python benchmarks/spider.py --ingest-only --modes per_db          # build the per-database lakes, no model
    python benchmarks/spider.py --report --label main                 # spider.md and spider.json from the run file

Data (`--data`, default ../shared/data/spider beside the repository; its README.md defines it): 30 Spider
train databases as folders of CSV tables (`lakes/<db_id>/`) and 360 questions (`questions.json`), 12 per
database, with a gold answer computed from Spider's gold SQL. These are training databases: a score here is a
development figure, not a measure of generality.

What it measures (issue "Any lake, round 2"), with the same local model (`get_llm(LLMSettings())`, so the
LAKEPLANNER_LLM_* variables pick it) and no plan cache:
- per_db: each database ingested as its own lake, each of its questions asked two ways:
  - lakeplanner: the product, `Lake.ask` (serial), as benchmarks/generality.py asks; its answer text is its
    items (or value) followed by its answer sentence.
  - baseline: plain text-to-SQL, one `LLM.complete` call (the interface's JSON re-asks included) for a
    `SqlDraft`, prompted with the lake's tables, each with its columns and contract types (no keys, examples
    or values), and the question; the statement runs with `lake.sql`. Its answer text is every cell of the
    result's first ANSWER_ROWS distinct rows (cells " | ", rows "; "): the gold is the first column of a
    multi-column result (README, "Gold and match"), and a statement may put that column anywhere; the row cap
    keeps a statement that returns a whole table from holding every gold by chance (a gold has at most 20
    rows). A statement that fails or is refused gives no answer: abstained, wrong, its error recorded.
- one_lake: all 30 databases ingested as one lake (always all 30; `--dbs` and `--limit` choose the
  questions), the same questions, lakeplanner only (a baseline in `--methods` is not asked there). Each
  database is a folder of the one raw folder; ingest names a table by its file's stem, and by folder and
  stem where another folder holds the same stem (the databases share 9: customers in 4, addresses in 3;
  station, staff, party, member, employees, documents and department in 2), e.g. `store_1_customers`.
- halves: the first 15 db_ids in sorted order are the tuning half, the other 15 the held-out half.
- prompt_chars: characters of every prompt sent to the model for the question (all calls), prompt_tokens
  the same in tokens.

A right answer is not abstained and holds every distinct gold value (`is_right`): for match "number" as a
number among the answer's numbers within 1% (relative), so '334733' matches '334,733'; for "contains" as a
case-insensitive substring. Order is not scored.

Each run appends one record per (method, mode, question) to benchmarks/results/runs/spider-<label>.jsonl
and skips those already there at the same commit, so a killed run resumes; the lakes are kept in
`--workdir` (default /tmp/lakeplanner-spider) and reused. `--report` scores the latest record of each.

Spider 1.0, Tao Yu, Rui Zhang, Kai Yang, Michihiro Yasunaga, Dongxu Wang, Zifan Li, James Ma, Irene Li,
Qingning Yao, Shanelle Roman, Zilin Zhang and Dragomir Radev (EMNLP 2018), https://yale-lily.github.io/spider,
licensed CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generality import append, commit, log
from benchmarks.qabench.methods import CountingBackend, answer_outcome, counting
from lakeplanner import Lake
from lakeplanner.contract.models import Contract, SourceKind
from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.execute.sql.prompt import SqlDraft
from lakeplanner.ingest.readers import PROVENANCE_FILE
from lakeplanner.llm import LLM, LLMSettings, Message, get_llm, system, user

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "benchmarks"
RUNS = HERE / "results" / "runs"
DATA = ROOT.parent / "shared" / "data" / "spider"
WORKDIR = Path("/tmp/lakeplanner-spider")
METHODS, MODES = ("lakeplanner", "baseline"), ("per_db", "one_lake")
TUNE_DBS = 15
ANSWER_ROWS = 20
TOLERANCE = 0.01
ATTRIBUTION = (
    "Spider 1.0, Tao Yu, Rui Zhang, Kai Yang, Michihiro Yasunaga, Dongxu Wang, Zifan Li, James Ma, Irene Li, "
    "Qingning Yao, Shanelle Roman, Zilin Zhang and Dragomir Radev (EMNLP 2018), <https://yale-lily.github.io/spider>, "
    "licensed CC BY-SA 4.0 (<https://creativecommons.org/licenses/by-sa/4.0/>)."
)
BASELINE_INSTRUCTIONS = (
    "You write one DuckDB SELECT statement that answers the question from the tables below. "
    'Use only these tables and columns. Reply with JSON {"sql": "..."}.'
)
# a number not inside a word or another number (a unit may follow it); a minus sign only where no word,
# digit or hyphen precedes it, so the parts of 2020-01-05 are not negative
_NUMBER = re.compile(r"(?<![\w.])(?:(?<![\w.-])-)?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\d)")


# ---------------------------------------------------------------- scoring


def numbers_in(text: str) -> list[float]:
    return [float(found.replace(",", "")) for found in _NUMBER.findall(text)]


def near(value: float, gold: float) -> bool:
    return abs(value - gold) <= TOLERANCE * abs(gold)


def gold_items(gold: str | list[str]) -> list[str]:
    return sorted({gold} if isinstance(gold, str) else set(gold))


def is_right(gold: str | list[str], match: str, answer_text: str, abstained: bool) -> bool:
    """The README's rule: every distinct gold value is in the answer (order not scored); for match "number"
    as a number within 1% of one of the answer's numbers, for "contains" as a case-insensitive substring."""
    if abstained:
        return False
    if match == "number":
        found = numbers_in(answer_text)
        return all(any(near(value, float(item)) for value in found) for item in gold_items(gold))
    text = answer_text.casefold()
    return all(item.casefold() in text for item in gold_items(gold))


# ---------------------------------------------------------------- data and lakes


def load_questions(data: Path, dbs: Sequence[str] | None, limit: int | None) -> list[dict]:
    questions = json.loads((data / "questions.json").read_text())
    chosen = [q for q in questions if dbs is None or q["db_id"] in dbs]
    by_db: dict[str, list[dict]] = {}
    for q in chosen:
        by_db.setdefault(q["db_id"], []).append(q)
    return [q for db in sorted(by_db) for q in by_db[db][:limit]]


def halves(data: Path) -> dict[str, str]:
    """db_id -> "tune" (the first TUNE_DBS in sorted order) or "held"."""
    dbs = sorted({q["db_id"] for q in json.loads((data / "questions.json").read_text())})
    return {db: "tune" if i < TUNE_DBS else "held" for i, db in enumerate(dbs)}


def ingested(path: Path, name: str, folder: Callable[[], Path]) -> Lake:
    """The lake at `path`, ingested from the folder `folder` makes unless an earlier run finished that (an
    ingest killed before it saved its contract leaves no source, and is done again)."""
    lake = Lake.create(path, exist_ok=True)
    if not lake.contract.sources:
        started = time.perf_counter()
        report = lake.ingest(folder())
        log(f"{name}: ingested in {time.perf_counter() - started:.0f} s, {len(report.bad_files)} bad files")
    for table in lake.info().tables:
        log(f"{name}: table {table.name}, {table.rows} rows")
    return lake


def one_lake_folder(data: Path, raw: Path) -> Path:
    """Every database's folder under raw/<db_id>/, as it is (ingest names a table its folder shares a
    stem with by folder and stem)."""
    shutil.rmtree(raw, ignore_errors=True)
    for db in sorted(p for p in (data / "lakes").iterdir() if p.is_dir()):
        shutil.copytree(db, raw / db.name)
    return raw


# ---------------------------------------------------------------- prompt size


class PromptMeter(CountingBackend):
    """A CountingBackend that also adds up the characters of the prompts it is sent."""

    def __init__(self, inner, tally=None, chars: list[int] | None = None) -> None:
        super().__init__(inner, tally)
        self.chars = chars or [0]  # shared by the backends of one routed LLM

    def generate(self, messages: Sequence[Message], *args, **kwargs):
        self.chars[0] += sum(len(m.content) for m in messages)
        return super().generate(messages, *args, **kwargs)

    def sibling(self, inner) -> PromptMeter:
        return PromptMeter(inner, self.tally, self.chars)


def metered(llm: LLM) -> tuple[LLM, PromptMeter]:
    """`llm` with every prompt measured (a routed LLM's models into one meter)."""
    return counting(llm, PromptMeter)


# ---------------------------------------------------------------- the two methods


def ask_lakeplanner(lake: Lake, question: str, llm: LLM) -> dict:
    answer = lake.ask(question, llm=llm, settings=ExecSettings(mode="serial"), use_cache=False)
    outcome = answer_outcome(answer)
    items = "; ".join(outcome.value) if isinstance(outcome.value, list) else outcome.value or ""
    return {
        "answer": f"{items} {outcome.text}".strip(),
        "abstained": outcome.abstained,
        "confidence": outcome.confidence,
        "reason": outcome.reason,
    }


def schema_text(contract: Contract) -> str:
    """Each table with its columns and their types, one line a table."""
    lines = []
    for source in contract.sources:
        if source.kind is SourceKind.table:
            columns = ", ".join(f"{f.column} {f.type}" for f in contract.fields_of(source.name) if f.column)
            lines.append(f"{source.name}({columns})")
    return "\n".join(lines)


def baseline_messages(contract: Contract, question: str) -> list[Message]:
    return [system(BASELINE_INSTRUCTIONS, "\n\nTables:\n" + schema_text(contract)), user(f"Question: {question}")]


def result_text(result: pa.Table) -> str:
    """The cells of the first ANSWER_ROWS distinct rows, provenance columns left out."""
    columns = [c for c in result.column_names if not c.startswith("_lp_") and c != PROVENANCE_FILE]
    rows = list(dict.fromkeys(tuple(row.values()) for row in result.select(columns).to_pylist()))
    return "; ".join(" | ".join("" if cell is None else str(cell) for cell in row) for row in rows[:ANSWER_ROWS])


def ask_baseline(lake: Lake, question: str, llm: LLM) -> dict:
    statement = llm.complete(baseline_messages(lake.contract, question), SqlDraft).value.sql
    row = {"sql": statement, "confidence": None}
    try:
        return row | {"answer": result_text(lake.sql(statement)), "abstained": False}
    except (LakeplannerError, duckdb.Error, ValueError) as e:
        return row | {"answer": "", "abstained": True, "error": f"{type(e).__name__}: {e}"}


ASK: dict[str, Callable[[Lake, str, LLM], dict]] = {"lakeplanner": ask_lakeplanner, "baseline": ask_baseline}


# ---------------------------------------------------------------- runs


def run_file(label: str) -> Path:
    return RUNS / f"spider-{label}.jsonl"


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def recorded(path: Path, at: str) -> set[tuple[str, str, str]]:
    return {(r["method"], r["mode"], r["id"]) for r in read_records(path) if r.get("commit") == at}


def answered(method: str, lake: Lake, q: dict, llm: LLM) -> dict:
    """One question's record; a crash is the record (abstained, wrong, its error), not the run's end."""
    measured, meter = metered(llm)
    started = time.perf_counter()
    try:
        row = {"error": None} | ASK[method](lake, q["question"], measured)
    except Exception as e:
        row = {"answer": "", "abstained": True, "confidence": None, "error": f"{type(e).__name__}: {e}"}
    return row | {
        "right": is_right(q["gold"], q["match"], row["answer"], row["abstained"]),
        "seconds": round(time.perf_counter() - started, 1),
        "prompt_chars": meter.chars[0],
        "prompt_tokens": meter.usage.prompt_tokens,
        "llm_calls": meter.usage.calls,
    }


@dataclass(frozen=True)
class Run:
    path: Path  # the run file
    commit: str
    halves: dict[str, str]  # db_id -> "tune" or "held"


def ask_all(lake: Lake, mode: str, methods: Sequence[str], questions: list[dict], llm: LLM, run: Run) -> None:
    """Ask `questions` by each method and append their records; those recorded at this commit are skipped."""
    done = recorded(run.path, run.commit)
    lake.release_vectors()
    for q in questions:
        for method in methods:
            if (method, mode, q["id"]) in done:
                continue
            row = answered(method, lake, q, llm)
            record = {
                "commit": run.commit,
                "id": q["id"],
                "db_id": q["db_id"],
                "kind": q["kind"],
                "hardness": q["hardness"],
                "half": run.halves[q["db_id"]],
                "method": method,
                "mode": mode,
                "model": llm.model_name,
                **row,
            }
            append(run.path, record)
            log(
                f"{mode} {q['id']} {q['db_id']} {q['kind']:<9} {method:<11} right={row['right']} {row['answer'][:60]!r}"
            )


def run_all(args: argparse.Namespace) -> None:
    half_of = halves(args.data)
    unknown = set(args.dbs or ()) - set(half_of)
    if unknown:
        raise SystemExit(f"no such database in {args.data}: {', '.join(sorted(unknown))}")
    questions = load_questions(args.data, args.dbs, args.limit)
    llm = None if args.ingest_only else get_llm(LLMSettings())
    run = Run(run_file(args.label), commit(), half_of)
    if "per_db" in args.modes:
        for db in sorted({q["db_id"] for q in questions}):
            lake = ingested(args.workdir / "per_db" / db, db, lambda db=db: args.data / "lakes" / db)
            if llm is not None:
                ask_all(lake, "per_db", args.methods, [q for q in questions if q["db_id"] == db], llm, run)
            lake.close()
    methods = [m for m in args.methods if m == "lakeplanner"]
    if "one_lake" in args.modes and methods:
        raw = args.workdir / "one_lake" / "raw"
        lake = ingested(args.workdir / "one_lake" / "lake", "one_lake", lambda: one_lake_folder(args.data, raw))
        if llm is not None:
            ask_all(lake, "one_lake", methods, questions, llm, run)
        lake.close()


# ---------------------------------------------------------------- report


def latest(path: Path) -> list[dict]:
    """The last record of each (method, mode, question)."""
    return list({(r["method"], r["mode"], r["id"]): r for r in read_records(path)}.values())


def tally(records: list[dict]) -> list[int]:
    return [sum(r["right"] for r in records), len(records)]


def group_figures(records: list[dict]) -> dict:
    def by(field: str) -> dict[str, list[int]]:
        return {v: tally([r for r in records if r[field] == v]) for v in sorted({r[field] for r in records})}

    return {"all": tally(records), "half": by("half"), "kind": by("kind"), "db": by("db_id")}


def prompt_chars(records: list[dict]) -> dict[str, int]:
    chars = [r["prompt_chars"] for r in records]
    return {"median": round(statistics.median(chars)), "max": max(chars)} if chars else {}


def figures(records: list[dict]) -> dict:
    def of(method: str, mode: str, half: str | None = None) -> list[dict]:
        return [r for r in records if r["method"] == method and r["mode"] == mode and half in (None, r["half"])]

    one = of("lakeplanner", "one_lake")
    one_ids = {r["id"] for r in one}
    per_db_same = [r for r in of("lakeplanner", "per_db") if r["id"] in one_ids]
    tune, held = of("lakeplanner", "per_db", "tune"), of("lakeplanner", "per_db", "held")
    held_base = of("baseline", "per_db", "held")
    return {
        "spider_tune_half_right": tally(tune)[0],
        "spider_tune_half_total": len(tune),
        "spider_held_half_right": tally(held)[0],
        "spider_held_half_baseline_right": tally(held_base)[0],
        "spider_held_half_baseline_total": len(held_base),
        "spider_held_half_total": len(held),
        "spider_one_lake_right": tally(one)[0],
        "spider_one_lake_total": len(one),
        "spider_per_db_right": tally(per_db_same)[0],
        "spider_per_db_total": len(per_db_same),
        "prompt_chars_one_lake": prompt_chars(one),
        "prompt_chars_per_db": prompt_chars(per_db_same),
    }


def report(label: str) -> None:
    records = latest(run_file(label))
    groups = sorted({(r["method"], r["mode"]) for r in records}, key=lambda g: (MODES.index(g[1]), g[0]))
    results = {
        "label": label,
        "commits": sorted({r["commit"] for r in records}),
        "models": sorted({r["model"] for r in records}),
        **figures(records),
        "groups": {
            f"{m}/{mode}": group_figures([r for r in records if (r["method"], r["mode"]) == (m, mode)])
            for m, mode in groups
        },
    }
    (HERE / "results" / "spider.json").write_text(json.dumps(results, indent=2) + "\n")
    (HERE / "results" / "spider.md").write_text(markdown(results))
    log("wrote benchmarks/results/spider.md and spider.json")


def fraction(held: list[int] | None) -> str:
    return "{} / {}".format(*held) if held else "-"


def breakdown(results: dict, part: str, title: str) -> list[str]:
    """A table of right / asked, one row per value of `part` (half, kind, db), one column per method/mode."""
    groups = results["groups"]
    lines = ["", f"## {title}", "", f"| {part} | " + " | ".join(groups) + " |", "|---|" + "---|" * len(groups)]
    for key in sorted({k for g in groups.values() for k in g[part]}):
        lines.append(f"| {key} | " + " | ".join(fraction(g[part].get(key)) for g in groups.values()) + " |")
    return lines


def markdown(results: dict) -> str:
    groups = results["groups"]
    lines = [
        "# Spider train databases: lakeplanner and plain text-to-SQL, a lake per database and one lake",
        "",
        f"Made by `python benchmarks/spider.py --label {results['label']}` (see its docstring), then `--report`; "
        f"commits {', '.join(results['commits']) or '-'}, model {', '.join(results['models']) or '-'}, serial, "
        "no plan cache. These databases are Spider's train split: development figures, not generality. "
        "spider_per_db_right and the per_db prompt chars are over the questions asked in one_lake.",
        "",
        "| figure | value |",
        "|---|---|",
    ]
    lines += [f"| {key} | {value} |" for key, value in results.items() if key.startswith("spider_")]
    for mode in ("one_lake", "per_db"):
        chars = results[f"prompt_chars_{mode}"]
        median, most = chars.get("median", "-"), chars.get("max", "-")
        lines.append(f"| prompt chars per question, {mode} (median / max) | {median} / {most} |")
    lines += ["", "## Right / asked", "", "| | " + " | ".join(groups) + " |", "|---|" + "---|" * len(groups)]
    lines.append("| all | " + " | ".join(fraction(g["all"]) for g in groups.values()) + " |")
    lines += breakdown(results, "half", "By half (tune: the first 15 db_ids in sorted order, held: the rest)")
    lines += breakdown(results, "kind", "By kind")
    lines += breakdown(results, "db", "By database")
    lines += ["", "Data: " + ATTRIBUTION, ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def names(text: str, allowed: Sequence[str]) -> list[str]:
    chosen = [n for n in text.split(",") if n]
    unknown = set(chosen) - set(allowed)
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown: {', '.join(sorted(unknown))} (choose from {', '.join(allowed)})")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the Spider folder (lakes/, questions.json)")
    parser.add_argument("--label", default="main", help="names the run file: spider-<label>.jsonl")
    parser.add_argument("--dbs", type=lambda t: t.split(","), default=None, help="comma-separated db_ids (default all)")
    parser.add_argument("--limit", type=int, default=None, help="first N questions of each database")
    parser.add_argument(
        "--methods", type=lambda t: names(t, METHODS), default=list(METHODS), help="lakeplanner,baseline"
    )
    parser.add_argument("--modes", type=lambda t: names(t, MODES), default=list(MODES), help="per_db,one_lake")
    parser.add_argument("--workdir", type=Path, default=WORKDIR, help="where the lakes are kept between runs")
    parser.add_argument("--ingest-only", action="store_true", help="build the lakes, ask nothing (no model)")
    parser.add_argument("--report", action="store_true", help="write spider.md and spider.json from the run file")
    args = parser.parse_args()
    if args.report:
        report(args.label)
        return
    run_all(args)


if __name__ == "__main__":
    main()
