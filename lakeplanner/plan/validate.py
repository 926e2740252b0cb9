"""Plan validation (seed 000 §3.3, App. C): structural then semantic checks, as typed findings.

Each rule is a small function `(plan, lake schema) -> findings`; `validate` runs them in order. The
findings are in findings.py, the schema in lake_schema.py, and the rules by what they check: the
DAG's shape (shape_checks.py), sources, SQL and filters (source_checks.py), a step's question text
(step_text_checks.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lakeplanner.plan.findings import Finding
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan
from lakeplanner.plan.shape_checks import (
    check_acyclic,
    check_completeness,
    check_exposure,
    check_redundancy,
    check_references,
    check_tools_and_labels,
)
from lakeplanner.plan.source_checks import (
    check_document_references,
    check_policy,
    check_sources,
    check_sql,
    check_vector_filters,
)
from lakeplanner.plan.step_text_checks import (
    check_columns_of_joined_tables,
    check_prose_questions,
    check_table_columns_in_searches,
)

Rule = Callable[[Plan, LakeSchema], Iterable[Finding]]


STRUCTURAL: tuple[Rule, ...] = (
    check_completeness,
    check_tools_and_labels,
    check_exposure,
    check_references,
    check_acyclic,
    check_redundancy,
)
SEMANTIC: tuple[Rule, ...] = (
    check_policy,
    check_sources,
    check_sql,
    check_document_references,
    check_vector_filters,
    check_prose_questions,
    check_table_columns_in_searches,
    check_columns_of_joined_tables,
)


def validate(plan: Plan, schema: LakeSchema, rules: tuple[Rule, ...] = STRUCTURAL + SEMANTIC) -> list[Finding]:
    """Every finding of every rule; an empty list means the plan is executable under the schema."""
    return [finding for rule in rules for finding in rule(plan, schema)]
