"""The restore passes as the tests call them: over a plan whose frame is its question as the ask entry
reads it (no packs, nothing filled or bound), so a test states a plan and its question only."""

from __future__ import annotations

from lakeplanner.plan import restore
from lakeplanner.plan.model import Plan
from lakeplanner.question import read_question


def framed(plan: Plan) -> Plan:
    return plan.framed(read_question(plan.question))


def passed(name: str, plan: Plan, known=None, schema=None) -> tuple[Plan, list[str]]:
    return getattr(restore, name)(plan, read_question(plan.question), known, schema)


def restore_named_ids(plan, known, schema):
    return passed("restore_named_ids", plan, known, schema)


def restore_swapped_values(plan, known):
    return passed("restore_swapped_values", plan, known)


def restore_table_arithmetic(plan, known, schema):
    return passed("restore_table_arithmetic", plan, known, schema)


def restore_cited_rows(plan, known, schema):
    return passed("restore_cited_rows", plan, known, schema)


def restore_document_fact(plan, known, schema):
    return passed("restore_document_fact", plan, known, schema)


def restore_asked_entity(plan):
    return passed("restore_asked_entity", plan)


def restore_lost_parts(plan, known, schema):
    return passed("restore_lost_parts", plan, known, schema)


def _schema_only(name: str):
    def run(plan, schema):
        return passed(name, plan, None, schema)

    run.__name__ = name
    return run


restore_ranking = _schema_only("restore_ranking")
restore_periods = _schema_only("restore_periods")
restore_document_start = _schema_only("restore_document_start")
restore_count = _schema_only("restore_count")
restore_asked_column = _schema_only("restore_asked_column")
restore_elapsed_moments = _schema_only("restore_elapsed_moments")
restore_linked_search = _schema_only("restore_linked_search")
restore_named_anchor = _schema_only("restore_named_anchor")
restore_last_hop = _schema_only("restore_last_hop")


def document_clause(question: str) -> str | None:
    return restore.document_clause(read_question(question))
