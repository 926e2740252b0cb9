"""LLM runtime: one interface (`LLM.complete`) over local llama.cpp, OpenAI-compatible endpoints,
vLLM on Ray, and a scripted fake for tests; plus the ONNX encoder and reranker."""

from lakeplanner.llm.base import (
    LLM,
    Backend,
    Completion,
    Message,
    RawCompletion,
    Usage,
    assistant,
    get_llm,
    register_backend,
    system,
    user,
)
from lakeplanner.llm.settings import LLMSettings

__all__ = [
    "LLM",
    "Backend",
    "Completion",
    "LLMSettings",
    "Message",
    "RawCompletion",
    "Usage",
    "assistant",
    "get_llm",
    "register_backend",
    "system",
    "user",
]
