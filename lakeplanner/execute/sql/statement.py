"""The statement a SQL step runs: bound variables enter as sqlglot literals; sqlglot checks it (one
SELECT, known tables and columns, a LIMIT) and adds the row keys the answer will cite; engines
(DuckDB over pyiceberg scans, Trino) run the checked statement. Also the statement helpers every
pass shares (conjuncts, compared literals, the table of a column)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify

from lakeplanner.contract.models import FieldType
from lakeplanner.errors import EngineError, SqlError
from lakeplanner.execute.results import SqlRun
from lakeplanner.plan.model import REFERENCE
from lakeplanner.policy.readonly import parse_statement, read_only_select

ROW_LIMIT = 200
KEY_PREFIX = "_lp_keys_"
SQL_TYPES = {
    FieldType.integer: "BIGINT",
    FieldType.number: "DOUBLE",
    FieldType.boolean: "BOOLEAN",
    FieldType.date: "DATE",
    FieldType.timestamp: "TIMESTAMP",
}


class SqlRuntimeError(EngineError):
    """The engine rejected a statement that passed the checks (a wrong function, a type error)."""


def _placeholder(number: str, column: str) -> str:
    return f"__lp_var_{number}__{column}"


def _literal(value: Any) -> exp.Expression:
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def bind(
    sql: str, values: dict[str, dict[str, list[Any]]], matched: dict[str, tuple[str, str]] | None = None
) -> exp.Select:
    """Parse `sql`, replacing each `$var_n.column` by the bound values as literals (an IN list, or a
    single literal where a list cannot go). `values`: label -> column -> values. `matched`: the
    (table, column) the step's question matches a reference against (PlanNode.matched_columns); a
    statement comparing it with another column compares it with that one (a searched person's name
    is matched against people.name, not people's id column)."""
    refs: dict[str, list[Any]] = {}
    targets: dict[str, tuple[str, str]] = {}

    def to_placeholder(match) -> str:
        number, column = match.group(1), match.group(2)
        label = f"$var_{number}"
        if column is None and len(values.get(label, {})) == 1:  # a bare $var_n names its only column
            column = next(iter(values[label]))
        if column is None or column not in values.get(label, {}):
            raise SqlError(f"{match.group(0)} is not bound", hint=f"{label} returns {sorted(values.get(label, {}))}")
        name = _placeholder(number, column)
        refs[name] = values[label][column]
        if target := (matched or {}).get(f"{label}.{column}"):
            targets[name] = target
        return name

    # judged whole by `checked`, after the shape passes have read calls spelled in other dialects
    statement = parse_statement(REFERENCE.sub(to_placeholder, sql))
    if not isinstance(statement, exp.Select):
        read_only_select(statement)
    aliases = {t.name: t.alias_or_name for t in statement.find_all(exp.Table)}

    def matched_column(compared: exp.Expression, placeholder: str) -> exp.Expression:
        if placeholder not in targets or not isinstance(compared, exp.Column):
            return compared
        table, column = targets[placeholder]
        if compared.name == column:
            return compared
        return exp.column(column, table=aliases.get(table, table))

    def substitute(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.In):
            for item in node.expressions:
                if isinstance(item, exp.Column) and item.name in refs:
                    node.set("this", matched_column(node.this, item.name))
            expanded = []
            for item in node.expressions:
                if isinstance(item, exp.Column) and item.name in refs:
                    expanded += [_literal(v) for v in refs[item.name]] or [exp.null()]
                else:
                    expanded.append(item)
            return node.set("expressions", expanded) or node
        if isinstance(node, exp.EQ) and isinstance(node.right, exp.Column) and node.right.name in refs:
            return exp.In(
                this=matched_column(node.left, node.right.name),
                expressions=[_literal(v) for v in refs[node.right.name]] or [exp.null()],
            )
        if isinstance(node, exp.Column) and node.name in refs:
            bound = refs[node.name]
            if len(bound) != 1:
                raise SqlError(
                    f"{node.name} holds {len(bound)} values where one is expected",
                    hint="compare it with IN (...) instead",
                )
            return _literal(bound[0])
        return node

    return statement.transform(substitute)


def checked(
    statement: exp.Select, tables: dict[str, dict[str, FieldType]], allowed: Iterable[str], limit: int = ROW_LIMIT
) -> exp.Select:
    """One SELECT over allowed, known tables and columns, with a LIMIT of at most `limit`."""
    allowed = set(allowed)
    read_only_select(statement, allowed)
    schema = {
        t: {c: SQL_TYPES.get(k, "VARCHAR") for c, k in cols.items()} for t, cols in tables.items() if t in allowed
    }
    try:
        statement = qualify(named_aggregates(statement), schema=schema, dialect="duckdb", validate_qualify_columns=True)
    except OptimizeError as e:
        raise SqlError(f"unknown name in the statement: {e}", hint="use only the listed columns") from e
    distinct_output_names(statement)
    if not rows_within(statement.args.get("limit"), limit):
        statement = statement.limit(limit)
    return statement


def distinct_output_names(statement: exp.Select) -> None:
    """Output columns that share a name (a."2019" and b."2019" of a self-join) are renamed in place,
    each for its table alias where it has one (a_2019, b_2019), else by position (total_2): rows are
    read by column name, so a repeated name would hide or mix up values."""
    counts = Counter(statement.named_selects)
    taken = set(counts)
    for position, projection in enumerate(statement.expressions):
        name = projection.alias_or_name
        if counts[name] < 2:
            continue
        column = projection.unalias()
        table = column.table if isinstance(column, exp.Column) else ""
        candidate = f"{table}_{name}" if table else f"{name}_{position + 1}"
        while candidate in taken:
            candidate += "_"
        taken.add(candidate)
        projection.replace(exp.alias_(column.copy(), candidate, quoted=True))


def rows_within(current: exp.Limit | None, cap: int) -> bool:
    """A LIMIT of a whole number of rows no larger than `cap` (not a fraction, a percentage or an expression)."""
    if current is None or not isinstance(current.expression, exp.Literal) or not current.expression.is_int:
        return False
    options = current.args.get("limit_options")
    return not (options and options.args.get("percent")) and int(current.expression.this) <= cap


def named_aggregates(statement: exp.Select) -> exp.Select:
    """A copy whose unnamed aggregates are named for what they compute (count_person_id, sum_quantity)
    rather than _col_1, so the answer step reads what a figure is."""
    statement = statement.copy()
    taken = set(statement.named_selects)
    for projection in statement.expressions:
        name = aggregate_name(projection) if isinstance(projection, exp.AggFunc) else None
        if name is not None and name not in taken:
            taken.add(name)
            projection.replace(exp.alias_(projection.copy(), name))
    return statement


def aggregate_name(aggregate: exp.AggFunc) -> str | None:
    """count_rows, sum_quantity, count_distinct_code; None for an aggregate over an expression
    (sum(quantity * unit_price) is no 'sum_quantity')."""
    argument = aggregate.this
    if argument is None or isinstance(argument, exp.Star):
        return f"{aggregate.key}_rows"
    if isinstance(argument, exp.Column):
        return f"{aggregate.key}_{argument.name}"
    if isinstance(argument, exp.Distinct) and [type(e) for e in argument.expressions] == [exp.Column]:
        return f"{aggregate.key}_distinct_{argument.expressions[0].name}"
    return None


def plain_aggregates(expression: exp.Expression) -> list[exp.AggFunc]:
    """Aggregates that are not window functions (SUM(x) OVER () needs no GROUP BY)."""
    return [a for a in expression.find_all(exp.AggFunc) if a.find_ancestor(exp.Window) is None]


def is_aggregate(statement: exp.Select) -> bool:
    return bool(statement.args.get("group")) or any(e.find(exp.AggFunc) is not None for e in statement.expressions)


def with_row_keys(statement: exp.Select, keys: dict[str, list[str]]) -> exp.Select:
    """Add, per table read, a `_lp_keys_<alias>` column listing the keys of the rows each output row
    came from (array_agg for aggregates), so the answer can cite rows. Skipped for DISTINCT."""
    if statement.args.get("distinct"):
        return statement
    aggregate = is_aggregate(statement)
    extra = []
    for table in statement.find_all(exp.Table):
        columns = keys.get(table.name)
        if not columns or table.find_ancestor(exp.Subquery):
            continue
        alias = table.alias_or_name
        parts = [exp.column(c, table=alias) for c in columns]
        key = parts[0] if len(parts) == 1 else exp.func("concat_ws", exp.Literal.string("|"), *parts)
        key = exp.cast(key, "VARCHAR")
        value = exp.ArrayAgg(this=exp.Distinct(expressions=[key])) if aggregate else key
        extra.append(exp.alias_(value, f"{KEY_PREFIX}{alias}"))
    return statement.select(*extra, copy=True) if extra else statement


def run_record(statement: exp.Select, engine: str, scan) -> SqlRun:
    return SqlRun(
        sql=statement.sql(dialect="duckdb"),
        engine=engine,
        snapshots=scan.snapshots,
        rows=scan.table.num_rows,
        bytes_scanned=scan.bytes_scanned,
        digest=result_digest(scan.table),
    )


def result_digest(table) -> str:
    rows = sorted(json.dumps(r, sort_keys=True, default=str) for r in table.to_pylist())
    return hashlib.sha1("\n".join(rows).encode()).hexdigest()


def conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    """The terms of an AND chain, left to right (a lone condition is its own term)."""
    inner = condition.unnest() if isinstance(condition, exp.Paren) else condition
    if isinstance(inner, exp.And):
        return [*conjuncts(inner.left), *conjuncts(inner.right)]
    return [inner]


def drop_conjunct(condition: exp.Expression) -> None:
    """Remove one term of an AND chain (the chain keeps its other terms)."""
    if isinstance(condition.parent, exp.Paren):
        condition = condition.parent
    conjunction = condition.parent
    if isinstance(conjunction, exp.And):
        conjunction.replace(conjunction.right if conjunction.left is condition else conjunction.left)


def table_of(column: exp.Column, columns_of: dict[str, dict[str, FieldType]]) -> str | None:
    """The table a column of a checked statement reads, through its scope's aliases; None when unknown."""
    scope = column.find_ancestor(exp.Select)
    if scope is None:
        return None
    aliases = {t.alias_or_name: t.name for t in scope.find_all(exp.Table) if t.find_ancestor(exp.Select) is scope}
    table = aliases.get(column.table or owner(column.name, aliases, columns_of) or "")
    return table if table in columns_of else None


def compared_literals(
    statement: exp.Select, columns_of: dict[str, dict[str, FieldType]], keep: set[str]
) -> list[tuple[exp.Column, exp.Literal, str | None]]:
    """(column, string literal, the column's table) of each `column = 'x'` of the statement's own
    tables, but literals bound from earlier results (`keep`)."""
    aliases = {t.alias_or_name: t.name for t in statement.find_all(exp.Table) if not t.find_ancestor(exp.Subquery)}
    found = []
    for condition in list(statement.find_all(exp.EQ)):
        column, literal = compared_literal(condition)
        if column is not None and literal.this not in keep:
            found.append((column, literal, aliases.get(column.table or owner(column.name, aliases, columns_of) or "")))
    return found


def compared_literal(condition: exp.EQ) -> tuple[exp.Column | None, exp.Literal | None]:
    """(column, string literal) of `column = 'x'` either way round; (None, None) for anything else."""
    for column, literal in ((condition.this, condition.expression), (condition.expression, condition.this)):
        if isinstance(column, exp.Column) and isinstance(literal, exp.Literal) and literal.is_string:
            return column, literal
    return None, None


def owner(column: str, sources: dict[str, str], tables: dict[str, dict[str, FieldType]]) -> str | None:
    """The alias of the one table read (alias -> table) that holds the column, else None."""
    owners = [alias for alias, name in sources.items() if column in tables.get(name, {})]
    return owners[0] if len(owners) == 1 else None
