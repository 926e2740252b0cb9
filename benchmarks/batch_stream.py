"""Streamed batch benchmark: 100,000 generated questions read through Ray Data, answered against a
scripted model on the real engines (Iceberg, DuckDB, the plan cache), committed exactly once.

The questions (one template, filled with a number) are written as 10 Parquet files. The driver is a
child process that runs `run_batch` over `question_blocks` (the `lakeplanner batch --stream` path) with
a scripted model, and samples its own resident memory at every commit. It is SIGKILLed after a share
of the questions (`--kill-at`) and started again; the second run goes on from the last commit.

  streamed   driver RSS when the first commit lands, at the kill, and at the end, peak RSS
  baseline   peak RSS of a process that only reads the same questions whole (`questions_of(read_source)`,
             the non-streamed path), answering nothing
  exactly    rows in the answers table, distinct ids, ids missing

    python benchmarks/batch_stream.py                  # writes results/batch_stream.{md,json}
    python benchmarks/batch_stream.py --questions 5000 --no-write   # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from batch_child import scripted_reply  # the tests' scripted model: it counts the customers

from lakeplanner import Lake, __version__, sample_lake_path
from lakeplanner.batch.answers import table_name
from lakeplanner.llm.base import RawCompletion
from lakeplanner.llm.fake import FakeBackend

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
FILES = 10
NAME = "stream"


def commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def rss_mib(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def write_questions(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    per_file = -(-n // FILES)
    for part in range(FILES):
        ids = range(part * per_file, min(n, (part + 1) * per_file))
        table = pa.table(
            {"id": [f"q{i:06d}" for i in ids], "question": [f"How many customers joined in wave {i}?" for i in ids]}
        )
        pq.write_table(table, folder / f"part-{part:02d}.parquet")
    return folder


class ScriptedBackend(FakeBackend):
    """The scripted model, keeping no record of its calls (a test's FakeBackend keeps every prompt)."""

    def generate(self, messages, *, schema, max_tokens) -> RawCompletion:
        text = scripted_reply(schema)
        return RawCompletion(
            text=text, prompt_tokens=sum(len(m.content.split()) for m in messages), completion_tokens=1
        )


def child(lake_path: str, source: str, samples: str, block_rows: int, commit_every: int, actors: int) -> None:
    """The driver: streams the questions, answers them, writes an RSS sample per commit."""
    from lakeplanner.batch import question_blocks, rows_in, run_batch
    from lakeplanner.llm import LLM

    lake = Lake.open(lake_path)
    started = time.perf_counter()

    def write(sample: dict) -> None:
        with Path(samples).open("a") as out:
            out.write(json.dumps(sample) + "\n")

    def progress(done: int, total: int | None) -> None:
        if done % commit_every == 0:
            write({"done": done, "rss_mib": rss_mib(), "s": time.perf_counter() - started})

    report = run_batch(
        lake,
        question_blocks(source, lake, block_rows=block_rows),
        name=NAME,
        llm=LLM(ScriptedBackend()),
        commit_every=commit_every,
        total=rows_in(source, lake),
        progress=progress,
        actors=actors,
    )
    write({"end": report.model_dump(), "rss_mib": rss_mib(), "peak_mib": rss_mib("VmHWM")})
    lake.close()


def stream_read(lake_path: str, source: str, block_rows: int) -> None:
    """Every question streamed through Ray Data and counted, none answered: the driver's RSS per block."""
    from lakeplanner.batch import question_blocks

    lake = Lake.open(lake_path)
    before, seen, samples = rss_mib(), 0, []
    for block in question_blocks(source, lake, block_rows=block_rows):
        seen += len(block)
        samples.append((seen, round(rss_mib(), 1)))
    print(json.dumps({"questions": seen, "before_mib": before, "peak_mib": rss_mib("VmHWM"), "samples": samples}))


def whole_read(lake_path: str, source: str) -> None:
    """The baseline: the questions read whole, as the non-streamed path reads them."""
    from lakeplanner.batch import questions_of, read_source

    lake = Lake.open(lake_path)
    before = rss_mib()
    table = pa.concat_tables(read_source(str(f), lake) for f in sorted(Path(source).glob("*.parquet")))
    questions = questions_of(table)
    print(json.dumps({"questions": len(questions), "before_mib": before, "peak_mib": rss_mib("VmHWM")}))


def measured_read(work: Path, source: Path, *options: str) -> dict:
    command = [sys.executable, __file__, options[0], str(work / "lake"), str(source), *options[1:]]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_child(args, work: Path, source: Path, samples: Path, kill_after: int | None) -> float:
    command = [sys.executable, __file__, "--child", str(work / "lake"), str(source), str(samples)]
    command += ["--block-rows", str(args.block_rows), "--commit-every", str(args.commit_every)]
    command += ["--actors", str(args.actors)]
    started = time.perf_counter()
    # the Ray workers the driver starts inherit its environment: they unpickle the scripted model from tests/
    tests = str(ROOT / "tests")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    while process.poll() is None:
        time.sleep(2)
        if kill_after is not None and done_in(samples) >= kill_after:
            process.send_signal(signal.SIGKILL)
            process.wait()
            log(f"driver killed after {done_in(samples)} answers")
            break
    if kill_after is None and process.returncode != 0:
        raise SystemExit(f"the driver failed (exit {process.returncode})")
    return time.perf_counter() - started


def read_samples(samples: Path) -> list[dict]:
    return [json.loads(line) for line in samples.read_text().splitlines()] if samples.exists() else []


def done_in(samples: Path) -> int:
    found = [s["done"] for s in read_samples(samples) if "done" in s]
    return max(found, default=0)


def exactly_once(lake_path: Path, n: int) -> dict:
    lake = Lake.open(lake_path)
    ids = lake.catalog.load_table(table_name(NAME)).scan(selected_fields=("question_id",)).to_arrow()
    found = ids.column("question_id").to_pylist()
    lake.close()
    expected = {f"q{i:06d}" for i in range(n)}
    return {"rows": len(found), "distinct_ids": len(set(found)), "missing": len(expected - set(found))}


def markdown(result: dict) -> str:
    first, second = result["runs"]
    lines = [
        "# Streamed batch: questions through Ray Data, exactly once",
        "",
        f"`python benchmarks/batch_stream.py` at {result['commit']} ({result['date']}): "
        f"{result['answered_questions']:,} questions answered from {FILES} Parquet files, "
        f"blocks of {result['block_rows']}, a commit every "
        f"{result['commit_every']} answers, {result['actors'] or 'no'} Ray actors, scripted model, sample lake.",
        "The driver was SIGKILLed after the first run's answers below and started again with the same call."
        + (
            " With no actors the driver also answers, so its RSS below is the ask path's as well as the reading's."
            if not result["actors"]
            else ""
        ),
        "",
        "| run | answers | wall s | questions/s | driver RSS at first commit MiB | at last commit MiB | peak MiB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for run in (first, second):
        lines.append(
            f"| {run['name']} | {run['answers']:,} | {run['wall_s']:.0f} | {run['per_s']:.1f} | "
            f"{run['rss_first_mib']:.0f} | {run['rss_last_mib']:.0f} | {run['peak_mib'] or '—'} |"
        )
    base, read = result["baseline"], result["streamed_read"]
    once = result["exactly_once"]
    shown = read["samples"][:: max(1, len(read["samples"]) // 5)] + read["samples"][-1:]
    lines += [
        "",
        f"Reading alone, {read['questions']:,} questions, answering nothing:",
        "",
        "| read | driver peak RSS MiB | RSS before MiB | RSS after N questions (N: MiB) |",
        "|---|---:|---:|---|",
        f"| streamed, blocks of {result['block_rows']} | {read['peak_mib']:.0f} | {read['before_mib']:.0f} | "
        + ", ".join(f"{n:,}: {m:.0f}" for n, m in shown)
        + " |",
        f"| whole (`questions_of(read_source(...))`, the non-streamed path) | {base['peak_mib']:.0f} | "
        f"{base['before_mib']:.0f} | {base['questions']:,}: {base['peak_mib']:.0f} |",
        "",
        f"Exactly once: {once['rows']:,} rows, {once['distinct_ids']:,} distinct ids, {once['missing']} missing.",
        "",
    ]
    return "\n".join(lines)


def run_summary(name: str, samples: list[dict], wall: float) -> dict:
    points = [s for s in samples if "done" in s]
    end = next((s for s in samples if "end" in s), None)
    answers = end["end"]["answered"] + end["end"]["failed"] if end else max((p["done"] for p in points), default=0)
    return {
        "name": name,
        "answers": answers,
        "wall_s": wall,
        "per_s": answers / wall if wall else 0.0,
        "rss_first_mib": points[0]["rss_mib"] if points else 0.0,
        "rss_last_mib": points[-1]["rss_mib"] if points else 0.0,
        "peak_mib": round(end["peak_mib"]) if end else None,
        "rss_samples": [(p["done"], round(p["rss_mib"], 1)) for p in points[:: max(1, len(points) // 50)]],
        "report": end["end"] if end else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100_000, help="questions written and streamed")
    parser.add_argument("--answered", type=int, help="of those, how many the killed and resumed runs answer")
    parser.add_argument("--block-rows", type=int, default=2048)
    parser.add_argument("--commit-every", type=int, default=1000)
    parser.add_argument("--actors", type=int, default=2, help="answerers on Ray (0: the driver answers too)")
    parser.add_argument("--kill-at", type=float, default=0.3, help="share of the questions after which to kill")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("LAKE", "SOURCE", "SAMPLES"))
    parser.add_argument("--whole-read", nargs=2, metavar=("LAKE", "SOURCE"))
    parser.add_argument("--stream-read", nargs=2, metavar=("LAKE", "SOURCE"))
    parser.add_argument("--rewrite-report", action="store_true", help="batch_stream.md again from the json")
    args = parser.parse_args()
    if args.rewrite_report:
        (RESULTS / "batch_stream.md").write_text(markdown(json.loads((RESULTS / "batch_stream.json").read_text())))
        return None
    if args.child:
        return child(*args.child, args.block_rows, args.commit_every, args.actors)
    if args.whole_read:
        return whole_read(*args.whole_read)
    if args.stream_read:
        return stream_read(*args.stream_read, args.block_rows)
    measured = commit()  # the code the runs import, before anything else lands
    work = args.workdir or Path(tempfile.mkdtemp(prefix="lp-stream-"))
    if not (work / "lake").exists():
        log("ingesting the sample lake")
        Lake.create(work / "lake").ingest(sample_lake_path())
    answered = args.answered or args.questions
    source = write_questions(work / "questions", args.questions)
    baseline = measured_read(work, source, "--whole-read")
    log(f"baseline whole read: peak {baseline['peak_mib']:.0f} MiB")
    streamed = measured_read(work, source, "--stream-read", "--block-rows", str(args.block_rows))
    log(f"streamed read of {streamed['questions']}: peak {streamed['peak_mib']:.0f} MiB")
    if answered != args.questions:
        source = write_questions(work / f"questions-{answered}", answered)
    runs = []
    for name, kill_after in (("first (killed)", int(answered * args.kill_at)), ("second (resumed)", None)):
        samples = work / f"samples-{len(runs)}.jsonl"
        samples.unlink(missing_ok=True)
        log(f"{name} run")
        wall = run_child(args, work, source, samples, kill_after)
        runs.append(run_summary(name, read_samples(samples), wall))
        log(f"{name}: {runs[-1]['answers']} answers in {wall:.0f} s")
    result = {
        "commit": measured,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "version": __version__,
        "questions": args.questions,
        "answered_questions": answered,
        "streamed_read": streamed,
        "block_rows": args.block_rows,
        "commit_every": args.commit_every,
        "actors": args.actors,
        "runs": runs,
        "baseline": baseline,
        "exactly_once": exactly_once(work / "lake", answered),
    }
    print(markdown(result))
    if not args.no_write:
        (RESULTS / "batch_stream.json").write_text(json.dumps(result, indent=2) + "\n")
        (RESULTS / "batch_stream.md").write_text(markdown(result))


if __name__ == "__main__":
    main()
