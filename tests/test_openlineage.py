"""OpenLineage run events per answer and per batch run, to a file and to an HTTP endpoint, checked
against the OpenLineage model openlineage-python ships (its classes are generated from the spec's
JSON schemas, which the package itself does not ship): each event is rebuilt from its JSON through
those classes, whose validators check the event time, run id, producer and schema URLs."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from batch_child import scripted
from test_execute import SERIAL, TWO_HOP, two_hop_llm

from lakeplanner.batch import questions_of, run_batch
from lakeplanner.lineage.openlineage import PRODUCER

pytest.importorskip("openlineage.client")
from openlineage.client import event_v2, facet_v2


def run_tags(tags: list[dict]) -> facet_v2.tags_run.TagsRunFacet:
    return facet_v2.tags_run.TagsRunFacet(tags=[facet_v2.tags_run.TagsRunFacetFields(**t) for t in tags])


FACETS = {
    "version": facet_v2.dataset_version_dataset.DatasetVersionDatasetFacet,
    "sql": facet_v2.sql_job.SQLJobFacet,
    "externalQuery": facet_v2.external_query_run.ExternalQueryRunFacet,
    "tags": run_tags,  # the client tags each run with its own version
}


def facets_of(raw: dict | None) -> dict:
    """Each facet rebuilt by its class; its _producer and _schemaURL as the spec requires."""
    out = {}
    for name, fields in (raw or {}).items():
        facet = FACETS[name](**{k: v for k, v in fields.items() if not k.startswith("_")})
        assert fields["_producer"] == PRODUCER and fields["_schemaURL"] == facet._schemaURL
        out[name] = facet
    return out


def rebuilt(raw: dict) -> event_v2.RunEvent:
    """The event through openlineage-python's generated classes (their validators run here)."""
    datasets = {
        kind: [
            cls(namespace=d["namespace"], name=d["name"], facets=facets_of(d.get("facets"))) for d in raw.get(kind, [])
        ]
        for kind, cls in (("inputs", event_v2.InputDataset), ("outputs", event_v2.OutputDataset))
    }
    event = event_v2.RunEvent(
        eventType=event_v2.RunState(raw["eventType"]),
        eventTime=raw["eventTime"],
        run=event_v2.Run(runId=raw["run"]["runId"], facets=facets_of(raw["run"].get("facets"))),
        job=event_v2.Job(
            namespace=raw["job"]["namespace"], name=raw["job"]["name"], facets=facets_of(raw["job"].get("facets"))
        ),
        inputs=datasets["inputs"],
        outputs=datasets["outputs"],
        producer=raw["producer"],
    )
    assert raw["schemaURL"] == event.schemaURL == event._get_schema()
    return event


def events_in(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_an_answer_emits_one_valid_event_with_its_snapshots_sql_and_trace(sample_lake, tmp_path):
    lake, _ = sample_lake
    target = tmp_path / "lineage.jsonl"
    settings = SERIAL.model_copy(update={"openlineage": str(target)})
    answer = lake.ask(TWO_HOP, llm=two_hop_llm(), settings=settings, use_cache=False)
    (raw,) = events_in(target)
    event = rebuilt(raw)
    assert event.eventType == event_v2.RunState.COMPLETE and event.job.name == "ask"
    assert event.run.runId.replace("-", "") == answer.trace_id
    assert event.run.facets["externalQuery"].externalQueryId == answer.trace_id
    tables = {d.name: d.facets["version"].datasetVersion for d in event.inputs if d.facets}
    snapshots = {t: s for n in answer.nodes for r in n.sql for t, s in r.snapshots.items()}
    assert snapshots and {t: str(s) for t, s in snapshots.items()}.items() <= tables.items()
    assert "documents_contracts" in {d.name for d in event.inputs if d.namespace.startswith("milvus://")}
    assert "FROM" in event.job.facets["sql"].query.upper()


def test_a_batch_run_emits_start_and_complete_with_its_answers_table(sample_lake, tmp_path):
    import pyarrow as pa

    lake, _ = sample_lake
    target = tmp_path / "lineage.jsonl"
    questions = questions_of(
        pa.table({"id": ["a", "b"], "question": ["How many customers (1)?", "How many customers (2)?"]})
    )
    settings = SERIAL.model_copy(update={"openlineage": str(target)})
    run_batch(lake, questions, name="lineage", llm=scripted(), settings=settings)
    events = [rebuilt(raw) for raw in events_in(target)]
    batch = [e for e in events if e.job.name == "batch.lineage"]
    assert [e.eventType for e in batch] == [event_v2.RunState.START, event_v2.RunState.COMPLETE]
    assert batch[0].run.runId == batch[1].run.runId
    (output,) = batch[1].outputs
    snapshot = lake.catalog.load_table("lakeplanner.answers_lineage").current_snapshot().snapshot_id
    assert output.name == "lakeplanner.answers_lineage" and output.facets["version"].datasetVersion == str(snapshot)
    assert sum(e.job.name == "ask" for e in events) == 2  # and one per answer


def test_events_go_to_an_http_endpoint(sample_lake):
    received = []

    class Marquez(BaseHTTPRequestHandler):
        def log_message(self, *args):
            return None

        def do_POST(self):
            received.append((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            self.send_response(201)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Marquez)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    lake, _ = sample_lake
    endpoint = f"http://127.0.0.1:{server.server_address[1]}/api/v1/lineage"
    try:
        lake.ask(
            TWO_HOP, llm=two_hop_llm(), settings=SERIAL.model_copy(update={"openlineage": endpoint}), use_cache=False
        )
    finally:
        server.shutdown()
    assert [path for path, _ in received] == ["/api/v1/lineage"]
    rebuilt(received[0][1])


def test_an_endpoint_that_is_down_costs_the_event_not_the_answer(sample_lake, caplog):
    lake, _ = sample_lake
    settings = SERIAL.model_copy(update={"openlineage": "http://127.0.0.1:9/api/v1/lineage"})  # nothing listens
    answer = lake.ask(TWO_HOP, llm=two_hop_llm(), settings=settings, use_cache=False)
    assert answer.value and not answer.abstained
    assert "OpenLineage event not sent" in caplog.text
