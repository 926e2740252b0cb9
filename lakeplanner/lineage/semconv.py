"""Span attribute names from the OpenTelemetry GenAI conventions and OpenInference span kinds, so
Phoenix, Jaeger or any OTLP backend shows lakeplanner's traces without a mapping."""

from __future__ import annotations

KIND = "openinference.span.kind"
CHAIN, LLM, RETRIEVER, TOOL, GUARDRAIL = "CHAIN", "LLM", "RETRIEVER", "TOOL", "GUARDRAIL"

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
DATA_SOURCE = "gen_ai.data_source.id"


def llm_attributes(model: str, provider: str, input_tokens: int, output_tokens: int) -> dict:
    """A chat call, in GenAI and OpenInference terms."""
    return {
        KIND: LLM,
        OPERATION: "chat",
        PROVIDER: provider,
        REQUEST_MODEL: model,
        INPUT_TOKENS: input_tokens,
        OUTPUT_TOKENS: output_tokens,
        "llm.model_name": model,
        "llm.token_count.prompt": input_tokens,
        "llm.token_count.completion": output_tokens,
    }


def retrieval_attributes(collection: str) -> dict:
    return {KIND: RETRIEVER, OPERATION: "retrieval", DATA_SOURCE: collection}
