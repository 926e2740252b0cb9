"""Question answering on public data: TAT-QA and HotpotQA, lakeplanner vs RAG, ReAct and a plain DAG
planner, all on the same local model and the same stores.

    python benchmarks/qa.py --dataset tatqa --method lakeplanner --n 300   # the fixed stratified sample
    python benchmarks/qa.py --dataset tatqa --method react --n 100         # its first 100
    python benchmarks/qa.py --dataset hotpotqa --method rag --n 100
    python benchmarks/qa.py --dataset tatqa --method rag --n all           # every dev question
    python benchmarks/qa.py --dataset tatqa-holdout --method lakeplanner --n 100  # 100 outside the 300, run once
    python benchmarks/qa.py --report                                       # qa.md and qa.json from the runs
    python benchmarks/qa.py --dataset tatqa --method lakeplanner --against 268f505  # what a rerun gained and lost
    python benchmarks/qa.py --dataset tatqa --method lakeplanner --n 100 --label audit  # an arm beside the report
    python benchmarks/qa.py --dataset tatqa --method lakeplanner --label audit --against-run base

Each TAT-QA context (its report table as `financials.report.csv`, its paragraphs as markdown) and
each HotpotQA question (its 10 paragraphs) is ingested as its own lake with `Lake.ingest`, once,
under benchmarks/.work/qa, and shared by every method. Per-question results are appended to
benchmarks/results/runs/<dataset>-<method>.jsonl; a rerun skips the questions already there, so a
run can stop and resume. `--shard I/K` runs the I-th of K disjoint parts (by lake) in parallel
processes when memory allows (each loads its own copy of the model). `--label NAME` writes
<dataset>-<method>-NAME.jsonl instead, a run the report leaves out (one arm of an A/B measurement: a
setting on, other prompts from a worktree), with a plan cache of its own; `--against-run NAME` compares
it with another labelled run question by question.
"""

from __future__ import annotations

import argparse
import fcntl
import functools
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.qabench.answers import judge
from benchmarks.qabench.data import lake_for, load, write_holdout, write_sample
from benchmarks.qabench.methods import METHODS, timed
from benchmarks.qabench.report import compare_runs, read_records, write_report
from lakeplanner.llm.base import get_llm
from lakeplanner.llm.settings import LLMSettings

HERE = Path(__file__).resolve().parent
RUNS, WORK = HERE / "results" / "runs", HERE / ".work" / "qa"


def run_file(dataset: str, method: str, label: str | None = None) -> Path:
    return RUNS / f"{dataset}-{method}{f'-{label}' if label else ''}.jsonl"


def done_ids(path: Path) -> set[str]:
    if not path.exists():
        return set()
    return {json.loads(line)["uid"] for line in path.read_text().splitlines() if line.strip()}


def append(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write(json.dumps(record, default=str) + "\n")


@functools.cache
def code_version() -> str:
    """The commit the run's code is at (runs span sessions; results must say what produced them)."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True, text=True).stdout.strip()

    try:
        commit, changed = (
            git("rev-parse", "--short", "HEAD"),
            git("status", "--porcelain", "lakeplanner", "benchmarks/qabench", "benchmarks/qa.py"),
        )
    except OSError:
        return "unknown"
    return (commit + ("+changes" if changed else "")) or "unknown"


def plans_of_this_code(lake: Path, label: str | None) -> None:
    """A lake kept from an earlier run keeps the plans that run cached: asked again at another commit
    (or in another labelled arm), its questions would be served those plans (an exact hit, no planning
    call) and measure the old planner. The cache starts empty for each commit and label; questions of
    one run still share it."""
    marker, code = lake / "plans_code", code_version() + (f" {label}" if label else "")
    if marker.exists() and marker.read_text().strip() == code:
        return
    (lake / "plan_cache.jsonl").unlink(missing_ok=True)
    marker.write_text(code + "\n")


def in_shard(context: str, shard: tuple[int, int]) -> bool:
    index, count = shard
    return int(hashlib.sha1(context.encode()).hexdigest(), 16) % count == index


def run(dataset: str, method: str, n: int | None, shard: tuple[int, int], model: str, label: str | None) -> None:
    questions, contexts = load(dataset, n)
    path = run_file(dataset, method, label)
    skip = done_ids(path)
    pending = [q for q in questions if q.uid not in skip and in_shard(q.context, shard)]
    print(f"{dataset}/{method}: {len(questions)} questions, {len(skip)} done, {len(pending)} to run here", flush=True)
    if not pending:
        return
    llm = get_llm(LLMSettings(model=model))
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns) as progress:
        task = progress.add_task(f"{dataset} {method}", total=len(pending))
        for q in pending:
            context = contexts[q.context]
            lake = lake_for(context, WORK / dataset)
            plans_of_this_code(lake.path, label)
            try:
                outcome, usage, seconds, error = timed(method, lake, q.question, llm)
            finally:
                lake.close()
            items, scale, result = judge(q, context, outcome.value)
            append(
                path,
                {
                    "uid": q.uid,
                    "question": q.question,
                    "gold": q.answer,
                    "gold_scale": q.scale,
                    "answer_type": q.answer_type,
                    "answer_from": q.answer_from,
                    "prediction": items,
                    "pred_scale": scale,
                    "abstained": outcome.abstained,
                    "confidence": outcome.confidence,
                    "reason": outcome.reason,
                    "error": error,
                    "em": result.em,
                    "f1": result.f1,
                    "seconds": round(seconds, 2),
                    "llm_calls": usage.calls,
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                    "data_chars": outcome.data_chars,
                    "model": llm.model_name,
                    "code": code_version(),
                    "trace": outcome.trace,
                },
            )
            progress.console.print(f"{q.uid[:8]} em={result.em:.0f} {items!r} gold={q.answer!r} ({seconds:.0f} s)")
            progress.advance(task)


def changed_since(commit: str, committed: Path, path: Path) -> str:
    """The questions done so far in `path` whose EM differs from the records of `committed` at `commit`,
    and the EM of both on the questions done (a rerun compared with the run it replaces, question by
    question)."""
    relative = committed.relative_to(HERE.parent).as_posix()
    shown = subprocess.run(["git", "show", f"{commit}:{relative}"], capture_output=True, text=True, check=True)
    return compare_runs(read_records(shown.stdout), read_records(path.read_text()))


def parse_n(text: str) -> int | None:
    return None if text == "all" else int(text)


def parse_shard(text: str) -> tuple[int, int]:
    index, count = (int(x) for x in text.split("/"))
    if not 0 <= index < count:
        raise argparse.ArgumentTypeError("--shard I/K needs 0 <= I < K")
    return index, count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", choices=["tatqa", "tatqa-holdout", "hotpotqa"])
    parser.add_argument("--method", choices=sorted(METHODS))
    parser.add_argument("--n", type=parse_n, default=100, help="questions to ask: a number or 'all' (default 100)")
    parser.add_argument("--shard", type=parse_shard, default=(0, 1), help="I/K: run the I-th of K parts")
    parser.add_argument("--model", default="default", help="local model: default (1.5B) or small (0.5B)")
    parser.add_argument("--report", action="store_true", help="write results/qa.md and qa.json from the runs")
    parser.add_argument(
        "--against",
        metavar="COMMIT",
        help="with --dataset and --method: the questions whose EM changed since that commit's committed records",
    )
    parser.add_argument("--label", help="write <dataset>-<method>-LABEL.jsonl, an arm the report leaves out")
    parser.add_argument(
        "--against-run",
        metavar="LABEL",
        help="with --dataset, --method and --label: the questions whose EM differs from the run labelled LABEL",
    )
    parser.add_argument("--make-sample", action="store_true", help="rewrite data/tatqa/sample300.json")
    parser.add_argument("--make-holdout", action="store_true", help="write data/tatqa/holdout100.json")
    args = parser.parse_args()
    if args.make_sample:
        write_sample()
    elif args.make_holdout:
        write_holdout()
    elif args.report:
        write_report(RUNS, HERE / "results")
    elif args.against and args.dataset and args.method:
        reported = run_file(args.dataset, args.method)
        print(changed_since(args.against, reported, run_file(args.dataset, args.method, args.label)))
    elif args.against_run and args.dataset and args.method:
        base, arm = (run_file(args.dataset, args.method, label) for label in (args.against_run, args.label))
        print(compare_runs(read_records(base.read_text()), read_records(arm.read_text())))
    elif args.dataset and args.method:
        run(args.dataset, args.method, args.n, args.shard, args.model, args.label)
    else:
        parser.error("give --dataset and --method, or --report")


if __name__ == "__main__":
    main()
