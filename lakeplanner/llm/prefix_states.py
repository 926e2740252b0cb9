"""KV states of prompt prefixes, kept across calls so a fixed prefix is evaluated once per process.

llama.cpp reuses only the prefix a prompt shares with the *previous* call; calls that alternate
between prompt families (planner, SQL writer, evidence selector, synthesis) lose it every time.
This cache keeps a snapshot of the model's sequence state at a prompt's checkpoints: the end of its
system message (instructions, schema slice, examples) and the cache points inside it (where a
family's fixed instructions end and a per-question schema slice begins; `system(*parts)` marks
them). A call restores the longest snapshot its prompt starts with. The key is the token sequence
itself, so a changed schema or instruction matches a shorter snapshot; nothing is invalidated.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass


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


class PrefixStates:
    """Snapshots by token prefix, least recently used dropped first past `capacity_bytes`."""

    def __init__(self, capacity_bytes: int) -> None:
        self.capacity_bytes = capacity_bytes
        self._snapshots: OrderedDict[tuple[int, ...], Snapshot] = OrderedDict()
        self.size_bytes = 0

    def __len__(self) -> int:
        return len(self._snapshots)

    def __contains__(self, tokens: Sequence[int]) -> bool:
        return tuple(tokens) in self._snapshots

    def longest(self, prompt: Sequence[int]) -> Snapshot | None:
        """The longest snapshot whose tokens `prompt` starts with."""
        best = None
        for tokens, snapshot in self._snapshots.items():
            if (best is None or len(tokens) > len(best.tokens)) and tuple(prompt[: len(tokens)]) == tokens:
                best = snapshot
        if best is not None:
            self._snapshots.move_to_end(best.tokens)
        return best

    def put(self, snapshot: Snapshot) -> None:
        if len(snapshot.state) > self.capacity_bytes:
            return
        old = self._snapshots.pop(snapshot.tokens, None)
        if old is not None:
            self.size_bytes -= len(old.state)
        self._snapshots[snapshot.tokens] = snapshot
        self.size_bytes += len(snapshot.state)
        while self.size_bytes > self.capacity_bytes:
            _, dropped = self._snapshots.popitem(last=False)
            self.size_bytes -= len(dropped.state)
