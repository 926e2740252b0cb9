"""KV states of prompt prefixes, kept across calls so a fixed prefix is evaluated once per process.

llama.cpp reuses only the prefix a prompt shares with the *previous* call; calls that alternate
between prompt families (planner, SQL writer, evidence selector, synthesis) lose it every time.
This cache keeps a snapshot of the model's sequence state at a prompt's checkpoints: the end of its
system message (instructions, schema slice, examples) and the cache points inside it (where a
family's fixed instructions end and a per-question schema slice begins; `system(*parts)` marks
them). A call restores the longest snapshot its prompt starts with. The key is the token sequence
itself, so a changed schema or instruction matches a shorter snapshot; nothing is invalidated.

With a directory, snapshots are also written there, so the next process (another `lakeplanner ask`,
a batch worker) restores them instead of evaluating its prefixes again. Each file holds its token
sequence and the state; the directory is per model file and llama.cpp version (states are not
portable between them), and the least recently used files go first past the same capacity.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Snapshot:
    """The model's sequence state after evaluating exactly `tokens`."""

    tokens: tuple[int, ...]
    state: bytes


def shared_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


HEADER = struct.Struct("<4sI")  # magic, token count; then the tokens (int32), then the state
MAGIC = b"LPKV"


def write_snapshot(directory: Path, snapshot: Snapshot) -> None:
    """Atomically: a reader sees the whole file or none (processes share the directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    tokens = np.asarray(snapshot.tokens, dtype="<i4").tobytes()
    with tempfile.NamedTemporaryFile(dir=directory, suffix=".tmp", delete=False) as fh:
        fh.write(HEADER.pack(MAGIC, len(snapshot.tokens)) + tokens + snapshot.state)
    os.replace(fh.name, file_for(directory, snapshot.tokens))


def file_for(directory: Path, tokens: tuple[int, ...]) -> Path:
    return directory / (hashlib.sha256(np.asarray(tokens, dtype="<i4").tobytes()).hexdigest()[:32] + ".kv")


def read_tokens(path: Path) -> tuple[int, ...] | None:
    try:
        with path.open("rb") as fh:
            magic, count = HEADER.unpack(fh.read(HEADER.size))
            tokens = np.frombuffer(fh.read(4 * count), dtype="<i4")
    except (OSError, struct.error, ValueError):
        return None
    return tuple(int(t) for t in tokens) if magic == MAGIC and len(tokens) == count else None


def read_state(path: Path, tokens: tuple[int, ...]) -> bytes | None:
    try:
        data = path.read_bytes()
        os.utime(path)  # recently used: kept longest
    except OSError:
        return None
    return data[HEADER.size + 4 * len(tokens) :]


def state_directory(root: Path, model_file: Path, *identity: object) -> Path:
    """Where a model's snapshots live: one folder per model file (name, size) and runtime identity."""
    stat = model_file.stat()
    key = json.dumps([model_file.name, stat.st_size, *map(str, identity)])
    return root / hashlib.sha256(key.encode()).hexdigest()[:16]


class PrefixStates:
    """Snapshots by token prefix, least recently used dropped first past `capacity_bytes` (in memory,
    and in `directory` when given)."""

    def __init__(self, capacity_bytes: int, directory: Path | None = None) -> None:
        self.capacity_bytes = capacity_bytes
        self.directory = directory
        self._snapshots: OrderedDict[tuple[int, ...], Snapshot] = OrderedDict()
        self._on_disk: dict[tuple[int, ...], Path] = {}
        self.size_bytes = 0
        if directory is not None and directory.is_dir():
            for path in sorted(directory.glob("*.kv"), key=lambda p: p.stat().st_mtime):
                if (tokens := read_tokens(path)) is not None:
                    self._on_disk[tokens] = path

    def __len__(self) -> int:
        return len(self._snapshots.keys() | self._on_disk.keys())

    def __contains__(self, tokens: Sequence[int]) -> bool:
        return tuple(tokens) in self._snapshots or tuple(tokens) in self._on_disk

    def longest(self, prompt: Sequence[int]) -> Snapshot | None:
        """The longest snapshot whose tokens `prompt` starts with (read from disk if only there)."""
        best = None
        for tokens in [*self._snapshots, *self._on_disk]:
            if (best is None or len(tokens) > len(best)) and tuple(prompt[: len(tokens)]) == tokens:
                best = tokens
        if best is None:
            return None
        if best in self._snapshots:
            self._snapshots.move_to_end(best)
            return self._snapshots[best]
        state = read_state(self._on_disk[best], best)
        if state is None:  # removed by another process meanwhile
            del self._on_disk[best]
            return self.longest(prompt)
        self.remember(snapshot := Snapshot(best, state))
        return snapshot

    def put(self, snapshot: Snapshot) -> None:
        if len(snapshot.state) > self.capacity_bytes:
            return
        self.remember(snapshot)
        if self.directory is not None:
            try:
                write_snapshot(self.directory, snapshot)
                self._on_disk[snapshot.tokens] = file_for(self.directory, snapshot.tokens)
                self.trim_directory()
            except OSError:  # a full or read-only cache directory costs only the reuse across processes
                pass

    def trim_directory(self) -> None:
        files = sorted(self.directory.glob("*.kv"), key=lambda p: p.stat().st_mtime, reverse=True)
        total = 0
        for path in files:
            total += path.stat().st_size
            if total > self.capacity_bytes:
                path.unlink(missing_ok=True)
        self._on_disk = {tokens: path for tokens, path in self._on_disk.items() if path.exists()}

    def remember(self, snapshot: Snapshot) -> None:
        old = self._snapshots.pop(snapshot.tokens, None)
        if old is not None:
            self.size_bytes -= len(old.state)
        self._snapshots[snapshot.tokens] = snapshot
        self.size_bytes += len(snapshot.state)
        while self.size_bytes > self.capacity_bytes:
            _, dropped = self._snapshots.popitem(last=False)
            self.size_bytes -= len(dropped.state)
