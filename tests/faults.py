"""The fault matrix: each fault is caused for real on a copy of a small lake, met the way a user meets it
(the CLI in a child process), and judged: a clear error that names the problem and the fix, or a correct
answer; no Python traceback; no hang past the configured timeouts; the lake still opens at its last
committed state.

`FAULTS` is a list of `Fault(name, run)`; `run(workdir)` returns {"name", "clear_error", "traceback",
"message" (the first line the user saw), "lake_ok", "answered", "seconds"}. tests/test_faults.py and
benchmarks/adversarial.py both run it; it needs no pytest.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lakeplanner import Lake, sample_lake_path
from tests.batch_child import PLAN

COLOURS = re.compile(r"\x1b\[[0-9;]*m")

QUESTION = "How many customers are there?"
CUSTOMERS = 10  # rows of the small lake's one table, and the scripted answer
REPLIES = {
    "GeneratedPlan": PLAN,
    "SqlDraft": {"sql": "SELECT count(DISTINCT customer_id) AS n FROM customers"},
    "Draft": {"answer": str(CUSTOMERS), "sentence": f"There are {CUSTOMERS}.", "sources": ["E1"], "abstain": False},
}
CLI_LIMIT_S = 120  # a command still running after this long has hung
WORKER_WAIT_S = 60  # for Ray to start a node's worker


@dataclass(frozen=True)
class Fault:
    name: str
    run: Callable[[Path], dict]


@dataclass(frozen=True)
class Seen:
    """What a user saw from one command."""

    rc: int | None  # None: killed after CLI_LIMIT_S
    stdout: str
    stderr: str
    seconds: float

    @property
    def text(self) -> str:
        return self.stdout + self.stderr

    def first_line(self) -> str:
        shown = self.stderr if self.rc else self.stdout
        lines = [line.strip() for line in without_colours(shown or self.text).splitlines() if line.strip()]
        return lines[0] if lines else ""


def without_colours(text: str) -> str:
    """The text as a terminal without colours shows it (rich colours a CLI's errors)."""
    return COLOURS.sub("", text)


# --- the small lake ------------------------------------------------------------------------------

_SOURCE: list[Path] = []
_BASE: list[Path] = []
_STATE: dict[Path, dict] = {}  # a lake's committed state, per path


def scratch() -> Path:
    """A folder for this process's shared files, removed when it exits."""
    folder = Path(tempfile.mkdtemp(prefix="lakeplanner-faults-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def small_source() -> Path:
    """Ten customers and one contract, written once per process."""
    if not _SOURCE:
        source = scratch() / "source"
        source.mkdir()
        lines = (sample_lake_path() / "customers.csv").read_text().splitlines()
        (source / "customers.csv").write_text("\n".join(lines[: CUSTOMERS + 1]) + "\n")
        shutil.copy(sample_lake_path() / "documents" / "contracts" / "CTR-C001.md", source)
        _SOURCE.append(source)
    return _SOURCE[0]


def small_lake(workdir: Path, *, own_files: bool = False) -> Path:
    """The small lake under `workdir`, its committed state noted for lake_ok: a copy of one ingested once per
    process, or, with `own_files`, ingested here (Iceberg metadata names data files by absolute path, so a
    copy still reads the original's: a fault that damages them needs a lake of its own)."""
    path = workdir / "lake"
    if own_files:
        ingested(path)
    else:
        if not _BASE:
            _BASE.append(scratch() / "lake")
            ingested(_BASE[0])
        shutil.copytree(_BASE[0], path)
        _STATE[path] = _STATE[_BASE[0]]
    return path


def ingested(path: Path) -> dict:
    lake = Lake.create(path)
    try:
        lake.ingest(small_source())
    finally:
        lake.close()
    _STATE[path] = lake_state(path)
    return _STATE[path]


def lake_state(path: Path, parts: tuple[str, ...] = ("tables", "collections")) -> dict:
    """Tables and their committed rows, collections and their chunks, as Lake.open(path).info() sees them;
    an error when the lake does not open."""
    lake = Lake.open(path)
    try:
        state = {}
        if "tables" in parts:
            state["tables"] = {n: committed_rows(lake.table(n)) for n in lake.table_names()}
        if "collections" in parts:
            state["collections"] = {c.name: c.chunks for c in lake.info().collections}
        return state
    finally:
        lake.close()


def committed_rows(table) -> int:
    snapshot = table.current_snapshot()
    return int(snapshot.summary["total-records"]) if snapshot and snapshot.summary else 0


def lake_ok(path: Path, parts: tuple[str, ...] = ("tables", "collections")) -> bool:
    """The lake opens and holds what was last committed (only `parts` of it, where a fault destroyed the rest
    by design)."""
    try:
        return lake_state(path, parts) == {p: _STATE[path][p] for p in parts}
    except Exception:
        return False


# --- the user's side: the CLI in a child process -------------------------------------------------


def child_env(**settings: str) -> dict[str, str]:
    """The environment of a child: no setting of this process leaks in (a Ray address, an LLM), wide lines."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKEPLANNER_", "RAY_"))}
    env.update(COLUMNS="400", LAKEPLANNER_CONFIG=os.devnull, PYTHONUNBUFFERED="1", **settings)
    return env


def lakeplanner(
    args: list[str], cwd: Path, during: Callable[[subprocess.Popen], None] | None = None, **settings: str
) -> Seen:
    """Run the command as a user would; `during` gets the running child (to harm it)."""
    command = [sys.executable, "-c", "from lakeplanner.cli import app; app()", *args]
    started = time.monotonic()
    with subprocess.Popen(
        command, cwd=cwd, env=child_env(**settings), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as child:
        if during is not None:
            during(child)
        try:
            out, err = child.communicate(timeout=CLI_LIMIT_S)
            rc = child.returncode
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
            rc = None
    return Seen(rc, out, err, time.monotonic() - started)


def ask(lake: Path, during: Callable[[subprocess.Popen], None] | None = None, **settings: str) -> Seen:
    """`lakeplanner ask`, in process unless `settings` say otherwise."""
    settings = {"LAKEPLANNER_EXEC_MODE": "serial"} | settings
    return lakeplanner(["ask", QUESTION, "--lake", str(lake), "--no-cache"], lake.parent, during, **settings)


def on_endpoint(url: str, **settings: str) -> dict[str, str]:
    """Settings of an OpenAI-compatible model at `url`: 2 s per request, one retry."""
    llm = {
        "LAKEPLANNER_LLM_BACKEND": "openai",
        "LAKEPLANNER_LLM_BASE_URL": url,
        "LAKEPLANNER_LLM_ENDPOINT_RETRIES": "1",
        "LAKEPLANNER_LLM_TIMEOUT_S": "2",
    }
    return llm | settings


def on_model_file(model: str, **settings: str) -> dict[str, str]:
    return {"LAKEPLANNER_LLM_BACKEND": "local", "LAKEPLANNER_LLM_MODEL": model, **settings}


def outcome(name: str, seen: Seen, ok: bool, names: tuple[str, ...] = (), within: float = CLI_LIMIT_S, **extra) -> dict:
    """The fault's record. An error is clear when the command failed with an error (exit 2) or an
    abstention (exit 1) and a hint, in words that name the problem (`names`), within `within` seconds."""
    traceback = "Traceback" in seen.text
    lines = [line.strip().lower() for line in seen.text.splitlines()]
    clear = (
        bool(seen.rc)
        and any(line.startswith(("error:", "abstained:")) for line in lines)
        and any("hint:" in line for line in lines)
        and all(word.lower() in seen.text.lower() for word in names)
        and seen.seconds <= within
    )
    answered = seen.rc == 0 and str(CUSTOMERS) in (line.strip() for line in seen.stdout.splitlines())
    message = seen.first_line() if seen.rc is not None else f"hung: still running after {CLI_LIMIT_S} s"
    return {
        "name": name,
        "clear_error": clear,
        "traceback": traceback,
        "message": message,
        "lake_ok": ok,
        "answered": answered,
        "seconds": round(seen.seconds, 1),
        **extra,
    }


# --- a scripted OpenAI-compatible endpoint --------------------------------------------------------

Behaviour = Callable[[BaseHTTPRequestHandler, str], None]


def schema_title(body: dict) -> str:
    form = body.get("response_format") or {}
    schema = (form.get("json_schema") or {}).get("schema") or form.get("schema") or {}
    return schema.get("title", "")


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, length: int | None = None) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body) if length is None else length))
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(body)
    handler.wfile.flush()
    handler.close_connection = True


def completion(content: str) -> bytes:
    return json.dumps(
        {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        }
    ).encode()


def scripted(handler: BaseHTTPRequestHandler, title: str) -> None:
    send(handler, 200, completion(json.dumps(REPLIES.get(title, {}))))


def replying(status: int, body: bytes) -> Behaviour:
    return lambda handler, title: send(handler, status, body)


def truncated(handler: BaseHTTPRequestHandler, title: str) -> None:
    """Headers promise a whole completion; the connection closes a few bytes in."""
    body = completion(json.dumps(REPLIES.get(title, {})))
    send(handler, 200, body[:20], length=len(body))


def sleeping(seconds: float) -> Behaviour:
    def behave(handler: BaseHTTPRequestHandler, title: str) -> None:
        time.sleep(seconds)
        scripted(handler, title)

    return behave


@contextlib.contextmanager
def endpoint(behave: Behaviour) -> Iterator[str]:
    """Serve `behave` as /v1/chat/completions on a free loopback port; yields the /v1 URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up first
                behave(self, schema_title(body))

        def log_message(self, *args) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- processes that hold a lake's files ------------------------------------------------------------


@contextlib.contextmanager
def holding(code: str, *args: str) -> Iterator[subprocess.Popen]:
    """A child running `code` that prints 'ready' once it holds what it holds, ended (by its pid) after."""
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args], env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        ready = child.stdout.readline().strip()
        if ready != "ready":
            raise RuntimeError(f"the holder did not start: {ready} {child.stderr.read()[-2000:]}")
        yield child
    finally:
        child.kill()
        child.communicate()


HOLD_MILVUS = (
    "import sys, time\n"
    "from lakeplanner import Lake\n"
    "lake = Lake.open(sys.argv[1])\n"
    "lake.vectors.collections()\n"
    "print('ready', flush=True)\n"
    "time.sleep(600)\n"
)
HOLD_SQLITE = (
    "import sqlite3, sys, time\n"
    "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "db.execute('BEGIN EXCLUSIVE')\n"
    "print('ready', flush=True)\n"
    "time.sleep(600)\n"
)


# --- the faults ------------------------------------------------------------------------------------


def endpoint_down(workdir: Path) -> dict:
    lake = small_lake(workdir)
    url = f"http://127.0.0.1:{free_port()}/v1"
    seen = ask(lake, **on_endpoint(url))
    return outcome("llm endpoint down", seen, lake_ok(lake), names=(url, "LAKEPLANNER_LLM_BASE_URL"), within=60)


def endpoint_slow(workdir: Path) -> dict:
    """The endpoint answers after 5 s; the limit is 1 s per request and one retry."""
    lake = small_lake(workdir)
    with endpoint(sleeping(5)) as url:
        seen = ask(lake, **on_endpoint(url, LAKEPLANNER_LLM_TIMEOUT_S="1"))
    return outcome("llm endpoint slow", seen, lake_ok(lake), names=("timed out", "TIMEOUT_S"), within=40)


def endpoint_garbage(name: str, behave: Behaviour, names: tuple[str, ...]) -> Fault:
    def run(workdir: Path) -> dict:
        lake = small_lake(workdir)
        with endpoint(behave) as url:
            seen = ask(lake, **on_endpoint(url))
        return outcome(name, seen, lake_ok(lake), names=names, within=60)

    return Fault(name, run)


def model_missing(workdir: Path) -> dict:
    lake = small_lake(workdir)
    missing = workdir / "no-such-model.gguf"
    seen = ask(lake, **on_model_file(str(missing)))
    return outcome("model file missing", seen, lake_ok(lake), names=(str(missing), "LAKEPLANNER_LLM_MODEL"))


def model_corrupt_path(workdir: Path) -> dict:
    """A GGUF path holding wrong bytes."""
    lake = small_lake(workdir)
    model = workdir / "model.gguf"
    model.write_bytes(b"GGUF" + os.urandom(4096))
    seen = ask(lake, **on_model_file(str(model)))
    return outcome("model file corrupt (a path)", seen, lake_ok(lake), names=(str(model),))


def model_corrupt_pinned(workdir: Path) -> dict:
    """The cached file of a sha256-pinned model holding wrong bytes (in a cache folder of this fault's own)."""
    from lakeplanner.llm.weights import MODELS

    lake = small_lake(workdir)
    cache = workdir / "models"
    cache.mkdir()
    cached = cache / MODELS["small"].filename
    cached.write_bytes(b"GGUF" + os.urandom(4096))
    seen = ask(lake, **on_model_file("small", LAKEPLANNER_LLM_CACHE_DIR=str(cache)))
    return outcome("model file corrupt (sha256-pinned)", seen, lake_ok(lake), names=("sha256", str(cached)))


def milvus_locked(workdir: Path) -> dict:
    lake = small_lake(workdir)
    with holding(HOLD_MILVUS, str(lake)):
        seen = lakeplanner(["lake", "info", "--lake", str(lake)], workdir)
    return outcome("milvus lite file locked", seen, lake_ok(lake), names=("another process", "milvus"))


def milvus_corrupt(workdir: Path) -> dict:
    """milvus.db replaced by a file of garbage bytes; the Iceberg tables are untouched."""
    lake = small_lake(workdir)
    shutil.rmtree(lake / "milvus.db")
    (lake / "milvus.db").write_bytes(os.urandom(8192))
    seen = lakeplanner(["lake", "info", "--lake", str(lake)], workdir)
    return outcome("milvus lite file corrupt", seen, lake_ok(lake, ("tables",)), names=("milvus.db", "re-ingest"))


def milvus_garbage_inside(workdir: Path) -> dict:
    """Every file of milvus.db's collection overwritten with garbage bytes."""
    lake = small_lake(workdir)
    for path in (lake / "milvus.db" / "collections").rglob("*"):
        if path.is_file():
            path.write_bytes(os.urandom(max(64, path.stat().st_size)))
    seen = lakeplanner(["lake", "info", "--lake", str(lake)], workdir)
    return outcome(
        "milvus lite collection files corrupt", seen, lake_ok(lake, ("tables",)), names=("milvus.db", "re-ingest")
    )


def catalog_locked(workdir: Path) -> dict:
    lake = small_lake(workdir)
    with holding(HOLD_SQLITE, str(lake / "catalog.db")):
        seen = lakeplanner(["lake", "info", "--lake", str(lake)], workdir)
    return outcome("sqlite catalog locked", seen, lake_ok(lake), names=("catalog.db", "locked"), within=60)


def catalog_corrupt(workdir: Path) -> dict:
    """catalog.db overwritten with garbage bytes; the Milvus collections are untouched."""
    lake = small_lake(workdir)
    (lake / "catalog.db").write_bytes(os.urandom(20480))
    seen = lakeplanner(["lake", "info", "--lake", str(lake)], workdir)
    ok = lake_ok_without_catalog(lake)
    return outcome("sqlite catalog corrupt", seen, ok, names=("catalog.db", "not a database"))


def lake_ok_without_catalog(lake: Path) -> bool:
    """The documents still open at their last commit."""
    from lakeplanner.ingest.vectors import VectorStore

    store = VectorStore(str(lake / "milvus.db"))
    try:
        return {c: store.count(c) for c in store.collections()} == _STATE[lake]["collections"]
    except Exception:
        return False
    finally:
        store.close()


def data_files(lake: Path, table: str = "customers") -> list[Path]:
    return sorted((lake / "warehouse" / "lake" / table / "data").glob("*.parquet"))


def data_file_fault(name: str, damage: Callable[[Path], None]) -> Fault:
    def run(workdir: Path) -> dict:
        lake = small_lake(workdir, own_files=True)
        for path in data_files(lake):
            damage(path)
        with endpoint(scripted) as url:
            seen = ask(lake, **on_endpoint(url))
        return outcome(name, seen, lake_ok(lake), names=("data file", "warehouse/"))

    return Fault(name, run)


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


# --- a Ray worker killed while it runs a node -----------------------------------------------------


def descendants(root: int) -> list[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def title_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def node_workers(root: int) -> list[int]:
    """The Ray workers under `root` (a process of ours) running a plan node."""
    return [pid for pid in descendants(root) if title_of(pid).startswith("ray::execute_node")]


def ray_worker_killed(workdir: Path) -> dict:
    """`ask` on Ray; while the node's worker waits for its SQL from the model, SIGKILL that worker."""
    lake = small_lake(workdir)
    asked = threading.Event()
    release = threading.Event()

    def behave(handler: BaseHTTPRequestHandler, title: str) -> None:
        if title == "SqlDraft" and not release.is_set():
            asked.set()
            release.wait(CLI_LIMIT_S)
        scripted(handler, title)

    killed: list[int] = []

    def kill_the_worker(child: subprocess.Popen) -> None:
        if asked.wait(CLI_LIMIT_S):
            killed.extend(kill_node_workers(child.pid))
        release.set()

    with endpoint(behave) as url:
        seen = ask(
            lake, kill_the_worker, **on_endpoint(url, LAKEPLANNER_EXEC_MODE="ray", LAKEPLANNER_EXEC_RAY_CPUS="2")
        )
    if not killed:
        raise RuntimeError(f"no Ray worker ran the node, nothing was killed: {seen.first_line()}")
    return outcome("ray worker killed", seen, lake_ok(lake), names=("ray",), killed=len(killed))


def kill_node_workers(root: int) -> list[int]:
    deadline = time.monotonic() + WORKER_WAIT_S
    while time.monotonic() < deadline:
        workers = node_workers(root)
        if workers:
            for pid in workers:
                os.kill(pid, signal.SIGKILL)
            return workers
        time.sleep(0.1)
    return []


FAULTS: list[Fault] = [
    Fault("llm endpoint down", endpoint_down),
    Fault("llm endpoint slow", endpoint_slow),
    endpoint_garbage("llm endpoint returns non-JSON", replying(200, b"<html>oops</html>"), ("endpoint", "JSON")),
    endpoint_garbage("llm endpoint returns wrong JSON", replying(200, b'{"hello": "world"}'), ("endpoint", "choices")),
    endpoint_garbage("llm endpoint returns HTTP 500", replying(500, b'{"error": "boom"}'), ("endpoint", "500")),
    endpoint_garbage("llm endpoint truncates its reply", truncated, ("endpoint",)),
    Fault("model file missing", model_missing),
    Fault("model file corrupt (a path)", model_corrupt_path),
    Fault("model file corrupt (sha256-pinned)", model_corrupt_pinned),
    Fault("milvus lite file locked", milvus_locked),
    Fault("milvus lite file corrupt", milvus_corrupt),
    Fault("milvus lite collection files corrupt", milvus_garbage_inside),
    Fault("sqlite catalog locked", catalog_locked),
    Fault("sqlite catalog corrupt", catalog_corrupt),
    data_file_fault("iceberg data file deleted", Path.unlink),
    data_file_fault("iceberg data file truncated", truncate),
    Fault("ray worker killed", ray_worker_killed),
]
