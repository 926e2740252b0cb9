"""A question that names one row, after its tables fell short: the documents that row links to,
searched for what the question asks of it (a plan rule; `execute.ask` runs it when the tables abstained)."""

from __future__ import annotations

from sqlglot import exp

from lakeplanner.contract.models import Contract
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode, Tool
from lakeplanner.question import QuestionFrame


def own_documents_search(plan: Plan, frame: QuestionFrame, contract: Contract) -> Plan | None:
    """The documents of the one row the question names, searched with the question: "what late-return
    fine applies to the branch that lent loan LN-1?" when no column holds a fine reads the
    charter the loan's branch links to (loans -> branches.charter). The row's link value
    is read with SQL written here, and the search, filtered to it, looks for what the question asks
    of the row (its attribute), so a document that merely mentions the row answers nothing. None
    unless one row is named and one link column reaches one collection from its table (its own link
    columns first, then those of the tables it joins)."""
    schema = LakeSchema.from_contract(contract)
    rows = [v for v in frame.values if names_row(schema, *v.column.split(".", 1))]
    if len(rows) != 1:
        return None
    table, column = rows[0].column.split(".", 1)
    own = [(c, link) for c in sorted(schema.collections) for link in schema.document_links.get((table, c), ())]
    reached = own or [(c, link) for c in sorted(schema.collections) for link in schema.link_columns(table, c)]
    if len(reached) != 1:
        return None
    [(collection, link)] = reached
    statement = link_statement(contract, table, column, rows[0].span.text, link)
    if statement is None:
        return None
    first = plan.fresh_label()
    reader = PlanNode(
        question=f"{link} of the {table} row whose {column} is {rows[0].span.text}",
        tool=Tool.sql,
        label=first,
        source=table,
        sql=statement,
        returns=(link,),
    )
    # the row is found: what the question asks of it is the question up to its attribute
    asked = f"{frame.text_until(frame.attribute).rstrip(' ?')}?" if frame.attribute else plan.question
    search = PlanNode(
        question=asked,
        tool=Tool.vector,
        label=plan.fresh_label(after=1),
        source=collection,
        filter=f"document_id IN {first}.{link}",
        should_expose_answer=True,
        answer_description=asked,
    )
    return Plan(question=plan.question, nodes=(reader, search), frame=plan.frame)


def names_row(schema: LakeSchema, table: str, column: str) -> bool:
    """A value of this column names one row: the table's key, or its label (a category names many)."""
    return column in schema.identifiers.get(table, ()) or column == schema.labels.get(table)


def link_statement(contract, table: str, column: str, value: str, link: str) -> str | None:
    """SELECT the link column of the row of `table` whose `column` is `value` (case aside), from the
    table itself or from the one table a foreign key joins it to that holds the link."""
    where = exp.func("lower", exp.column(column, table=table)).eq(value.casefold())
    if link in {f.column for f in contract.fields_of(table)}:
        return exp.select(exp.column(link, table=table)).from_(table).where(where).sql("duckdb")
    joins = [
        (fk.target, fk.column, fk.target_column) if fk.source == table else (fk.source, fk.target_column, fk.column)
        for fk in contract.foreign_keys
        if table in (fk.source, fk.target) and fk.source != fk.target
    ]
    holders = [j for j in joins if link in {f.column for f in contract.fields_of(j[0])}]
    if len(holders) != 1:
        return None
    [(other, near, far)] = holders
    on = exp.column(near, table=table).eq(exp.column(far, table=other))
    return exp.select(exp.column(link, table=other)).from_(table).join(other, on=on).where(where).sql("duckdb")
