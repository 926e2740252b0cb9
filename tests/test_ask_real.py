"""End to end with the real local model (Qwen2.5-Coder-1.5B) on the sample lake's ten questions:
single-hop SQL, aggregates, SQL -> document, document -> SQL, document -> SQL -> document, and an
unanswerable question that must abstain. Slow (about 1-3 minutes a question on 2 CPU cores)."""

import json

import pytest

from lakeplanner import Lake, sample_lake_path
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm import LLMSettings, get_llm

pytestmark = [pytest.mark.real_model, pytest.mark.slow]
QUESTIONS = json.loads((sample_lake_path() / "questions.json").read_text())


@pytest.fixture(scope="module")
def lake_and_llm(tmp_path_factory):
    lake = Lake.create(tmp_path_factory.mktemp("ask") / "lake")
    lake.ingest(sample_lake_path())
    llm = get_llm(LLMSettings(backend="local", model="default"))
    yield lake, llm
    lake.close()
    llm.close()


@pytest.mark.parametrize("case", QUESTIONS, ids=[f"{i}-{q['kind']}" for i, q in enumerate(QUESTIONS)])
def test_sample_question(lake_and_llm, case):
    lake, llm = lake_and_llm
    answer = lake.ask(case["question"], llm=llm, settings=ExecSettings(mode="serial"), use_cache=False)
    if not case["expect"]:
        assert answer.abstained, answer.value
        return
    assert not answer.abstained, answer.reason
    text = f"{answer.value} {answer.text}".casefold()
    assert all(e.casefold() in text for e in case["expect"]), (answer.value, answer.text)
    assert answer.citations and answer.trace_id
    tables = {c.source for c in answer.citations if c.kind == "row"}
    spans = [c for c in answer.citations if c.kind == "span"]
    assert all(c.snapshot_id for c in answer.citations if c.kind == "row"), tables
    assert all(c.end > c.start for c in spans)
