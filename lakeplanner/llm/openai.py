"""Any OpenAI-compatible chat endpoint (vLLM, llama-server, hosted), with json_schema output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from lakeplanner.errors import LLMUnavailableError
from lakeplanner.llm.base import Backend, Message, RawCompletion, register_backend
from lakeplanner.llm.settings import LLMSettings
from lakeplanner.timebox import check_time, seconds_left


def rejects_schema_format(error: BaseException) -> bool:
    """A server that does not know OpenAI's json_schema response format (llama-cpp-python's answers
    400, 422 or even 500 with a validation message naming response_format)."""
    return isinstance(error, httpx.HTTPStatusError) and "response_format" in error.response.text


def is_transient(error: BaseException) -> bool:
    if isinstance(error, httpx.TransportError):
        return True
    return (
        isinstance(error, httpx.HTTPStatusError)
        and not rejects_schema_format(error)
        and (error.response.status_code >= 500 or error.response.status_code == 429)
    )


class OpenAIBackend(Backend):
    """Sends OpenAI's `json_schema` response format; a server that rejects it (llama-cpp-python's
    server takes `json_object` with a `schema`, and answers 500 otherwise) is switched to that form
    once, then remembered."""

    provider = "openai"

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.schema_format = "json_schema"
        self.model_name = settings.model
        self.client = httpx.Client(
            base_url=settings.base_url.rstrip("/") + "/",
            timeout=settings.timeout_s,
            headers={"Authorization": f"Bearer {settings.api_key}"},
        )

    def body(self, messages: Sequence[Message], schema: dict[str, Any] | None, max_tokens: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [m.model_dump() for m in messages],
            "temperature": 0.0,
            "seed": self.settings.seed,
            "max_tokens": max_tokens,
        }
        if schema is not None and self.schema_format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.get("title", "output"), "schema": schema},
            }
        elif schema is not None:
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    def post(self, body: dict[str, Any]) -> httpx.Response:
        check_time()
        response = self.client.post("chat/completions", json=body, timeout=seconds_left(self.settings.timeout_s))
        response.raise_for_status()
        return response

    def generate(self, messages: Sequence[Message], *, schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        retrying = Retrying(
            stop=stop_after_attempt(self.settings.endpoint_retries + 1),
            wait=wait_exponential(multiplier=0.5, max=8),
            retry=retry_if_exception(is_transient),
            reraise=True,
        )
        try:
            try:
                out = retrying(self.post, self.body(messages, schema, max_tokens))
            except httpx.HTTPStatusError as e:
                if schema is None or self.schema_format != "json_schema" or not rejects_schema_format(e):
                    raise
                self.schema_format = "json_object"
                out = retrying(self.post, self.body(messages, schema, max_tokens))
        except httpx.HTTPError as e:
            check_time()
            raise self.unavailable(e) from e
        return self.completion(out)

    def unavailable(self, error: httpx.HTTPError) -> LLMUnavailableError:
        failed = f"LLM endpoint {self.settings.base_url} failed after {self.settings.endpoint_retries + 1} attempts"
        if isinstance(error, httpx.TimeoutException):
            return LLMUnavailableError(
                f"{failed}: timed out after {self.settings.timeout_s:g} s",
                hint="raise LAKEPLANNER_LLM_TIMEOUT_S (or [llm] timeout_s in lakeplanner.toml), "
                "or check the server's load",
            )
        if isinstance(error, httpx.HTTPStatusError):
            response = error.response
            detail = f"HTTP {response.status_code} {response.reason_phrase} {response.text[:200]!r}"
            return LLMUnavailableError(
                f"{failed}: {detail}", hint="see the server's log; check LAKEPLANNER_LLM_MODEL names a model it serves"
            )
        return LLMUnavailableError(
            f"{failed}: {error}",
            hint="is the server running? set LAKEPLANNER_LLM_BASE_URL (or [llm] base_url in lakeplanner.toml)",
        )

    def completion(self, response: httpx.Response) -> RawCompletion:
        """The reply's text and token counts; a body that is no chat completion is named, not a crash."""
        try:
            out = response.json()
            usage = out.get("usage") or {}
            return RawCompletion(
                text=out["choices"][0]["message"].get("content") or "",
                prompt_tokens=usage.get("prompt_tokens", 0),
                completion_tokens=usage.get("completion_tokens", 0),
            )
        except (ValueError, LookupError, TypeError, AttributeError) as e:
            raise LLMUnavailableError(
                f"LLM endpoint {self.settings.base_url} sent no JSON chat completion (no choices[0].message): "
                f"{response.text[:200]!r}",
                hint="point LAKEPLANNER_LLM_BASE_URL at an OpenAI-compatible /v1 URL (vLLM, llama-server)",
            ) from e

    def close(self) -> None:
        self.client.close()


@register_backend("openai")
def openai_backend(settings: LLMSettings) -> OpenAIBackend:
    return OpenAIBackend(settings)
