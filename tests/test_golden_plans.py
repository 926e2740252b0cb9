"""Golden files pin question -> plan -> SQL (DuckDB, and as sent to Trino) -> answer on both sample lakes.

The LLM is replayed from a cassette recorded with the real local model (tests/golden/record.py), so a
change in what lakeplanner asks the model, how it plans, which SQL it runs or what it answers shows
here as a diff against the golden file.
"""

from __future__ import annotations

import difflib
import functools
from pathlib import Path

import pytest

from lakeplanner.llm.settings import LLMSettings
from tests.golden.cassette import RERECORD_HINT, Cassette, PromptChanged, ReplayBackend
from tests.golden.golden import LAKES, ask_pinned, cassette_path, questions, read_golden, readable, recorded

CASES = [pytest.param(lake, path, id=f"{lake}-{path.stem}") for lake in LAKES for path in recorded(lake)]


@functools.cache
def cassette(lake: str) -> Cassette:
    return Cassette(cassette_path(lake))


def opened(request: pytest.FixtureRequest, lake: str):
    """The session's ingested sample lake of that name (tests/conftest.py)."""
    if lake == "sales":
        return request.getfixturevalue("sample_lake")[0]
    return request.getfixturevalue("logistics")


def diff(expected: dict, actual: dict, path: Path) -> str:
    lines = difflib.unified_diff(
        readable(expected).splitlines(), readable(actual).splitlines(), str(path), "now", lineterm="", n=4
    )
    return "\n".join(lines)


@pytest.mark.parametrize("lake", LAKES)
def test_every_question_is_pinned(lake):
    pinned = [read_golden(path)["question"] for path in recorded(lake)]
    assert pinned == questions(lake), f"questions.json and the golden files differ; {RERECORD_HINT.format(lake=lake)}"


def test_enough_questions_are_pinned():
    assert len(CASES) >= 40


@pytest.mark.parametrize(("lake", "path"), CASES)
def test_golden_plan(request, lake, path):
    golden = read_golden(path)
    backend = ReplayBackend(cassette(lake), lake)
    try:
        actual = ask_pinned(opened(request, lake), golden["question"], backend, LLMSettings(backend="fake"))
    except PromptChanged as changed:
        pytest.fail(str(changed), pytrace=False)
    if backend.misses:  # a miss some handler swallowed
        pytest.fail(backend.miss_message(), pytrace=False)
    if actual != golden:
        pytest.fail(f"{path.name} changed:\n{diff(golden, actual, path)}", pytrace=False)
