"""Replay: re-run a recorded answer's SQL at the Iceberg snapshots it read, re-read its evidence
segments at the recorded segments snapshot, and say whether everything still matches."""

from __future__ import annotations

from pydantic import BaseModel
from pyiceberg.expressions import And, EqualTo

from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.engines import get_engine
from lakeplanner.execute.runs import load_run
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.execute.sql.statement import result_digest
from lakeplanner.ingest.segments import SEGMENTS_TABLE, content_hash
from lakeplanner.policy.readonly import parse_select


class Check(BaseModel):
    node: str
    what: str  # the statement, or the evidence uri and offsets
    matches: bool
    detail: str = ""


class ReplayReport(BaseModel):
    trace_id: str
    question: str
    answer: str | None
    checks: list[Check]

    @property
    def matches(self) -> bool:
        return all(c.matches for c in self.checks)


def replay(lake, trace_id: str, settings: ExecSettings | None = None) -> ReplayReport:
    record = load_run(lake.path, trace_id)
    settings = settings or ExecSettings()
    engine = get_engine(settings.sql_engine, lake, settings)
    checks: list[Check] = []
    for node in record.answer.nodes:
        for run in node.sql:
            try:
                scan = engine.run(parse_select(run.sql), run.snapshots)
                same = result_digest(scan.table) == run.digest
                detail = f"{scan.table.num_rows} rows now, {run.rows} then"
            except LakeplannerError as e:
                same, detail = False, e.message
            checks.append(Check(node=node.label, what=run.sql, matches=same, detail=detail))
        snapshot = node.snapshots.get(SEGMENTS_TABLE)
        for item in node.evidence:
            checks.append(evidence_check(lake, node.label, item, snapshot))
    return ReplayReport(trace_id=trace_id, question=record.question, answer=record.answer.value, checks=checks)


def evidence_check(lake, label: str, item, snapshot: int | None) -> Check:
    what = f"{item.uri} [{item.offsets[0]}, {item.offsets[1]})"
    try:
        table = lake.catalog.load_table(SEGMENTS_TABLE)
    except Exception as e:
        return Check(node=label, what=what, matches=False, detail=f"segments unreadable: {e}")
    matches = passage_matches if item.level == "passage" else segment_matches
    same = matches(table, item, snapshot)
    return Check(
        node=label, what=what, matches=same, detail="content hash matches" if same else "segment changed or gone"
    )


def segment_matches(table, item, snapshot: int | None) -> bool:
    if item.level == "row":
        row_filter = And(EqualTo("source", item.uri), EqualTo("row_key", str(item.meta.get("row_key"))))
    else:
        source, _, container = item.uri.partition("/")
        row_filter = And(
            And(EqualTo("source", source), EqualTo("container", container)), EqualTo("start", item.offsets[0])
        )
    rows = table.scan(row_filter=row_filter, snapshot_id=snapshot).to_arrow().to_pylist()
    return item.meta.get("sha1") in {r["content_hash"] for r in rows if r["level"] == item.level}


def passage_matches(table, item, snapshot: int | None) -> bool:
    """A passage (a run of sentences of a long paragraph) is the text between its offsets in the
    paragraph that holds it: that slice is re-hashed."""
    source, _, container = item.uri.partition("/")
    start, end = item.offsets
    row_filter = And(And(EqualTo("source", source), EqualTo("container", container)), EqualTo("level", "paragraph"))
    paragraphs = table.scan(row_filter=row_filter, snapshot_id=snapshot).to_arrow().to_pylist()
    return any(
        p["start"] <= start
        and end <= p["end"]
        and content_hash(p["content"][start - p["start"] : end - p["start"]]) == item.meta.get("sha1")
        for p in paragraphs
    )
