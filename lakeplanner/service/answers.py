"""Answers served again: the same question, under the same grant, over the same snapshots of every
table and of the document segments, gets the recorded answer without planning or executing. The
repeat is still an answer of its own (a trace id, a run record with who asked, a span), so the audit
shows every request."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from contextlib import suppress

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchTableError
from sqlalchemy import text

from lakeplanner.contract.store import SCHEMA_FILE
from lakeplanner.execute.results import Answer
from lakeplanner.execute.runs import RunRecord, save_run
from lakeplanner.ingest.segments import SEGMENTS_TABLE
from lakeplanner.ingest.tables import snapshot_of
from lakeplanner.lineage.tracing import Lineage
from lakeplanner.policy import Access
from lakeplanner.question.template import normalise

ANSWER_HIT = "answer"  # Answer.plan_cache of an answer served again
CURRENT_METADATA = "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables ORDER BY 1, 2"


def lake_state(lake) -> str:
    """What changes with any commit to the lake: each table's current metadata file (one query on a
    SQL catalog; the snapshot id of every table on any other), and the contract file."""
    catalog = lake.catalog
    if isinstance(catalog, SqlCatalog):
        with catalog.engine.connect() as connection:
            rows = connection.execute(text(CURRENT_METADATA)).fetchall()
        tables = ",".join(f"{ns}.{name}@{location}" for ns, name, location in rows)
    else:
        tables = ",".join(f"{name}@{snapshot_of(lake.table(name))}" for name in lake.table_names())
        with suppress(NoSuchTableError):  # no documents ingested yet
            tables += f",segments@{snapshot_of(catalog.load_table(SEGMENTS_TABLE))}"
    contract = lake.path / SCHEMA_FILE  # saved atomically: a new contract is a new file
    written = contract.stat().st_mtime_ns if contract.exists() else 0
    return f"{tables}|{written}"


def grant_key(access: Access) -> str:
    """What the answer depends on besides the question: the grant, claims bound (not who asked)."""
    return access.model_dump_json(exclude={"principal", "replay", "audit"})


class AnswerCache:
    """Recorded answers by question, grant and lake state; LRU-bounded, shared by request threads."""

    def __init__(self, capacity: int = 512) -> None:
        self.capacity = capacity
        self.entries: OrderedDict[str, RunRecord] = OrderedDict()
        self.lock = threading.Lock()

    @staticmethod
    def key(question: str, access: Access, state: str) -> str:
        return hashlib.sha256(f"{normalise(question)}\n{grant_key(access)}\n{state}".encode()).hexdigest()

    def get(self, key: str) -> RunRecord | None:
        with self.lock:
            record = self.entries.get(key)
            if record is not None:
                self.entries.move_to_end(key)
            return record

    def put(self, key: str, record: RunRecord) -> None:
        if record.answer.abstained:
            return  # an abstention may have been a passing failure (an engine down): ask again next time
        with self.lock:
            self.entries[key] = record
            self.entries.move_to_end(key)
            while len(self.entries) > self.capacity:
                self.entries.popitem(last=False)


def served_again(lake, record: RunRecord, question: str, access: Access, otlp_endpoint: str | None) -> Answer:
    """`record`'s answer as a new, traced answer to `question` asked under `access`."""
    started = time.perf_counter()
    lineage = Lineage(lake.path, otlp_endpoint)
    try:
        attributes = {
            "lakeplanner.question": question,
            **access.decisions(),
            "lakeplanner.answer.cache": ANSWER_HIT,
            "lakeplanner.answer.cached_from": record.trace_id,
        }
        with lineage.span("lakeplanner.ask", **attributes) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            answer = record.answer.model_copy(
                update={
                    "question": question,
                    "trace_id": trace_id,
                    "plan_cache": ANSWER_HIT,
                    "timings": {"total_s": time.perf_counter() - started},
                    "usage": type(record.answer.usage)(),
                }
            )
        save_run(
            lake.path,
            RunRecord(
                trace_id=trace_id,
                question=question,
                plan=record.plan,
                answer=answer,
                principal=access.principal,
                role=access.role,
            ),
        )
    finally:
        lineage.shutdown()
    return answer
