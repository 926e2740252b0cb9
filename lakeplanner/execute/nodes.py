"""Running one plan node: sql, vector or graph. A node gets its bound inputs and the services, and
returns a NodeResult; it never raises, so a failing node leaves the others' results intact."""

from __future__ import annotations

import time

import pyarrow as pa

from lakeplanner.contract.links import DocumentIndex
from lakeplanner.errors import EngineError, LakeplannerError, LLMUnavailableError
from lakeplanner.execute.grounding import grounding
from lakeplanner.execute.hseq import Budget, package
from lakeplanner.execute.results import NodeResult
from lakeplanner.execute.services import Governed
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.execute.sql.step import run_sql
from lakeplanner.execute.variables import Binding
from lakeplanner.execute.vector import (
    Bound,
    SegmentReader,
    all_of,
    asks_the_whole_question,
    document_filter,
    filter_references,
    query_text,
    run_iteration,
    with_answers_spelled,
    written_filter,
)
from lakeplanner.ingest.segments import SEGMENTS_TABLE, stored_documents
from lakeplanner.lineage import semconv
from lakeplanner.lineage.steps import Recorder
from lakeplanner.plan.dataops import recommend
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import PlanNode, Tool
from lakeplanner.policy import OPEN, Access
from lakeplanner.question import QuestionFrame
from lakeplanner.question.answers import restates
from lakeplanner.question.read import read_step
from lakeplanner.question.words import mentions, stem


def bounds_of(node: PlanNode, inputs: dict[str, Binding]) -> list[Bound]:
    out = []
    for ref in node.references():
        if ref.column and ref.label in inputs:
            values = tuple(str(v) for v in inputs[ref.label].columns.get(ref.column, []))
            out.append(Bound(f"{ref.label}.{ref.column}", ref.column, values))
    return out


# how pyiceberg's reads through pyarrow fail when a table's data file is missing or damaged
TABLE_DATA_ERRORS = (FileNotFoundError, pa.ArrowException)


def unreadable_table_data(error: Exception) -> EngineError:
    return EngineError(
        f"a data file of the lake's tables cannot be read: {str(error).splitlines()[0]}",
        hint="a Parquet file under the lake's warehouse/ is missing or damaged: restore it from a backup, "
        "or re-ingest the sources into a new lake",
    )


def run_node(
    node: PlanNode,
    inputs: dict[str, Binding],
    services,
    settings: ExecSettings,
    frame: QuestionFrame | None = None,
    access: Access = OPEN,
) -> NodeResult:
    """`frame` is the user's question the plan serves, as read (vector nodes read evidence for it); the node
    reads only what `access` admits (a denied source is an error, governed tables are rewritten)."""
    recorder = Recorder()
    started = time.perf_counter()
    result = NodeResult.for_node(
        node,
        bytes_in=sum(b.bytes for b in inputs.values()),
        rows_in=sum(b.values for b in inputs.values()),
    )
    try:
        runner = {Tool.sql: run_sql, Tool.vector: run_vector, Tool.graph: run_graph}[Tool(node.tool)]
        governed = Governed(services, access)
        governed.check(node.source, recorder)
        result = runner(node, inputs, governed, settings, recorder, result, frame)
    except (EngineError, LLMUnavailableError) as e:
        result.error = e.message
        result.advice = recommend([], e)
    except LakeplannerError as e:
        result.error = e.message
        result.advice = [e.hint] if e.hint else []
    except TABLE_DATA_ERRORS as e:
        unreadable = unreadable_table_data(e)
        result.error, result.advice = unreadable.message, [unreadable.hint]
    result.steps = recorder.steps
    result.seconds = time.perf_counter() - started
    return result


def step_frame(node: PlanNode, asked_frame: QuestionFrame | None, text: str) -> QuestionFrame:
    """The frame of what a step asks once its inputs are spelled in (`text`), read under the packs of
    the frames it carries (a bare frame of the words where it carries none)."""
    reader = node.frame or asked_frame
    return read_step(reader, text) if reader is not None else QuestionFrame(text=text)


def read_value(answer: str, result: NodeResult, frame: QuestionFrame) -> str | None:
    """The value the step's selector read, kept for later steps and the answer when its passages state
    it and it is not words of the step's question ("Aladin" for "who was known by the stage name
    Aladin?" is the name searched by, not the person found)."""
    return answer if answer and stated(answer, result) and not restates(frame, answer) else None


def stated(answer: str, result: NodeResult) -> bool:
    """Whether the node's passages state the answer the selector wrote: an answer they do not state
    (made up, or planted by text withheld from them) is no value of the lake for later steps."""
    return grounding(answer, [result.model_copy(update={"rows": []})]) > 0.0


def run_vector(
    node, inputs, services, settings, recorder: Recorder, result: NodeResult, asked_frame: QuestionFrame | None = None
) -> NodeResult:
    lake = services.lake
    asked = asked_frame.text if asked_frame is not None else ""
    bounds = bounds_of(node, inputs)
    in_filter = filter_references(node)
    named = [b for b in bounds if b.reference not in in_filter]  # the filter places its own references
    expression = document_filter(node.source, named, lake.catalog)
    if any(b.narrows for b in named) and not expression:
        result.error = f"the bound values of {', '.join(b.reference for b in named)} name no document of {node.source}"
        return result
    expression = all_of(expression, written_filter(node, bounds, lake.catalog))
    text = query_text(node, bounds)
    with recorder.step(
        f"retrieval {node.source}",
        **semconv.retrieval_attributes(node.source),
        **{"db.system": "milvus", "db.collection.name": node.source, "lakeplanner.filter": expression[:500]},
    ) as step:
        hits = services.search(node.source, text, expression, settings.search_limit)
        step.attributes["lakeplanner.hits"] = len(hits)
    if not hits:
        return result
    budget = Budget(**settings.model_dump(include=set(Budget.model_fields)))
    reader = SegmentReader(lake.catalog)
    told = with_answers_spelled(node, bounds)
    ranked = settings.rank_whole_question and asks_the_whole_question(node, bounds, asked)
    state = run_iteration(told, hits, reader, services.llm, recorder, budget, services.rerank, asked, ranked)
    result.evidence = package(state.selected)
    result.answer = read_value(state.answer, result, step_frame(node, asked_frame, told.question))
    if reader.snapshot_id:
        result.snapshots = {SEGMENTS_TABLE: reader.snapshot_id}
    linked = {h.chunk.document_id: h.chunk for h in hits}
    documents_used = list(dict.fromkeys(s.container for s in state.selected if s.level != "row"))
    result.columns = ["document_id", "title", "linked_table", "linked_keys", "answer"]
    result.rows = [
        {
            "document_id": d,
            "title": linked[d].title if d in linked else "",
            "linked_table": linked[d].linked_table if d in linked else "",
            "linked_keys": list(linked[d].linked_keys) if d in linked else [],
            "answer": result.answer,
        }
        for d in documents_used
    ] or (
        [{"document_id": None, "title": "", "linked_table": "", "linked_keys": [], "answer": result.answer}]
        if result.answer
        else []
    )
    for row in result.rows:  # the key of the row the document is linked to, for a successor's join
        row["linked_key"] = row["linked_keys"][0] if row["linked_keys"] else None
    result.rows = named_documents(result.rows, result.answer) or result.rows
    if asked_frame is not None:
        result.rows = the_one_asked(result.rows, asked_frame)
    result.rows_total = len(result.rows)
    if not state.sufficient:
        result.advice.append(f"evidence iteration stopped without sufficiency ({state.stop})")
    return result


def named_documents(rows: list[dict], answer: str | None) -> list[dict]:
    """The documents the step's answer names by id or by the key of their linked row ("Loan
    LN-1010" of two overdue loans read): only they flow on, else a successor reads both."""
    if not answer:
        return []

    def named(value: str) -> bool:
        return mentions(answer, value)

    return [r for r in rows if named(r["document_id"] or "") or any(map(named, r["linked_keys"]))]


def the_one_asked(rows: list[dict], frame: QuestionFrame) -> list[dict]:
    """ "Which loan was written off ...?": of the documents selected about rows of the kind asked for,
    only the first chosen flows on, else a successor reads the rows of every candidate as one answer."""
    if frame.one is None or len(rows) < 2:
        return rows
    if all(r["linked_table"] and stem(r["linked_table"]) == stem(frame.one) for r in rows):
        return rows[:1]
    return rows


LINKED_KEY_COLUMNS = frozenset({"linked_key", "linked_keys"})  # a search result's rows the documents cite


def run_graph(
    node, inputs, services, settings, recorder: Recorder, result: NodeResult, asked_frame: QuestionFrame | None = None
) -> NodeResult:
    """Follow foreign keys or row-document links from the bound values, without the LLM."""
    lake = services.lake
    contract = services.contract
    bounds = bounds_of(node, inputs)
    if node.source in {s.name for s in contract.sources if s.kind.value == "documents"}:
        index = DocumentIndex.build(node.source, stored_documents(lake.catalog, [node.source]).get(node.source, []))
        found = {r[0] for b in bounds for v in b.values if (r := index.resolve(v))}
        result.columns = ["document_id"]
        result.rows = [{"document_id": d} for d in sorted(found)]
        result.rows_total = len(result.rows)
        return result
    columns = []
    for b in bounds:
        for fk in contract.foreign_keys:
            if (fk.target == node.source and fk.target_column == b.column) or (
                fk.source == node.source and fk.column == b.column
            ):
                columns.append((fk.target_column if fk.target == node.source else fk.column, b))
    if not columns:  # no key joins them: the rows of the source that hold the bound values in that column
        held = {f.column for f in contract.fields_of(node.source)}
        columns = [(b.column, b) for b in bounds if b.column in held]
    if not columns:  # documents that cite rows: the source's rows whose key they cite
        key = LakeSchema.from_contract(contract).row_key(node.source)
        columns = [(key[0], b) for b in bounds if b.column in LINKED_KEY_COLUMNS and len(key) == 1]
    if not columns:
        result.error = (
            f"no foreign key of {node.source} matches {', '.join(b.reference for b in bounds) or 'the inputs'}"
        )
        return result
    where = " AND ".join(f"{c} IN ({b.reference})" for c, b in columns)
    traversal = node.model_copy(update={"sql": f"SELECT * FROM {node.source} WHERE {where}"})
    return run_sql(traversal, inputs, services, settings, recorder, result, asked_frame)
