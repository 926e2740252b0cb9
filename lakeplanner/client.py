"""A Python client of `lakeplanner serve` (httpx): the same answers as `Lake.ask`, over HTTP.

from lakeplanner.client import Client
with Client("http://127.0.0.1:8321", api_key="lpk_...") as lp:
    answer = lp.ask("How many loans are overdue?")
    for event in lp.stream("Which policy covers LN-1078?"):
        print(event.event, event.data)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from pydantic import BaseModel

from lakeplanner.errors import LakeplannerError
from lakeplanner.service.schemas import AskResponse, PlanResponse, TracePage

DEFAULT_TIMEOUT = httpx.Timeout(10.0, read=900.0)  # a question on a CPU model takes minutes


class ServiceError(LakeplannerError):
    """The service answered with an error status; `status` holds it."""

    def __init__(self, status: int, message: str, hint: str | None = None) -> None:
        self.status = status
        super().__init__(f"{status}: {message}", hint=hint)


class ServiceUnreachableError(LakeplannerError):
    """No lakeplanner service answers at the address (not started, wrong address, network down)."""


class Event(BaseModel):
    """One Server-Sent Event: plan, result, answer, error or done."""

    event: str
    data: Any


def _headers(api_key: str | None, token: str | None) -> dict[str, str]:
    credential = api_key or token
    return {"Authorization": f"Bearer {credential}"} if credential else {}


def _checked(reply: httpx.Response) -> httpx.Response:
    if reply.is_success:
        return reply
    try:
        body = reply.json()
        message, hint = body.get("error", reply.text), body.get("hint")
    except ValueError:
        message, hint = reply.text[:300], None
    if reply.status_code == 429:
        hint = f"the service is busy; retry after {reply.headers.get('Retry-After', '?')} s"
    raise ServiceError(reply.status_code, message, hint)


class EventParser:
    """Server-Sent Events from lines: `feed` returns an event at each blank line that ends one."""

    def __init__(self) -> None:
        self.name, self.data = "message", []

    def feed(self, line: str) -> Event | None:
        if line.startswith("event:"):
            self.name = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            self.data.append(line.removeprefix("data:").strip())
        elif not line and self.data:
            event = Event(event=self.name, data=json.loads("\n".join(self.data)))
            self.name, self.data = "message", []
            return event
        return None


class Client:
    """Synchronous client. `api_key` or `token` (an OIDC bearer token) authenticate the caller."""

    def __init__(
        self, url: str, *, api_key: str | None = None, token: str | None = None, timeout=DEFAULT_TIMEOUT
    ) -> None:
        self.http = httpx.Client(base_url=url, headers=_headers(api_key, token), timeout=timeout)

    def ask(self, question: str, *, role: str | None = None, use_cache: bool = True) -> AskResponse:
        reply = self._post("/v1/ask", {"question": question, "role": role, "use_cache": use_cache})
        return AskResponse.model_validate(reply.json())

    def stream(self, question: str, *, role: str | None = None, use_cache: bool = True) -> Iterator[Event]:
        """The answer's events as they happen; closing the iterator cancels the work."""
        body = {"question": question, "role": role, "use_cache": use_cache}
        try:
            with self.http.stream("POST", "/v1/ask", json=body, headers={"Accept": "text/event-stream"}) as reply:
                if not reply.is_success:
                    reply.read()
                    _checked(reply)
                parser = EventParser()
                for line in reply.iter_lines():
                    if (event := parser.feed(line)) is not None:
                        yield event
        except httpx.TransportError as e:
            raise _unreachable(self.http.base_url, e) from e

    def plan(self, question: str, *, role: str | None = None) -> PlanResponse:
        return PlanResponse.model_validate(self._post("/v1/plan", {"question": question, "role": role}).json())

    def lake(self, *, role: str | None = None) -> dict:
        return self._get("/v1/lake", role=role).json()

    def traces(self, **filters: Any) -> TracePage:
        return TracePage.model_validate(self._get("/v1/traces", **filters).json())

    def trace(self, trace_id: str) -> dict:
        return self._get(f"/v1/traces/{trace_id}").json()

    def replay(self, trace_id: str) -> dict:
        return self._post(f"/v1/traces/{trace_id}/replay", None).json()

    def _get(self, path: str, **params: Any) -> httpx.Response:
        params = {k: v for k, v in params.items() if v is not None}
        try:
            return _checked(self.http.get(path, params=params))
        except httpx.TransportError as e:
            raise _unreachable(self.http.base_url, e) from e

    def _post(self, path: str, body: dict | None) -> httpx.Response:
        body = {k: v for k, v in body.items() if v is not None} if body else None
        try:
            return _checked(self.http.post(path, json=body))
        except httpx.TransportError as e:
            raise _unreachable(self.http.base_url, e) from e

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class AsyncClient:
    """The same over asyncio: `await ask(...)`, `async for event in stream(...)`."""

    def __init__(
        self, url: str, *, api_key: str | None = None, token: str | None = None, timeout=DEFAULT_TIMEOUT
    ) -> None:
        self.http = httpx.AsyncClient(base_url=url, headers=_headers(api_key, token), timeout=timeout)

    async def ask(self, question: str, *, role: str | None = None, use_cache: bool = True) -> AskResponse:
        body = {k: v for k, v in {"question": question, "role": role, "use_cache": use_cache}.items() if v is not None}
        try:
            reply = _checked(await self.http.post("/v1/ask", json=body))
        except httpx.TransportError as e:
            raise _unreachable(self.http.base_url, e) from e
        return AskResponse.model_validate(reply.json())

    async def stream(self, question: str, *, role: str | None = None, use_cache: bool = True) -> AsyncIterator[Event]:
        body = {k: v for k, v in {"question": question, "role": role, "use_cache": use_cache}.items() if v is not None}
        try:
            async with self.http.stream("POST", "/v1/ask", json=body, headers={"Accept": "text/event-stream"}) as reply:
                if not reply.is_success:
                    await reply.aread()
                    _checked(reply)
                parser = EventParser()
                async for line in reply.aiter_lines():
                    if (event := parser.feed(line)) is not None:
                        yield event
        except httpx.TransportError as e:
            raise _unreachable(self.http.base_url, e) from e

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


def _unreachable(url, error: Exception) -> ServiceUnreachableError:
    return ServiceUnreachableError(
        f"cannot reach lakeplanner at {url}: {error}", hint="start it with `lakeplanner serve --lake DIR`"
    )
