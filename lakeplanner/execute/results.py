"""What execution produces: evidence, node results, citations and the final answer (typed, JSON-able)."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, Field

from lakeplanner.lineage.steps import Step, Usage
from lakeplanner.plan.model import PlanNode


def document_address(source: str, document_id: str) -> str:
    """Where evidence from a document says it lies: its collection, then its id."""
    return f"{source}/{document_id}"


class Evidence(BaseModel):
    """One item of the canonical evidence package (seed 001 App. 9.3.5): deterministic id from uri and
    offsets; text spans carry [start, end) character offsets, rows carry their key."""

    id: str
    level: str  # paragraph, sentence, row
    uri: str  # collection/document_id or table@snapshot
    offsets: tuple[int, int]
    snippet: str
    meta: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, level: str, uri: str, offsets: tuple[int, int], snippet: str, **meta: Any) -> Evidence:
        digest = hashlib.sha1(f"{uri}|{offsets[0]}|{offsets[1]}".encode()).hexdigest()[:16]
        return cls(id=digest, level=level, uri=uri, offsets=offsets, snippet=snippet, meta=meta)


def canonical(items: list[Evidence]) -> list[Evidence]:
    """Deduplicated by (uri, offsets) and ordered by uri, then offsets."""
    unique = {(e.uri, e.offsets): e for e in items}
    return [unique[k] for k in sorted(unique)]


class SqlRun(BaseModel):
    """A statement as it ran: the engine, the tables' snapshot ids, rows back, bytes scanned."""

    sql: str
    engine: str
    snapshots: dict[str, int | None]
    rows: int
    bytes_scanned: int = 0
    digest: str = ""  # sha1 of the result rows, for replay


class NodeResult(BaseModel):
    label: str
    tool: str
    source: str
    question: str
    returns: list[str] = Field(default_factory=list)  # the columns the plan said later steps need
    years: list[int] = Field(default_factory=list)  # the years its sub-question names (its frame's)
    columns: list[str] = Field(default_factory=list)
    rows: list[dict[str, Any]] = Field(default_factory=list)  # capped; see rows_total
    rows_total: int = 0
    row_keys: dict[str, list[str]] = Field(default_factory=dict)  # table -> keys of the rows used
    snapshots: dict[str, int | None] = Field(default_factory=dict)  # table -> Iceberg snapshot read
    answer: str | None = None  # vector nodes: the value read in the evidence
    sql: list[SqlRun] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    error: str | None = None
    advice: list[str] = Field(default_factory=list)
    exposed: bool = False
    answer_description: str | None = None
    steps: list[Step] = Field(default_factory=list)
    bytes_in: int = 0  # bytes of bound variables this node received
    rows_in: int = 0
    started_ns: int = 0
    seconds: float = 0.0

    @classmethod
    def for_node(cls, node: PlanNode, **fields: Any) -> NodeResult:
        """An empty result of `node`, with the node's own fields copied."""
        return cls(
            label=node.label,
            tool=node.tool,
            source=node.source,
            question=node.question,
            exposed=node.should_expose_answer,
            answer_description=node.answer_description,
            returns=list(node.returns),
            years=node.frame.years if node.frame is not None else [],
            **fields,
        )

    @property
    def ok(self) -> bool:
        return self.error is None


class Citation(BaseModel):
    kind: Literal["row", "span"]
    source: str  # table or collection
    snapshot_id: int | None = None
    row_key: str | None = None
    document_id: str | None = None
    start: int | None = None
    end: int | None = None
    snippet: str = ""


class Answer(BaseModel):
    question: str
    value: str | None = None  # the items joined with "; "
    items: list[str] = Field(default_factory=list)  # one per value asked for (a list question has several)
    text: str = ""
    citations: list[Citation] = Field(default_factory=list)
    confidence: float = 0.0
    abstained: bool = False
    reason: str | None = None
    trace_id: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    nodes: list[NodeResult] = Field(default_factory=list)
    advice: list[str] = Field(default_factory=list)
    plan_cache: str | None = None
    data_chars: int = 0  # characters of lake data the LLM was shown for this answer
    usage: Usage = Field(default_factory=Usage)
