"""benchmarks/spider.py without a model: its scorer, its prompt and answer text, its prompt meter and report."""

import pyarrow as pa
import pytest

from benchmarks.spider import (
    ANSWER_ROWS,
    baseline_messages,
    figures,
    is_right,
    markdown,
    metered,
    numbers_in,
    result_text,
)
from lakeplanner.contract.models import Contract, FieldEntry, FieldType, SourceKind, SourceSpec
from lakeplanner.llm import LLM, user
from lakeplanner.llm.base import RoutedLLM
from lakeplanner.llm.fake import FakeBackend


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("334,733 kites", [334733.0]),
        ("-4.5 and 12%", [-4.5, 12.0]),
        ("on 2031-07-09", [2031.0, 7.0, 9.0]),  # the hyphens of a date are no minus signs
        ("room B12, 7km", [7.0]),  # a number inside a word is not one
        ("1,2345", [1.0, 2345.0]),  # not a thousands group
        ("2.5e3 grams", [2500.0]),
    ],
)
def test_numbers_in(text, numbers):
    assert numbers_in(text) == numbers


def test_one_number_within_one_percent():
    assert is_right("334733", "number", "The orchard sold 334,733 kites.", False)
    assert is_right("17.25", "number", "about 17.3", False)  # 0.3% off
    assert not is_right("17.25", "number", "about 17.5", False)  # 1.4% off
    assert not is_right("0", "number", "0.001", False)  # zero is matched exactly
    assert not is_right("3", "number", "35 lanterns", False)  # a number, not a digit inside one


def test_every_listed_number_must_appear_in_any_order():
    assert is_right(["8", "21", "8"], "number", "21; 8", False)
    assert not is_right(["8", "21"], "number", "21 only", False)


def test_contains_is_case_insensitive_for_every_item():
    assert is_right("Velvet Heron", "contains", "It is the velvet heron.", False)
    assert is_right(["Oak Lane", "Pine Row"], "contains", "pine row | 4; OAK LANE | 9", False)
    assert not is_right(["Oak Lane", "Pine Row"], "contains", "Oak Lane", False)


def test_an_abstention_is_never_right():
    assert not is_right("Velvet Heron", "contains", "Velvet Heron", True)
    assert not is_right("12", "number", "12", True)


def test_result_text_joins_distinct_rows_without_provenance():
    table = pa.table({"name": ["Ada", "Ada", "Bo"], "age": [31, 31, None], "_lp_file": ["a.csv"] * 3})
    assert result_text(table) == "Ada | 31; Bo | "
    many = pa.table({"n": list(range(ANSWER_ROWS + 5))})
    assert result_text(many).split("; ")[-1] == str(ANSWER_ROWS - 1)


def test_baseline_prompt_lists_each_table_with_column_types():
    contract = Contract(
        sources=[SourceSpec(name="kite", kind=SourceKind.table, format="csv", files=["kite.csv"])],
        fields=[
            FieldEntry(
                id="f1",
                source="kite",
                path="colour",
                column="colour",
                type=FieldType.string,
                null_rate=0,
                cardinality=3,
            ),
            FieldEntry(
                id="f2", source="kite", path="span", column="span", type=FieldType.number, null_rate=0, cardinality=9
            ),
        ],
    )
    system_message, question = baseline_messages(contract, "How wide is the red kite?")
    assert "kite(colour string, span number)" in system_message.content
    assert question.content == "Question: How wide is the red kite?"


def test_metered_counts_prompt_characters_over_a_routed_llm():
    large, small = LLM(FakeBackend(['{"sql": "SELECT 1"}'])), LLM(FakeBackend(["short"]))
    measured, meter = metered(RoutedLLM(large, {"hseq.select": small}))
    measured.complete([user("abcd")])
    measured.for_purpose("hseq.select").complete([user("abcdefgh")])
    assert (meter.chars[0], meter.usage.calls) == (12, 2)


def record(id_: str, half: str, method: str, mode: str, right: bool, chars: int) -> dict:
    return {
        "id": id_,
        "db_id": f"db_{half}",
        "kind": "lookup",
        "half": half,
        "method": method,
        "mode": mode,
        "right": right,
        "prompt_chars": chars,
        "commit": "abc1234",
        "model": "fake",
    }


def test_figures_compare_the_same_questions_across_modes():
    records = [
        record("Q1", "tune", "lakeplanner", "per_db", True, 100),
        record("Q2", "held", "lakeplanner", "per_db", True, 300),
        record("Q3", "held", "lakeplanner", "per_db", False, 200),
        record("Q2", "held", "baseline", "per_db", False, 50),
        record("Q3", "held", "baseline", "per_db", True, 50),
        record("Q2", "held", "lakeplanner", "one_lake", False, 900),
    ]
    got = figures(records)
    assert (got["spider_tune_half_right"], got["spider_held_half_right"], got["spider_held_half_total"]) == (1, 1, 2)
    assert got["spider_held_half_baseline_right"] == 1
    assert (got["spider_one_lake_right"], got["spider_per_db_right"], got["spider_per_db_total"]) == (0, 1, 1)
    assert got["prompt_chars_one_lake"] == {"median": 900, "max": 900}
    assert got["prompt_chars_per_db"] == {"median": 300, "max": 300}


def test_markdown_renders_groups_and_attribution():
    groups = {"all": [1, 2], "half": {"held": [1, 2]}, "kind": {"lookup": [1, 2]}, "db": {"db_held": [1, 2]}}
    results = {"label": "t", "commits": ["abc1234"], "models": ["fake"], **figures([])}
    text = markdown(results | {"groups": {"lakeplanner/per_db": groups}})
    assert "| db_held | 1 / 2 |" in text and "CC BY-SA 4.0" in text
