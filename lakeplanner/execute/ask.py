"""A question end to end: plan -> execute (streaming) -> synthesize, all traced, recorded for replay."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from typing import Protocol

from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.confidence import path_factor
from lakeplanner.execute.engine import Executor
from lakeplanner.execute.labels import labelled
from lakeplanner.execute.nodes import TABLE_DATA_ERRORS, unreadable_table_data
from lakeplanner.execute.results import Answer, NodeResult
from lakeplanner.execute.runs import RunRecord, save_run
from lakeplanner.execute.services import relevance
from lakeplanner.execute.synthesize import NOTHING_MENTIONS, abstain, synthesize
from lakeplanner.ingest.segments import mentioned
from lakeplanner.lineage.openlineage import answer_event, emit_event, lake_namespace
from lakeplanner.lineage.steps import Recorder, RecordingLLM, Step, data_chars, usage
from lakeplanner.lineage.tracing import Lineage
from lakeplanner.llm.embeddings import default_embedder
from lakeplanner.plan.cache import Context
from lakeplanner.plan.model import WITHOUT_FRAMES, Plan
from lakeplanner.plan.planner import Planner, PlanResult
from lakeplanner.plan.routing import (
    Scores,
    documents_after_tables,
    fallback_search,
    searched_first_for_stated_facts,
    searched_where_passages_answer,
)
from lakeplanner.policy import OPEN, Access
from lakeplanner.question import QuestionFrame, packs_for
from lakeplanner.question.asked import frame_question
from lakeplanner.question.coverage import period_gap

OnResult = Callable[[NodeResult], None]
OnPlan = Callable[[PlanResult], None]


class PlansQuestions(Protocol):
    def plan(self, frame: QuestionFrame) -> PlanResult: ...


def node_attributes(result: NodeResult) -> dict:
    return {
        "lakeplanner.node.label": result.label,
        "lakeplanner.node.tool": result.tool,
        "lakeplanner.node.source": result.source,
        "lakeplanner.node.question": result.question,
        "lakeplanner.node.rows": result.rows_total,
        "lakeplanner.node.evidence": len(result.evidence),
        "lakeplanner.node.bytes_in": result.bytes_in,
        "lakeplanner.node.rows_in": result.rows_in,
        "lakeplanner.node.snapshots": result.snapshots,
        "lakeplanner.node.row_keys": result.row_keys,
        "lakeplanner.node.answer": result.answer,
        "lakeplanner.node.advice": result.advice,  # what each failed attempt was told, and why iteration stopped
    }


def emit(lineage: Lineage, recorder: Recorder) -> None:
    for step in recorder.steps:
        lineage.recorded(step.name, step.start_ns, step.end_ns, step.attributes, error=step.error)


def run_nodes(
    executor: Executor, plan: Plan, lineage: Lineage, on_result: OnResult | None, note: str = "", access: Access = OPEN
) -> list[NodeResult]:
    """Run a plan's nodes, recording each as a span and streaming the exposed ones as they finish."""
    results = []
    for result in executor.stream(plan, access):
        name, end_ns = f"node {result.label}{note}", result.started_ns + int(result.seconds * 1e9)
        lineage.recorded(name, result.started_ns, end_ns, node_attributes(result), result.steps, result.error)
        results.append(result)
        if on_result is not None and result.exposed:
            on_result(result)
    return results


def nothing_retrieved(results: list[NodeResult]) -> bool:
    """No exposed step (or, with none exposed, the last) returned a row or a passage."""
    shown = [r for r in results if r.exposed] or results[-1:]
    return not any(r.ok and (r.rows or r.evidence) for r in shown)


def narrowed_to_nothing(plan: Plan, results: list[NodeResult]) -> bool:
    """A search narrowed by the rows earlier steps found ran and found nothing: those rows have no
    such document (a lender with no charter), which is the answer, not a miss to search around."""
    found = {r.label: r for r in results}
    for node in plan.nodes:
        result = found.get(node.label)
        inputs = [found.get(ref.label) for ref in node.references()]
        if node.tool != "vector" or result is None or not result.ok or result.evidence or not inputs:
            continue
        if all(i is not None and i.ok and i.rows for i in inputs):
            return True
    return False


def passage_scores(lake) -> Scores:
    """The lake's `scores` for the routing rules (plan/routing.py)."""
    return partial(collection_scores, lake)


def collection_scores(lake, question: str, collections: list[str], per_collection: int = 3) -> dict[str, float]:
    """collection -> the cross-encoder score of its best passage for `question` (of its first hits);
    collections without hits are left out, and all when the vector store is down."""
    vector = default_embedder().embed_query(question)
    scored = []
    for collection in collections:
        try:
            hits = lake.vectors.hybrid_search(collection, question, vector, limit=per_collection, filter="")
        except LakeplannerError:  # the vector store is down: there is nothing to route by
            return {}
        scored += [(collection, h.chunk.text[:2000]) for h in hits]
    if not scored:
        return {}
    best: dict[str, float] = {}
    for (collection, _), score in zip(scored, relevance(question, [text for _, text in scored]), strict=True):
        best[collection] = max(score, best.get(collection, score))
    return best


def synthesized(
    lake,
    question: str,
    results: list[NodeResult],
    executor: Executor,
    lineage: Lineage,
    frame: QuestionFrame,
    path: list[Step],
    replans: int = 0,
    planned: bool = True,
) -> tuple[Answer, list[Step]]:
    """The answer from `results`, as a synthesis span, and the steps (LLM calls) it made. Its
    confidence carries the factor of the path it took (confidence.path_factor over the planning
    steps `path`, the nodes' and synthesis's steps): a question searched as it is because no valid
    plan was found (`planned` False), a plan the LLM wrote, a repair, each make it less sure."""
    synthesis = Recorder()
    with lineage.span("lakeplanner.synthesize") as span:
        answer = synthesize(
            frame,
            results,
            executor.llm,
            synthesis,
            lake.contract,
            partial(mentioned, lake.catalog),
            read_answers=executor.settings.read_answers,
        )
        emit(lineage, synthesis)
        answer = labelled(answer, results, lake.contract, lake.sql)
        steps = path + [s for r in results for s in r.steps] + synthesis.steps
        answer.confidence = round(answer.confidence * path_factor(steps, replans, planned), 3)
        span.set_attributes(
            {
                "lakeplanner.answer.value": answer.value or "",
                "lakeplanner.answer.abstained": answer.abstained,
                "lakeplanner.answer.confidence": answer.confidence,
                "lakeplanner.answer.citations": len(answer.citations),
            }
        )
    return answer, synthesis.steps


def unplanned(question: str, why: str) -> PlanResult:
    """No plan, because the question asks what the lake cannot hold (`why`)."""
    return PlanResult(question=question, plan=Plan(question=question), findings=[], edits=[], replans=0, advice=[why])


def tables_could_not_answer(answer: Answer, results: list[NodeResult]) -> bool:
    """The steps read only tables and the answer from them abstained: what the question asks may be
    a fact of documents the planner sent to a table. Not when the coverage gate found nothing in the
    lake that mentions what it asks."""
    gated = (answer.reason or "").startswith(NOTHING_MENTIONS)
    return answer.abstained and not gated and all(r.tool == "sql" for r in results)


def ask(
    lake,
    question: str,
    executor: Executor,
    *,
    context: Context | None = None,
    use_cache: bool = True,
    on_result: OnResult | None = None,
    on_plan: OnPlan | None = None,
    planner: PlansQuestions | None = None,
    access: Access = OPEN,
) -> Answer:
    """Answer `question` over `lake` as `access` may read it; the plan result (valid or not) goes to
    `on_plan` once planning ends, exposed node results to `on_result` as soon as they exist.

    `planner` replaces the validating, repairing, caching Planner (benchmarks compare against that)."""
    scores = passage_scores(lake)
    started = time.perf_counter()
    lineage = Lineage(lake.path, executor.settings.otlp_endpoint)
    whole, lake = lake, lake.seen_by(access)  # the planner scopes the whole lake itself (to name what is denied)
    try:
        with lineage.span("lakeplanner.ask", **{"lakeplanner.question": question, **access.decisions()}) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            planning = Recorder()
            filling = RecordingLLM(executor.llm, planning, "frame")
            with lineage.span("lakeplanner.plan") as span:
                if planner is None:
                    planner = Planner(
                        whole,
                        RecordingLLM(executor.llm, planning, "plan"),
                        context=context,
                        use_cache=use_cache,
                        access=access,
                    )
                    frame = planner.read(question, filling)
                else:
                    frame = frame_question(question, packs_for(lake.contract), llm=filling)
                root.set_attribute("lakeplanner.question.frame", json.dumps(frame.summary()))
                gap = period_gap(frame, lake.contract)  # a period the lake holds nothing of: no plan can answer
                planned = unplanned(question, gap) if gap else planner.plan(frame)
                planned = planned.model_copy(update={"plan": planned.plan.framed(frame)})
                if planned.ok and not gap:
                    routed, first = searched_first_for_stated_facts(planned.plan, frame, lake.contract, scores)
                    routed, edits = searched_where_passages_answer(routed, lake.contract, scores)
                    edits = first + edits
                    planned = planned.model_copy(update={"plan": routed, "edits": planned.edits + edits})
                emit(lineage, planning)
                span.set_attributes(
                    {
                        "lakeplanner.plan": planned.plan.model_dump_json(exclude=WITHOUT_FRAMES),
                        "lakeplanner.plan.valid": planned.ok,
                        "lakeplanner.plan.cache": planned.cache or "miss",
                        "lakeplanner.dataops.edits": "; ".join(planned.edits),
                        "lakeplanner.dataops.replans": planned.replans,
                    }
                )
            plan_s = time.perf_counter() - started
            if on_plan is not None:
                on_plan(planned)
            searched = None if planned.ok else fallback_search(planned.plan, frame, lake.contract, scores)
            if gap:
                answer = abstain(Answer(question=question, advice=planned.advice), gap, time.perf_counter())
                answer.usage = usage(planning.steps)
            elif not planned.ok and searched is None:
                answer = Answer(question=question, advice=planned.advice)
                findings = "; ".join(f"{f.code.value} {f.message}" for f in planned.findings)
                answer = abstain(answer, f"no valid plan ({findings})", time.perf_counter())
                answer.usage = usage(planning.steps)
            else:
                run = searched or planned.plan
                with lineage.span("lakeplanner.execute", **{"lakeplanner.mode": executor.mode_for(run)}):
                    if searched is not None:  # no valid plan: the question searched as it is
                        results = run_nodes(executor, searched, lineage, on_result, " (fallback search)", access)
                    else:
                        results = run_nodes(executor, planned.plan, lineage, on_result, access=access)
                        if (
                            nothing_retrieved(results)
                            and not narrowed_to_nothing(planned.plan, results)
                            and (search := fallback_search(planned.plan, frame, lake.contract, scores)) is not None
                        ):
                            results += run_nodes(executor, search, lineage, on_result, " (fallback search)", access)
                execute_s = time.perf_counter() - started - plan_s
                order = {n.label: i for i, n in enumerate(planned.plan.nodes)}
                results.sort(key=lambda r: order.get(r.label, len(order)))
                answer, synthesis = synthesized(
                    lake, question, results, executor, lineage, frame, planning.steps, planned.replans, searched is None
                )
                search, why = (
                    documents_after_tables(planned.plan, frame, lake.contract, scores)
                    if tables_could_not_answer(answer, results)
                    else (None, "")
                )
                if search is not None:
                    with lineage.span("lakeplanner.execute", **{"lakeplanner.mode": executor.mode_for(search)}):
                        found = run_nodes(executor, search, lineage, on_result, why, access)
                    retried, again = synthesized(
                        lake, question, found, executor, lineage, frame, planning.steps, planned.replans
                    )
                    if not retried.abstained:
                        answer, synthesis, results = retried, synthesis + again, results + found
                        answer.nodes = results
                answer.timings["execute_s"] = execute_s
                answer.data_chars = data_chars(synthesis) + sum(data_chars(r.steps) for r in results)
                answer.usage = usage(planning.steps + synthesis + [s for r in results for s in r.steps])
            answer.plan_cache = planned.cache
            answer.timings["plan_s"] = plan_s
            answer.timings["total_s"] = time.perf_counter() - started
            answer.trace_id = trace_id
            root.set_attribute("lakeplanner.answer.abstained", answer.abstained)
        record = RunRecord(
            trace_id=trace_id,
            question=question,
            plan=planned.plan,
            answer=answer,
            principal=access.principal,
            role=access.role,
        )
        save_run(lake.path, record)
        if executor.settings.openlineage:
            emit_event(executor.settings.openlineage, answer_event(answer, lake_namespace(lake.path)))
    except TABLE_DATA_ERRORS as e:  # planning and synthesis read table values too
        raise unreadable_table_data(e) from e
    finally:
        lineage.shutdown()
    return answer
