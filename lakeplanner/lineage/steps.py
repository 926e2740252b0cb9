"""Recording what a node does (LLM calls, SQL statements, searches) as plain data.

Nodes may run in Ray workers, where the driver's tracer is out of reach; they record steps, and the
driver turns them into OpenTelemetry spans with the recorded times (lakeplanner.lineage.tracing).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, Field

from lakeplanner.lineage import semconv
from lakeplanner.llm.base import LLM, Completion, Message, T


class Step(BaseModel):
    """One recorded operation inside a node (an LLM call, a SQL statement, a search), with its timing;
    the driver turns steps into OpenTelemetry spans, so tracing works the same in Ray workers."""

    name: str
    start_ns: int
    end_ns: int = 0
    attributes: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


BECAUSE, BECAUSE_CHARS = "lakeplanner.llm.because", 300


class Recorder:
    def __init__(self) -> None:
        self.steps: list[Step] = []

    @contextmanager
    def step(self, name: str, **attributes: Any) -> Iterator[Step]:
        record = Step(name=name, start_ns=time.time_ns(), attributes=attributes)
        self.steps.append(record)
        try:
            yield record
        except Exception as e:
            record.error = f"{type(e).__name__}: {e}"
            raise
        finally:
            record.end_ns = time.time_ns()

    def llm_call(
        self,
        purpose: str,
        completion: Completion,
        started_ns: int,
        data_chars: int = 0,
        provider: str = "unknown",
        because: str = "",
    ) -> None:
        """A finished LLM call, with the GenAI semantic-convention attributes; `because`: what a retry
        was told (the failure of the previous attempt)."""
        usage = completion.usage
        self.steps.append(
            Step(
                name=f"chat {completion.model}",
                start_ns=started_ns,
                end_ns=time.time_ns(),
                attributes={
                    **semconv.llm_attributes(completion.model, provider, usage.prompt_tokens, usage.completion_tokens),
                    "lakeplanner.llm.purpose": purpose,
                    "lakeplanner.llm.attempts": completion.attempts,
                    "lakeplanner.llm.data_chars": data_chars,
                    **({BECAUSE: because[:BECAUSE_CHARS]} if because else {}),
                },
            )
        )

    def complete(
        self,
        llm: LLM,
        purpose: str,
        messages: list[Message],
        output: type[T] | None = None,
        max_tokens: int = 400,
        data_chars: int = 0,
        because: str = "",
    ) -> Completion[T]:
        """llm.complete, recorded as a step (also when it fails); `data_chars` counts the characters
        of lake data (cells, examples, passages) the prompt shows; `because` is what a retry was told."""
        started = time.time_ns()
        llm = llm.for_purpose(purpose)
        try:
            done = llm.complete(messages, output, max_tokens=max_tokens)
        except Exception as e:
            self.steps.append(
                Step(
                    name=f"chat {llm.model_name}",
                    start_ns=started,
                    end_ns=time.time_ns(),
                    error=str(e)[:500],
                    attributes={
                        **semconv.llm_attributes(llm.model_name, llm.backend.provider, 0, 0),
                        "lakeplanner.llm.purpose": purpose,
                    },
                )
            )
            raise
        self.llm_call(purpose, done, started, data_chars, llm.backend.provider, because)
        return done


class RecordingLLM(LLM):
    """An LLM whose every call is also recorded as a step (tracing by wrapping)."""

    def __init__(self, llm: LLM, recorder: Recorder, purpose: str) -> None:
        llm = llm.for_purpose(purpose)
        super().__init__(llm.backend, llm.settings)
        self.recorder = recorder
        self.purpose = purpose

    def complete(self, messages, output=None, *, max_tokens=None):
        started = time.time_ns()
        done = super().complete(messages, output, max_tokens=max_tokens)
        self.recorder.llm_call(self.purpose, done, started, provider=self.backend.provider)
        return done


def data_chars(steps: list[Step]) -> int:
    return sum(int(s.attributes.get("lakeplanner.llm.data_chars", 0)) for s in steps)


class Usage(BaseModel):
    """LLM calls and tokens (GenAI usage attributes) summed over steps."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


def usage(steps: list[Step]) -> Usage:
    calls = [s.attributes for s in steps if s.attributes.get(semconv.KIND) == semconv.LLM]
    return Usage(
        llm_calls=len(calls),
        input_tokens=sum(int(a.get(semconv.INPUT_TOKENS) or 0) for a in calls),
        output_tokens=sum(int(a.get(semconv.OUTPUT_TOKENS) or 0) for a in calls),
    )
