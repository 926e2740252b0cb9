"""vLLM engines hosted in Ray actors with GPUs, for clusters (KubeRay).

Configure with LAKEPLANNER_LLM_BACKEND=vllm, LAKEPLANNER_LLM_MODEL=<model path on the cluster's
storage>, LAKEPLANNER_LLM_NUM_GPUS (per actor) and LAKEPLANNER_LLM_RAY_ADDRESS (e.g. ray://head:10001).
Weights are read from a path the cluster mounts; nothing is downloaded from a hub.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

from lakeplanner.errors import LLMUnavailableError, MissingDependencyError
from lakeplanner.llm.base import Backend, Message, RawCompletion, register_backend
from lakeplanner.llm.settings import LLMSettings


class _VLLMWorker:
    """Runs inside the Ray actor: one vLLM engine, greedy decoding, JSON-schema structured output."""

    def __init__(self, model: str, context_tokens: int, seed: int) -> None:
        from vllm import LLM

        self.engine = LLM(model=model, max_model_len=context_tokens, seed=seed, enable_prefix_caching=True)

    def generate(
        self, messages: list[dict[str, str]], schema: dict[str, Any] | None, max_tokens: int
    ) -> tuple[str, int, int]:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        structured = StructuredOutputsParams(json=schema) if schema is not None else None
        params = SamplingParams(temperature=0.0, max_tokens=max_tokens, structured_outputs=structured)
        [output] = self.engine.chat(messages, params, use_tqdm=False)
        return output.outputs[0].text, len(output.prompt_token_ids), len(output.outputs[0].token_ids)


class VLLMBackend(Backend):
    provider = "vllm"

    def __init__(self, settings: LLMSettings) -> None:
        local = settings.ray_address is None  # a local Ray runs the actor here, so vLLM must be here
        try:
            import ray
        except ImportError as e:
            raise MissingDependencyError(
                "the vllm backend needs Ray and vLLM on a GPU cluster",
                hint="pip install 'ray[default]' vllm (on the GPU nodes)",
            ) from e
        if local and importlib.util.find_spec("vllm") is None:
            raise MissingDependencyError(
                "the vllm backend with a local Ray needs vLLM installed here",
                hint="pip install vllm on a GPU machine, or set LAKEPLANNER_LLM_RAY_ADDRESS to a GPU cluster",
            )
        if not ray.is_initialized():
            ray.init(address=settings.ray_address, ignore_reinit_error=True)
        worker = ray.remote(num_gpus=settings.num_gpus)(_VLLMWorker)
        self.ray = ray
        self.model_name = settings.model
        self.actor = worker.remote(settings.model, settings.context_tokens, settings.seed)

    def generate(self, messages: Sequence[Message], *, schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        try:
            text, prompt, completion = self.ray.get(
                self.actor.generate.remote([m.model_dump() for m in messages], schema, max_tokens)
            )
        except self.ray.exceptions.RayError as e:
            raise LLMUnavailableError(
                f"vLLM actor for {self.model_name} failed: {e}",
                hint="check GPU availability (num_gpus) and the model path on the cluster",
            ) from e
        return RawCompletion(text=text, prompt_tokens=prompt, completion_tokens=completion)

    def close(self) -> None:
        self.ray.kill(self.actor)


@register_backend("vllm")
def vllm_backend(settings: LLMSettings) -> VLLMBackend:
    return VLLMBackend(settings)
