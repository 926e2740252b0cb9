"""The real local models (llama-cpp-python, Qwen2.5-Coder GGUF from PyPI parts) and a real
OpenAI-compatible server on loopback (llama-cpp-python's own server with the 0.5B GGUF)."""

import socket
import subprocess
import sys
import time

import httpx
import pytest
from pydantic import BaseModel

from lakeplanner import Lake, sample_lake_path
from lakeplanner.llm import LLMSettings, get_llm, system, user
from lakeplanner.llm.weights import model_path

pytestmark = pytest.mark.real_model


class Total(BaseModel):
    value: int
    unit: str


QUESTION = [system("Reply with JSON."), user("A box holds 3 apples and another holds 4 apples. How many apples?")]


@pytest.fixture(scope="module")
def default_llm():
    llm = get_llm(LLMSettings(backend="local", model="default"))
    yield llm
    llm.close()


def test_default_local_model_answers_with_a_validated_object(default_llm):
    done = default_llm.complete(QUESTION, Total)
    assert done.value == Total(value=7, unit="apples")
    assert done.model == "Qwen2.5-Coder-1.5B-Instruct Q4_K_M"
    assert done.usage.prompt_tokens > 20 and done.usage.completion_tokens > 5


def test_decoding_is_deterministic(default_llm):
    assert default_llm.complete(QUESTION, Total).text == default_llm.complete(QUESTION, Total).text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def loopback_server():
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path("small")),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--model_alias",
            "qwen-small",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("llama_cpp.server did not start on loopback")
    yield url
    process.terminate()
    process.wait(timeout=30)


def test_openai_backend_against_a_loopback_server(loopback_server):
    llm = get_llm(LLMSettings(backend="openai", base_url=loopback_server, model="qwen-small"))
    done = llm.complete(QUESTION, Total)
    assert done.value.unit == "apples" and isinstance(done.value.value, int)
    assert done.usage.prompt_tokens > 20
    llm.close()


@pytest.mark.slow
def test_discovery_with_the_real_model_is_closed_world(tmp_path, default_llm):
    lake = Lake.create(tmp_path / "lake")
    report = lake.ingest(sample_lake_path() / "invoices.json", discover=True, llm=default_llm)
    assert report.warnings == []
    [record] = lake.contract.discovery
    assert record.field_validity_after == 1.0 and record.calls >= 2
    catalog = {f.id for f in lake.contract.fields}
    assert lake.contract.entities
    assert all(a.field_id in catalog for e in lake.contract.entities for a in e.attributes)
    lake.close()


def test_a_call_over_its_time_limit_is_a_named_timeout():
    from lakeplanner.errors import LLMUnavailableError

    llm = get_llm(LLMSettings(backend="local", model="small", timeout_s=1))
    with pytest.raises(LLMUnavailableError, match="timed out after 1 s"):
        llm.complete([user("Write a long story about a lighthouse keeper.")], max_tokens=2000)
    llm.backend.settings = llm.backend.settings.model_copy(update={"timeout_s": 60})
    assert llm.complete(QUESTION, Total, max_tokens=40).value is not None  # the model is still usable
    llm.close()


@pytest.mark.slow
def test_real_model_plans_the_sample_questions(sample_lake, default_llm):
    """`lakeplanner plan` with the 1.5B model: every sample question gets a validated plan."""
    import json

    from lakeplanner.plan.planner import Planner

    lake, _ = sample_lake
    questions = json.loads((sample_lake_path() / "questions.json").read_text())
    planner = Planner(lake, default_llm, use_cache=False)
    results = [planner.plan_question(q["question"]) for q in questions if q["kind"] != "unanswerable"]
    failed = [(r.question, r.findings) for r in results if not r.ok]
    assert not failed, failed


def test_the_real_model_fills_an_open_subject_with_words_of_the_question(default_llm):
    from lakeplanner.question import read_question
    from lakeplanner.question.fill import fill_frame

    question = "Give the billing e-mail address of customer C001."
    frame = fill_frame(read_question(question), default_llm)
    assert frame.filled == ("subject",) and "e-mail address" in frame.subject.text
    assert question[frame.subject.start : frame.subject.end] == frame.subject.text
