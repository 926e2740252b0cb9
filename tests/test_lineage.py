"""Lineage: OTLP/JSON spans in the lake, `lakeplanner trace`, `lakeplanner replay`, the `ask` command."""

import json

import pytest
from test_execute import SERIAL, TWO_HOP, two_hop_llm
from typer.testing import CliRunner

from lakeplanner.cli import app
from lakeplanner.execute.replay import replay
from lakeplanner.execute.runs import load_run, save_run
from lakeplanner.lineage.tracing import SPANS_FILE, TRACES, attribute_values, read_spans


@pytest.fixture(scope="module")
def answered(sample_lake):
    lake, _ = sample_lake
    return lake, lake.ask(TWO_HOP, llm=two_hop_llm(), settings=SERIAL, use_cache=False)


def test_every_step_is_a_span_in_otlp_json_lines(answered):
    lake, answer = answered
    lines = (lake.path / TRACES / SPANS_FILE).read_text().splitlines()
    request = json.loads(lines[-1])
    resource = {a["key"]: a["value"] for a in request["resourceSpans"][0]["resource"]["attributes"]}
    assert resource["service.name"] == {"stringValue": "lakeplanner"}
    spans = read_spans(lake.path, answer.trace_id)
    names = [s["name"] for s in spans]
    for expected in (
        "lakeplanner.ask",
        "lakeplanner.plan",
        "node $var_1",
        "node $var_2",
        "sql.execute",
        "retrieval documents_contracts",
        "hseq.iterate",
        "lakeplanner.synthesize",
    ):
        assert expected in names, names
    assert all(len(s["spanId"]) == 16 and len(s["traceId"]) == 32 for s in spans)
    chats = [attribute_values(s) for s in spans if s["name"] == "chat fake"]
    purposes = {c["lakeplanner.llm.purpose"] for c in chats}
    assert {"plan", "sql.write", "hseq.select"} <= purposes  # the value the passage states needs no synthesis call
    assert all(int(c["gen_ai.usage.input_tokens"]) > 0 for c in chats)
    assert all(c["openinference.span.kind"] == "LLM" and c["gen_ai.provider.name"] == "fake" for c in chats)
    sql = next(attribute_values(s) for s in spans if s["name"] == "sql.execute")
    assert sql["db.system"] == "duckdb" and "invoices" in sql["lakeplanner.snapshots"]
    search = next(attribute_values(s) for s in spans if s["name"] == "retrieval documents_contracts")
    assert search["lakeplanner.filter"] == 'document_id in ["CTR-C001"]'
    assert search["openinference.span.kind"] == "RETRIEVER" and search["gen_ai.operation.name"] == "retrieval"
    assert sql["openinference.span.kind"] == "TOOL"
    parents = {s["spanId"]: s.get("parentSpanId") for s in spans}
    node = next(s for s in spans if s["name"] == "node $var_1")
    execute = next(s for s in spans if s["name"] == "lakeplanner.execute")
    assert parents[node["spanId"]] == execute["spanId"]


def test_trace_command_prints_the_tree(answered):
    lake, answer = answered
    result = CliRunner().invoke(app, ["trace", answer.trace_id, "--lake", str(lake.path)])
    assert result.exit_code == 0, result.output
    assert "lakeplanner.ask" in result.output and "node $var_2" in result.output and "sql.execute" in result.output
    latest = CliRunner().invoke(app, ["trace", "latest", "--lake", str(lake.path)])
    assert latest.exit_code == 0 and "lakeplanner.ask" in latest.output


def test_replay_matches_at_the_recorded_snapshots(answered):
    lake, answer = answered
    report = replay(lake, answer.trace_id)
    assert report.matches and len(report.checks) >= 2
    assert {c.node for c in report.checks} == {"$var_1", "$var_2"}
    result = CliRunner().invoke(app, ["replay", answer.trace_id, "--lake", str(lake.path)])
    assert result.exit_code == 0 and "matches the recorded run" in result.output


def test_replay_reports_evidence_that_differs(answered, tmp_path):
    lake, answer = answered
    record = load_run(lake.path, answer.trace_id)
    tampered = record.model_copy(deep=True)
    tampered.trace_id = "0" * 32
    tampered.answer.nodes[0].sql[0].digest = "different"
    tampered.answer.nodes[1].evidence[0].meta["sha1"] = "different"
    save_run(lake.path, tampered)
    report = replay(lake, tampered.trace_id)
    assert not report.matches
    assert sum(not c.matches for c in report.checks) == 2
    result = CliRunner().invoke(app, ["replay", tampered.trace_id, "--lake", str(lake.path)])
    assert result.exit_code == 1 and "differs" in result.output


def test_unknown_trace_id_names_recent_ones(answered):
    lake, _ = answered
    result = CliRunner().invoke(app, ["replay", "nope", "--lake", str(lake.path)])
    assert result.exit_code == 2 and "recent trace ids" in result.output


def test_ask_command_prints_the_cited_answer(sample_lake, monkeypatch):
    from lakeplanner.llm import base

    lake, _ = sample_lake
    monkeypatch.setitem(base._BACKENDS, "fake", lambda settings: two_hop_llm().backend)
    result = CliRunner().invoke(app, ["ask", TWO_HOP, "--lake", str(lake.path), "--serial", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "1/15 Net 45" in result.output
    assert "$var_2 (vector on documents_contracts) done: 1/15 Net 45" in result.output  # streamed
    assert "documents_contracts/CTR-C001 chars" in result.output and "trace " in result.output


def test_spans_also_go_to_a_configured_otlp_endpoint(sample_lake):
    """A loopback HTTP receiver stands in for an OTLP collector."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from lakeplanner.execute.settings import ExecSettings

    received = []

    class Collector(BaseHTTPRequestHandler):
        def log_message(self, *args):
            return None

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, self.headers["Content-Type"], body))
            self.send_response(200)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    lake, _ = sample_lake
    endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    try:
        answer = lake.ask(
            TWO_HOP, llm=two_hop_llm(), settings=ExecSettings(mode="serial", otlp_endpoint=endpoint), use_cache=False
        )
    finally:
        server.shutdown()
    assert received and all(path == "/v1/traces" and kind == "application/x-protobuf" for path, kind, _ in received)
    names = set()
    for _, _, body in received:
        request = ExportTraceServiceRequest.FromString(body)
        names |= {s.name for r in request.resource_spans for ss in r.scope_spans for s in ss.spans}
        assert {s.trace_id.hex() for r in request.resource_spans for ss in r.scope_spans for s in ss.spans} == {
            answer.trace_id
        }
    assert {"lakeplanner.ask", "node $var_1", "sql.execute"} <= names


def test_the_root_span_holds_the_question_frame_with_the_lake_values_it_names(answered):
    lake, answer = answered
    root = next(s for s in read_spans(lake.path, answer.trace_id) if s["name"] == "lakeplanner.ask")
    frame = json.loads(attribute_values(root)["lakeplanner.question.frame"])
    named = {(v["span"]["text"], v["column"]) for v in frame["values"]}
    assert ("INV-1078", "invoices.invoice_id") in named
    assert all(TWO_HOP[v["span"]["start"] : v["span"]["end"]] == v["span"]["text"] for v in frame["values"])


def test_a_node_span_says_what_its_failed_attempts_were_told():
    from lakeplanner.execute.ask import node_attributes
    from lakeplanner.execute.results import NodeResult
    from lakeplanner.lineage.tracing import clean

    told = ["attempt 1: unknown name in the statement: segmnt (use only the listed columns)"]
    result = NodeResult(label="$var_1", tool="sql", source="customers", question="q", advice=told)
    assert json.loads(clean(node_attributes(result))["lakeplanner.node.advice"]) == told
