"""A fact a named document states, which no column holds, is searched for first, not written as SQL."""

import pytest

from lakeplanner import Lake
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.plan.routing import searched_first_for_stated_facts
from lakeplanner.question.read import read_question


@pytest.fixture(scope="module")
def clinic(tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    rows = "".join(f"S{n:03d},P{n % 9},{'urine' if n % 2 else 'blood'},{n % 30}\n" for n in range(60))
    (raw / "samples.csv").write_text("sample_id,patient,kind,age_days\n" + rows)
    (raw / "policies").mkdir()
    (raw / "policies" / "sample_policy.md").write_text(
        "# Sample policy\n\nA sample may wait at most 36 hours before the lab rejects it.\n"
    )
    lake = Lake.create(tmp_path_factory.mktemp("lake"))
    lake.ingest(raw)
    return lake


def sql_plan(question: str) -> Plan:
    step = PlanNode(
        question=question,
        tool="sql",
        label="$var_1",
        source="samples",
        should_expose_answer=True,
        answer_description="the hours",
    )
    return Plan(question=question, nodes=(step,))


def scores(text, collections):
    return dict.fromkeys(collections, 1.0)


def test_a_stated_limit_under_a_named_policy_is_searched_first(clinic):
    question = "How many hours may a sample wait before the lab rejects it, under the sample policy?"
    routed, edits = searched_first_for_stated_facts(
        sql_plan(question), read_question(question), clinic.contract, scores
    )
    assert [n.tool for n in routed.nodes] == ["vector"] and routed.nodes[0].question == question
    assert edits and "no column holds hours" in edits[0]


@pytest.mark.parametrize(
    "question",
    [
        "How many samples of kind urine are there, under the sample policy?",  # a count of rows: a table's
        "What is the average age_days of the samples?",  # names no document
    ],
)
def test_questions_a_column_answers_keep_their_sql(clinic, question):
    plan = sql_plan(question)
    assert searched_first_for_stated_facts(plan, read_question(question), clinic.contract, scores) == (plan, [])
