"""The audit dashboard (/audit): server-rendered pages over the lake's run records and OTLP spans.
A list of answers with filters and paging, and one answer with its plan drawn as a DAG, the SQL as
run with its snapshots and row keys, the evidence with the cited text highlighted, every LLM call,
the policy decisions, and a Replay button."""

from __future__ import annotations

import json
from datetime import datetime, time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from anyio import to_thread
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import escape

from lakeplanner.errors import AccessDeniedError, LakeplannerError
from lakeplanner.execute.results import Answer, Evidence
from lakeplanner.execute.runs import RunRecord
from lakeplanner.lineage import semconv
from lakeplanner.lineage.tracing import attribute_values, read_spans
from lakeplanner.plan.model import Plan
from lakeplanner.policy import Access
from lakeplanner.service.auth import COOKIE, AuthError, Principal, credentials

PAGE = 25
TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape(["html"])
)


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(TEMPLATES.get_template(name).render(**context), status)


def dag_svg(plan: Plan) -> str:
    """The plan as an SVG: one column per depth, arrows from each step to the steps that read it."""
    dependencies = plan.dependencies()
    depth: dict[str, int] = {}
    for node in plan.nodes:  # nodes are in dependency order once validated; cycles fall back to 0
        depth[node.label] = 1 + max((depth.get(d, 0) for d in dependencies[node.label]), default=-1)
    columns: dict[int, list[str]] = {}
    for label, d in depth.items():
        columns.setdefault(d, []).append(label)
    width, height, gap_x, gap_y = 200, 54, 70, 22
    place = {
        label: (d * (width + gap_x) + 10, i * (height + gap_y) + 10)
        for d, ls in columns.items()
        for i, label in enumerate(ls)
    }
    total_w = max(x for x, _ in place.values()) + width + 20 if place else 100
    total_h = max(y for _, y in place.values()) + height + 20 if place else 60
    parts = [
        f'<svg id="dag" width="{total_w}" height="{total_h}" xmlns="http://www.w3.org/2000/svg">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#667"/></marker></defs>',
    ]
    for node in plan.nodes:
        x, y = place[node.label]
        for dep in dependencies[node.label]:
            if dep in place:
                dx, dy = place[dep]
                parts.append(
                    f'<line x1="{dx + width}" y1="{dy + height / 2}" x2="{x}" y2="{y + height / 2}" '
                    'stroke="#667" marker-end="url(#arrow)"/>'
                )
    for node in plan.nodes:
        x, y = place[node.label]
        fill = "#e6efff" if node.tool == "sql" else "#eaf7ea" if node.tool == "vector" else "#f5eefc"
        stroke = "#12733a" if node.should_expose_answer else "#3d6fd9"
        parts.append(
            f'<g class="dag-node"><a href="#node-{escape(node.label)}">'
            f'<rect x="{x}" y="{y}" width="{width}" height="{height}" rx="6" fill="{fill}" stroke="{stroke}"/>'
            f'<text x="{x + 8}" y="{y + 20}" font-size="13" font-weight="600">'
            f"{escape(node.label)} · {escape(node.tool)}</text>"
            f'<text x="{x + 8}" y="{y + 40}" font-size="12">{escape(node.source[:26])}</text></a></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def evidence_views(evidence: list[Evidence], answer: Answer) -> list[dict]:
    """Each passage with the part the answer cites marked (by offsets, else by its text)."""
    views = []
    for item in evidence:
        start, end = item.offsets
        text, cited_at = item.snippet, None
        for c in answer.citations:
            if c.kind != "span" or c.start is None or not item.uri.endswith(f"/{c.document_id}"):
                continue
            if start <= c.start < end:
                cited_at = (c.start - start, min(c.end or end, end) - start)
                break
            if c.snippet and c.snippet[:60] in text:
                at = text.index(c.snippet[:60])
                cited_at = (at, at + len(c.snippet))
                break
        a, b = cited_at or (0, 0)
        views.append(
            {"uri": item.uri, "start": start, "end": end, "before": text[:a], "cited": text[a:b], "after": text[b:]}
        )
    return views


def llm_calls(spans: list[dict]) -> list[dict]:
    calls = []
    for span in sorted(spans, key=lambda s: int(s["startTimeUnixNano"])):
        a = attribute_values(span)
        if a.get(semconv.KIND) == semconv.LLM:
            calls.append(
                {
                    "purpose": a.get("lakeplanner.llm.purpose", ""),
                    "model": a.get(semconv.REQUEST_MODEL, ""),
                    "provider": a.get(semconv.PROVIDER, ""),
                    "input": a.get(semconv.INPUT_TOKENS, 0),
                    "output": a.get(semconv.OUTPUT_TOKENS, 0),
                    "seconds": (int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"])) / 1e9,
                }
            )
    return calls


def policy_decisions(spans: list[dict]) -> list[dict]:
    out = []
    for span in sorted(spans, key=lambda s: int(s["startTimeUnixNano"])):
        a = attribute_values(span)
        if "lakeplanner.policy.decision" in a:
            out.append(
                {
                    "span": span["name"],
                    "text": f"{a['lakeplanner.policy.decision']} {a.get('lakeplanner.policy.source', '')}",
                }
            )
        decisions = a.get("lakeplanner.policy.decisions")
        if isinstance(decisions, str):  # a list is exported as its JSON text
            decisions = json.loads(decisions) if decisions.startswith("[") else [decisions]
        out += [{"span": span["name"], "text": text} for text in decisions or []]
    return out


def day(value: str | None, end: bool = False) -> datetime | None:
    if not value:
        return None
    moment = datetime.fromisoformat(value)
    return (
        datetime.combine(moment.date(), time.max if end else time.min, tzinfo=moment.tzinfo)
        if len(value) == 10
        else moment
    )


def router(runner, authenticator, list_traces, replayed) -> APIRouter:
    """The dashboard's routes over the API's own listing (`list_traces`) and replay (`replayed`)."""
    pages = APIRouter(prefix="/audit", include_in_schema=False)

    def principal_of(request: Request) -> Principal:
        return authenticator.principal(*credentials(request.headers, request.cookies))

    def granted(principal: Principal, right: str) -> Access:
        """The first of the principal's roles whose policy grants `right` (audit or replay)."""
        for role in principal.roles:
            access = runner.access(principal, role)
            if getattr(access, right):
                return access
        raise AccessDeniedError(
            f"{principal.name} has no role that may {right}", hint="ask an administrator for an auditor role"
        )

    def guarded(request: Request, right: str = "audit") -> Access | Response:
        try:
            return granted(principal_of(request), right)
        except AuthError:
            return RedirectResponse("/audit/login", 303)
        except AccessDeniedError as e:
            return HTMLResponse(f"<h1>403</h1><p>{escape(e.message)}</p><p>{escape(e.hint or '')}</p>", 403)

    @pages.get("/login")
    async def login_form() -> HTMLResponse:
        return render("login.html", who="")

    @pages.post("/login")
    async def login(request: Request) -> Response:
        form = parse_qs((await request.body()).decode())
        token = (form.get("token") or [""])[0].strip()
        try:
            authenticator.principal(f"Bearer {token}", None)
        except LakeplannerError as e:
            return render("login.html", 401, who="", problem=e.message)
        response = RedirectResponse("/audit", 303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    @pages.get("")
    async def answers(request: Request) -> Response:
        access = guarded(request)
        if isinstance(access, Response):
            return access
        q = request.query_params
        filters = {
            "principal": q.get("principal") or None,
            "source": q.get("source") or None,
            "since": q.get("since") or None,
            "until": q.get("until") or None,
            "abstained": {"true": True, "false": False}.get(q.get("abstained", "")),
        }
        offset = max(0, int(q.get("offset", "0") or 0))
        page = await list_traces(
            access,
            principal=filters["principal"],
            source=filters["source"],
            since=day(filters["since"]),
            until=day(filters["until"], end=True),
            abstained=filters["abstained"],
            offset=offset,
            limit=PAGE,
        )
        kept = {k: v for k, v in q.items() if k != "offset" and v}
        return render(
            "answers.html",
            who=f"{access.principal} as {access.role}",
            page=page,
            filters=filters,
            previous=f"/audit?{urlencode({**kept, 'offset': max(0, offset - PAGE)})}",
            next=f"/audit?{urlencode({**kept, 'offset': offset + PAGE})}",
        )

    async def detail(request: Request, trace_id: str, replayed=None) -> Response:
        access = guarded(request)
        if isinstance(access, Response):
            return access
        record: RunRecord = runner.visible_record(trace_id, access)
        spans = await to_thread.run_sync(lambda: read_spans(runner.lake.path, trace_id))
        principal = principal_of(request)
        can_replay = any(runner.access(principal, role).replay for role in principal.roles)
        answer = record.answer
        return render(
            "answer.html",
            who=f"{access.principal} as {access.role}",
            record=record,
            answer=answer,
            nodes=answer.nodes,
            evidence={n.label: evidence_views(n.evidence, answer) for n in answer.nodes},
            dag=dag_svg(record.plan),
            llm_calls=llm_calls(spans),
            decisions=policy_decisions(spans),
            can_replay=can_replay,
            replayed=replayed,
        )

    @pages.get("/{trace_id}")
    async def one(request: Request, trace_id: str) -> Response:
        return await detail(request, trace_id)

    @pages.post("/{trace_id}/replay")
    async def replay_one(request: Request, trace_id: str) -> Response:
        access = guarded(request, "replay")
        if isinstance(access, Response):
            return access
        runner.visible_record(trace_id, access)
        return await detail(request, trace_id, await replayed(trace_id))

    return pages
