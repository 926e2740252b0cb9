"""The plan: an immutable DAG of atomic sub-queries, each answerable from one source (seed 000 §3.2).

Dependencies are not declared; they are derived from `$var_n` / `$var_n.column` references in a
node's question, SQL or filter, so a plan cannot say one thing and do another.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from lakeplanner.question import QuestionFrame
from lakeplanner.question.read import read_step
from lakeplanner.question.steps import LABEL, REFERENCE, matched_columns_in

# a plan as JSON without its frames, where the frame is kept apart (a trace's root span) or not at all (a
# cached plan, which its asker frames)
WITHOUT_FRAMES = {"frame": True, "nodes": {"__all__": {"frame"}}}


class Tool(StrEnum):
    """What a node runs against: SQL over Iceberg tables, vector search, or key/link traversal."""

    sql = "sql"
    vector = "vector"
    graph = "graph"


class VarRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    column: str | None = None


class PlanNode(BaseModel):
    """One sub-query. Fields are loose on purpose: the validator, not parsing, reports what is wrong."""

    model_config = ConfigDict(frozen=True)

    question: str = Field(description="the atomic sub-question, may reference $var_n.column")
    tool: str = Field(description="sql, vector or graph")
    label: str = Field(description="$var_n, the variable this node binds")
    source: str = Field("", description="the table (sql, graph) or collection (vector) the node reads")
    sql: str | None = Field(None, description="sql nodes: the SELECT, if already written")
    filter: str | None = Field(
        None, description="vector nodes: a metadata filter, e.g. document_id in $var_1.document_id"
    )
    returns: tuple[str, ...] = Field((), description="columns the node's result carries")
    should_expose_answer: bool = False
    answer_description: str | None = None
    frame: QuestionFrame | None = Field(
        None, description="the step's sub-question as read under the question's packs (set by `Plan.framed`)"
    )

    def asked_frame(self, text: str | None = None) -> QuestionFrame | None:
        """The frame of what the step asks (`text`, e.g. its question with its inputs spelled in, else
        its question): its own frame when it reads that, else read under its frame's packs; None when
        it carries no frame."""
        return read_step(self.frame, self.question if text is None else text) if self.frame is not None else None

    def references(self) -> list[VarRef]:
        text = " ".join(t for t in (self.question, self.sql, self.filter) if t)
        return [VarRef(label=f"$var_{n}", column=c) for n, c in REFERENCE.findall(text)]

    def matched_columns(self) -> dict[str, tuple[str, str]]:
        """`$var_n.column` -> (table, column) the question says its values are matched against; a
        column named without its table is the node's source's."""
        return {
            reference: (table or self.source, column) for table, column, reference in matched_columns_in(self.question)
        }


class Plan(BaseModel):
    model_config = ConfigDict(frozen=True)

    question: str = ""
    nodes: tuple[PlanNode, ...] = ()
    frame: QuestionFrame | None = None  # the question as read, filled and bound once, at the ask entry

    def framed(self, frame: QuestionFrame | None = None) -> Plan:
        """The plan carrying `frame` (or its own), each node with the frame of its sub-question: what
        goes to the executor (and to Ray workers) reads no words again."""
        frame = frame or self.frame
        if frame is None:
            return self
        nodes = tuple(self.step_framed(n, frame) for n in self.nodes)
        return self.model_copy(update={"frame": frame, "question": self.question or frame.text, "nodes": nodes})

    @staticmethod
    def step_framed(node: PlanNode, frame: QuestionFrame) -> PlanNode:
        if node.frame is not None and node.frame.text == node.question and node.frame.packs == frame.packs:
            return node
        return node.model_copy(update={"frame": read_step(frame, node.question)})

    def step_frame(self, node: PlanNode) -> QuestionFrame | None:
        """The frame of `node`'s sub-question: its own when it carries one for its question, else read
        under the packs of its frame or the plan's (None when neither has a frame)."""
        reader = node.frame or self.frame
        return read_step(reader, node.question) if reader is not None else None

    def node(self, label: str) -> PlanNode | None:
        return next((n for n in self.nodes if n.label == label), None)

    def fresh_label(self, after: int = 0) -> str:
        """A label no node has: past the highest `$var_N`, `after` more along (for several new nodes)."""
        highest = max((int(n.label.removeprefix("$var_")) for n in self.nodes if LABEL.match(n.label)), default=0)
        return f"$var_{highest + 1 + after}"

    def dependencies(self) -> dict[str, list[str]]:
        """label -> labels it reads, in first-reference order."""
        return {n.label: list(dict.fromkeys(r.label for r in n.references())) for n in self.nodes}

    def read_labels(self) -> set[str]:
        """Labels some node reads."""
        return {label for deps in self.dependencies().values() for label in deps}

    def replace(self, label: str, **changes: object) -> Plan:
        """A copy with one node changed: plans are immutable, passes return new plans."""
        nodes = tuple(n.model_copy(update=changes) if n.label == label else n for n in self.nodes)
        return self.model_copy(update={"nodes": nodes})
