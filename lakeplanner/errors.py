"""One root error for everything lakeplanner raises; each message names the problem and the fix."""

from __future__ import annotations


class LakeplannerError(Exception):
    """Root of every lakeplanner error. ``hint`` says what the user should do next."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(f"{message}\n  hint: {hint}" if hint else message)


class LakeNotFoundError(LakeplannerError):
    """The lake directory does not exist or holds no lake."""


class LakeExistsError(LakeplannerError):
    """A lake already exists where a new one was to be created."""


class BadSourceError(LakeplannerError):
    """A source file cannot be read or violates an ingestion limit."""

    def __init__(self, path: str, reason: str, *, hint: str | None = None) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}", hint=hint)


class ContractError(LakeplannerError):
    """schema.yaml is missing, malformed or inconsistent with the lake."""


class ModelFileError(LakeplannerError):
    """A model file shipped in a package is missing or fails its checksum."""


class PlanError(LakeplannerError):
    """A plan cannot run as given (a cycle, a step reading a label no step binds)."""


class EngineError(LakeplannerError):
    """An engine (Iceberg catalog, Milvus, DuckDB) failed; the message names the engine."""


class MissingDependencyError(LakeplannerError):
    """An optional dependency is not installed; the hint holds the pip line."""


class LLMOutputError(LakeplannerError):
    """The model's output stayed invalid after the bounded repair retries."""

    def __init__(self, message: str, *, raw: str, attempts: int, hint: str | None = None) -> None:
        self.raw = raw
        self.attempts = attempts
        super().__init__(message, hint=hint)


class LLMUnavailableError(LakeplannerError):
    """The LLM backend (a local model or an endpoint) could not be reached or loaded."""


class DeadlineError(LakeplannerError):
    """Work ran past its time box (a plan node's node_timeout_s); the hint names the setting."""


class PolicyError(LakeplannerError):
    """A policy file is malformed, or a principal lacks what its role's policy needs (a claim)."""


class AccessDeniedError(LakeplannerError):
    """The role may not read a table or collection, or may not do what it asked (replay, audit)."""


class LakeLockedError(EngineError):
    """Another process holds the lake's embedded Milvus Lite file (one process at a time)."""


class SqlError(LakeplannerError):
    """A statement that may not run: it does not parse, is not one SELECT, or names unknown things."""


class UnsafeSqlError(SqlError):
    """A statement that would do more than read the lake's tables: it is refused, never run."""


class IngestRunningError(LakeLockedError):
    """Another ingest holds the lake's ingest lock (one ingest at a time writes a lake)."""


class DiskFullError(EngineError):
    """The disk holding the lake is full, or a write ran past the process's file-size limit."""


_FULL_DISK_TEXTS = ("No space left on device", "File too large", "Disk quota exceeded", "database or disk is full")


def is_disk_full(error: BaseException) -> bool:
    """Whether `error`, or any error it was raised from, says the disk (or the file-size limit) is full.
    Engines wrap the OSError into their own types and keep only its text, so the text counts too."""
    seen: BaseException | None = error
    while seen is not None:
        if any(text in str(seen) for text in _FULL_DISK_TEXTS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
