"""The HTTP service over the real engines with a scripted model: answers (JSON and SSE), plans, the
lake, traces and replay, API keys and JWT bearer tokens, role policies, and bad input."""

import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient
from loopback import on_loopback
from test_execute import TWO_HOP, TWO_HOP_PLAN, TWO_HOP_SQL, scripted, two_hop_llm

from lakeplanner.execute.settings import ExecSettings
from lakeplanner.service.app import create_app
from lakeplanner.service.auth import key_hash
from lakeplanner.service.settings import ServeSettings

SERIAL = ExecSettings(mode="serial")
KEYS = {"alice": "lpk_alice-secret", "bob": "lpk_bob-secret", "audrey": "lpk_audrey-secret"}
POLICY = """
roles:
  analyst: {}
  emea:
    tables: [customers, invoices]
    collections: [documents_contracts]
    masks: {customers: {name: hash, city: "null"}}
    row_filters: {customers: "country = :claims.country"}
  auditor: {replay: true, audit: true}
"""
CUSTOMERS_PLAN = {
    "nodes": [
        {
            "question": "name, city and country of every customer",
            "tool": "sql",
            "label": "$var_1",
            "source": "customers",
            "should_expose_answer": True,
            "answer_description": "the customers",
        }
    ]
}


def customers_llm():
    return scripted(
        plan=CUSTOMERS_PLAN,
        sql={"sql": "SELECT name, country FROM customers"},
        select={"selected": [], "sufficient": False, "answer": ""},
        draft={"answer": "Germany", "sentence": "They are in Germany.", "sources": ["E1"], "abstain": False},
    )


def key_entries():
    roles = {"alice": ["analyst", "emea"], "bob": ["emea"], "audrey": ["auditor"]}
    return json.dumps(
        [
            {"name": n, "sha256": key_hash(k), "roles": roles[n], "claims": {"country": "Germany"}}
            for n, k in KEYS.items()
        ]
    )


def bearer(name):
    return {"Authorization": f"Bearer {KEYS[name]}"}


@pytest.fixture
def open_service(sample_lake):
    lake, _ = sample_lake
    app = create_app(lake, ServeSettings(), llm=two_hop_llm(), exec_settings=SERIAL, warm=False)
    with TestClient(app) as client:
        yield client


@pytest.fixture
def governed(sample_lake, tmp_path):
    lake, _ = sample_lake
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    settings = ServeSettings(api_keys_json=key_entries(), policy=policy, queue=0)
    app = create_app(lake, settings, llm=customers_llm(), exec_settings=SERIAL, warm=False)
    with TestClient(app) as client:
        yield client


def test_an_answer_comes_back_as_json_with_its_citations_plan_and_trace(open_service):
    reply = open_service.post("/v1/ask", json={"question": TWO_HOP, "use_cache": False})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["value"] == "1/15 Net 45" and not body["abstained"]
    assert any(c["kind"] == "span" and c["document_id"] == "CTR-C001" for c in body["citations"])
    assert [n["label"] for n in body["plan"]["nodes"]] == ["$var_1", "$var_2"]
    # plan, sql.write, hseq.select: the value the selected passage states answers without a synthesis call
    assert body["usage"]["llm_calls"] == 3 and body["principal"] == "local"
    trace = open_service.get(f"/v1/traces/{body['trace_id']}").json()
    assert trace["record"]["question"] == TWO_HOP and any(s["name"] == "lakeplanner.ask" for s in trace["spans"])
    listed = open_service.get("/v1/traces").json()
    assert body["trace_id"] in [t["trace_id"] for t in listed["items"]]
    replayed = open_service.post(f"/v1/traces/{body['trace_id']}/replay").json()
    assert replayed["checks"] and all(c["matches"] for c in replayed["checks"])


def test_the_answer_streams_as_server_sent_events(open_service):
    with open_service.stream(
        "POST", "/v1/ask", json={"question": TWO_HOP, "use_cache": False}, headers={"Accept": "text/event-stream"}
    ) as reply:
        assert reply.status_code == 200
        text = "".join(reply.iter_text())
    events = [line.removeprefix("event: ").strip() for line in text.splitlines() if line.startswith("event:")]
    assert events == ["plan", "result", "answer", "done"]
    answer = json.loads(text.split("event: answer")[1].split("data: ", 1)[1].splitlines()[0])
    assert answer["value"] == "1/15 Net 45"


def test_health_readiness_metrics_and_openapi(open_service):
    assert open_service.get("/healthz").json() == {"status": "ok"}
    assert open_service.get("/readyz").status_code == 200
    open_service.post("/v1/ask", json={"question": TWO_HOP, "use_cache": False})
    metrics = open_service.get("/metrics").text
    assert 'lakeplanner_requests_total{endpoint="/v1/ask",status="200"}' in metrics
    assert "lakeplanner_llm_tokens_total" in metrics and "lakeplanner_queue_depth" in metrics
    assert "/v1/ask" in open_service.get("/openapi.json").json()["paths"]


def test_bad_input_gets_a_4xx_that_names_the_problem(open_service):
    reply = open_service.post("/v1/ask", content=b"{not json", headers={"Content-Type": "application/json"})
    assert reply.status_code == 422 and "invalid request" in reply.json()["error"]
    reply = open_service.post("/v1/ask", json={"question": "q", "temperature": 2})
    assert reply.status_code == 422 and "temperature" in reply.json()["error"]
    reply = open_service.post("/v1/ask", json={"question": "x" * 4001})
    assert reply.status_code == 400 and "limit is 4000" in reply.json()["error"]
    reply = open_service.get("/v1/traces/0123")
    assert reply.status_code == 404 and reply.json()["hint"]


def test_credentials_are_required_and_roles_checked(governed):
    reply = governed.post("/v1/ask", json={"question": "q"})
    assert reply.status_code == 401 and "credentials" in reply.json()["error"]
    assert reply.headers["WWW-Authenticate"] == "Bearer"
    assert governed.get("/v1/lake", headers={"Authorization": "Bearer lpk_wrong"}).status_code == 401
    reply = governed.get("/v1/lake", params={"role": "auditor"}, headers=bearer("bob"))
    assert reply.status_code == 403 and "ask as one of: emea" in reply.json()["hint"]
    assert governed.get("/v1/lake", headers={"X-API-Key": KEYS["bob"]}).status_code == 200


def test_a_role_sees_only_its_tables_rows_and_unmasked_columns(governed):
    lake = governed.get("/v1/lake", headers=bearer("bob")).json()
    assert {t["name"] for t in lake["tables"]} == {"customers", "invoices"}
    assert [c["name"] for c in lake["collections"]] == ["documents_contracts"]
    with governed.stream(
        "POST",
        "/v1/ask",
        json={"question": "Which customers are there?", "use_cache": False},
        headers={**bearer("bob"), "Accept": "text/event-stream"},
    ) as reply:
        text = "".join(reply.iter_text())
    result = json.loads(text.split("event: result")[1].split("data: ", 1)[1].splitlines()[0])
    assert {r["country"] for r in result["rows"]} == {"Germany"}
    assert all(len(r["name"]) == 64 for r in result["rows"])  # hashed
    assert "Brightwater Logistics" not in text  # a German customer's name, masked for emea
    everything = governed.post(
        "/v1/ask",
        json={"question": "Which customers are there?", "use_cache": False, "role": "analyst"},
        headers=bearer("alice"),
    ).json()
    record = governed.get(f"/v1/traces/{everything['trace_id']}", headers=bearer("alice")).json()["record"]
    assert "Brightwater Logistics GmbH" in json.dumps(record)


def test_traces_are_private_to_their_principal_unless_the_role_audits(governed):
    asked = governed.post(
        "/v1/ask", json={"question": "Which customers are there?", "use_cache": False}, headers=bearer("bob")
    ).json()
    trace_id = asked["trace_id"]
    assert governed.get(f"/v1/traces/{trace_id}", headers=bearer("alice")).status_code == 404
    assert trace_id not in [t["trace_id"] for t in governed.get("/v1/traces", headers=bearer("alice")).json()["items"]]
    audited = governed.get("/v1/traces", params={"principal": "bob"}, headers=bearer("audrey")).json()
    assert trace_id in [t["trace_id"] for t in audited["items"]]
    assert all(t["principal"] == "bob" for t in audited["items"])
    reply = governed.post(f"/v1/traces/{trace_id}/replay", headers=bearer("bob"))
    assert reply.status_code == 403 and "may not replay" in reply.json()["error"]
    assert governed.post(f"/v1/traces/{trace_id}/replay", headers=bearer("audrey")).status_code == 200


def test_a_full_queue_is_refused_with_retry_after(governed):
    runner = governed.app.state.runner
    with runner.slot():  # queue=0: the one running question fills it
        reply = governed.post("/v1/ask", json={"question": "q"}, headers=bearer("bob"))
    assert reply.status_code == 429 and reply.headers["Retry-After"] == "30"
    assert "lakeplanner_queue_rejections_total 1.0" in governed.get("/metrics").text


def test_jwt_bearer_tokens_are_verified_against_the_issuers_keys(sample_lake, tmp_path):
    lake, _ = sample_lake
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]}))
    settings = ServeSettings(jwt_issuer="https://idp.example", jwt_audience="lakeplanner", jwks_file=jwks)
    app = create_app(lake, settings, llm=two_hop_llm(), exec_settings=SERIAL, warm=False)

    def token(**claims):
        body = {"sub": "carol", "iss": "https://idp.example", "aud": "lakeplanner", "exp": time.time() + 60}
        return jwt.encode({**body, "roles": ["default"], **claims}, key, algorithm="RS256", headers={"kid": "k1"})

    with TestClient(app) as client:
        assert client.get("/v1/lake", headers={"Authorization": f"Bearer {token()}"}).status_code == 200
        expired = client.get("/v1/lake", headers={"Authorization": f"Bearer {token(exp=time.time() - 5)}"})
        assert expired.status_code == 401 and "expired" in expired.json()["error"]
        other = client.get("/v1/lake", headers={"Authorization": f"Bearer {token(iss='https://evil')}"})
        assert other.status_code == 401
        assert client.get("/v1/lake").status_code == 401


@pytest.fixture
def served(sample_lake):
    """The service on a loopback port, for the client and `ask --server`."""
    lake, _ = sample_lake
    app = create_app(lake, ServeSettings(), llm=two_hop_llm(), exec_settings=SERIAL, warm=False)
    with on_loopback(app) as url:
        yield url


def test_the_python_client_asks_streams_and_reads_traces(served):
    import asyncio

    from lakeplanner.client import AsyncClient, Client, ServiceError

    with Client(served) as client:
        answer = client.ask(TWO_HOP, use_cache=False)
        assert answer.value == "1/15 Net 45" and answer.trace_id
        events = [e.event for e in client.stream(TWO_HOP, use_cache=False)]
        assert events == ["plan", "result", "answer", "done"]
        assert client.traces(limit=1).items[0].question == TWO_HOP
        with pytest.raises(ServiceError, match="404"):
            client.trace("nope")

    async def streamed():
        async with AsyncClient(served) as client:
            return [e.event async for e in client.stream(TWO_HOP, use_cache=False)]

    assert asyncio.run(streamed()) == ["plan", "result", "answer", "done"]


def test_ask_switches_to_the_service_with_one_flag(served):
    from typer.testing import CliRunner

    from lakeplanner.cli import app

    result = CliRunner().invoke(app, ["ask", TWO_HOP, "--server", served, "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "1/15 Net 45" in result.output and "documents_contracts/CTR-C001" in result.output
    down = CliRunner().invoke(app, ["ask", TWO_HOP, "--server", "http://127.0.0.1:9"])
    assert down.exit_code == 2 and "cannot reach lakeplanner" in down.output


def test_keys_new_stores_only_the_hash(tmp_path):
    import yaml
    from typer.testing import CliRunner

    from lakeplanner.cli import app

    file = tmp_path / "keys.yaml"
    result = CliRunner().invoke(
        app, ["keys", "new", "dana", "--role", "emea", "--claim", "country=Germany", "--file", str(file)]
    )
    assert result.exit_code == 0, result.output
    key = result.output.strip().splitlines()[-1]
    [entry] = yaml.safe_load(file.read_text())["keys"]
    assert key.startswith("lpk_") and key not in file.read_text()
    assert entry == {"name": "dana", "sha256": key_hash(key), "roles": ["emea"], "claims": {"country": "Germany"}}


def test_the_same_question_under_the_same_grant_is_answered_again_without_the_model(open_service):
    first = open_service.post("/v1/ask", json={"question": TWO_HOP}).json()
    again = open_service.post("/v1/ask", json={"question": TWO_HOP + "  "}).json()
    assert again["plan_cache"] == "answer" and again["value"] == first["value"] == "1/15 Net 45"
    assert again["trace_id"] != first["trace_id"] and again["usage"]["llm_calls"] == 0
    assert again["citations"] == first["citations"]
    record = open_service.get(f"/v1/traces/{again['trace_id']}").json()
    root = next(s for s in record["spans"] if s["name"] == "lakeplanner.ask")
    assert {"key": "lakeplanner.answer.cached_from", "value": {"stringValue": first["trace_id"]}} in root["attributes"]
    fresh = open_service.post("/v1/ask", json={"question": TWO_HOP, "use_cache": False}).json()
    assert fresh["plan_cache"] is None and fresh["usage"]["llm_calls"] > 0


def test_an_answer_is_never_served_again_to_another_grant(governed):
    asked = {"question": "Which customers are there?"}
    by_bob = governed.post("/v1/ask", json=asked, headers=bearer("bob")).json()
    by_alice = governed.post("/v1/ask", json={**asked, "role": "emea"}, headers=bearer("alice")).json()
    assert by_alice["plan_cache"] == "answer"  # the same role and claims: the same rows
    as_analyst = governed.post("/v1/ask", json={**asked, "role": "analyst"}, headers=bearer("alice")).json()
    assert as_analyst["plan_cache"] is None and by_bob["plan_cache"] is None


def test_a_client_that_goes_away_stops_the_work(sample_lake):
    """The stream is closed after the plan: the question stops at its next step, records nothing,
    and frees its queue slot."""
    import httpx

    lake, _ = sample_lake

    def slow_select(messages):
        time.sleep(1.5)
        return {"selected": [], "sufficient": False, "answer": ""}

    llm = scripted(
        plan=TWO_HOP_PLAN,
        sql=TWO_HOP_SQL,
        select=slow_select,
        draft={"answer": "x", "sentence": "x", "sources": [], "abstain": True},
    )
    app = create_app(lake, ServeSettings(), llm=llm, exec_settings=SERIAL, warm=False)
    runs = lake.path / "traces" / "runs"
    before = set(runs.glob("*.json"))
    with on_loopback(app) as url:
        body = {"question": TWO_HOP, "use_cache": False}
        with httpx.stream("POST", f"{url}/v1/ask", json=body, headers={"Accept": "text/event-stream"}) as reply:
            for line in reply.iter_lines():
                if line.startswith("event: plan"):
                    break
        runner = app.state.runner
        deadline = time.time() + 30
        while runner.waiting and time.time() < deadline:
            time.sleep(0.1)
        assert runner.waiting == 0
        time.sleep(0.5)
        assert set(runs.glob("*.json")) == before


def test_the_lake_state_that_keys_served_answers_changes_with_every_commit(tmp_path):
    from lakeplanner import Lake
    from lakeplanner.service.answers import lake_state

    source = tmp_path / "src"
    source.mkdir()
    (source / "sales.csv").write_text("region,amount\nnorth,10\nsouth,20\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(source)
    before = lake_state(lake)
    assert before == lake_state(lake)
    (source / "sales.csv").write_text("region,amount\nnorth,10\nsouth,25\n")
    lake.ingest(source)
    assert lake_state(lake) != before
    lake.close()


def test_serving_a_missing_lake_says_how_to_make_one(tmp_path):
    from typer.testing import CliRunner

    from lakeplanner.cli import app

    result = CliRunner().invoke(app, ["serve", "--lake", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "no lake at" in result.output and "lakeplanner ingest" in result.output


def test_a_lake_another_process_holds_is_a_423_that_says_which(tmp_path):
    import subprocess
    import sys

    from lakeplanner import Lake

    source = tmp_path / "src"
    source.mkdir()
    (source / "notes.md").write_text("# Notes\n\nThe warehouse opens at six.\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(source)
    lake.close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from lakeplanner import Lake; "
            f"Lake.open({str(lake.path)!r}).vectors.collections(); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        app = create_app(lake, ServeSettings(), llm=two_hop_llm(), exec_settings=SERIAL, warm=False)
        with TestClient(app) as client:
            reply = client.get("/v1/lake")
        assert reply.status_code == 423 and "another process holds" in reply.json()["error"]
        assert "stop the other" in reply.json()["hint"]
    finally:
        holder.kill()


STEWARDS = """
roles:
  analyst: {}
  steward: {extend_schema: true}
  narrow: {tables: [], collections: []}
"""
GAP = "Which warehouse shipped invoice INV-1010?"


@pytest.fixture
def stewarded(tmp_path):
    """A lake of its own (extensions change its contract) served with a steward, an analyst and a
    narrow role; the model proposes one entity type."""
    import shutil

    from lakeplanner import Lake, sample_lake_path
    from lakeplanner.llm import LLM
    from lakeplanner.llm.fake import FakeBackend

    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(sample_lake_path() / "invoices.json", source / "invoices.json")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(source)
    policy = tmp_path / "policy.yaml"
    policy.write_text(STEWARDS)
    keys = json.dumps(
        [
            {"name": n, "sha256": key_hash(KEYS[n]), "roles": r}
            for n, r in (("alice", ["analyst", "narrow"]), ("audrey", ["steward"]))
        ]
    )
    proposal = {"entities": [{"name": "warehouse", "attributes": [{"name": "code", "field_id": "currency"}]}]}
    llm = LLM(FakeBackend([json.dumps(proposal)]))
    app = create_app(lake, ServeSettings(api_keys_json=keys, policy=policy), llm=llm, exec_settings=SERIAL, warm=False)
    with TestClient(app) as client:
        yield client
    lake.close()


def test_schema_gaps_name_the_missing_terms_and_what_the_model_would_add(stewarded):
    gaps = stewarded.get("/v1/schema/gaps", params={"question": GAP}, headers=bearer("alice")).json()
    assert gaps == {"question": GAP, "sufficient": False, "unresolved": ["warehouse", "shipped"], "proposed": None}
    proposed = stewarded.get("/v1/schema/gaps", params={"question": GAP, "propose": True}, headers=bearer("alice"))
    [entity] = proposed.json()["proposed"]["entities"]
    assert entity["name"] == "Warehouse" and entity["attributes"][0]["name"] == "code"
    narrow = stewarded.get("/v1/schema/gaps", params={"question": GAP, "role": "narrow"}, headers=bearer("alice"))
    assert "invoice" in narrow.json()["unresolved"]  # the role reads no table: nothing names it
    assert stewarded.get("/v1/schema/gaps", headers=bearer("alice")).status_code == 422
    assert stewarded.get("/v1/schema/versions", headers=bearer("alice")).json()["items"] == []


def test_extending_the_schema_for_good_needs_the_role_and_is_logged(stewarded):
    term = {"name": "warehouse", "description": "where goods leave from", "field": "currency"}
    denied = stewarded.post("/v1/schema/extensions", json=term, headers=bearer("alice"))
    assert denied.status_code == 403 and "may not extend the schema" in denied.json()["error"]
    assert "extend_schema" in denied.json()["hint"]
    reply = stewarded.post("/v1/schema/extensions", json=term, headers=bearer("audrey"))
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["changed"] and body["revision"] == 2 and body["version"]["by"] == "audrey"
    assert body["version"]["added"]["entities"][0]["name"] == "Warehouse"
    again = stewarded.post("/v1/schema/extensions", json=term, headers=bearer("audrey")).json()
    assert again == {"changed": False, "revision": 2, "version": None}
    gaps = stewarded.get("/v1/schema/gaps", params={"question": GAP}, headers=bearer("alice")).json()
    assert gaps["unresolved"] == ["shipped"]
    versions = stewarded.get("/v1/schema/versions", headers=bearer("alice")).json()
    assert versions["revision"] == 2 and [v["reason"] for v in versions["items"]] == ["where goods leave from"]
    hidden = stewarded.get("/v1/schema/versions", params={"role": "narrow"}, headers=bearer("alice")).json()
    assert hidden["items"] == []  # the version maps a table the role may not read
    wrong = stewarded.post("/v1/schema/extensions", json={**term, "field": "nope"}, headers=bearer("audrey"))
    assert wrong.status_code == 400 and "no source has a field 'nope'" in wrong.json()["error"]
    extra = stewarded.post("/v1/schema/extensions", json={**term, "color": "red"}, headers=bearer("audrey"))
    assert extra.status_code == 422
