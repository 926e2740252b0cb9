"""Generation with a scripted LLM: prompt from the contract, pruning at 1,000 tables, repair, cache."""

import json

import pytest
from typer.testing import CliRunner

from lakeplanner.cli import app
from lakeplanner.contract.models import Contract, FieldEntry, FieldType, SourceKind, SourceSpec, field_id
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.cache import Context
from lakeplanner.plan.generate import (
    MAX_TABLES,
    Pruner,
    contract_prompt,
    plan_messages,
    planner_prefix,
    prepare_planning,
)
from lakeplanner.plan.planner import Planner

TWO_HOP = {
    "nodes": [
        {
            "question": "Contract document of the customer of invoice INV-1078",
            "tool": "sql",
            "label": "$var_1",
            "source": "customers",
            "returns": ["contract_document_id"],
        },
        {
            "question": "Payment terms in the contract $var_1.contract_document_id",
            "tool": "vector",
            "label": "$var_2",
            "source": "documents_contracts",
            "should_expose_answer": True,
            "answer_description": "payment terms",
        },
    ]
}


def test_prompt_lists_tables_columns_keys_links_and_collections(sample_lake):
    lake, _ = sample_lake
    prompt = plan_messages("q", lake.contract, ["customers", "invoices"])[0].content
    assert "- invoices" in prompt and "total_amount number" in prompt
    assert "invoices.customer_id -> customers.customer_id (N:1)" in prompt
    assert "customers.contract_document_id -> documents of documents_contracts" in prompt
    assert "- documents_contracts: 37 documents" in prompt


def big_contract(n: int) -> Contract:
    sources, fields = [], []
    for i in range(n):
        name = f"table_{i:04d}"
        sources.append(
            SourceSpec(name=name, kind=SourceKind.table, format="csv", files=[f"{name}.csv"], table=f"lake.{name}")
        )
        for column in (f"metric_{i}", f"region_{i % 7}", "id"):
            fields.append(
                FieldEntry(
                    id=field_id(name, column),
                    source=name,
                    path=column,
                    column=column,
                    type=FieldType.string,
                    null_rate=0,
                    cardinality=5,
                    examples=["a"],
                )
            )
    sources.append(
        SourceSpec(name="shipments", kind=SourceKind.table, format="csv", files=["s.csv"], table="lake.shipments")
    )
    fields += [
        FieldEntry(
            id=field_id("shipments", c),
            source="shipments",
            path=c,
            column=c,
            type=FieldType.string,
            null_rate=0,
            cardinality=5,
            examples=["x"],
        )
        for c in ("carrier", "tracking_number")
    ]
    return Contract(sources=sources, fields=fields)


def test_pruning_keeps_the_prompt_bounded_at_1000_tables():
    contract = big_contract(1000)
    pruner = Pruner(contract)
    chosen = pruner.select("Which carrier has the tracking number 123?")
    assert "shipments" in chosen and len(chosen) <= 12
    assert len(contract_prompt(contract, chosen)) < 4000


def test_planner_generates_validates_caches_and_serves_the_cache(sample_lake):
    lake, _ = sample_lake
    backend = FakeBackend([json.dumps(TWO_HOP)])
    planner = Planner(lake, LLM(backend), context=Context(role="test-generate"))
    first = planner.plan_question("What are the contract payment terms for INV-1078?")
    assert first.ok and first.cache is None and [n.tool for n in first.plan.nodes] == ["sql", "vector"]
    assert first.plan.dependencies()["$var_2"] == ["$var_1"]
    again = planner.plan_question("What are the contract payment terms for INV-1042?")
    assert again.cache == "template" and "INV-1042" in again.plan.nodes[0].question
    assert len(backend.calls) == 1
    planner.cache.path.unlink()


def test_invalid_generation_is_replanned_with_the_findings(sample_lake):
    lake, _ = sample_lake
    wrong = {
        "nodes": [
            {
                "question": "count invoices in $var_2.invoice_id",
                "tool": "sql",
                "label": "$var_1",
                "source": "invoices",
                "should_expose_answer": True,
                "answer_description": "n",
            }
        ]
    }
    right = {
        "nodes": [
            {
                "question": "count invoices",
                "tool": "sql",
                "label": "$var_1",
                "source": "invoices",
                "should_expose_answer": True,
                "answer_description": "n",
            }
        ]
    }
    backend = FakeBackend([json.dumps(wrong), json.dumps(right)])
    result = Planner(lake, LLM(backend), use_cache=False).plan_question("How many orders are there?")
    assert result.ok and result.replans == 1 and result.plan.nodes[0].source == "invoices"
    feedback = backend.calls[1][0][-1].content
    assert "S007" in feedback and "$var_2" in feedback


def test_a_generated_plan_gets_back_the_id_its_steps_dropped(sample_lake):
    lake, _ = sample_lake
    lost = {
        "nodes": [
            {
                "question": "total_amount of the invoice",
                "tool": "sql",
                "source": "invoices",
                "should_expose_answer": True,
                "answer_description": "the total",
            }
        ]
    }
    result = Planner(lake, LLM(FakeBackend([json.dumps(lost)])), use_cache=False).plan_question(
        "What is the balance of invoice INV-1042?"  # no column says "balance": the planner drafts it
    )
    assert result.ok and result.plan.nodes[0].question == "total_amount of the invoice (invoice_id INV-1042)"
    assert "$var_1: names invoice_id INV-1042, which the question names and no step did" in result.edits


def test_cli_plan_prints_tree_json_and_fixes(sample_lake, monkeypatch):
    lake, _ = sample_lake
    reply = {
        "nodes": [
            {
                "question": "customers in the Enterprise segment",
                "tool": "sql",
                "label": "$var_1",
                "source": "customers",
                "returns": ["customer_name"],
                "should_expose_answer": True,
            }
        ]
    }
    monkeypatch.setattr("lakeplanner.plan.planner.get_llm", lambda: LLM(FakeBackend([json.dumps(reply)])))
    result = CliRunner().invoke(
        app, ["plan", "Which customers are Enterprise?", "--lake", str(lake.path), "--explain", "--no-cache"]
    )
    assert result.exit_code == 0, result.output
    assert "$var_1 sql on customers" in result.output and '"nodes"' in result.output
    assert "DataOps fix: $var_1: returned column customer_name -> name" in result.output
    assert "DataOps fix: $var_1: answer_description from its question" in result.output


def test_an_llm_that_cannot_plan_gives_advice_not_a_crash(sample_lake):
    lake, _ = sample_lake
    result = Planner(lake, LLM(FakeBackend(["{ not json"] * 3)), use_cache=False).plan_question("How many invoices?")
    assert not result.ok and result.plan.nodes == ()
    assert result.advice[0].startswith("no plan: fake gave no valid GeneratedPlan in 3 attempts")


def test_generated_sources_are_limited_to_the_ones_shown():
    from pydantic import ValidationError

    from lakeplanner.plan.generate import output_model

    model = output_model(["invoices", "documents_contracts"])
    node = {"question": "q", "tool": "sql", "label": "$var_1", "source": "invoices"}
    assert model.model_validate({"nodes": [node]}).nodes[0].source == "invoices"
    with pytest.raises(ValidationError):
        model.model_validate({"nodes": [{**node, "source": "orders"}]})
    assert model.model_json_schema()["$defs"]["GeneratedNode"]["properties"]["source"]["enum"] == [
        "invoices",
        "documents_contracts",
    ]


def test_a_question_about_rows_a_named_document_cites_is_planned_without_the_llm(logistics):
    backend = FakeBackend([])  # any planning call would fail the test
    asked = "What is the capacity of the truck named in incident report IR-004?"
    result = Planner(logistics, LLM(backend), use_cache=False).plan_question(asked)
    assert result.ok and not backend.calls
    search, rows = result.plan.nodes
    assert (search.source, search.filter, rows.source) == ("documents_incidents", "document_id = 'IR-004'", "trucks")
    assert result.edits == ["$var_1, $var_2: read the trucks rows IR-004 cites, by truck_id"]
    unnamed = Planner(logistics, LLM(FakeBackend(["{ not json"] * 3)), use_cache=False).plan_question(
        "What is the capacity of truck TRK-101?"
    )
    assert unnamed.findings  # no document named: the draft decides, and this one is garbage


@pytest.mark.parametrize("tables", [3, 40])
def test_the_prepared_planner_prefix_starts_every_planning_prompt_of_the_lake(tables):
    contract = big_contract(tables)
    prefix = planner_prefix(contract)[0]
    for question in ("Which carrier has the tracking number 123?", "How many regions are there?"):
        prompt = plan_messages(question, contract, Pruner(contract).select(question))[0]
        assert prompt.content.startswith(prefix.content)
        # a few tables are shown whole: the schema is prepared too; many: the instructions only
        assert (prompt.content == prefix.content) is (tables <= MAX_TABLES)
        assert prompt.content[: prompt.cache_points[0]] == prefix.content[: prompt.cache_points[0]]


def test_preparing_the_planner_with_a_backend_that_keeps_no_states_does_nothing(sample_lake):
    lake, _ = sample_lake
    assert prepare_planning(LLM(FakeBackend()), lake.contract) == 0
