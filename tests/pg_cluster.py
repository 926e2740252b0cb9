"""A throwaway PostgreSQL cluster (Debian's postgresql package): initdb in a temp dir, a free loopback port,
trust auth for one user, stopped and removed when the block ends. As root it runs as the `postgres` user
(initdb refuses root)."""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def as_cluster_owner(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextmanager
def postgres_cluster(user: str = "lakeplanner") -> Iterator[str]:
    """Yields a SQLAlchemy URI (postgresql+psycopg://user@127.0.0.1:PORT/postgres)."""
    binaries = postgres_bin()
    if binaries is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql, or `make postgres`)")
    root = Path(tempfile.mkdtemp(prefix="lakeplanner-pg-"))
    root.chmod(0o777)
    data = root / "data"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pg_ctl = [str(binaries / "pg_ctl"), "-D", str(data)]
    quiet = {"check": True, "capture_output": True}
    subprocess.run(as_cluster_owner([str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", user]), **quiet)
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(as_cluster_owner([*pg_ctl, "-o", options, "-l", str(root / "log"), "-w", "start"]), **quiet)
    try:
        yield f"postgresql+psycopg://{user}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(as_cluster_owner([*pg_ctl, "-m", "immediate", "-w", "stop"]), capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
