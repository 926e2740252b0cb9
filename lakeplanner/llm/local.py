"""The default backend: llama-cpp-python in process, greedy decoding, JSON-schema constrained.

Prompts are built prefix-first (a system message with instructions and schema, then the variable
part). llama.cpp keeps the KV cache of the prefix shared with the previous call; on top of that,
the KV states of fixed prefixes are kept across calls (lakeplanner.llm.prefix_states), so prompt
families that alternate do not evaluate their instructions again. `prefix_reuse=False` drops both
before every call (for measurement).

Chat messages are formatted with the model's own chat template and completed with
`create_completion`, which (unlike `create_chat_completion`) takes a stopping criterion: that is
how a call's time limit is enforced between tokens.
"""

from __future__ import annotations

import ctypes
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

try:
    import llama_cpp
    from llama_cpp import Llama, LlamaGrammar, StoppingCriteriaList
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
except ImportError:  # the [llm] extra is optional; LocalBackend says how to install it
    Llama = None

from lakeplanner.errors import LLMUnavailableError, MissingDependencyError
from lakeplanner.llm.base import Backend, Message, RawCompletion, register_backend, user
from lakeplanner.llm.prefix_states import PrefixStates, Snapshot, shared_length, state_directory
from lakeplanner.llm.settings import LLMSettings
from lakeplanner.llm.weights import MODELS, default_cache_dir, model_path
from lakeplanner.timebox import check_time, seconds_left

BUILD_HINT = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON '
    '-DLLAVA_BUILD=OFF" pip install -e ".[llm]"'
)


GRAMMAR_MAX_LENGTH = 64
# shorter shared prefixes cost less to evaluate than a snapshot costs to keep
MIN_SNAPSHOT_TOKENS = 64


def grammar_safe(schema: Any) -> Any:
    """The schema without regex `pattern`s (llama.cpp's grammar built from one can segfault, seen with
    0.3.36) and without long `maxLength`s (a grammar nests one optional rule per character and llama.cpp
    refuses it past a few hundred); the pydantic model still validates both after decoding."""
    if isinstance(schema, dict):
        return {
            k: grammar_safe(v)
            for k, v in schema.items()
            if not (k == "pattern" and isinstance(v, str))
            and not (k == "maxLength" and isinstance(v, int) and v > GRAMMAR_MAX_LENGTH)
        }
    if isinstance(schema, list):
        return [grammar_safe(v) for v in schema]
    return schema


class Deadline:
    """A stopping criterion that ends generation once the call's time is up."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.expired = False

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        self.expired = time.monotonic() > self.end
        return self.expired


def load_hint(settings: LLMSettings) -> str:
    if settings.model in MODELS:  # its sha256 was verified: the file is whole, the context may not fit
        return "delete the cached file to reassemble it, or lower LAKEPLANNER_LLM_CONTEXT_TOKENS"
    return (
        "the file is damaged or not a GGUF model: replace it, or set LAKEPLANNER_LLM_MODEL to one of "
        f"{sorted(MODELS)} (sha256-verified weights)"
    )


def states_directory(settings: LLMSettings, model_file: Path) -> Path | None:
    """Kept prefix states of this model file, llama.cpp build and context size."""
    if not settings.prefix_states_on_disk:
        return None
    root = settings.prefix_states_dir or (settings.cache_dir or default_cache_dir()) / "prefix-states"
    return state_directory(root, model_file, llama_cpp.__version__, settings.context_tokens)


class LocalBackend(Backend):
    provider = "llama.cpp"

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
            raise LLMUnavailableError(f"llama.cpp could not load {path}: {e}", hint=load_hint(settings)) from e
        self.formatter = self.chat_formatter()
        self.states = None
        if settings.prefix_cache_mb > 0 and prefix_reuse:
            self.states = PrefixStates(settings.prefix_cache_mb << 20, states_directory(settings, path))

    def chat_formatter(self) -> Jinja2ChatFormatter:
        template = self.llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise LLMUnavailableError(
                f"{self.model_name} has no chat template in its GGUF metadata", hint="use an instruct model's GGUF"
            )
        eos, bos = self.llama.token_eos(), self.llama.token_bos()
        return Jinja2ChatFormatter(
            template=template,
            stop_token_ids=[eos],
            eos_token=self.llama._model.token_get_text(eos) if eos != -1 else "",
            bos_token=self.llama._model.token_get_text(bos) if bos != -1 else "",
        )

    def generate(self, messages: Sequence[Message], *, schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        chat, prompt, evaluated = self.at_checkpoints(messages)
        live = shared_length(self.llama._input_ids, prompt)
        evaluated += len(prompt) - (live - 1 if live == len(prompt) else live)
        grammar = None
        if schema is not None:
            grammar = LlamaGrammar.from_json_schema(json.dumps(grammar_safe(schema)), verbose=False)
        deadline = Deadline(seconds_left(self.settings.timeout_s))
        try:
            out = self.llama.create_completion(
                prompt,
                max_tokens=max_tokens,
                temperature=0.0,
                top_k=1,
                seed=self.settings.seed,
                stop=chat.stop,
                grammar=grammar,
                stopping_criteria=StoppingCriteriaList([deadline]),
            )
        except ValueError as e:  # llama-cpp raises ValueError when the prompt exceeds the context
            raise LLMUnavailableError(
                f"{self.model_name}: {e}", hint="shorten the prompt or raise LAKEPLANNER_LLM_CONTEXT_TOKENS"
            ) from e
        if deadline.expired:
            check_time()
            raise LLMUnavailableError(
                f"{self.model_name} timed out after {self.settings.timeout_s:.0f} s",
                hint="raise LAKEPLANNER_LLM_TIMEOUT_S, lower max_tokens, or use model 'small'",
            )
        usage = out["usage"]
        return RawCompletion(
            text=out["choices"][0]["text"],
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            evaluated_tokens=evaluated,
        )

    def prepare(self, messages: Sequence[Message]) -> int:
        if self.states is None:
            return 0
        return self.at_checkpoints([*messages, user("")])[2]

    def at_checkpoints(self, messages: Sequence[Message]):
        """The chat prompt of `messages` and its tokens, the context brought to the prompt's last
        checkpoint (a call and a preparation split a prompt alike, so their states match), and the
        tokens that took evaluating."""
        chat = self.formatter(messages=[m.model_dump() for m in messages])
        prompt = self.tokenize(chat.prompt)
        return chat, prompt, self.evaluate_checkpoints(prompt, self.checkpoints(messages, chat.prompt, prompt))

    def tokenize(self, text: str) -> list[int]:
        """As create_completion tokenizes a prompt string."""
        return self.llama.tokenize(text.encode("utf-8"), special=True)

    def checkpoints(self, messages: Sequence[Message], text: str, prompt: list[int]) -> list[int]:
        """Token offsets in `prompt` of the system message's cache points and of its end."""
        if not messages or messages[0].role != "system" or messages[0].content not in text:
            return []
        first = messages[0]
        start = text.index(first.content)
        ends = (
            shared_length(self.tokenize(text[: start + p]), prompt) for p in (*first.cache_points, len(first.content))
        )
        return sorted({end for end in ends if end >= MIN_SNAPSHOT_TOKENS})

    def evaluate_checkpoints(self, prompt: list[int], checkpoints: list[int]) -> int:
        """Bring the context to the prompt's last checkpoint, from the context or a kept state, evaluating
        segment by segment from checkpoint to checkpoint (so a cold and a warm call split the prompt
        alike and compute the same numbers), snapshotting each; returns the tokens evaluated."""
        live = self.reusable(prompt, checkpoints) if self.prefix_reuse else 0
        kept = self.states.longest(prompt) if self.states is not None else None
        if kept is not None and len(kept.tokens) > live and self.restore(kept):
            live = len(kept.tokens)
        self.truncate(live)
        evaluated = 0
        for end in checkpoints:
            if end <= live:
                continue
            self.llama.eval(prompt[live:end])
            evaluated, live = evaluated + end - live, end
            if self.states is not None and prompt[:end] not in self.states:
                self.states.put(self.snapshot())
        return evaluated

    def reusable(self, prompt: list[int], checkpoints: list[int]) -> int:
        """How much of the live context the prompt may reuse: all of it when the prompt continues it (a
        repair turn), else up to the last checkpoint the two share."""
        shared = shared_length(self.llama._input_ids, prompt)
        if shared == self.llama.n_tokens and shared < len(prompt):
            return shared
        return max((end for end in checkpoints if end <= shared), default=0)

    def snapshot(self) -> Snapshot:
        ctx = self.llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0)
        return Snapshot(tuple(int(t) for t in self.llama._input_ids), bytes(memoryview(buffer)[:written]))

    def restore(self, kept: Snapshot) -> bool:
        self.truncate(0)
        buffer = (ctypes.c_uint8 * len(kept.state)).from_buffer_copy(kept.state)
        if llama_cpp.llama_state_seq_set_data(self.llama._ctx.ctx, buffer, len(kept.state), 0) != len(kept.state):
            self.truncate(0)
            return False
        n = len(kept.tokens)
        self.llama.input_ids[:n] = kept.tokens
        self.llama.n_tokens = n
        self.llama._requires_eval = True
        return True

    def truncate(self, n: int) -> None:
        """Keep the first n evaluated tokens of the context."""
        if n < self.llama.n_tokens:
            self.llama._ctx.kv_cache_seq_rm(-1, n, -1)
            self.llama.n_tokens = n

    def close(self) -> None:
        self.llama.close()


@register_backend("local")
def local_backend(settings: LLMSettings) -> LocalBackend:
    return LocalBackend(settings)
