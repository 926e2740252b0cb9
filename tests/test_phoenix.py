"""Traces in a real Phoenix: the service's OTLP export reaches a Phoenix server on loopback, and its
own client reads back every span of each answer with its OpenInference kind, GenAI attributes and the
principal and role on the root (scripted model, real engines; Phoenix from `make phoenix`)."""

import time

import pytest
from phoenix_server import phoenix_python, phoenix_server, spans_in_phoenix
from test_execute import TWO_HOP, two_hop_llm

from lakeplanner.execute.settings import ExecSettings
from lakeplanner.lineage.tracing import read_spans
from lakeplanner.policy.model import Access

pytestmark = pytest.mark.skipif(phoenix_python() is None, reason="Phoenix is not installed (make phoenix)")


def attributes_of(span: dict) -> dict:
    """Phoenix's client returns attributes flat ('gen_ai.usage.input_tokens': 12)."""
    return span.get("attributes") or {}


def wait_for_spans(base: str, expected: int, timeout_s: float = 90) -> list[dict]:
    deadline = time.monotonic() + timeout_s
    while True:
        spans = spans_in_phoenix(base)
        if len(spans) >= expected or time.monotonic() > deadline:
            return spans
        time.sleep(2)


@pytest.fixture(scope="module")
def traced(sample_lake):
    lake, _ = sample_lake
    with phoenix_server() as base:
        settings = ExecSettings(mode="serial", otlp_endpoint=f"{base}/v1/traces")
        access = Access(role="auditor", principal="ada@example.org")
        answers = [
            lake.ask(TWO_HOP, llm=two_hop_llm(), settings=settings, use_cache=False, access=access) for _ in range(2)
        ]
        sent = {a.trace_id: read_spans(lake.path, a.trace_id) for a in answers}
        received = wait_for_spans(base, sum(map(len, sent.values())))
    return answers, sent, received


def test_phoenix_receives_every_span_of_every_answer(traced):
    answers, sent, received = traced
    by_trace: dict[str, list[dict]] = {}
    for span in received:
        by_trace.setdefault(span["context"]["trace_id"], []).append(span)
    assert set(by_trace) == {a.trace_id for a in answers}  # one trace per answer, nothing else
    for trace_id, spans in sent.items():
        assert {s["spanId"] for s in spans} == {s["context"]["span_id"] for s in by_trace[trace_id]}
        roots = [s for s in by_trace[trace_id] if not s.get("parent_id")]
        assert [r["name"] for r in roots] == ["lakeplanner.ask"]


def test_the_spans_carry_their_openinference_kinds_and_genai_attributes(traced):
    _, _, received = traced
    kinds = {s["name"]: s["span_kind"] for s in received}
    assert kinds["lakeplanner.ask"] == kinds["lakeplanner.plan"] == kinds["node $var_1"] == "CHAIN"
    assert kinds["chat fake"] == "LLM" and kinds["sql.execute"] == "TOOL"
    assert kinds["retrieval documents_contracts"] == "RETRIEVER"
    assert "UNKNOWN" not in kinds.values()  # every span names its kind (a step without one is CHAIN)
    chats = [attributes_of(s) for s in received if s["name"] == "chat fake"]
    assert chats and all(int(c["gen_ai.usage.input_tokens"]) > 0 for c in chats)
    assert all(c["gen_ai.provider.name"] == "fake" for c in chats)
    sql = next(attributes_of(s) for s in received if s["name"] == "sql.execute")
    assert sql["db.system"] == "duckdb"


def test_the_root_names_the_principal_and_the_role(traced):
    _, _, received = traced
    roots = [attributes_of(s) for s in received if s["name"] == "lakeplanner.ask"]
    assert len(roots) == 2
    assert all(r["enduser.id"] == "ada@example.org" and r["lakeplanner.role"] == "auditor" for r in roots)
