"""Semantic rules over a step's question text: a sql step asking for prose its table has no column
for, a search naming a table's column, a sql step naming a column only a joined table holds."""

from __future__ import annotations

from collections.abc import Iterable

from lakeplanner.plan.findings import Code, Finding
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, Tool
from lakeplanner.question.steps import identifiers_in


def check_prose_questions(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A sql step asking why, how something is done, what something consists of, for a reason or a
    description, of a table with no column for it: such answers are written in documents. The subject
    is the collection to read instead."""
    for node in plan.nodes:
        frame = plan.step_frame(node)
        word = frame.prose_root if frame is not None else None  # "how i..." names no column: method is prose
        if node.tool != Tool.sql or node.sql or node.source not in schema.tables or word is None:
            continue
        if any(word in column.lower() for column in schema.reachable_columns(node.source)):
            continue
        collection = schema.collection_for(node.source)
        if collection is not None:
            yield Finding(
                code=Code.prose_from_table,
                node=node.label,
                subject=collection,
                message=f"{node.source} has no column for '{frame.prose.text}': read it in {collection}",
            )


def check_table_columns_in_searches(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A search whose question names a table's column ("the value of the item_name 'Other receivables'")
    asks for that table's rows. Only names with an underscore count: plain words ("value", "year") are
    also prose. The subject is the one table with that column."""
    read = plan.read_labels()
    for node in plan.nodes:
        if node.tool != Tool.vector or node.references() or node.label in read:
            continue
        named = {w for w in identifiers_in(node.question or "") if "_" in w}
        tables = sorted({t for t, columns in schema.tables.items() for c in columns if c in named})
        if len(tables) == 1:
            yield Finding(
                code=Code.table_column_in_search,
                node=node.label,
                subject=tables[0],
                message=f"the search names a column of {tables[0]}: read that table with sql",
            )


def check_columns_of_joined_tables(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A sql step whose question names a column its table lacks and one joined table holds, with every
    other column it names ("total_amount of the parent with parent_id in $var_1.parent_id" on
    child_rows): that table answers it without a join. The subject is that table."""
    columns = {c for held in schema.tables.values() for c in held}
    for node in plan.nodes:
        if node.tool != Tool.sql or node.sql or node.source not in schema.tables:
            continue
        named = {w for w in identifiers_in(node.question or "", references=False) if w in columns and "_" in w}
        missing = named - set(schema.tables[node.source])
        holders = [t for t in schema.sql_tables(node.source)[1:] if named <= set(schema.tables[t])]
        if missing and len(holders) == 1:
            yield Finding(
                code=Code.column_of_joined_table,
                node=node.label,
                subject=holders[0],
                message=f"{node.source} has no column {', '.join(sorted(missing))}: read {holders[0]}, which has it",
            )
