"""Vector nodes: bound variables -> a Milvus filter; hybrid search (dense + BM25, RRF) -> reranker ->
HSEQ iteration over the retrieved documents' segments -> canonical evidence package."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.expressions import And, EqualTo, In

from lakeplanner.contract.links import DocumentIndex
from lakeplanner.execute.hseq import Budget, Iteration, Segment, guidance_for, iterate, passages
from lakeplanner.ingest.segments import SEGMENTS_TABLE, heading_of, stored_documents
from lakeplanner.ingest.vectors import SearchHit, _in_filter, _string_literal
from lakeplanner.injection import withheld
from lakeplanner.lineage.steps import Recorder
from lakeplanner.llm.base import LLM
from lakeplanner.plan.filters import milvus_expression
from lakeplanner.plan.lake_schema import VECTOR_ANSWER
from lakeplanner.plan.model import REFERENCE, PlanNode
from lakeplanner.question.steps import is_clause_of, normal_question, without_column_lead, without_reference_clauses

MAX_FILTER_VALUES = 500
STREAM_CAP = 40
Relevance = Callable[[str, Sequence[str]], list[float]]


@dataclass(frozen=True)
class Bound:
    """A `$var_n.column` reference in a node and the values it holds."""

    reference: str
    column: str
    values: tuple[str, ...]

    @property
    def narrows(self) -> bool:
        """Values that must name documents (ids, titles, links, row keys). An earlier search's answer
        only joins the search text, also when it is a title: the next hop may be told in the
        document of that name ("where did the curator of the exhibit train") or in one that names it
        ("the anthem of Ostvik College" is in the article on the anthem)."""
        return self.column != VECTOR_ANSWER


def sub_question(node: PlanNode) -> str:
    """The node's question without the clauses that only say which documents to read
    ("... in documents with document_id in $var_1.x"): the filter already does that."""
    return without_reference_clauses(node.question)


def focus(node: PlanNode, asked: str) -> str:
    """What evidence must answer: the sub-question, and the user's question it serves, unless the
    sub-question is a clause of it (the rest is what other steps ask: "which patient agreed to a
    care plan" of "..., and how many appointments has that patient missed?")."""
    sub = sub_question(node)
    if not asked or is_clause_of(sub, asked):
        return sub
    return f"{sub} (the user asked: {asked})"


def ranking_query(node: PlanNode, asked: str) -> str:
    """What the cross-encoder orders passages by: the focus, without a leading column name
    ("loan_id of the loan that was written off ..."), which lifts every "Document ID: ..." line
    above the passage that answers."""
    stripped = without_column_lead(node.question)
    return focus(node.model_copy(update={"question": stripped}), asked) if stripped else focus(node, asked)


def query_text(node: PlanNode, bound: Sequence[Bound]) -> str:
    """The search text: the node's question with each reference replaced by (a few of) its values."""
    return " ".join(REFERENCE.sub("", spelled(node.question, bound)).split())


def spelled(text: str, bound: Sequence[Bound]) -> str:
    """`text` with each reference to one of `bound` replaced by (a few of) its values."""
    values = {b.reference: b.values for b in bound}

    def spell(match) -> str:
        if match.group(0) not in values:
            return match.group(0)
        held = values[match.group(0)]
        return " ".join(held[:3]) if 0 < len(held) <= 3 else ""

    return " ".join(REFERENCE.sub(spell, text).split())


def with_answers_spelled(node: PlanNode, bound: Sequence[Bound]) -> PlanNode:
    """The node with each earlier search's answer written out, so the evidence iteration is told what
    the earlier hop found ("the anthem of the college (Ostvik College)"); references
    that name documents stay, for `sub_question` drops them as the filter's business."""
    told = [b for b in bound if not b.narrows]
    return node.model_copy(update={"question": spelled(node.question, told)}) if told else node


def document_index(collection: str, catalog) -> DocumentIndex:
    return DocumentIndex.build(collection, stored_documents(catalog, [collection]).get(collection, []))


def document_filter(collection: str, bound: Sequence[Bound], catalog) -> str:
    """The Milvus expression restricting the search to documents the bound values name:
    document ids, titles or links (resolved as the contract's links resolve them), or linked row keys."""
    bound = [b for b in bound if b.narrows]
    if not bound:
        return ""
    index = document_index(collection, catalog)
    documents: list[str] = []
    row_keys: list[str] = []
    for b in bound:
        resolved = [index.resolve(v) for v in b.values]
        found = [r[0] for r in resolved if r]
        if found:
            documents += found
        else:
            row_keys += list(b.values)
    documents = list(dict.fromkeys(documents))[:MAX_FILTER_VALUES]
    if documents:
        return _in_filter("document_id", documents)
    if row_keys:
        keys = ", ".join(_string_literal(k) for k in list(dict.fromkeys(row_keys))[:MAX_FILTER_VALUES])
        return f"array_contains_any(linked_keys, [{keys}])"
    return ""


def written_filter(node: PlanNode, bound: Sequence[Bound], catalog) -> str:
    """The node's own filter in Milvus terms; a reference compared with document_id may hold ids,
    titles or links, resolved as document_filter resolves them."""
    if not node.filter:
        return ""
    held = {b.reference: b.values for b in bound}
    index = None

    def values(field: str, reference: str) -> list[str]:
        nonlocal index
        raw = list(held.get(reference, ()))[:MAX_FILTER_VALUES]
        if field != "document_id":
            return raw
        if index is None:
            index = document_index(node.source, catalog)
        return [found[0] if (found := index.resolve(v)) else v for v in raw]

    return milvus_expression(node.filter, values)


def all_of(*expressions: str) -> str:
    """Milvus expressions AND-ed (the empty ones dropped)."""
    present = [e for e in expressions if e]
    return present[0] if len(present) == 1 else " and ".join(f"({e})" for e in present)


def filter_references(node: PlanNode) -> set[str]:
    return {m.group(0) for m in REFERENCE.finditer(node.filter or "")}


class SegmentReader:
    """Reads HSEQ segments of documents and rows from the lake's segments table."""

    def __init__(self, catalog) -> None:
        try:
            self.table = catalog.load_table(SEGMENTS_TABLE)
        except NoSuchTableError:
            self.table = None
        self.snapshot_id = (
            self.table.current_snapshot().snapshot_id if self.table and self.table.current_snapshot() else None
        )

    def _read(self, row_filter) -> list[Segment]:
        if self.table is None:
            return []
        rows = self.table.scan(row_filter=row_filter, snapshot_id=self.snapshot_id).to_arrow().to_pylist()
        return [self._segment(r) for r in rows]

    @staticmethod
    def _segment(r: dict) -> Segment:
        meta = json.loads(r["meta"]) if r.get("meta") else {}
        return Segment(
            id=r["segment_id"],
            level=r["level"],
            parent=r["parent_id"],
            source=r["source"],
            container=r["container"],
            position=r["position"],
            content=withheld(r["content"] or ""),
            start=r["start"],
            end=r["end"],
            row_key=r["row_key"],
            heading=meta.get("heading"),
            hash=r["content_hash"] or "",
        )

    def paragraphs(self, collection: str, documents: Sequence[str]) -> dict[str, list[Segment]]:
        """document id -> its paragraphs in text order, a long one as its passages (hseq.passages)."""
        found = self._read(
            And(
                EqualTo("source", collection),
                And(In("level", ("paragraph", "sentence")), In("container", list(documents))),
            )
        )
        sentences: dict[str, list[Segment]] = {}
        for s in found:
            if s.level == "sentence" and s.parent:
                sentences.setdefault(s.parent, []).append(s)
        out: dict[str, list[Segment]] = {}
        section: dict[str, str | None] = {}
        for s in sorted((s for s in found if s.level == "paragraph"), key=lambda s: (s.container, s.start or 0)):
            if is_heading(s):
                section[s.container] = heading_of(s.content)
            elif s.heading is None and section.get(s.container):
                s = replace(s, heading=section[s.container])  # the LLM sees which section a passage is in
            out.setdefault(s.container, []).extend(passages(s, sentences.get(s.id, [])))
        return out

    def rows(self, table: str, keys: Sequence[str]) -> list[Segment]:
        if not keys:
            return []
        return self._read(And(EqualTo("source", table), And(EqualTo("level", "row"), In("row_key", list(keys)))))


def is_heading(segment: Segment) -> bool:
    """A heading alone ("## Service levels", or a title over a line of dashes): it names a section
    and answers nothing, so it is not a candidate itself; the passages under it carry it as their heading."""
    return heading_of(segment.content) is not None


def segment_stream(
    hits: Sequence[SearchHit], paragraphs: dict[str, list[Segment]], relevance: Relevance, query: str
) -> list[Segment]:
    """Order rho over the paragraphs the hits' chunks span, headings alone left out: by cross-encoder
    relevance of the section heading and text to the query, ties by hit rank, then offset; at most
    STREAM_CAP, so the stream is bounded however long the documents are."""
    candidates: list[Segment] = []
    for hit in hits:
        chunk = hit.chunk
        for p in paragraphs.get(chunk.document_id, []):
            overlaps = (p.start or 0) < chunk.end and (p.end or 0) > chunk.start
            if overlaps and p not in candidates and p.content.strip() and not is_heading(p):
                candidates.append(p)
    if len(candidates) < 2:
        return candidates
    scores = relevance(query, [(f"{c.heading}\n" if c.heading else "") + c.content[:1000] for c in candidates])
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    return [candidates[i] for i in order[:STREAM_CAP]]


def chunk_segments(hits: Sequence[SearchHit]) -> list[Segment]:
    """The hits themselves as segments, for collections without paragraph segments."""
    return [
        Segment(
            id=h.chunk.chunk_id,
            level="paragraph",
            parent=None,
            source=h.chunk.source,
            container=h.chunk.document_id,
            position=h.chunk.position,
            content=h.chunk.text,
            start=h.chunk.start,
            end=h.chunk.end,
            hash=h.chunk.content_hash,
        )
        for h in hits
    ]


def neighbour_finder(paragraphs: dict[str, list[Segment]], hits: Sequence[SearchHit], reader: SegmentReader):
    """Structure-aware neighbours of a selected paragraph: the next passage of its document and the
    table row the document is linked to. Its section heading is not one: every passage carries it."""
    linked = {h.chunk.document_id: (h.chunk.linked_table, tuple(h.chunk.linked_keys)) for h in hits}

    def neighbours(segment: Segment) -> list[Segment]:
        siblings = paragraphs.get(segment.container, [])
        out = []
        if segment in siblings:
            following = siblings[siblings.index(segment) + 1 :]
            out += [s for s in following if s.content.strip() and not is_heading(s)][:1]
        table, keys = linked.get(segment.container, ("", ()))
        if table and keys:
            out += reader.rows(table, keys[:3])
        return out

    return neighbours


def asks_the_whole_question(node: PlanNode, bound: Sequence[Bound], asked: str) -> bool:
    """The step searches the user's question as it is, reading nothing from earlier steps."""
    return bool(asked) and not bound and normal_question(node.question) == normal_question(asked)


def run_iteration(
    node: PlanNode,
    hits: Sequence[SearchHit],
    reader: SegmentReader,
    llm: LLM,
    recorder: Recorder,
    budget: Budget,
    relevance: Relevance,
    asked: str = "",
    ranked: bool = False,
) -> Iteration:
    """HSEQ over the hits' passages; with `ranked`, the reranker's best `budget.window` passages as
    they are (`best_ranked`)."""
    documents = list(dict.fromkeys(h.chunk.document_id for h in hits))
    paragraphs = reader.paragraphs(node.source, documents)
    stream = segment_stream(hits, paragraphs, relevance, ranking_query(node, asked)) or chunk_segments(hits)
    if ranked:
        return best_ranked(node, stream, recorder, budget)
    question = focus(node, asked)
    guidance = guidance_for(node.asked_frame(), node.answer_description)
    with recorder.step("hseq.iterate", collection=node.source, stream=len(stream)) as step:
        state = iterate(
            question,
            stream,
            llm,
            recorder,
            budget=budget,
            guidance=guidance,
            neighbours=neighbour_finder(paragraphs, hits, reader),
        )
        step.attributes.update(
            {"hseq.steps": state.steps, "hseq.stop": state.stop, "hseq.selected": len(state.selected)}
        )
    return state


def best_ranked(node: PlanNode, stream: list[Segment], recorder: Recorder, budget: Budget) -> Iteration:
    """The evidence of a step that asks the user's whole question: the first window of the ranked
    stream, which the answer's one LLM call reads. A selector reading that window first costs a call,
    and asked a question of several hops it often answers with a thing the question passes through
    (the contract, not the notice period it sets) where the answer call reads every passage for the one asked."""
    chosen = stream[: budget.window]
    with recorder.step("hseq.rank", collection=node.source, stream=len(stream)) as step:
        step.attributes.update({"hseq.steps": 0, "hseq.stop": "ranked", "hseq.selected": len(chosen)})
    window = [s.id for s in chosen]
    return Iteration(
        selected=chosen,
        seen=set(window),
        sufficient=True,
        stop="ranked",
        trace=[{"window": window, "selected": window, "sufficient": True}],
    )
