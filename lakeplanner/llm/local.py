"""The default backend: llama-cpp-python in process, greedy decoding, JSON-schema constrained.

Prompts are built prefix-first (instructions and schema, then the variable part), and llama.cpp
keeps the KV cache of the longest prefix shared with the previous call, so a repeated prefix is
not evaluated again. `prefix_reuse=False` drops the cache before every call (for measurement).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

try:
    from llama_cpp import Llama, LogitsProcessorList
except ImportError:  # the [llm] extra is optional; LocalBackend says how to install it
    Llama = LogitsProcessorList = None

from lakeplanner.errors import LLMUnavailableError, MissingDependencyError
from lakeplanner.llm.base import Backend, Message, RawCompletion, register_backend
from lakeplanner.llm.settings import LLMSettings
from lakeplanner.llm.weights import MODELS, model_path

BUILD_HINT = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON '
    '-DLLAVA_BUILD=OFF" pip install -e ".[llm]"'
)


class DeadlineExceeded(Exception):
    pass


class Deadline:
    """A logits processor that aborts generation once the call's time is up (llama.cpp has no timeout)."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if time.monotonic() > self.end:
            raise DeadlineExceeded
        return scores


class LocalBackend(Backend):
    def __init__(self, settings: LLMSettings, *, prefix_reuse: bool = True) -> None:
        if Llama is None:
            raise MissingDependencyError("the local LLM backend needs llama-cpp-python", hint=BUILD_HINT)
        path = model_path(settings.model, settings.cache_dir)
        threads = settings.threads or os.cpu_count() or 1
        self.settings = settings
        self.prefix_reuse = prefix_reuse
        self.model_name = MODELS[settings.model].name if settings.model in MODELS else path.name
        try:
            self.llama = Llama(
                model_path=str(path),
                n_ctx=settings.context_tokens,
                n_threads=threads,
                n_threads_batch=threads,
                seed=settings.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError) as e:
            raise LLMUnavailableError(
                f"llama.cpp could not load {path}: {e}",
                hint="delete the cached file to reassemble it, or lower context_tokens",
            ) from e

    def generate(self, messages: Sequence[Message], *, schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        if not self.prefix_reuse:
            self.llama.reset()
        kwargs: dict[str, Any] = {
            "messages": [m.model_dump() for m in messages],
            "temperature": 0.0,
            "top_k": 1,
            "seed": self.settings.seed,
            "max_tokens": max_tokens,
        }
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        kwargs["logits_processor"] = LogitsProcessorList([Deadline(self.settings.timeout_s)])
        try:
            out = self.llama.create_chat_completion(**kwargs)
        except ValueError as e:  # llama-cpp raises ValueError when the prompt exceeds the context
            raise LLMUnavailableError(
                f"{self.model_name}: {e}", hint="shorten the prompt or raise LAKEPLANNER_LLM_CONTEXT_TOKENS"
            ) from e
        except DeadlineExceeded as e:
            raise LLMUnavailableError(
                f"{self.model_name} timed out after {self.settings.timeout_s:.0f} s",
                hint="raise LAKEPLANNER_LLM_TIMEOUT_S, lower max_tokens, or use model 'small'",
            ) from e
        usage = out["usage"]
        return RawCompletion(
            text=out["choices"][0]["message"]["content"] or "",
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
        )

    def close(self) -> None:
        self.llama.close()


@register_backend("local")
def local_backend(settings: LLMSettings) -> LocalBackend:
    return LocalBackend(settings)
