"""Run records: what replay needs besides the spans (the plan, each statement as it ran at its
snapshots, the evidence with its hashes, the answer), one JSON file per trace id in the lake."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.results import Answer
from lakeplanner.plan.model import Plan

RUNS = "traces/runs"


class RunRecord(BaseModel):
    trace_id: str
    question: str
    plan: Plan
    answer: Answer
    principal: str = "local"
    role: str = "default"
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    def sources(self) -> list[str]:
        """The tables and collections the answer read."""
        read = {n.source for n in self.answer.nodes if n.source}
        read |= {t for n in self.answer.nodes for t in n.snapshots if "." not in t}  # not the internal segments
        return sorted(read)


def save_run(lake_path: Path, record: RunRecord) -> Path:
    path = Path(lake_path) / RUNS / f"{record.trace_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(record.model_dump_json(indent=1))
    temporary.replace(path)
    return path


def load_run(lake_path: Path, trace_id: str) -> RunRecord:
    path = Path(lake_path) / RUNS / f"{trace_id}.json"
    if not path.exists():
        known = sorted(p.stem for p in path.parent.glob("*.json"))[-5:] if path.parent.exists() else []
        raise LakeplannerError(
            f"no recorded run {trace_id!r} in {lake_path}",
            hint=f"recent trace ids: {', '.join(known)}" if known else "ask a question first: lakeplanner ask",
        )
    return RunRecord.model_validate_json(path.read_text())


def list_runs(lake_path: Path) -> list[str]:
    folder = Path(lake_path) / RUNS
    return sorted((p.stem for p in folder.glob("*.json")), key=lambda t: (folder / f"{t}.json").stat().st_mtime)
