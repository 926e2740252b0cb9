"""A throwaway Phoenix server (the trace backend, from its own virtual environment, `make phoenix`):
`phoenix serve` on free loopback ports with its database in a temp dir, stopped when the block ends;
spans are read back through Phoenix's own Python client, run in that environment."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
PHOENIX_VENV = Path(os.environ.get("LAKEPLANNER_PHOENIX_VENV", REPO / ".venv-phoenix"))
READ_SPANS = Path(__file__).parent / "phoenix_spans.py"


def phoenix_python() -> Path | None:
    python = PHOENIX_VENV / "bin" / "python"
    return python if (PHOENIX_VENV / "bin" / "phoenix").exists() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def phoenix_server(timeout_s: float = 180) -> Iterator[str]:
    """Yields Phoenix's base URL (http://127.0.0.1:PORT); OTLP/HTTP goes to BASE/v1/traces."""
    if phoenix_python() is None:
        raise RuntimeError(f"Phoenix is not installed in {PHOENIX_VENV} (run `make phoenix`)")
    root = Path(tempfile.mkdtemp(prefix="lakeplanner-phoenix-"))
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_WORKING_DIR": str(root),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (root / "server.log").open("w")
    server = subprocess.Popen(
        [str(PHOENIX_VENV / "bin" / "phoenix"), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while not healthy(base):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Phoenix did not start: {(root / 'server.log').read_text()[-2000:]}")
            time.sleep(1)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def healthy(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def spans_in_phoenix(base: str, project: str = "default") -> list[dict]:
    """Every span Phoenix holds for `project`, as its Python client returns them."""
    done = subprocess.run(
        [str(phoenix_python()), str(READ_SPANS), base, project], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)
