"""The vllm backend: import-guarded here; its engine test needs a GPU node with Ray and vLLM."""

import importlib.util
import os

import pytest

from lakeplanner.errors import MissingDependencyError
from lakeplanner.llm import LLMSettings, get_llm, user

HAS_STACK = all(importlib.util.find_spec(m) for m in ("ray", "vllm"))


@pytest.mark.skipif(HAS_STACK, reason="Ray and vLLM are installed here")
def test_without_ray_and_vllm_the_error_says_what_to_install():
    with pytest.raises(MissingDependencyError) as caught:
        get_llm(LLMSettings(backend="vllm", model="/models/qwen"))
    assert "pip install" in caught.value.hint


@pytest.mark.real_model
@pytest.mark.skipif(
    not (HAS_STACK and os.environ.get("LAKEPLANNER_VLLM_MODEL")),
    reason="needs a GPU node with ray, vllm and LAKEPLANNER_VLLM_MODEL (a local model path)",
)
def test_vllm_actor_answers_with_a_validated_object():
    from pydantic import BaseModel

    class Total(BaseModel):
        value: int

    llm = get_llm(LLMSettings(backend="vllm", model=os.environ["LAKEPLANNER_VLLM_MODEL"], num_gpus=1))
    assert llm.complete([user("3 + 4 = ? Reply as JSON.")], Total).value.value == 7
    llm.close()
