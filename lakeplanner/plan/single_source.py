"""Plans the question frame determines without a planning call: a question one table answers.

A draft for such a question can only restate it as one step on that table, or split it into steps the
SQL writer could have written as one statement (a step per year of a change), at the cost of the
largest LLM call of an ask. When the table cannot answer after all, `ask` still searches the
documents (documents_after_tables), as it does after any plan whose tables fall short.
"""

from __future__ import annotations

from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode, Tool
from lakeplanner.plan.restore import asked_column
from lakeplanner.plan.validate import validate
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.frame import MEASURES
from lakeplanner.question.known import GENERIC_PARTS
from lakeplanner.question.link import about, name_stems

TOLD_BY_DOCUMENTS = frozenset({Operation.reason, Operation.definition})


def asks_documents(frame: QuestionFrame) -> bool:
    """The frame says documents tell (part of) the answer: a reason, a definition, prose, a kind of
    document named, or a document cue. ("What is X?" alone does not: X may be a row's value.)"""
    return frame.documents_tell or frame.prose is not None or frame.operation in TOLD_BY_DOCUMENTS


def named_table(frame: QuestionFrame, schema: LakeSchema) -> str | None:
    """The one readable table that holds every lake value the question names; None when it names none,
    or values of several sources (a join or a document the planner must order). A value of a foreign
    key column (appointments.room) is a row of the table it references (rooms) too.

    A value named by part of its words counts only for arithmetic, which needs the numbers rows hold: a
    count or a lookup by part of a row's name may ask what a document tells ("of the 40 kegs filled,
    how many were sold to pubs?" beside a row "kegs sold to pubs")."""
    holders = set()
    for value in frame.values + (frame.mentions if frame.computed else ()):
        table, column = value.column.split(".", 1)
        holders |= {table, schema.references.get((table, column), table)}
    if len(holders) != 1:
        return None
    table = holders.pop()
    return table if table in schema.tables and table not in schema.denied else None


def tables_of_named_columns(question: str, schema: LakeSchema) -> set[str]:
    """The tables with a column the question names: every distinctive word of the column's name is a
    word of the question ("total tuition fee" names tuition_fee; "amount" alone names no column). A
    column named after a table (enrolments.student_id) names that table, not a column of its own."""
    said = about(question)
    table_names = [name_stems(t) for t in schema.tables]
    return {
        table
        for table, columns in schema.tables.items()
        for column in columns
        if (distinctive := name_stems(column) - GENERIC_PARTS) <= said
        and distinctive
        and not any(distinctive <= named for named in table_names)
    }


def asks_other_entity(frame: QuestionFrame, table: str, schema: LakeSchema) -> bool:
    """A "which brewer ..." question over another table's values asks for a row of the brewers table."""
    if frame.entity is None:
        return False
    wanted = name_stems(frame.entity)
    return any(wanted <= name_stems(other) for other in schema.tables if other != table)


def columns_answer(frame: QuestionFrame, table: str, schema: LakeSchema) -> bool:
    """The table's rows can answer: no document is linked to them (so no step could reach documents
    through them), the question counts or totals them, or the attribute asked is one of the columns
    the table reaches."""
    linked = any(t == table for t, _ in schema.document_links.keys() | schema.citations.keys())
    if not linked or frame.operation in MEASURES or frame.computed:
        return True
    attribute = frame.asked_attribute
    return attribute is not None and asked_column(attribute.text, schema.reachable_columns(table)) is not None


def one_table_plan(frame: QuestionFrame, schema: LakeSchema) -> tuple[Plan, list[str]] | None:
    """One sql step on the table every named value lives in, asking the question as it is: when the
    question asks one thing (no second ask), nothing that only documents tell, and the table's rows can
    answer it. None otherwise (the planner drafts a plan)."""
    if frame.second_ask is not None or asks_documents(frame):
        return None
    table = named_table(frame, schema)
    if (
        table is None
        or tables_of_named_columns(frame.text, schema) - {table}
        or asks_other_entity(frame, table, schema)
    ):
        return None  # another table is named: the planner decides where each part is read
    if not columns_answer(frame, table, schema):
        return None
    step = PlanNode(
        question=frame.text,
        tool=Tool.sql,
        label="$var_1",
        source=table,
        should_expose_answer=True,
        answer_description=frame.text,
    )
    plan = Plan(question=frame.text, nodes=(step,))
    if validate(plan, schema):
        return None
    return plan, [f"$var_1: one sql step on {table}, the one table holding the values the question names"]
