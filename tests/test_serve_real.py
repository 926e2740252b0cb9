"""`serve` + the client + SSE end to end with the real local model (Qwen2.5-Coder-1.5B) on the
sample lake: one SQL question streamed, then asked again and served from the answer cache. Marked
real_model but not slow: CI runs it (about 2 minutes on 2 cores: the model load and one question)."""

import time

import pytest
from loopback import on_loopback

from lakeplanner import Lake, sample_lake_path
from lakeplanner.client import Client
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.service.app import create_app
from lakeplanner.service.settings import ServeSettings

pytestmark = pytest.mark.real_model
QUESTION = "How many customers are in the Enterprise segment?"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    lake = Lake.create(tmp_path_factory.mktemp("serve-real") / "lake")
    lake.ingest(sample_lake_path())
    lake.close()
    app = create_app(lake.path, ServeSettings(), exec_settings=ExecSettings(mode="serial"))
    with on_loopback(app) as url, Client(url) as client:
        deadline = time.time() + 600
        while client.http.get("/readyz").status_code != 200 and time.time() < deadline:
            time.sleep(1)
        yield url


def test_a_question_streams_from_the_real_model_and_is_served_again(served):
    with Client(served) as client:
        events = list(client.stream(QUESTION))
        assert events[0].event == "plan" and events[-1].event == "done"
        [answer] = [e.data for e in events if e.event == "answer"]
        assert not answer["abstained"], answer["reason"]
        assert "14" in f"{answer['value']} {answer['sentence']}"
        assert any(c["kind"] == "row" and c["source"] == "customers" for c in answer["citations"])
        assert answer["usage"]["llm_calls"] >= 1 and answer["usage"]["input_tokens"] > 0  # one table: no planning call
        again = client.ask(QUESTION)
        assert again.plan_cache == "answer" and again.value == answer["value"]
        spans = client.trace(answer["trace_id"])["spans"]
        chats = [s for s in spans if s["name"].startswith("chat ")]
        assert chats and all(
            {"key": "gen_ai.provider.name", "value": {"stringValue": "llama.cpp"}} in s["attributes"] for s in chats
        )
