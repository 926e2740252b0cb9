"""A time box shared by everything one piece of work does (a plan node): every LLM call and SQL
statement inside checks it, so the work stops at its limit even in process, where no thread can be
killed. LLM generation ends early, a running DuckDB statement is interrupted, a new call fails at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from lakeplanner.errors import DeadlineError


@dataclass(frozen=True)
class TimeBox:
    ends: float  # time.monotonic()
    seconds: float
    hint: str

    def left(self) -> float:
        return self.ends - time.monotonic()

    def error(self) -> DeadlineError:
        return DeadlineError(f"timed out after {self.seconds:g} s", hint=self.hint)


_current: ContextVar[TimeBox | None] = ContextVar("lakeplanner_time_box", default=None)


@contextmanager
def time_box(seconds: float, hint: str) -> Iterator[TimeBox]:
    box = TimeBox(time.monotonic() + seconds, seconds, hint)
    token = _current.set(box)
    try:
        yield box
    finally:
        _current.reset(token)


def seconds_left(limit: float) -> float:
    """A call's own limit, or less when the enclosing box ends sooner."""
    box = _current.get()
    return limit if box is None else max(0.0, min(limit, box.left()))


def check_time() -> None:
    """Raise the box's DeadlineError once its time is spent."""
    box = _current.get()
    if box is not None and box.left() <= 0:
        raise box.error()


@contextmanager
def interrupt_when_spent(interrupt) -> Iterator[None]:
    """Call `interrupt()` (e.g. a DuckDB connection's) from a timer when the box ends mid-work."""
    box = _current.get()
    if box is None:
        yield
        return
    check_time()
    timer = threading.Timer(box.left(), interrupt)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
