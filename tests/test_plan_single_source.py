"""A question one table answers is planned without a planning call: one sql step on that table."""

import pytest

from lakeplanner.contract.models import FieldType
from lakeplanner.llm.base import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.planner import Planner
from lakeplanner.plan.single_source import one_table_plan, tables_of_named_columns
from lakeplanner.question import read_question
from lakeplanner.question.known import KnownValues
from lakeplanner.question.read import with_values


@pytest.fixture(scope="module")
def planner(sample_lake):
    lake, _ = sample_lake
    return Planner(lake, LLM(FakeBackend([])), use_cache=False)


def planned(planner: Planner, question: str):
    return one_table_plan(planner.read(question), planner.schema)


def test_values_of_one_table_make_one_sql_step_asking_the_question(planner):
    question = "What is the total amount of EUR invoices with status open?"
    plan, edits = planned(planner, question)
    [step] = plan.nodes
    assert (step.tool, step.source, step.question, step.should_expose_answer) == ("sql", "invoices", question, True)
    assert "invoices" in edits[0]


def test_the_planner_makes_no_llm_call_for_it(planner):
    result = planner.plan_question("How many invoices in EUR are overdue?")  # the fake has no reply to give
    assert result.ok and [n.source for n in result.plan.nodes] == ["invoices"]


@pytest.mark.parametrize(
    "question",
    [
        "How many EUR invoices do customers in the Enterprise segment have?",  # values of two tables
        "Why is invoice INV-1042 overdue?",  # a reason: documents tell it
        "According to the contract, what is the due date of invoice INV-1042?",  # a document cue
        "What is the due date of invoice INV-1042, and how many line items does it have?",  # two asks
        "How many invoices are there?",  # no value named: the planner decides
        "What is the segment of the customer billed on invoice INV-1042?",  # a column of another table
        "Which customer received invoice INV-1042?",  # a row of another table
    ],
)
def test_what_one_table_cannot_answer_alone_goes_to_the_planner(planner, question):
    assert planned(planner, question) is None


def test_on_a_table_with_linked_documents_a_lookup_must_name_a_column(planner):
    assert planned(planner, "What is the due date of invoice INV-1042?") is not None
    assert planned(planner, "What is the fax number on invoice INV-1042?") is None  # no column: documents may tell


def test_a_table_without_linked_documents_answers_what_its_rows_name():
    schema = LakeSchema(
        tables={"ledger": {"item": FieldType.string, "year": FieldType.integer, "amount": FieldType.number}},
        collections={"notes"},
    )
    question = "What was the change in Rent expense from 2022 to 2023?"
    start = question.index("Rent expense")
    frame = with_values(read_question(question), [(start, start + len("Rent expense"), "ledger.item")])
    plan, _ = one_table_plan(frame, schema)
    assert [(n.tool, n.source) for n in plan.nodes] == [("sql", "ledger")]
    denied = LakeSchema(tables=schema.tables, collections={"notes"}, denied=frozenset({"ledger"}))
    assert one_table_plan(frame, denied) is None


def test_a_value_of_a_foreign_key_names_a_row_of_the_table_it_references_too():
    tables = {"trips": {"trip_id": FieldType.string, "vehicle": FieldType.string}, "vans": {"van_id": FieldType.string}}
    schema = LakeSchema(tables=tables, collections=set(), references={("trips", "vehicle"): "vans"})
    question = "How many trips did van V-7 make?"
    start = question.index("V-7")
    frame = with_values(read_question(question), [(start, start + 3, "trips.vehicle")])
    assert one_table_plan(frame, schema) is None
    keyed = with_values(read_question(question), [(start, start + 3, "trips.trip_id")])
    assert one_table_plan(keyed, LakeSchema(tables=tables, collections=set())) is not None


def test_a_value_named_by_part_of_its_words_names_its_table_for_arithmetic():
    schema = LakeSchema(
        tables={"report": {"line_item": FieldType.string, "year": FieldType.integer, "value": FieldType.number}},
        collections={"notes"},
    )
    known = KnownValues({"net increase (decrease) in cash and cash equivalents": "report.line_item"})
    question = "What was the change in cash and cash equivalents from 2018 to 2019?"
    frame = with_values(read_question(question), known.find(question), known.mentions(question))
    assert [v.span.text for v in frame.mentions] == ["cash and cash equivalents"]
    plan, _ = one_table_plan(frame, schema)
    assert [(n.tool, n.source) for n in plan.nodes] == [("sql", "report")]
    lookup = "Of the 12 vans bought, how many were leased out to drivers in 2017?"
    known = KnownValues({"vans leased out to drivers": "report.line_item"})
    frame = with_values(read_question(lookup), known.find(lookup), known.mentions(lookup))
    assert frame.mentions and one_table_plan(frame, schema) is None  # by part of a name: arithmetic only


def test_a_hyphenated_spelling_names_the_column_it_spells():
    schema = LakeSchema(
        tables={
            "invoices": {"invoice_id": FieldType.string, "customer_id": FieldType.string},
            "customers": {"customer_id": FieldType.string, "billing_email": FieldType.string},
        },
        collections=set(),
    )
    assert tables_of_named_columns("What is the billing e-mail of the customer on invoice INV-1?", schema) == {
        "customers"
    }
