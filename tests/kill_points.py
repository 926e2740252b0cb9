"""Kill and fault drills against a real `lakeplanner ingest` child process.

A generated folder is ingested once (version A), then its next version (B: changed and added rows,
changed and added documents, a new table and a new document folder) is ingested into copies of that
lake while the drills kill it, run two ingests at once, run an `ask` beside it or cap its file size.
After each fault the lake must open, hold every table and every source's segments at A or at B,
validate, keep no chunks of a source its contract does not record, and a rerun must reach B.

Used by tests/test_kill.py and benchmarks/adversarial.py (plain functions returning dicts).
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pymilvus import MilvusClient
from typer.testing import CliRunner

from lakeplanner import Lake
from lakeplanner.cli import app
from lakeplanner.ingest.segments import SEGMENTS_TABLE
from lakeplanner.ingest.tables import HASH_COLUMN
from tests.faults import without_colours

RUN_CLI = "from lakeplanner.cli import app; app(prog_name='lakeplanner')"
CHILD = [sys.executable, "-c", RUN_CLI]
PHASE = re.compile(r"(discovering sources|reading \w+|table \w+|documents \w+|embedding \w+|contract)")
COMMIT_PHASES = ("table ", "documents ", "embedding ", "contract")
RUNS_PER_CHAIN = 10  # kills in a row on one lake before an uninterrupted rerun must reach B
CHILD_TIMEOUT_S = 120
# the ask's model: an endpoint nothing listens on, so the ask reads the lake, then abstains at once
UNREACHABLE_LLM = {
    "LAKEPLANNER_LLM_BACKEND": "openai",
    "LAKEPLANNER_LLM_BASE_URL": "http://127.0.0.1:9/v1",
    "LAKEPLANNER_LLM_ENDPOINT_RETRIES": "1",
    "LAKEPLANNER_EXEC_MODE": "serial",
}


# ---------------------------------------------------------------- the generated source folder


def write_sources(root: Path, version: int) -> None:
    """Version 0 (A) or 1 (B) of a small mixed folder; B changes rows and documents and adds sources."""
    rnd = random.Random(7 + version)
    root.mkdir(parents=True, exist_ok=True)
    regions = ["north", "south", "east", "west"]
    write_csv(
        root / "customers.csv",
        ["customer_id", "name", "region"],
        [[f"C{i:04d}", f"Customer {i}", regions[(i + version * (i % 10 == 0)) % 4]] for i in range(1, 201)],
    )
    write_csv(
        root / "orders.csv",
        ["order_id", "customer_id", "amount", "ordered_on"],
        [
            [f"O{i:06d}", f"C{1 + i % 200:04d}", 5 + (i * 37) % 500 + version * (i % 7 == 0), f"2024-{1 + i % 12}-01"]
            for i in range(1, 3001 + 500 * version)
        ],
    )
    products = [{"sku": f"P{i:03d}", "price": i * 1.5 + version * (i % 3 == 0)} for i in range(60)]
    (root / "products.json").write_text(json.dumps(products))
    words = ["late", "delivery", "invoice", "refund", "support", "contract", "carrier", "pallet"]
    notes = root / "notes"
    notes.mkdir(exist_ok=True)
    for i in range(1, 7 + 3 * version):
        body = " ".join(rnd.choice(words) for _ in range(80))
        (notes / f"note_{i:03d}.md").write_text(f"# Note {i} v{version * (i % 2)}\n\nCustomer C{i:04d}: {body}\n")
    if version:
        write_csv(
            root / "shipments.csv",
            ["shipment_id", "order_id", "carrier"],
            [[f"S{i:05d}", f"O{i:06d}", ["dhl", "ups"][i % 2]] for i in range(1, 401)],
        )
        guides = root / "guides"
        guides.mkdir(exist_ok=True)
        for i in range(1, 4):
            (guides / f"guide_{i}.txt").write_text(f"Guide {i}\n\n" + " ".join(rnd.choice(words) for _ in range(120)))


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


# ---------------------------------------------------------------- what a lake holds


@dataclass
class LakeState:
    tables: dict[str, Counter] = field(default_factory=dict)  # table -> row hashes
    segments: dict[str, Counter] = field(default_factory=dict)  # source -> segment ids and content hashes
    chunks: dict[str, frozenset] = field(default_factory=dict)  # collection -> (chunk id, content hash)
    recorded: set[str] = field(default_factory=set)  # collections the contract records
    problems: list[str] = field(default_factory=list)


def lake_state(lake_dir: Path) -> LakeState:
    """Open the lake as any command would (which settles an interrupted ingest) and read everything."""
    state = LakeState()
    try:
        lake = Lake.open(lake_dir)
    except Exception as e:
        state.problems.append(f"lake does not open: {e!r}")
        return state
    try:
        for name in lake.table_names():
            hashes = lake.table(name).scan(selected_fields=(HASH_COLUMN,)).to_arrow().column(0)
            state.tables[name] = Counter(hashes.to_pylist())
        if lake.catalog.table_exists(SEGMENTS_TABLE):
            segments = lake.catalog.load_table(SEGMENTS_TABLE)
            for row in segments.scan(selected_fields=("source", "segment_id", "content_hash")).to_arrow().to_pylist():
                state.segments.setdefault(row["source"], Counter())[(row["segment_id"], row["content_hash"])] += 1
        state.recorded = {s.collection for s in lake.contract.sources if s.collection}
        client = MilvusClient(str((lake_dir / "milvus.db").resolve()))  # the lake's own Lite server, reused
        for name in lake.vectors.collections():
            lake.vectors.count(name)  # loads the collection
            rows = client.query(name, filter="", output_fields=["chunk_id", "content_hash"], limit=16384)
            state.chunks[name] = frozenset((r["chunk_id"], r["content_hash"]) for r in rows)
        client.close()
    except Exception as e:
        state.problems.append(f"lake does not read: {e!r}")
    finally:
        lake.close()
    return state


def validate_exit_code(lake_dir: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["schema", "validate", "--lake", str(lake_dir)])
    return result.exit_code, result.output


def either(name: str, got, before, after) -> str | None:
    if got in (before, after):
        return None
    return f"{name} is neither its pre-ingest nor its complete state"


def lost_rows(got: Counter | None, before: Counter | None, after: Counter | None) -> int:
    """Rows of the nearer committed state (pre-ingest or complete) that the table lacks."""
    got = got or Counter()
    return min(sum(((s or Counter()) - got).values()) for s in (before, after))


def compare(state: LakeState, before: LakeState, after: LakeState) -> tuple[list[str], int]:
    """Problems of a lake after a fault, and the rows it lost, against the two committed states."""
    problems = list(state.problems)
    rows_lost = 0
    for name in sorted({*before.tables, *after.tables, *state.tables}):
        got = state.tables.get(name)
        if problem := either(f"table {name}", got, before.tables.get(name), after.tables.get(name)):
            problems.append(problem)
            rows_lost += lost_rows(got, before.tables.get(name), after.tables.get(name))
    for source in sorted({*before.segments, *after.segments, *state.segments}):
        got = state.segments.get(source)
        if problem := either(f"segments of {source}", got, before.segments.get(source), after.segments.get(source)):
            problems.append(problem)
    for name, chunks in sorted(state.chunks.items()):
        if chunks and name not in state.recorded:
            problems.append(f"Milvus holds {len(chunks)} chunks of {name}, which the contract does not record")
    return problems, rows_lost


def complete_problems(state: LakeState, after: LakeState) -> tuple[list[str], int]:
    """Problems of a lake that an uninterrupted ingest should have brought to `after`."""
    problems = list(state.problems)
    rows_lost = 0
    for name in sorted({*after.tables, *state.tables}):
        if state.tables.get(name) != after.tables.get(name):
            problems.append(f"table {name} differs from an uninterrupted ingest's")
            rows_lost += sum((after.tables.get(name, Counter()) - state.tables.get(name, Counter())).values())
    for name in sorted({*after.chunks, *state.chunks}):
        if state.chunks.get(name) != after.chunks.get(name):
            problems.append(f"collection {name} holds other chunks than an uninterrupted ingest's")
    return problems, rows_lost


# ---------------------------------------------------------------- the child process


def cli_env() -> dict[str, str]:
    """The fake LLM, and rich's progress forced on (off a terminal) so phases can be followed."""
    forced = {"TTY_INTERACTIVE": "1", "FORCE_COLOR": "1", "COLUMNS": "150"}
    return os.environ | {"LAKEPLANNER_LLM_BACKEND": "fake"} | forced


@dataclass
class Child:
    """A running CLI child whose stderr is followed for progress phases."""

    process: subprocess.Popen
    started: float = field(default_factory=time.monotonic)
    phases: list[tuple[float, str]] = field(default_factory=list)
    stderr: bytearray = field(default_factory=bytearray)
    stdout: bytes = b""
    follower: threading.Thread | None = None

    @classmethod
    def start(cls, args: list[str], *, env: dict[str, str] | None = None, command: list[str] = CHILD) -> Child:
        """No preexec_fn, ever: it makes subprocess fork this process (Milvus Lite's gRPC runs in it), gRPC's
        fork handlers restart a poller in the child, and closing the child's fds before exec kills that
        child with SIGABRT ("epoll_wait error: Bad file descriptor") in ~3 of 100 starts."""
        process = subprocess.Popen(
            ["nice", *command, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env() | (env or {}),
        )
        child = cls(process)
        child.follower = threading.Thread(target=child.follow, daemon=True)
        child.follower.start()
        return child

    def follow(self) -> None:
        while chunk := self.process.stderr.read1(65536):
            self.stderr += chunk
            for phase in PHASE.findall(chunk.decode(errors="replace")):
                if not self.phases or self.phases[-1][1] != phase:
                    self.phases.append((time.monotonic() - self.started, phase))

    @property
    def phase(self) -> str:
        return self.phases[-1][1] if self.phases else "starting"

    def wait_for(self, prefix: str, timeout: float = CHILD_TIMEOUT_S) -> bool:
        """Until a phase starting with `prefix` shows; False when the child ended first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.startswith(prefix) for _, p in self.phases):
                return True
            if self.process.poll() is not None:
                return False
            time.sleep(0.01)
        return False

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.finish()

    def finish(self) -> int:
        """Wait for the child; stderr stays the follower's alone (communicate() would read its tail too,
        and the error and hint lines went to whichever reader was faster)."""
        self.process.wait(timeout=CHILD_TIMEOUT_S)  # its stdout (a report, an answer) fits in the pipe
        self.stdout = self.process.stdout.read()
        self.follower.join(timeout=CHILD_TIMEOUT_S)
        return self.process.returncode

    @property
    def error_text(self) -> str:
        """stderr as lines, without colours and with the progress display's redraws broken into lines."""
        text = without_colours(self.stderr.decode(errors="replace"))
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "\n", text)  # the progress display's cursor moves
        return "\n".join(line for line in text.replace("\r", "\n").splitlines() if line.strip())


def ingest_args(source: Path, lake: Path) -> list[str]:
    return ["ingest", str(source), "--lake", str(lake)]


# ---------------------------------------------------------------- the drill setup


@dataclass
class Drill:
    """Sources A and B, a lake at A, a lake brought to B by one uninterrupted CLI ingest, and its phases."""

    workdir: Path
    source_b: Path
    lake_a: Path
    before: LakeState
    after: LakeState
    timeline: list[tuple[float, str]]

    @classmethod
    def prepare(cls, workdir: Path) -> Drill:
        workdir.mkdir(parents=True, exist_ok=True)
        source_a, source_b = workdir / "source_a", workdir / "source_b"
        write_sources(source_a, 0)
        write_sources(source_b, 1)
        lake_a = workdir / "lake_a"
        lake = Lake.create(lake_a)
        try:
            lake.ingest(source_a)
        finally:
            lake.close()
        complete = workdir / "lake_b"
        shutil.copytree(lake_a, complete)
        child = Child.start(ingest_args(source_b, complete))
        if child.finish() != 0:
            raise RuntimeError(f"the uninterrupted ingest failed: {child.error_text}")
        timeline = [*child.phases, (time.monotonic() - child.started, "exit")]
        return cls(workdir, source_b, lake_a, lake_state(lake_a), lake_state(complete), timeline)

    def fresh_lake(self, name: str) -> Path:
        target = self.workdir / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(self.lake_a, target)
        return target

    def commit_steps(self) -> list[tuple[str, float]]:
        """(phase, seconds it lasted) of each commit-phase step of the uninterrupted ingest."""
        steps = zip(self.timeline, self.timeline[1:], strict=False)
        return [(phase, end - start) for (start, phase), (end, _) in steps if phase.startswith(COMMIT_PHASES)]

    def lake_ok(self, lake_dir: Path) -> tuple[bool, list[str]]:
        problems, _ = compare(lake_state(lake_dir), self.before, self.after)
        code, output = validate_exit_code(lake_dir)
        if code != 0:
            problems.append(f"schema validate exited {code}: {output.strip()}")
        return not problems, problems


# ---------------------------------------------------------------- kill points


@dataclass(frozen=True)
class KillPoint:
    """Kill once `anchor` shows in the progress, `delay_s` later."""

    anchor: str
    delay_s: float

    def __str__(self) -> str:
        return f"{self.anchor} +{self.delay_s:.2f}s"


def kill_points(drill: Drill, points: int, seed: int) -> list[KillPoint]:
    """One point in five in startup and reading; the rest cycle over every commit step of the measured
    ingest (each table's Iceberg commit, each collection's embedding + Milvus replace, the contract), at a
    seeded fraction of that step's measured length, so every write gets hit and not only the longest."""
    rnd = random.Random(seed)
    steps = drill.commit_steps()
    reading = next(t for t, phase in drill.timeline if phase.startswith(COMMIT_PHASES)) - drill.timeline[0][0]
    chosen = []
    for i in range(points):
        if i % 5 == 0:
            chosen.append(KillPoint("discovering sources", rnd.uniform(0, reading)))
        else:
            phase, length = steps[i % len(steps)]
            chosen.append(KillPoint(phase, rnd.uniform(0, length * 1.2)))
    return chosen


def kill_run(drill: Drill, lake_dir: Path, point: KillPoint) -> dict:
    child = Child.start(ingest_args(drill.source_b, lake_dir))
    reached = child.wait_for(point.anchor)
    if reached:
        time.sleep(point.delay_s)
    killed = child.process.poll() is None
    during = child.phase if killed else "completed before the kill"
    if killed:
        child.kill()
    else:
        child.finish()
    problems, rows_lost = compare(lake_state(lake_dir), drill.before, drill.after)
    code, output = validate_exit_code(lake_dir)
    if code != 0:
        problems.append(f"schema validate exited {code}: {output.strip()}")
    return {
        "point": str(point),
        "killed": killed,
        "killed_during": during,
        "consistent": not problems,
        "problems": problems,
        "rows_lost": rows_lost,
    }


def rerun(drill: Drill, lake_dir: Path) -> dict:
    child = Child.start(ingest_args(drill.source_b, lake_dir))
    code = child.finish()
    problems, rows_lost = complete_problems(lake_state(lake_dir), drill.after)
    if code != 0:
        problems.insert(0, f"the rerun exited {code}: {child.error_text[-500:]}")
    return {
        "point": "rerun",
        "killed": False,
        "killed_during": "",
        "consistent": not problems,
        "problems": problems,
        "rows_lost": rows_lost,
    }


def run_kill_points(workdir: Path, points: int = 20, seed: int = 0, drill: Drill | None = None) -> dict:
    """SIGKILL `lakeplanner ingest` at `points` seeded points, RUNS_PER_CHAIN in a row on one lake (each
    later run starts from what the kill before left), each chain ending in an uninterrupted rerun."""
    drill = drill or Drill.prepare(Path(workdir))
    details, reruns = [], []
    lake_dir = None
    for i, point in enumerate(kill_points(drill, points, seed)):
        if i % RUNS_PER_CHAIN == 0:
            if lake_dir is not None:
                reruns.append(rerun(drill, lake_dir))
            lake_dir = drill.fresh_lake(f"kill_{i // RUNS_PER_CHAIN}")
        details.append(kill_run(drill, lake_dir, point))
    if lake_dir is not None:
        reruns.append(rerun(drill, lake_dir))
    return {
        "kill_points": len(details),
        "killed": sum(d["killed"] for d in details),
        "lakes_inconsistent_after_kill": sum(not d["consistent"] for d in details),
        "reruns_incomplete": sum(not r["consistent"] for r in reruns),
        "rows_lost": sum(d["rows_lost"] for d in [*details, *reruns]),
        "details": details,
        "reruns": reruns,
    }


# ---------------------------------------------------------------- concurrency and disk full


def fault_result(name: str, child: Child, lake_ok: bool, problems: list[str]) -> dict:
    text = child.error_text
    said = [line for line in child.stdout.decode(errors="replace").splitlines() if line.strip()]
    errors = [line[line.index("error:") :] for line in text.splitlines() if "error:" in line]
    message = errors[0] if errors else " ".join(said[:2])
    return {
        "name": name,
        "exit_code": child.process.returncode,
        "clear_error": message.startswith("error:") and "hint:" in text,
        "traceback": "Traceback" in text,
        "message": message,
        "lake_ok": lake_ok,
        "problems": problems,
        "stderr_tail": text[-1500:],
    }


def concurrent_ingests(workdir: Path, drill: Drill | None = None) -> dict:
    """A second ingest into a lake while the first commits: it must refuse clearly; the first completes."""
    drill = drill or Drill.prepare(Path(workdir))
    lake_dir = drill.fresh_lake("concurrent")
    first = Child.start(ingest_args(drill.source_b, lake_dir))
    first.wait_for("table ")
    first.process.send_signal(signal.SIGSTOP)  # it holds the lock while the second tries, however slow that start is
    try:
        second = Child.start(ingest_args(drill.source_b, lake_dir))
        second.finish()
    finally:
        first.process.send_signal(signal.SIGCONT)
    problems = [] if first.finish() == 0 else [f"the first ingest failed: {first.error_text[-300:]}"]
    problems += complete_problems(lake_state(lake_dir), drill.after)[0]
    return fault_result("two ingests at once", second, not problems, problems)


def ingest_and_ask(workdir: Path, drill: Drill | None = None) -> dict:
    """An ask while an ingest commits: it answers or fails clearly; the ingest completes."""
    drill = drill or Drill.prepare(Path(workdir))
    lake_dir = drill.fresh_lake("ask_during_ingest")
    ingest = Child.start(ingest_args(drill.source_b, lake_dir))
    ingest.wait_for("table ")
    asker = Child.start(["ask", "Which customer placed order O000007?", "--lake", str(lake_dir)], env=UNREACHABLE_LLM)
    code = asker.finish()
    problems = [] if ingest.finish() == 0 else [f"the ingest failed: {ingest.error_text[-300:]}"]
    problems += complete_problems(lake_state(lake_dir), drill.after)[0]
    result = fault_result("ask during an ingest", asker, not problems, problems)
    result["clear_error"] = result["clear_error"] or (code in (0, 1) and not result["traceback"])  # it answered
    return result


def file_size_limited(limit: int) -> list[str]:
    """The CLI child, its files limited to `limit` bytes by the child itself, before it imports anything
    (a write past the limit then fails with EFBIG, SIGXFSZ being ignored)."""
    return [
        sys.executable,
        "-c",
        "import resource, signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); {RUN_CLI}",
    ]


def disk_full(workdir: Path, drill: Drill | None = None, limit: int = 96 * 1024) -> dict:
    """An ingest whose writes hit a file-size limit: a clear error, the lake at A or B, a rerun completes."""
    drill = drill or Drill.prepare(Path(workdir))
    lake_dir = drill.fresh_lake("disk_full")
    child = Child.start(ingest_args(drill.source_b, lake_dir), command=file_size_limited(limit))
    child.finish()
    ok, problems = drill.lake_ok(lake_dir)
    again = rerun(drill, lake_dir)
    problems += again["problems"]
    return fault_result("disk full during an ingest", child, ok and again["consistent"], problems)
