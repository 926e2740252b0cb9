"""Validator rules on a corpus of broken plans (tests/data/plans) over the sample lake's contract."""

from pathlib import Path

import pytest
import yaml
from restores import framed

from lakeplanner.plan.findings import Code
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan
from lakeplanner.plan.validate import validate

PLANS = Path(__file__).parent / "data" / "plans"
BROKEN = yaml.safe_load((PLANS / "broken.yaml").read_text())
VALID = yaml.safe_load((PLANS / "valid.yaml").read_text())


@pytest.fixture(scope="module")
def schema(sample_lake):
    lake, _ = sample_lake
    return LakeSchema.from_contract(lake.contract)


@pytest.mark.parametrize("case", VALID, ids=[c["name"] for c in VALID])
def test_valid_plans_have_no_findings(case, schema):
    assert validate(Plan.model_validate(case["plan"]), schema) == []


@pytest.mark.parametrize("case", BROKEN, ids=[c["name"] for c in BROKEN])
def test_each_broken_plan_is_caught_with_its_code(case, schema):
    findings = validate(framed(Plan.model_validate(case["plan"])), schema)
    assert case["expect"] in {f.code.value for f in findings}, findings


def test_the_corpus_covers_every_rule():
    assert len(BROKEN) >= 25
    # M010 has its own test: every source of the sample lake has a key or a link
    unlisted = {Code.graph_without_link.value, Code.denied_source.value}  # P001: test_policy
    assert {c["expect"] for c in BROKEN} == {code.value for code in Code} - unlisted


def test_a_cycle_is_named(schema):
    [case] = [c for c in BROKEN if c["name"] == "three-node cycle"]
    [cycle] = [f for f in validate(Plan.model_validate(case["plan"]), schema) if f.code is Code.cycle]
    assert cycle.subject == "$var_1 -> $var_3 -> $var_2 -> $var_1"


def test_dependencies_are_derived_from_references():
    plan = Plan.model_validate(VALID[1]["plan"])
    assert plan.dependencies() == {"$var_1": [], "$var_2": ["$var_1"]}
    changed = plan.replace("$var_2", should_expose_answer=False)
    assert plan.nodes[1].should_expose_answer and not changed.nodes[1].should_expose_answer


def test_graph_traversal_over_a_source_without_links():
    """Every source of the sample lake has a key or a link (the memo cites invoices), so an unlinked
    collection is made here."""
    schema = LakeSchema(tables={}, collections={"notes"})
    plan = Plan.model_validate(
        {
            "nodes": [
                {
                    "question": "related notes",
                    "tool": "graph",
                    "label": "$var_1",
                    "source": "notes",
                    "should_expose_answer": True,
                    "answer_description": "x",
                }
            ]
        }
    )
    assert Code.graph_without_link in {f.code for f in validate(plan, schema)}
