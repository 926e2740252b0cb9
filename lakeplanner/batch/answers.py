"""The answers table of a batch (`lakeplanner.answers_<name>` in the lake): one row per question id.
Each commit replaces the rows of the ids it writes (delete + append in one Iceberg snapshot that names
the run), so a resumed or repeated run never holds an id twice."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pyarrow as pa
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.expressions import In

from lakeplanner import __version__
from lakeplanner.batch.inputs import BatchQuestion
from lakeplanner.errors import EngineError
from lakeplanner.execute.results import Answer
from lakeplanner.ingest.tables import INTERNAL_NAMESPACE

RUN_PROPERTY = "lakeplanner.batch.run-id"
CITATION = pa.struct(
    [
        ("kind", pa.string()),
        ("source", pa.string()),
        ("snapshot_id", pa.int64()),
        ("row_key", pa.string()),
        ("document_id", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
    ]
)
SCHEMA = pa.schema(
    [
        pa.field("question_id", pa.string(), nullable=False),
        ("question", pa.string()),
        ("role", pa.string()),
        ("principal", pa.string()),
        ("value", pa.string()),
        ("items", pa.list_(pa.string())),
        ("sentence", pa.string()),
        ("citations", pa.list_(CITATION)),
        ("confidence", pa.float64()),
        ("abstained", pa.bool_()),
        ("reason", pa.string()),
        ("error_type", pa.string()),
        ("error", pa.string()),
        ("trace_id", pa.string()),
        ("plan_hash", pa.string()),
        ("cache", pa.string()),
        ("llm_calls", pa.int64()),
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("seconds", pa.float64()),
        ("model", pa.string()),
        ("code_version", pa.string()),
        ("snapshots", pa.list_(pa.struct([("table", pa.string()), ("snapshot_id", pa.int64())]))),
        ("run_id", pa.string()),
        ("answered_at", pa.timestamp("us", tz="UTC")),
    ]
)


def table_name(name: str) -> str:
    return f"{INTERNAL_NAMESPACE}.answers_{name}"


def answer_row(question: BatchQuestion, answer: Answer, plan_json: str, model: str, run_id: str) -> dict:
    snapshots = {t: s for node in answer.nodes for t, s in node.snapshots.items() if s is not None}
    return {
        "question_id": question.id,
        "question": question.question,
        "role": question.role,
        "principal": question.principal,
        "value": answer.value,
        "items": answer.items,
        "sentence": answer.text,
        "citations": [c.model_dump(exclude={"snippet"}) for c in answer.citations],
        "confidence": answer.confidence,
        "abstained": answer.abstained,
        "reason": answer.reason,
        "error_type": None,
        "error": None,
        "trace_id": answer.trace_id,
        "plan_hash": hashlib.sha256(plan_json.encode()).hexdigest()[:16] if plan_json else None,
        "cache": answer.plan_cache,
        "llm_calls": answer.usage.llm_calls,
        "input_tokens": answer.usage.input_tokens,
        "output_tokens": answer.usage.output_tokens,
        "seconds": answer.timings.get("total_s"),
        "model": model,
        "code_version": __version__,
        "snapshots": [{"table": t, "snapshot_id": s} for t, s in sorted(snapshots.items())],
        "run_id": run_id,
        "answered_at": datetime.now(UTC),
    }


def failure_row(question: BatchQuestion, error: Exception, seconds: float, model: str, run_id: str) -> dict:
    return {
        "question_id": question.id,
        "question": question.question,
        "role": question.role,
        "principal": question.principal,
        "abstained": False,
        "error_type": type(error).__name__,
        "error": str(getattr(error, "message", error))[:2000],
        "seconds": seconds,
        "model": model,
        "code_version": __version__,
        "run_id": run_id,
        "answered_at": datetime.now(UTC),
    }


class AnswersTable:
    def __init__(self, catalog, name: str) -> None:
        self.catalog = catalog
        self.identifier = table_name(name)

    def table(self):
        try:
            return self.catalog.load_table(self.identifier)
        except NoSuchTableError:
            return self.catalog.create_table(self.identifier, schema=SCHEMA)

    def committed(self) -> dict[str, bool]:
        """Question id -> whether its committed row is a failure."""
        try:
            table = self.catalog.load_table(self.identifier)
        except NoSuchTableError:
            return {}
        rows = table.scan(selected_fields=("question_id", "error_type")).to_arrow().to_pylist()
        return {r["question_id"]: r["error_type"] is not None for r in rows}

    def commit(self, rows: list[dict], run_id: str, replace: bool = False) -> None:
        """Add `rows` in one snapshot that names the run; with `replace`, the committed rows of their
        ids go in the same snapshot (a failure asked again)."""
        if not rows:
            return
        data = pa.Table.from_pylist(rows, schema=SCHEMA)
        ids = [r["question_id"] for r in rows]
        try:
            with self.table().transaction() as tx:
                if replace:
                    tx.overwrite(
                        data, overwrite_filter=In("question_id", ids), snapshot_properties={RUN_PROPERTY: run_id}
                    )
                else:
                    tx.append(data, snapshot_properties={RUN_PROPERTY: run_id})
        except Exception as e:
            raise EngineError(
                f"committing {len(rows)} answers to {self.identifier} failed: {e}",
                hint="nothing of this batch was committed; run the same command again to continue",
            ) from e
