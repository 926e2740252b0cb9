"""One LLM interface over every backend: messages in, a validated pydantic object (or text) out.

Invalid structured output is re-asked with the validation error fed back, a bounded number of
times, then raised as LLMOutputError. Backends only generate text; this module owns parsing,
validation, repair and usage accounting, so every backend behaves the same.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import from_json

from lakeplanner.errors import LakeplannerError, LLMOutputError
from lakeplanner.llm.settings import LLMSettings
from lakeplanner.timebox import check_time

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str
    # offsets in `content` where a prefix worth keeping ends (a local backend keeps its KV state)
    cache_points: tuple[int, ...] = Field((), exclude=True)


def clipped(chars: int) -> Any:
    """A str field cut to `chars` instead of refused: grammars drop long maxLength, and a small model
    that writes one sentence too many should not cost a whole re-ask."""
    return Annotated[str, AfterValidator(lambda text: text[:chars])]


def system(*parts: str) -> Message:
    """A system message of `parts` run together; put what is fixed first: the end of every part but the
    last is a cache point (a family's instructions before a per-question schema slice)."""
    return Message(
        role="system", content="".join(parts), cache_points=tuple(itertools.accumulate(map(len, parts[:-1])))
    )


def user(content: str) -> Message:
    return Message(role="user", content=content)


def assistant(content: str) -> Message:
    return Message(role="assistant", content=content)


class Usage(BaseModel):
    prompt_tokens: int = 0
    prompt_tokens_evaluated: int = 0  # the rest came from a kept prefix state
    completion_tokens: int = 0
    latency_s: float = 0.0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            prompt_tokens_evaluated=self.prompt_tokens_evaluated + other.prompt_tokens_evaluated,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            latency_s=self.latency_s + other.latency_s,
            calls=self.calls + other.calls,
        )


class Completion(BaseModel, Generic[T]):
    """What a call returns: the validated value (None for plain text), the raw text, and the cost."""

    value: T | None
    text: str
    usage: Usage
    attempts: int
    model: str


@dataclass(frozen=True)
class RawCompletion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    evaluated_tokens: int | None = None  # prompt tokens the model computed (None: the backend cannot tell)

    @property
    def usage(self) -> Usage:
        evaluated = self.prompt_tokens if self.evaluated_tokens is None else self.evaluated_tokens
        return Usage(
            prompt_tokens=self.prompt_tokens,
            prompt_tokens_evaluated=evaluated,
            completion_tokens=self.completion_tokens,
            calls=1,
        )


class Backend(ABC):
    """Generates text for chat messages, optionally constrained to a JSON schema."""

    model_name: str
    provider: str = "unknown"  # gen_ai.provider.name of its calls
    travels: bool = False  # it holds no loaded model: a Ray actor may receive it as it is (a scripted one)

    @abstractmethod
    def generate(self, messages: Sequence[Message], *, schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        """Raises LLMUnavailableError when the model or endpoint cannot answer."""

    def prepare(self, messages: Sequence[Message]) -> int:
        """Evaluate and keep the fixed prefixes of `messages`' system message, as a call starting with
        it would (a backend that keeps no prefix states has nothing to do); returns the tokens evaluated."""
        return 0

    def close(self) -> None:
        return None


def json_text(text: str) -> str:
    """Model text from its first brace or bracket, code fences left out."""
    cleaned = _FENCE.sub("", text.strip())
    start = min((i for i in (cleaned.find("{"), cleaned.find("[")) if i >= 0), default=-1)
    return cleaned[start:] if start > 0 else cleaned


def parse_json(text: str) -> Any:
    """JSON from model text: tolerates code fences and raw newlines inside strings."""
    return json.loads(json_text(text), strict=False)


def salvaged(text: str, output: type[T]) -> T | None:
    """An object cut off at the token limit inside its last field, a string the model need not write
    (a Draft's reason): the object of the fields written before it; None when anything else was cut."""
    try:
        kept = from_json(json_text(text), allow_partial=True)
        cut = from_json(json_text(text), allow_partial="trailing-strings")
    except ValueError:
        return None
    if not isinstance(kept, dict) or not isinstance(cut, dict):
        return None
    dropped = cut.keys() - kept.keys()
    if len(dropped) != 1 or any(cut[key] != value for key, value in kept.items()):
        return None
    field = output.model_fields.get(dropped.pop())
    if field is None or field.is_required():
        return None
    try:
        return output.model_validate(kept)
    except ValidationError:
        return None


def cut_message(limit: int) -> Message:
    return user(
        f"Your reply was cut off at the {limit}-token limit before the JSON object closed: it ran on or "
        "repeated itself. Reply again with a much shorter JSON object."
    )


def repair_message(error: Exception) -> Message:
    detail = str(error).splitlines()
    return user(
        "Your reply was not valid for the required JSON schema: "
        + "; ".join(line.strip() for line in detail[:8])
        + ". Reply again with only the corrected JSON object."
    )


class LLM:
    """A backend plus the validation-and-repair loop."""

    def __init__(self, backend: Backend, settings: LLMSettings | None = None) -> None:
        self.backend = backend
        self.settings = settings or LLMSettings()

    @property
    def model_name(self) -> str:
        return self.backend.model_name

    def for_purpose(self, purpose: str) -> LLM:
        """The LLM that answers calls of `purpose` (LLMSettings.routes); this one unless routed."""
        return self

    def prepare(self, messages: Sequence[Message]) -> int:
        """Backend.prepare: the first call that starts with these messages' system prompt finds it evaluated."""
        return self.backend.prepare(messages)

    def complete(
        self, messages: Sequence[Message], output: type[T] | None = None, *, max_tokens: int | None = None
    ) -> Completion[T]:
        schema = output.model_json_schema() if output else None
        conversation = list(messages)
        usage = Usage()
        raw = RawCompletion("", 0, 0)
        attempts = 1 + (self.settings.repair_attempts if output else 0)
        limit = max_tokens or self.settings.max_tokens
        cut_before = False  # an earlier reply was cut at the token limit
        for attempt in range(1, attempts + 1):
            check_time()
            started = time.perf_counter()
            raw = self.backend.generate(conversation, schema=schema, max_tokens=limit)
            usage += raw.usage.model_copy(update={"latency_s": time.perf_counter() - started})
            if output is None:
                return Completion(value=None, text=raw.text, usage=usage, attempts=attempt, model=self.model_name)
            try:
                value = output.model_validate(parse_json(raw.text))
            except (ValueError, ValidationError) as error:
                if raw.completion_tokens < limit:
                    conversation += [assistant(raw.text), repair_message(error)]
                    continue
                if (value := salvaged(raw.text, output)) is not None:
                    return Completion(value=value, text=raw.text, usage=usage, attempts=attempt, model=self.model_name)
                if cut_before:  # greedy decoding writes a run-on reply again: a third try costs as much
                    break
                cut_before = True
                conversation += [assistant(raw.text), cut_message(limit)]
                continue
            return Completion(value=value, text=raw.text, usage=usage, attempts=attempt, model=self.model_name)
        raise LLMOutputError(
            f"{self.model_name} gave no valid {output.__name__} in {attempt} attempts; last output: {raw.text[:200]!r}",
            raw=raw.text,
            attempts=attempt,
            hint="raise LAKEPLANNER_LLM_REPAIR_ATTEMPTS, use the larger model, or simplify the request",
        )

    def close(self) -> None:
        self.backend.close()


class RoutedLLM(LLM):
    """An LLM that hands the calls of some purposes to other models (a smaller one for easy stages)."""

    def __init__(self, default: LLM, routes: dict[str, LLM]) -> None:
        super().__init__(default.backend, default.settings)
        self.routes = routes

    def for_purpose(self, purpose: str) -> LLM:
        return self.routes.get(purpose, self)

    def close(self) -> None:
        others = {id(llm.backend): llm for llm in self.routes.values() if llm.backend is not self.backend}
        for llm in others.values():
            llm.close()
        super().close()


BackendFactory = Callable[[LLMSettings], Backend]
_BACKENDS: dict[str, BackendFactory] = {}
_BUILTIN_MODULES = {
    "local": "lakeplanner.llm.local",
    "openai": "lakeplanner.llm.openai",
    "vllm": "lakeplanner.llm.vllm",
    "fake": "lakeplanner.llm.fake",
}


def register_backend(name: str) -> Callable[[BackendFactory], BackendFactory]:
    """Register a backend factory under a name (the built-in ones register the same way)."""

    def register(factory: BackendFactory) -> BackendFactory:
        _BACKENDS[name] = factory
        return factory

    return register


def get_llm(settings: LLMSettings | None = None) -> LLM:
    """The configured LLM (LAKEPLANNER_LLM_* variables and lakeplanner.toml decide)."""
    settings = settings or LLMSettings()
    if settings.backend not in _BACKENDS and settings.backend in _BUILTIN_MODULES:
        importlib.import_module(_BUILTIN_MODULES[settings.backend])
    factory = _BACKENDS.get(settings.backend)
    if factory is None:
        raise LakeplannerError(
            f"unknown LLM backend {settings.backend!r}", hint=f"choose one of {sorted({*_BACKENDS, *_BUILTIN_MODULES})}"
        )
    if not settings.routes:
        return LLM(factory(settings), settings)
    models = {
        model: LLM(factory(routed), routed)
        for model in set(settings.routes.values()) - {settings.model}
        for routed in [settings.model_copy(update={"model": model, "routes": {}})]
    }
    default = LLM(factory(settings), settings)
    return RoutedLLM(default, {purpose: models.get(model, default) for purpose, model in settings.routes.items()})
