"""A real two-node Ray cluster on this machine (`ray start --head`, then `ray start --address`), with
token authentication as Ray 2.60 starts it, and a teardown that stops only this cluster's processes
(`ray stop` would also stop every other Ray on the machine, the test session's own included)."""

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pydantic import BaseModel

RAY = str(Path(sys.executable).parent / "ray")


class Cluster(BaseModel):
    dashboard: str  # the Jobs API's address
    token: str  # Ray's token authentication, on by default since 2.5x


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def agent_ports() -> list[str]:
    """Free ports for a node's dashboard agent: its default (52365) is taken by any other Ray on the
    machine (the test session's own), and a head without its agent accepts no job."""
    return [f"--dashboard-agent-listen-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}"]


def processes() -> dict[int, int]:
    """pid -> parent pid, of every process now."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(stat.parent.name)] = int(fields[1])
    return out


def descends_from(pid: int, ancestor: int, parents: dict[int, int]) -> bool:
    while pid in parents and pid > 1:
        if pid == ancestor:
            return True
        pid = parents[pid]
    return False


def kill_started_since(before: set[int]) -> None:
    """SIGKILL the processes started since `before` that are not this test session's own children:
    the daemons `ray start` left behind, their workers and the jobs' drivers."""
    now = processes()
    for pid in now:
        if pid not in before and not descends_from(pid, os.getpid(), now):
            with suppress(ProcessLookupError):
                os.kill(pid, 9)


@contextmanager
def two_node_cluster(worker_cpus: int = 2) -> Iterator[Cluster]:
    before = set(processes())
    temp = tempfile.mkdtemp(prefix="rc", dir="/tmp")  # short: Ray's socket paths must stay under 108 bytes
    port, dashboard = free_port(), free_port()
    token = secrets.token_hex(32)
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
    common = ["--disable-usage-stats", f"--temp-dir={temp}"]
    try:
        head = [f"--port={port}", "--num-cpus=1", "--include-dashboard=true", "--dashboard-host=127.0.0.1"]
        head += [f"--dashboard-port={dashboard}", f"--ray-client-server-port={free_port()}"]
        subprocess.run([RAY, "start", "--head", *head, *agent_ports(), *common], env=env, check=True)
        worker = [f"--address=127.0.0.1:{port}", f"--num-cpus={worker_cpus}", *agent_ports()]
        subprocess.run([RAY, "start", *worker, *common], env=env, check=True)
        yield Cluster(dashboard=f"http://127.0.0.1:{dashboard}", token=token)
    finally:
        kill_started_since(before)
        time.sleep(1)
