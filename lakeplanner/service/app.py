"""The HTTP service: `create_app(lake)` is an ASGI app (FastAPI) over one lake, its model and its
policy. JSON or Server-Sent Events answers, the validated plan, the lake as the caller's role sees it,
traces and replay, the schema contract's gaps, extensions and versions, health, readiness and
Prometheus metrics. Errors are JSON bodies that say what to do, never tracebacks."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

from anyio import to_thread
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sse_starlette import EventSourceResponse

from lakeplanner.errors import (
    AccessDeniedError,
    EngineError,
    LakeLockedError,
    LakeNotFoundError,
    LakeplannerError,
    LLMUnavailableError,
)
from lakeplanner.execute.replay import ReplayReport, replay
from lakeplanner.execute.results import Answer, NodeResult
from lakeplanner.execute.runs import RunRecord, list_runs, load_run
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.lake import Lake, LakeInfo
from lakeplanner.lineage.tracing import read_spans
from lakeplanner.llm.base import LLM
from lakeplanner.plan.extension import add_term, propose, version_log
from lakeplanner.plan.planner import PlanResult
from lakeplanner.policy import Access, denied_sources
from lakeplanner.question.coverage import sufficiency
from lakeplanner.service import audit
from lakeplanner.service.auth import Authenticator, AuthError, Principal, credentials
from lakeplanner.service.metrics import Metrics
from lakeplanner.service.runner import BusyError, CancelledError, Runner, TraceNotFoundError
from lakeplanner.service.schemas import (
    AskRequest,
    AskResponse,
    ErrorBody,
    ExtensionRequest,
    ExtensionResponse,
    PlanRequest,
    PlanResponse,
    SchemaGaps,
    SchemaVersions,
    TracePage,
    TraceSummary,
)
from lakeplanner.service.settings import ServeSettings

log = logging.getLogger("lakeplanner.service")
T = TypeVar("T")
STATUS = {
    AuthError: 401,
    AccessDeniedError: 403,
    LakeNotFoundError: 404,
    LakeLockedError: 423,
    BusyError: 429,
    CancelledError: 499,
    TraceNotFoundError: 404,
    EngineError: 503,
    LLMUnavailableError: 503,
}


def status_of(error: LakeplannerError) -> int:
    return next((code for kind, code in STATUS.items() if isinstance(error, kind)), 400)


def error_response(error: LakeplannerError, settings: ServeSettings) -> JSONResponse:
    status = status_of(error)
    headers = {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if status == 429:
        headers["Retry-After"] = str(settings.retry_after_s)
    return JSONResponse(ErrorBody(error=error.message, hint=error.hint).model_dump(), status, headers=headers)


def answer_body(answer: Answer, plan, access: Access) -> AskResponse:
    return AskResponse(
        question=answer.question,
        value=answer.value,
        items=answer.items,
        sentence=answer.text,
        citations=answer.citations,
        confidence=answer.confidence,
        abstained=answer.abstained,
        reason=answer.reason,
        trace_id=answer.trace_id,
        plan=plan,
        plan_cache=answer.plan_cache,
        usage=answer.usage,
        timings=answer.timings,
        principal=access.principal,
        role=access.role,
    )


def plan_body(result: PlanResult, access: Access) -> PlanResponse:
    return PlanResponse(
        question=result.question,
        ok=result.ok,
        plan=result.plan,
        cache=result.cache,
        findings=[f.model_dump(mode="json") for f in result.findings],
        edits=result.edits,
        advice=result.advice,
        tables_shown=result.tables_shown,
        role=access.role,
    )


def node_event(result: NodeResult) -> dict[str, Any]:
    return {
        "label": result.label,
        "tool": result.tool,
        "source": result.source,
        "question": result.question,
        "answer": result.answer,
        "rows": result.rows[:20],
        "rows_total": result.rows_total,
        "evidence": [e.model_dump(mode="json") for e in result.evidence],
        "error": result.error,
    }


async def replayed_events(answer: Answer, plan, access: Access):
    """The events of an answer served again: the plan, its exposed results, the answer, done."""
    yield {"event": "plan", "data": plan.model_dump_json()}
    for result in answer.nodes:
        if result.exposed:
            yield {"event": "result", "data": json.dumps(node_event(result), default=str)}
    yield {"event": "answer", "data": answer_body(answer, plan, access).model_dump_json()}
    yield {"event": "done", "data": "{}"}


def summary(record: RunRecord) -> TraceSummary:
    answer = record.answer
    return TraceSummary(
        trace_id=record.trace_id,
        at=record.at,
        principal=record.principal,
        role=record.role,
        question=record.question,
        value=answer.value,
        abstained=answer.abstained,
        confidence=answer.confidence,
        input_tokens=answer.usage.input_tokens,
        output_tokens=answer.usage.output_tokens,
        seconds=answer.timings.get("total_s", 0.0),
        sources=record.sources(),
    )


def caller(request: Request) -> Principal:
    """Who sends the request (401 when credentials are required and missing or wrong)."""
    return request.app.state.authenticator.principal(*credentials(request.headers, request.cookies))


Caller = Annotated[Principal, Depends(caller)]


def create_app(
    lake: str | Path | Lake,
    settings: ServeSettings | None = None,
    *,
    llm: LLM | None = None,
    exec_settings: ExecSettings | None = None,
    warm: bool = True,
) -> FastAPI:
    """The service over the lake at `lake` (a folder, or an open Lake the caller keeps and closes).
    `llm` and `exec_settings` replace the configured ones (tests pass a scripted model); `warm`
    loads the model in the background at start-up."""
    settings = settings or ServeSettings()
    metrics = Metrics()
    runner = Runner(lake, settings, metrics, llm, exec_settings)
    authenticator = Authenticator(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if warm:
            threading.Thread(target=runner.warm, name="lakeplanner-warm", daemon=True).start()
        else:
            runner.ready.set()
        yield
        await to_thread.run_sync(runner.close)

    app = FastAPI(
        title="lakeplanner",
        version="1",
        description="Answers over a hybrid data lake with citations to rows and document spans, or abstentions.",
        lifespan=lifespan,
    )
    app.state.runner = runner
    app.state.metrics = metrics
    app.state.authenticator = authenticator

    @app.exception_handler(LakeplannerError)
    async def lakeplanner_error(request: Request, error: LakeplannerError) -> JSONResponse:
        return error_response(error, settings)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        body = ErrorBody(error=f"invalid request: {problems}", hint="see the request schemas at /docs")
        return JSONResponse(body.model_dump(), 422)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.error("%s %s failed", request.method, request.url.path, exc_info=error)
        body = ErrorBody(error=f"internal error ({type(error).__name__})", hint="see the service log; retry")
        return JSONResponse(body.model_dump(), 500)

    @app.middleware("http")
    async def measure(request: Request, call_next):
        started = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        endpoint = getattr(route, "path", "other")
        metrics.requests.labels(endpoint=endpoint, status=str(response.status_code)).inc()
        metrics.latency.labels(endpoint=endpoint).observe(time.perf_counter() - started)
        return response

    def checked_question(question: str) -> None:
        if len(question) > settings.max_question_chars:
            raise LakeplannerError(
                f"the question has {len(question)} characters; the limit is {settings.max_question_chars}",
                hint="ask a shorter question (or raise LAKEPLANNER_SERVE_MAX_QUESTION_CHARS)",
            )

    @app.post("/v1/ask", response_model=AskResponse, responses={400: {"model": ErrorBody}, 429: {"model": ErrorBody}})
    async def ask(body: AskRequest, caller: Caller, request: Request):
        """Answer a question. With `Accept: text/event-stream` the work streams as Server-Sent Events:
        `plan`, one `result` per exposed step, `answer`, then `done` (or `error`)."""
        checked_question(body.question)
        access = runner.access(caller, body.role)
        streamed = "text/event-stream" in request.headers.get("accept", "")
        if body.use_cache and (
            again := await to_thread.run_sync(lambda: runner.answered_before(body.question, access))
        ):
            answer, plan = again
            if streamed:
                return EventSourceResponse(replayed_events(answer, plan, access))
            return answer_body(answer, plan, access)
        if streamed:
            return stream_answer(body, access)
        with runner.slot():
            planned: list[PlanResult] = []
            answer = await to_thread.run_sync(
                lambda: runner.ask(body.question, access, body.use_cache, on_plan=planned.append)
            )
        return answer_body(answer, planned[0].plan if planned else None, access)

    def stream_answer(body: AskRequest, access: Access) -> EventSourceResponse:
        slot = runner.slot()
        slot.__enter__()  # a full queue is refused before the stream starts
        loop = asyncio.get_running_loop()
        events: asyncio.Queue = asyncio.Queue()
        gone = threading.Event()

        def send(event: str, data: Any) -> None:
            if gone.is_set():
                raise CancelledError("the client disconnected")
            loop.call_soon_threadsafe(events.put_nowait, {"event": event, "data": json.dumps(data, default=str)})

        def work() -> None:
            planned: list[PlanResult] = []

            def on_plan(result: PlanResult) -> None:
                planned.append(result)
                send("plan", result.plan.model_dump(mode="json"))

            try:
                answer = runner.ask(
                    body.question,
                    access,
                    body.use_cache,
                    on_plan=on_plan,
                    on_result=lambda r: send("result", node_event(r)),
                )
                plan = planned[0].plan if planned else None
                send("answer", answer_body(answer, plan, access).model_dump(mode="json"))
            except LakeplannerError as e:
                if not gone.is_set():
                    send("error", ErrorBody(error=e.message, hint=e.hint).model_dump())
            except Exception as e:
                if not gone.is_set():
                    send("error", ErrorBody(error=f"internal error ({type(e).__name__})").model_dump())
            finally:
                slot.__exit__(None, None, None)
                loop.call_soon_threadsafe(events.put_nowait, None)

        loop.run_in_executor(None, work)  # started here: the slot is freed even if the stream never starts

        async def generate():
            try:
                while (event := await events.get()) is not None:
                    yield event
                yield {"event": "done", "data": "{}"}
            finally:
                gone.set()  # a disconnected client cancels the work at its next step

        return EventSourceResponse(generate(), ping=15)

    @app.post("/v1/plan", response_model=PlanResponse)
    async def plan(body: PlanRequest, caller: Caller):
        """The validated plan of a question, with the findings, DataOps edits and tables shown."""
        checked_question(body.question)
        access = runner.access(caller, body.role)
        with runner.slot():
            result = await to_thread.run_sync(lambda: runner.plan(body.question, access, body.use_cache))
        return plan_body(result, access)

    @app.get("/v1/lake", response_model=LakeInfo)
    async def lake_info(caller: Caller, role: str | None = None):
        """Tables, collections, keys, links and snapshots, as the caller's role sees them."""
        access = runner.access(caller, role)
        info = await to_thread.run_sync(lambda: runner.lake.seen_by(access).info())
        return info.model_copy(
            update={
                "tables": [t for t in info.tables if access.reads_table(t.name)],
                "collections": [c for c in info.collections if access.reads_collection(c.name)],
            }
        )

    async def list_traces(
        access: Access,
        principal: str | None = None,
        source: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        abstained: bool | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> TracePage:
        records = await to_thread.run_sync(lambda: trace_records(runner.lake.path))
        chosen = [
            summary(r)
            for r in records
            if (access.audit or r.principal == access.principal)
            and (principal is None or r.principal == principal)
            and (source is None or source in r.sources())
            and (since is None or r.at >= aware(since))
            and (until is None or r.at <= aware(until))
            and (abstained is None or r.answer.abstained == abstained)
        ]
        return TracePage(total=len(chosen), offset=offset, limit=limit, items=chosen[offset : offset + limit])

    async def replayed(trace_id: str) -> ReplayReport:
        with runner.slot():
            return await to_thread.run_sync(lambda: replay(runner.lake, trace_id))

    @app.get("/v1/traces", response_model=TracePage)
    async def traces(
        caller: Caller,
        role: str | None = None,
        principal: str | None = None,
        source: Annotated[str | None, Query(description="a table or collection the answer read")] = None,
        since: datetime | None = None,
        until: datetime | None = None,
        abstained: bool | None = None,
        offset: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
    ):
        """Recorded answers, newest first: the caller's own, or everyone's for a role with `audit`."""
        access = runner.access(caller, role)
        return await list_traces(access, principal, source, since, until, abstained, offset, limit)

    @app.get("/v1/traces/{trace_id}")
    async def trace(trace_id: str, caller: Caller, role: str | None = None) -> dict[str, Any]:
        """One answer: its run record (plan, node results with SQL as run, snapshots, evidence) and spans."""
        access = runner.access(caller, role)
        record = runner.visible_record(trace_id, access)
        spans = await to_thread.run_sync(lambda: read_spans(runner.lake.path, trace_id))
        return {"record": record.model_dump(mode="json"), "spans": spans}

    @app.post("/v1/traces/{trace_id}/replay", response_model=ReplayReport)
    async def replay_trace(trace_id: str, caller: Caller, role: str | None = None):
        """Re-run a recorded answer's SQL at its snapshots and re-read its evidence (needs `replay`)."""
        access = runner.access(caller, role)
        if not access.replay:
            raise AccessDeniedError(f"role {access.role!r} may not replay traces", hint="ask as a role with replay")
        runner.visible_record(trace_id, access)
        return await replayed(trace_id)

    app.include_router(audit.router(runner, authenticator, list_traces, replayed))

    def exclusively(work: Callable[[], T]) -> T:
        """`work` between questions: no question sees the contract change under it."""
        with runner.one_at_a_time:
            return work()

    @app.get("/v1/schema/gaps", response_model=SchemaGaps)
    async def schema_gaps(
        caller: Caller,
        question: Annotated[str, Query(min_length=1, description="the question, in plain language")],
        role: str | None = None,
        propose_extension: Annotated[
            bool, Query(alias="propose", description="also ask the model what it would add (not saved)")
        ] = False,
    ):
        """The question's terms that the contract, as the caller's role sees it, names nothing for. Add one
        for good with POST /v1/schema/extensions."""
        checked_question(question)
        contract = runner.lake.seen_by(runner.access(caller, role)).contract
        gate = sufficiency(question, contract)
        proposed = None
        if propose_extension and gate.unresolved:
            with runner.slot():
                proposed = await to_thread.run_sync(
                    lambda: exclusively(lambda: propose(runner.executor.llm, question, contract, gate.unresolved))
                )
        return SchemaGaps(question=question, sufficient=gate.sufficient, unresolved=gate.unresolved, proposed=proposed)

    @app.post("/v1/schema/extensions", response_model=ExtensionResponse, responses={403: {"model": ErrorBody}})
    async def extend_schema(body: ExtensionRequest, caller: Caller):
        """Add a term to the contract for good (a role with `extend_schema`): a new entity type, or with
        `entity` an attribute of one, mapped to `source`/`field` when given. Only additions: what the
        contract holds never changes. The new revision is appended to the version log."""
        access = runner.access(caller, body.role)
        if not access.extend_schema:
            raise AccessDeniedError(
                f"role {access.role!r} may not extend the schema",
                hint="ask as a role with extend_schema: true in the policy",
            )
        with runner.slot():
            version = await to_thread.run_sync(
                lambda: exclusively(lambda: add_term(runner.lake, body, by=access.principal, access=access))
            )
        return ExtensionResponse(changed=version is not None, revision=runner.lake.contract.revision, version=version)

    @app.get("/v1/schema/versions", response_model=SchemaVersions)
    async def schema_versions(caller: Caller, role: str | None = None):
        """The contract's version log, oldest first: each extension for good with who, when, why and what.
        Versions that name a source the caller's role may not read are left out."""
        access = runner.access(caller, role)
        contract = runner.lake.contract
        denied = denied_sources(contract, access)
        versions = await to_thread.run_sync(lambda: version_log(runner.lake.path))
        return SchemaVersions(revision=contract.revision, items=[v for v in versions if not v.added.sources & denied])

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        if runner.ready.is_set():
            return JSONResponse({"status": "ready"})
        body = {"status": "starting" if runner.problem is None else "failed", "problem": runner.problem}
        return JSONResponse(body, 503)

    @app.get("/metrics")
    async def prometheus() -> Response:
        return PlainTextResponse(generate_latest(metrics.registry).decode(), media_type=CONTENT_TYPE_LATEST)

    return app


def aware(moment: datetime) -> datetime:
    """A time without a zone is UTC (run records are stamped in UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def trace_records(lake_path: Path) -> list[RunRecord]:
    """Every run record, newest first (unreadable ones skipped)."""
    records = []
    for trace_id in reversed(list_runs(lake_path)):
        try:
            records.append(load_run(lake_path, trace_id))
        except (LakeplannerError, ValueError):
            continue
    return records
