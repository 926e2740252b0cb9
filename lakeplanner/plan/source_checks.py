"""Semantic rules over what a step reads: its source and its fit to the tool, the columns it returns,
the role's policy, its SQL (parsed with sqlglot, `$var_n.column` bindings replaced by a placeholder
first: one read-only SELECT of known tables and columns, joins and aggregates of fitting types), the
references that narrow a search, and a search's metadata filter."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from lakeplanner.contract.models import FieldType
from lakeplanner.errors import UnsafeSqlError
from lakeplanner.plan.filters import COLLECTION_FIELDS, FilterError, fields_of, milvus_expression, parse_filter
from lakeplanner.plan.findings import Code, Finding
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import REFERENCE, Plan, PlanNode, Tool
from lakeplanner.policy.readonly import MAX_SQL_CHARS, read_only_select
from lakeplanner.question.lexicon import names_computed_value

NUMERIC = {FieldType.integer, FieldType.number}


def check_policy(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A step reads a table or collection the asking role's policy denies it."""
    for node in plan.nodes:
        read = {node.source} if node.source else set()
        if node.sql and node.tool in (Tool.sql, Tool.graph):
            with suppress(ParseError, TokenError, ValueError):
                read |= {t.name for t in parse_sql(node.sql).find_all(exp.Table)}
        for source in sorted(read & schema.denied):
            yield Finding(
                code=Code.denied_source,
                node=node.label,
                subject=source,
                message=f"the asking role may not read {source!r}",
            )


def check_sources(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    for node in plan.nodes:
        if not node.source or node.tool not in set(Tool):
            continue
        is_table, is_collection = node.source in schema.tables, node.source in schema.collections
        if node.source in schema.denied:
            continue  # check_policy names it
        if not (is_table or is_collection):
            yield Finding(
                code=Code.unknown_source,
                node=node.label,
                subject=node.source,
                message=f"no table or collection named {node.source!r}",
            )
        elif node.tool != Tool.graph and (node.tool == Tool.vector) != is_collection:
            yield Finding(
                code=Code.tool_source_mismatch,
                node=node.label,
                subject=node.source,
                message=f"tool {node.tool} cannot read {'collection' if is_collection else 'table'} {node.source}",
            )
        elif node.tool == Tool.graph and node.source not in schema.linked:
            yield Finding(
                code=Code.graph_without_link,
                node=node.label,
                subject=node.source,
                message=f"{node.source} has no foreign key or document link to traverse",
            )
        for column in node.returns:
            if is_table and column not in schema.reachable_columns(node.source) and not names_computed_value(column):
                yield Finding(
                    code=Code.unknown_return_column,
                    node=node.label,
                    subject=column,
                    message=f"{node.source} has no column {column!r}",
                )


def with_placeholders(sql: str) -> str:
    """Bound variables are values, not SQL: stand in a literal so sqlglot can parse the statement."""
    return REFERENCE.sub("(NULL)", sql)


def parse_sql(sql: str) -> exp.Expression:
    if len(sql) > MAX_SQL_CHARS:
        raise ValueError(f"the statement is {len(sql):,} characters long (at most {MAX_SQL_CHARS:,})")
    try:
        statements = sqlglot.parse(with_placeholders(sql), read="duckdb")
    except RecursionError as e:
        raise ValueError("the statement is nested too deeply to parse") from e
    if len(statements) != 1 or statements[0] is None:
        raise ValueError(f"expected one statement, got {len(statements)}")
    return statements[0]


def select_names(sql: str) -> set[str]:
    try:
        statement = parse_sql(sql)
    except (ParseError, TokenError, ValueError):
        return set()
    if not isinstance(statement, exp.Select):
        return set()
    return {"*" if isinstance(e, exp.Star) else e.alias_or_name for e in statement.expressions}


def check_sql(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    for node in plan.nodes:
        if node.sql is None or node.tool not in (Tool.sql, Tool.graph):
            continue
        try:
            statement = parse_sql(node.sql)
        except (ParseError, TokenError, ValueError) as e:
            yield Finding(code=Code.sql_parse_error, node=node.label, message=f"SQL does not parse: {e}")
            continue
        if not isinstance(statement, exp.Select | exp.Union):
            yield Finding(
                code=Code.sql_not_select,
                node=node.label,
                subject=statement.key,
                message=f"only SELECT is allowed, got {statement.key.upper()}",
            )
            continue
        try:
            for select in statement.find_all(exp.Select):
                read_only_select(select)
        except UnsafeSqlError as e:
            yield Finding(code=Code.sql_unsafe, node=node.label, message=e.message)
            continue
        yield from check_sql_names(node, statement, schema)


def table_aliases(statement: exp.Expression) -> dict[str, str]:
    aliases = {}
    for table in statement.find_all(exp.Table):
        aliases[table.alias_or_name] = table.name
        aliases[table.name] = table.name
    return aliases


def column_type(column: exp.Column, aliases: dict[str, str], schema: LakeSchema) -> FieldType | None:
    tables = [aliases[column.table]] if column.table in aliases else list(dict.fromkeys(aliases.values()))
    for table in tables:
        if column.name in schema.tables.get(table, {}):
            return schema.tables[table][column.name]
    return None


def check_sql_names(node: PlanNode, statement: exp.Expression, schema: LakeSchema) -> Iterable[Finding]:
    aliases = table_aliases(statement)
    unknown = [t for t in dict.fromkeys(aliases.values()) if t not in schema.tables and t not in schema.denied]
    for table in unknown:
        yield Finding(code=Code.unknown_table, node=node.label, subject=table, message=f"no table named {table!r}")
    if unknown or any(t in schema.denied for t in aliases.values()):
        return
    derived = {a.alias for a in statement.find_all(exp.Alias)}
    for column in statement.find_all(exp.Column):
        if column.name not in derived and column_type(column, aliases, schema) is None:
            where = aliases.get(column.table, " or ".join(sorted(set(aliases.values()))))
            yield Finding(
                code=Code.unknown_column,
                node=node.label,
                subject=column.name,
                message=f"{where} has no column {column.name!r}",
            )
    for join in statement.find_all(exp.Join):
        for eq in join.find_all(exp.EQ):
            left, right = eq.left, eq.right
            if isinstance(left, exp.Column) and isinstance(right, exp.Column):
                types = column_type(left, aliases, schema), column_type(right, aliases, schema)
                if None not in types and (types[0] in NUMERIC) != (types[1] in NUMERIC):
                    yield Finding(
                        code=Code.join_type_mismatch,
                        node=node.label,
                        subject=f"{left.sql()} = {right.sql()}",
                        message=f"join compares {types[0]} with {types[1]}: {eq.sql()}",
                    )
    for aggregate in statement.find_all(exp.Sum, exp.Avg):
        argument = aggregate.this
        if isinstance(argument, exp.Column):
            kind = column_type(argument, aliases, schema)
            if kind is not None and kind not in NUMERIC:
                yield Finding(
                    code=Code.aggregate_type_mismatch,
                    node=node.label,
                    subject=argument.name,
                    message=f"{aggregate.key.upper()} over {kind} column {argument.name!r}",
                )


def check_document_references(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A vector step can only be narrowed by values that name its documents: a link column (or the
    linked row's key) of the table an earlier sql step read, or document ids from another search."""
    for node in plan.nodes:
        if node.tool != Tool.vector or node.source not in schema.collections:
            continue
        for ref in node.references():
            producer = plan.node(ref.label)
            if producer is None or ref.column is None or producer.tool == Tool.vector:
                continue
            if producer.source not in schema.tables:
                continue
            usable = schema.columns_naming_documents(producer.source, node.source)
            if ref.column not in usable:
                hint = (
                    f"; use {' or '.join(sorted(usable))}"
                    if usable
                    else f"; no column of {producer.source} links to it"
                )
                yield Finding(
                    code=Code.unlinked_reference,
                    node=node.label,
                    subject=ref.column,
                    message=f"{ref.label}.{ref.column} does not name documents of {node.source}{hint}",
                )


def check_vector_filters(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    for node in plan.nodes:
        if node.tool != Tool.vector or not node.filter:
            continue
        try:
            condition, _ = parse_filter(node.filter)
        except FilterError as e:
            yield Finding(code=Code.sql_parse_error, node=node.label, message=e.message)
            continue
        unknown = [name for name in fields_of(condition) if name not in COLLECTION_FIELDS]
        for name in unknown:
            yield Finding(
                code=Code.unknown_filter_field,
                node=node.label,
                subject=name,
                message=f"collections have no metadata field {name!r}",
            )
        if unknown:
            continue
        try:
            milvus_expression(node.filter, lambda field, reference: ["x"])
        except FilterError as e:
            yield Finding(code=Code.unsupported_filter, node=node.label, message=e.message)
