"""One ingest per lake at a time, and a journal that lets a killed ingest be settled later.

schema.yaml is the lake's commit point: it is saved last. Before its first write an ingest journals
the sources it is about to create that the contract does not record yet; if it dies before saving
the contract, whoever next holds the ingest lock drops what those sources left behind (a table, a
collection, segments), so the lake holds nothing its contract does not record.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from lakeplanner.errors import IngestRunningError

LOCK_FILE = ".ingest.lock"
JOURNAL_FILE = ".ingest-journal.json"


class NewSource(BaseModel):
    name: str
    table: str | None = None
    collection: str | None = None


class IngestJournal(BaseModel):
    """The sources an ingest creates that the contract it started from does not record."""

    sources: list[NewSource] = []


@contextmanager
def ingest_lock(lake_dir: Path) -> Iterator[None]:
    """Hold the lake's ingest lock (an flock, released by the kernel when its holder dies)."""
    handle = (lake_dir / LOCK_FILE).open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        raise IngestRunningError(
            f"another ingest into {lake_dir} is running" + (f" (process {holder})" if holder else ""),
            hint="wait for it to finish, then run this ingest again: one ingest at a time writes a lake",
        ) from None
    try:
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()


def write_journal(lake_dir: Path, journal: IngestJournal) -> None:
    fd, tmp = tempfile.mkstemp(dir=lake_dir, prefix=".journal-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        fh.write(journal.model_dump_json())
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, lake_dir / JOURNAL_FILE)


def read_journal(lake_dir: Path) -> IngestJournal | None:
    """The journal an unfinished ingest left (written whole by a rename, so never half)."""
    path = lake_dir / JOURNAL_FILE
    return IngestJournal.model_validate_json(path.read_text()) if path.exists() else None


def clear_journal(lake_dir: Path) -> None:
    (lake_dir / JOURNAL_FILE).unlink(missing_ok=True)
