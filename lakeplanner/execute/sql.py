"""SQL nodes: the LLM writes one SELECT for the node's tables; bound variables enter as sqlglot literals;
sqlglot checks the statement (one SELECT, known tables and columns, a LIMIT) and adds the row keys
that the answer will cite. Engines (DuckDB over pyiceberg scans, Trino) run the checked statement.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field
from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify

from lakeplanner.contract.models import Contract, FieldType, ForeignKey
from lakeplanner.contract.profile import is_provenance
from lakeplanner.errors import EngineError, LakeplannerError, SqlError
from lakeplanner.execute.arithmetic import compares, is_year_column
from lakeplanner.execute.results import SqlRun
from lakeplanner.injection import addresses_the_model
from lakeplanner.llm.base import Message, system, user
from lakeplanner.plan.model import REFERENCE, PlanNode
from lakeplanner.policy.readonly import parse_select, read_only_select
from lakeplanner.policy.scope import MASKED
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.read import years_in
from lakeplanner.question.words import content_words, stem, tokens

ROW_LIMIT = 200
KEYS_PER_ROW = 20
KEY_PREFIX = "_lp_keys_"
SQL_TYPES = {
    FieldType.integer: "BIGINT",
    FieldType.number: "DOUBLE",
    FieldType.boolean: "BOOLEAN",
    FieldType.date: "DATE",
    FieldType.timestamp: "TIMESTAMP",
}

SQL_INSTRUCTIONS = """You write one DuckDB SELECT statement that answers a sub-question from the tables \
below. Use only these tables and columns. Join only along the listed joins. When the sub-question \
mentions $var_N.column, those are values computed earlier: write them literally, as in \
`WHERE customer_id IN ($var_1.customer_id)`; never invent their values. Return the columns that \
answer the sub-question (and the listed `returns` columns). Text comparisons are case-sensitive: use \
ILIKE for names. For a change or difference between years or items, or the values of several years, \
select the rows of each with the year or item and the value ("""
# what follows depends on the tables, so the part above is the SQL writer's fixed prefix
SQL_PERIOD_INSTRUCTIONS = """{period_example}); the arithmetic is done later. Reply with JSON {{"sql": "..."}}."""


MAX_CATEGORY_VALUES, SHOWN_CATEGORY_VALUES, MAX_CATEGORY_TABLE_ROWS = 60, 30, 100_000
MAX_COMPARED = 5
NUMERIC = (FieldType.integer, FieldType.number)


class SqlRuntimeError(EngineError):
    """The engine rejected a statement that passed the checks (a wrong function, a type error)."""


class SqlDraft(BaseModel):
    sql: str = Field(max_length=1200)


def schema_block(contract: Contract, tables: Sequence[str]) -> str:
    lines = []
    for name in tables:
        fields = [f for f in contract.fields_of(name) if f.column]
        columns = ", ".join(
            f"{f.column} {f.type}" + (f" (e.g. {f.examples[0][:25]})" if f.examples else "") for f in fields
        )
        lines.append(f"{name}({columns})")
    joins = [join_line(fk) for fk in contract.foreign_keys if fk.source in tables and fk.target in tables]
    if joins:
        lines.append("Joins: " + "; ".join(joins))
    return "\n".join(lines)


def join_line(fk: ForeignKey) -> str:
    """A join as the SQL prompt lists it; a table's reference to itself with the two aliases it needs
    (a small model otherwise reaches the other row through unrelated tables)."""
    line = f"{fk.source}.{fk.column} = {fk.target}.{fk.target_column}"
    if fk.source != fk.target:
        return line
    table, other = fk.source, fk.column
    aliased = f"FROM {table} AS t JOIN {table} AS {other} ON t.{fk.column} = {other}.{fk.target_column}"
    return f"{line} (another {table} row: {aliased})"


def period_example(contract: Contract, tables: Sequence[str]) -> str:
    """How to select per-year values, written with the tables' own period column: a date or timestamp
    column (its year), else an integer column of years; the years are two its examples hold."""
    for table in tables:
        for f in contract.fields_of(table):
            years = sorted({y for e in f.examples for y in years_in(e)})
            years = years[-2:] if len(years) >= 2 else [years[0] - 1, years[0]] if years else [2023, 2024]
            held = ", ".join(map(str, years))
            if f.column and f.type in (FieldType.date, FieldType.timestamp):
                return f"`SELECT YEAR({f.column}) AS year, ... WHERE YEAR({f.column}) IN ({held}) GROUP BY year`"
            if f.column and f.type is FieldType.integer and f.examples and all(years_in(e) for e in f.examples):
                return f"`WHERE {f.column} IN ({held})`"
    return "`SELECT item, value ... WHERE item IN ('A', 'B')`"


def examples_chars(contract: Contract, tables: Sequence[str]) -> int:
    """Characters of lake data (example values) the SQL prompt shows."""
    return sum(len(f.examples[0][:25]) for t in tables for f in contract.fields_of(t) if f.column and f.examples)


def words(text: str) -> set[str]:
    return set(tokens(text))


def category_values(lake, contract: Contract, tables: Sequence[str], question: str) -> dict[str, list[str]]:
    """`table.column` -> the values of its category columns (few distinct strings, small tables),
    those sharing words with the sub-question first: the LLM must spell a filter value exactly."""
    wanted = words(question)
    shown: dict[str, list[str]] = {}
    for name in tables:
        source = contract.source(name)
        if source is None or source.table is None or source.records > MAX_CATEGORY_TABLE_ROWS:
            continue
        columns = [
            f.column
            for f in contract.fields_of(name)
            if f.column
            and f.type == "string"
            and 1 < f.cardinality <= MAX_CATEGORY_VALUES
            and not is_provenance(f.column)
            and not {"id_like", "free_text", MASKED} & set(f.tags)
        ]
        if not columns:
            continue
        arrow = lake.table(source.table).scan(selected_fields=tuple(columns)).to_arrow()
        for column in columns:
            distinct = {str(v) for v in arrow.column(column).drop_null().to_pylist()}
            values = sorted(v for v in distinct if not addresses_the_model(v))
            values.sort(key=lambda v: -len(wanted & words(v)))
            shown[f"{name}.{column}"] = values
    return shown


def named_values(categories: dict[str, list[str]], question: str) -> dict[str, list[str]]:
    """The category values the SQL prompt lists: those sharing a content word with the sub-question.
    The others are lake data the LLM need not see: fix_category_literals still knows them, and a
    statement that matches nothing is told the values of the columns it filtered on."""
    asked = content_stems(question)
    shown = {column: [v for v in values if asked & content_stems(v)] for column, values in categories.items()}
    return {column: values[:SHOWN_CATEGORY_VALUES] for column, values in shown.items() if values}


def lost_values(categories: dict[str, list[str]], sub_question: str, asked: str) -> dict[str, list[str]]:
    """The category values the user's question names in full while the step's sub-question names no
    value of that column: the planner wrote "the value for 2018 and 2019" for "the total cost of
    revenue in 2018 and 2019", and the SQL would have nothing to filter on. Only the most specific
    are kept, over all columns ("Total cost of revenue", not also the section "Cost of revenue").
    With no sub-question: the rows the question names."""
    in_question, in_step = content_stems(asked), content_stems(sub_question)
    named: list[tuple[str, str, set[str]]] = []
    for column, values in categories.items():
        stems = {v: s for v in values if (s := content_stems(v)) and any(w.isalpha() for w in s)}
        if not any(s <= in_step for s in stems.values()):
            named += [(column, v, s) for v, s in stems.items() if s <= in_question]
    lost: dict[str, list[str]] = {}
    for column, value, stems in named:
        if not any(stems < other for _, _, other in named):
            lost.setdefault(column, []).append(value)
    return {column: values[:MAX_COMPARED] for column, values in lost.items()}


def named_row(categories: dict[str, list[str]], question: str) -> dict[str, str]:
    """table.column -> value: the one row the question names; empty when it names none, or several
    values of one column ("trade receivables up to three months": the total or the part?)."""
    named = lost_values(categories, "", question)
    if any(len(values) > 1 for values in named.values()):
        return {}
    return {column: values[0] for column, values in named.items()}


def filtered_values(statement: exp.Select, categories: dict[str, list[str]]) -> dict[str, list[str]]:
    """The values held by the category columns the statement compares with a string."""
    filtered = {
        column.name
        for condition in statement.find_all(exp.EQ, exp.In, exp.Like, exp.ILike)
        if any(literal.is_string for literal in condition.find_all(exp.Literal))
        for column in condition.find_all(exp.Column)
    }
    return {
        key: values[:SHOWN_CATEGORY_VALUES] for key, values in categories.items() if key.split(".", 1)[1] in filtered
    }


def values_block(values: dict[str, list[str]]) -> str:
    return "\n".join(f"{column}: " + " | ".join(held) for column, held in values.items())


def values_chars(values: dict[str, list[str]]) -> int:
    return sum(len(" | ".join(held)) for held in values.values())


def held_filters(statement: exp.Select, categories: dict[str, list[str]]) -> list[str]:
    """`column = 'x'` conditions of the statement, when every string it compares a category column
    with is a value the column holds; empty when any is not, or there are none."""
    held = {key.split(".", 1)[1]: set(values) for key, values in categories.items()}
    found = []
    for column, literals in string_comparisons(statement):
        strings = [literal.this for literal in literals]
        if not strings:
            continue
        if column.name not in held or not set(strings) <= held[column.name]:
            return []
        found += [f"{column.name} = '{value}'" for value in strings]
    return found


def looks_up_held_values(statement: exp.Select, categories: dict[str, list[str]]) -> bool:
    """Whether the statement reads one table filtered only by equalities (`=`, `IN`) of columns with
    literals, the strings among them values their columns hold. Matching nothing is then its answer (no
    row pairs those values), and the writer is not asked again: over TAT-QA's 300 questions, 21 such
    rewrites returned the same statement or another that matched nothing but 4 times, a right answer once."""
    where = statement.args.get("where")
    if where is None or statement.args.get("joins") or len(list(statement.find_all(exp.Select))) > 1:
        return False
    return bool(held_filters(statement, categories)) and all(map(equals_literals, conjuncts(where.this)))


def equals_literals(condition: exp.Expression) -> bool:
    """`column = literal` (either way round) or `column IN (literal, ...)`."""
    if isinstance(condition, exp.EQ):
        sides = (condition.this, condition.expression)
        return any(isinstance(s, exp.Column) for s in sides) and any(isinstance(s, exp.Literal) for s in sides)
    if isinstance(condition, exp.In):
        listed = condition.expressions
        literals = bool(listed) and all(isinstance(x, exp.Literal) for x in listed)
        return isinstance(condition.this, exp.Column) and literals
    return False


def unheld_filters(
    statement: exp.Select, categories: dict[str, list[str]], keep: set[str] = frozenset(), asked: str = ""
) -> list[str]:
    """`column = 'x'`, `IN`, `LIKE` and `ILIKE` conditions on a category column whose string matches no
    value the column holds, case aside (`name ILIKE 'Probation Haulage Ltd'`). Bound values (`keep`)
    and values the question names (`asked`: "how many invoices are cancelled?") are left out: they may
    rightly match nothing."""
    held = {key.split(".", 1)[1]: values for key, values in categories.items()}
    said = asked.casefold()
    found = []
    for column, literals in string_comparisons(statement, (exp.EQ, exp.In, exp.Like, exp.ILike)):
        if column.name not in held:
            continue
        for literal in literals:
            if literal.this in keep or literal.this.strip("%").casefold() in said:
                continue
            pattern = like_pattern(literal.this) if isinstance(column.parent, exp.Like | exp.ILike) else None
            values = held[column.name]
            if not any(pattern.fullmatch(v) if pattern else v.casefold() == literal.this.casefold() for v in values):
                found.append(f"{column.name} '{literal.this}'")
    return found


def like_pattern(text: str) -> re.Pattern:
    """A LIKE pattern as a case-blind regular expression (% any run, _ one character)."""
    return re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in text), re.I | re.S)


def string_comparisons(
    statement: exp.Select, kinds: tuple[type[exp.Expression], ...] = (exp.EQ, exp.In)
) -> list[tuple[exp.Column, list[exp.Literal]]]:
    """(column, the string literals it is compared with) of each `column = 'x'` (either way round) and
    `column IN ('x', ...)` of the statement (and of `column LIKE 'x'` when `kinds` holds it)."""
    found = []
    for condition in statement.find_all(*kinds):
        column = condition.this if isinstance(condition.this, exp.Column) else condition.expression
        if not isinstance(column, exp.Column):
            continue
        literals = condition.expressions if isinstance(condition, exp.In) else [condition.expression, condition.this]
        found.append((column, [x for x in literals if isinstance(x, exp.Literal) and x.is_string]))
    return found


def match_dates_as_text(statement: exp.Select, columns_of: dict[str, dict[str, FieldType]]) -> list[str]:
    """`dispatched_at LIKE '2024%'` on a date or timestamp column matches the column's text form: the
    engine has no LIKE for dates, and what the statement means (dates written 2024-...) is plain. For a
    checked statement, whose columns name their tables. Edits in place."""
    aliases = {t.alias_or_name: t.name for t in statement.find_all(exp.Table)}
    edits = []
    for match in list(statement.find_all(exp.Like, exp.ILike)):
        column = match.this
        if not isinstance(column, exp.Column):
            continue
        kind = columns_of.get(aliases.get(column.table, ""), {}).get(column.name)
        if kind in (FieldType.date, FieldType.timestamp):
            column.replace(exp.cast(column.copy(), exp.DataType.Type.VARCHAR))
            edits.append(f"{column.name} matched as text (LIKE on a {kind.value})")
    return edits


def nothing_matched(held: dict[str, list[str]], exist: Sequence[str] = ()) -> str:
    """Feedback for a statement that ran but matched nothing: when the rows its filters name exist,
    that a join or another condition drops them (listing every value would only invite a statement
    that enumerates them); else the values its filters could use."""
    said = "the statement ran but matched nothing (no rows, or only NULL values): "
    if exist:
        return said + (
            f"the rows it filters for exist ({'; '.join(exist)}), so a join or another condition drops them: "
            "join only the tables the sub-question needs"
        )
    if not held:
        return said + "filter on values as the columns hold them (see Values, when listed), or use ILIKE '%word%'"
    told = values_block(held)
    return said + f"the columns it filters on hold\n{told}\nfilter on these exactly, or use ILIKE '%word%'"


def content_stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


def closest_value(literal: str, values: Sequence[str]) -> str | None:
    """The held value a filter literal most likely means ('Write-offs' -> 'Write-offs, net of
    recoveries'), or None when it is held as written or nothing is close."""
    if literal in values:
        return None
    lower = literal.casefold().strip()
    named = words(lower)
    for match in (
        [v for v in values if v.casefold().strip() == lower],
        [v for v in values if v.casefold().startswith(lower)],
        [v for v in values if named and named <= words(v)],
        difflib.get_close_matches(literal, values, n=1, cutoff=0.6),
    ):
        if match:
            return min(match, key=len)
    return None


def fix_category_literals(
    statement: exp.Select, categories: dict[str, list[str]], keep: set[str] = frozenset()
) -> list[str]:
    """Point `column = 'x'` / `column IN ('x', ...)` at values the column holds; edits in place.
    `keep`: literals bound from earlier results, which may rightly match nothing."""
    held = {key.split(".", 1)[1]: values for key, values in categories.items()}
    edits = []
    for column, literals in string_comparisons(statement):
        if column.name not in held:
            continue
        for literal in literals:
            if literal.this not in keep and (value := closest_value(literal.this, held[column.name])) is not None:
                edits.append(f"{column.name} = '{literal.this}' -> '{value}' (a value the column holds)")
                literal.replace(exp.Literal.string(value))
    return edits


def drop_unheld_category_filters(
    statement: exp.Select, categories: dict[str, list[str]], keep: set[str] = frozenset()
) -> list[str]:
    """`AND column = 'x'` where the category column holds no such value, nor one close, in a statement
    whose rows earlier results already choose: the condition restates the question's words, not the
    data ("status = 'disputed'" where documents tell of the dispute), and would empty the step by
    construction; it is dropped. Edits in place."""
    held = {key.split(".", 1)[1]: values for key, values in categories.items()}
    edits = []
    for condition in list(statement.find_all(exp.EQ)):
        column, literal = condition.this, condition.expression
        if not isinstance(column, exp.Column) or column.name not in held or not isinstance(condition.parent, exp.And):
            continue
        if not isinstance(literal, exp.Literal) or not literal.is_string or literal.this in keep:
            continue
        if literal.this in held[column.name] or closest_value(literal.this, held[column.name]) is not None:
            continue
        conjunction = condition.parent
        conjunction.replace(conjunction.right if conjunction.left is condition else conjunction.left)
        edits.append(f"{column.name} = '{literal.this}' dropped (no row holds it; earlier results choose the rows)")
    return edits


def fix_key_literals(
    statement: exp.Select,
    categories: dict[str, list[str]],
    contract: Contract,
    columns_of: dict[str, dict[str, FieldType]],
    keep: set[str] = frozenset(),
) -> list[str]:
    """`shipments.carrier = 'rail'`: a foreign key compared with a word that no key is and that one
    category column of the key's target table holds (carriers.mode); the filter becomes
    `shipments.carrier IN (SELECT carrier_code FROM carriers WHERE mode = 'rail')`. Edits in place."""
    edits = []
    for column, literal, table in compared_literals(statement, columns_of, keep):
        key = next((k for k in contract.foreign_keys if k.source == table and k.column == column.name), None)
        if key is None:
            continue
        wanted = literal.this.casefold().strip()
        held = [
            (name.split(".", 1)[1], value)
            for name, values in categories.items()
            if name.split(".", 1)[0] == key.target
            for value in values
            if value.casefold().strip() == wanted
        ]
        if len(held) != 1:
            continue
        target_column, value = held[0]
        chosen = exp.select(key.target_column).from_(key.target).where(exp.column(target_column).eq(value))
        column.parent.replace(column.copy().isin(query=chosen))  # the `column = literal` condition
        edits.append(f"{column.name} = '{literal.this}' -> the {key.target} whose {target_column} is '{value}'")
    return edits


def drop_unasked_key_filters(
    statement: exp.Select,
    engine,
    contract: Contract,
    columns_of: dict[str, dict[str, FieldType]],
    asked: str,
    keep: set[str] = frozenset(),
) -> list[str]:
    """`shipments.carrier = 'RHNL'` where the user's question names neither the key nor anything of the
    row it points at (its name, country, mode): the value was copied from the prompt's example rows,
    not asked for, and the filter would answer another question. Such a condition on a key column (a
    foreign key's, or an id-like one, compared with a key or with a row's label) is dropped from its
    conjunction or WHERE; a key the question names by its row ("Northway Haulage" for 'NRTH') stays.
    Words of the lake's table and column names are not names of rows ("freight cost" does not name
    'Baltix Freight SIA'). Edits in place."""
    schema_words = {stem(w) for t, columns in columns_of.items() for name in (t, *columns) for w in tokens(name)}
    wanted, said = content_stems(asked) - schema_words, asked.casefold()
    edits = []
    for condition in list(statement.find_all(exp.EQ)):
        column, literal = compared_literal(condition)
        if column is None or literal.this in keep or literal.this.casefold() in said:
            continue
        if not isinstance(condition.parent, exp.And | exp.Where):
            continue
        table = table_of(column, columns_of)
        if table is None:
            continue
        pointed = key_row(contract, table, column.name)
        cells = row_cells(engine, *pointed, literal.this) if pointed else []
        if pointed and not cells and (source := contract.source(pointed[0])) is not None and source.label:
            cells = row_cells(engine, pointed[0], source.label, literal.this)
        if not cells or any(wanted & content_stems(cell) for cell in cells):
            continue
        if isinstance(condition.parent, exp.Where):
            condition.parent.pop()  # the WHERE of the statement, or of its subquery
        else:
            conjunction = condition.parent
            conjunction.replace(conjunction.right if conjunction.left is condition else conjunction.left)
        edits.append(f"{column.name} = '{literal.this}' dropped (the question names neither it nor its row)")
    return edits


def key_row(contract: Contract, table: str, column: str) -> tuple[str, str] | None:
    """(table, column) whose row a value of `column` names: a foreign key's target; the column itself
    when it is id-like, or the label of a table whose rows an id-like key identifies (a carrier's name,
    not a report's line item); None for any other column."""
    for fk in contract.foreign_keys:
        if fk.source == table and fk.column == column:
            return fk.target, fk.target_column
    tags = {f.column: f.tags for f in contract.fields_of(table)}
    key, source = contract.identifier_of(table), contract.source(table)
    entity = key is not None and len(key.columns) == 1 and "id_like" in tags.get(key.columns[0], [])
    named = "id_like" in tags.get(column, []) or (entity and source is not None and source.label == column)
    return (table, column) if named else None


def row_cells(engine, table: str, column: str, value: str) -> list[str]:
    """The text cells of the row of `table` whose `column` is `value` (case aside); empty when none is,
    or when the asking role may not read it (through `engine`, so its policy applies)."""
    found = exp.select("*").from_(table).where(exp.func("lower", exp.column(column)).eq(value.casefold())).limit(1)
    try:
        rows = engine.run(found).table.to_pylist()
    except LakeplannerError:
        return []
    return [v for k, v in rows[0].items() if isinstance(v, str) and not is_provenance(k)] if rows else []


def holding_columns(engine, table: str, literal: str, columns: dict[str, FieldType]) -> dict[str, str]:
    """The string columns of `table` that hold `literal`, case aside, each with the value as held (one
    scan, through `engine`, so a policy's row filters and masks apply to the probe as to the statement)."""
    names = [c for c, kind in columns.items() if kind == FieldType.string and not is_provenance(c)]
    if not names:
        return {}
    wanted = exp.func("lower", exp.Literal.string(literal))
    held = exp.select(
        *(
            exp.alias_(
                exp.func("min", exp.case().when(exp.func("lower", exp.column(c)).eq(wanted.copy()), exp.column(c))),
                f"c{n}",
            )
            for n, c in enumerate(names)
        )
    ).from_(table)
    row = engine.run(held).table.to_pylist()[0]
    return {c: row[f"c{n}"] for n, c in enumerate(names) if row.get(f"c{n}") is not None}


def fix_misplaced_literals(
    statement: exp.Select, engine, columns_of: dict[str, dict[str, FieldType]], keep: set[str] = frozenset()
) -> list[str]:
    """`customers.customer_id = 'Hudson Peak Software Inc.'` matched nothing: the question named a row
    by a value of another column (its name, not its id), or by a value spelled in another case. When
    the compared column holds the literal in another case, the literal is spelled as held; else, when
    exactly one other string column of the same table holds it, the filter compares that column.
    Edits in place; for a statement that ran and matched nothing."""
    edits = []
    for column, literal, table in compared_literals(statement, columns_of, keep):
        if table not in columns_of:
            continue
        holders = holding_columns(engine, table, literal.this, columns_of[table])
        if column.name in holders:
            if holders[column.name] != literal.this:
                edits.append(f"{column.name} = '{literal.this}' -> '{holders[column.name]}' (as the column holds it)")
                literal.replace(exp.Literal.string(holders[column.name]))
            continue
        if len(holders) != 1:
            continue
        [(holder, value)] = holders.items()
        column.replace(exp.column(holder, table=column.table or None))
        literal.replace(exp.Literal.string(value))
        edits.append(f"{column.name} = '{literal.this}' -> {holder} = '{value}' (the column that holds it)")
    return edits


def select_asked_reference(statement: exp.Select, asked: str, returns: Sequence[str], contract: Contract) -> list[str]:
    """ "supervisor of the staff member named X", returning staff_id: the step asks the id the row's
    `supervisor` column holds (a key of staff), yet the statement selected the row's own `staff_id`.
    A returned column that a foreign-key column of the same row points at, where the step names that
    column and does not filter on it, is read from it (`t1.supervisor AS staff_id`). Edits in place."""
    wanted = content_stems(asked)
    aliases = {t.alias_or_name: t.name for t in statement.find_all(exp.Table) if not t.find_ancestor(exp.Subquery)}
    where = statement.args.get("where")
    filtered = {c.name for c in where.find_all(exp.Column)} if where else set()
    edits = []
    for projection in statement.expressions:
        column = projection.this if isinstance(projection, exp.Alias) else projection
        name = projection.alias_or_name
        if name not in returns or not isinstance(column, exp.Column):
            continue
        table = aliases.get(column.table)
        pointing = [
            fk.column
            for fk in contract.foreign_keys
            if fk.source == table and fk.target_column == column.name and fk.column != column.name
            and content_stems(fk.column.replace("_", " ")) <= wanted and fk.column not in filtered
        ]  # fmt: skip
        if len(pointing) != 1:
            continue
        projection.replace(exp.alias_(exp.column(pointing[0], table=column.table or None), name))
        edits.append(f"{name} read from {pointing[0]} (the step asks the {pointing[0]}, not the row's own {name})")
    return edits


def compare_bound_values_where_held(
    statement: exp.Select, engine, columns_of: dict[str, dict[str, FieldType]], keep: set[str]
) -> list[str]:
    """`carriers.name ILIKE 'IBRF'` where 'IBRF', bound from an earlier step (a search read it in a
    memo), is no carrier's name but one's code: a bound value is compared with the column of its
    table that holds it, when exactly one does and the compared one does not. Probed through `engine`,
    so the asking role's policy applies. Edits in place."""
    edits = []
    for column, literals in string_comparisons(statement, (exp.EQ, exp.In, exp.Like, exp.ILike)):
        strings = [literal.this for literal in literals]
        if not strings or not set(strings) <= keep:
            continue
        table = table_of(column, columns_of)
        if table is None:
            continue
        try:
            holders = holding_columns(engine, table, strings[0], columns_of[table])
        except LakeplannerError:
            continue
        if column.name in holders or len(holders) != 1:
            continue
        [holder] = holders
        edits.append(f"{column.name} compared with '{strings[0]}' -> {holder} (the column that holds it)")
        column.replace(exp.column(holder, table=column.table or None))
    return edits


def drop_filters_beside_bound_choice(
    statement: exp.Select, columns_of: dict[str, dict[str, FieldType]], keep: set[str], asked: str
) -> list[str]:
    """`name = <bound> AND rating < 4.0 AND agreement LIKE 'CA-%'`: an earlier step already chose the
    row by the bound value, and the question names neither the other columns nor their values; they
    are guesses about the row ("on probation" read as a low rating) that can only lose it. Each such
    condition on the same table is dropped from the conjunction. Edits in place."""
    wanted, said = content_stems(asked), asked.casefold()
    edits = []
    for column, literals in string_comparisons(statement, (exp.EQ, exp.In, exp.Like, exp.ILike)):
        strings = [literal.this for literal in literals]
        if not strings or not set(strings) <= keep:
            continue
        scope, table = column.find_ancestor(exp.Select), table_of(column, columns_of)
        where = scope.args.get("where") if scope else None
        if where is None or table is None:
            continue
        for condition in conjuncts(where.this):
            other = condition.find(exp.Column)
            if condition is column.parent or other is None or table_of(other, columns_of) != table:
                continue
            values = [str(v.this) for v in condition.find_all(exp.Literal)]
            if any(v in keep or v.strip("%").casefold() in said for v in values):
                continue
            if not values or wanted & content_stems(other.name.replace("_", " ")):
                continue
            edits.append(
                f"{condition.sql('duckdb')} dropped (a bound value chose the row; the question asks no such filter)"
            )
            drop_conjunct(condition)
    return edits


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


def group_compared_values(
    statement: exp.Select, frame: QuestionFrame | None = None, keep: set[str] = frozenset()
) -> list[str]:
    """An aggregate over `col IN (a, b)` with no GROUP BY merges what the question compares (the
    change between 2018 and 2019 summed over both years): group by that column instead, so each
    value stays visible and the arithmetic is done on them later. Values that are not years are
    grouped only when the question compares them: "invoices with status open or overdue" asks for
    one total over both. Bound lists (`keep`) are left."""
    if statement.args.get("group") or not any(statement.find_all(exp.AggFunc)):
        return []
    where = statement.args.get("where")
    compared = [
        condition
        for condition in (where.find_all(exp.In) if where else [])
        if isinstance(condition.this, exp.Column)
        and 2 <= len(condition.expressions) <= MAX_COMPARED
        and all(isinstance(e, exp.Literal) and e.this not in keep for e in condition.expressions)
        and (names_years(condition) or (frame is not None and compares(frame)))
    ]
    if not compared:
        return []
    column = compared[0].this
    statement.select(column.copy(), copy=False).group_by(column.copy(), copy=False)
    return [f"grouped by {column.name}: the aggregate would merge the values the question compares"]


def drop_self_cancelling(statement: exp.Select) -> list[str]:
    """A selected `x - x` or `x / x` (the writer subtracting one compared row's value from another's
    within a single row) is 0 or 1 on every row, never the answer: it is dropped, or replaced by `x`
    when it is all the statement selects; the values stay for the answer step to compute from."""
    edits = []
    for projection in list(statement.expressions):
        value = projection.unalias()
        while isinstance(value, exp.Paren):
            value = value.this
        if not isinstance(value, exp.Sub | exp.Div) or value.left.find(exp.Column) is None:
            continue
        if value.left.unnest().sql() != value.right.unnest().sql():
            continue
        operand = value.left.unnest()
        said = f"{projection.alias_or_name} ({value.sql(dialect='duckdb')}) is a value compared with itself"
        if len(statement.expressions) > 1:
            projection.pop()
            edits.append(f"{said}: dropped")
        else:
            named = aggregate_name(operand) if isinstance(operand, exp.AggFunc) else operand.alias_or_name
            projection.replace(exp.alias_(operand.copy(), named or "value", quoted=True))
            edits.append(f"{said}: the value is selected instead")
    return edits


def label_compared_rows(
    statement: exp.Select, frame: QuestionFrame | None = None, keep: set[str] = frozenset()
) -> list[str]:
    """Rows read for values the question compares (`line_item IN ('Current assets', 'Fixed assets')`)
    are told apart by that column: it is selected when the statement leaves it out, and one column
    selected again under each compared value's name is selected once (every alias holds the same cell).
    Not for aggregates (`group_compared_values`) or bound lists (`keep`)."""
    if is_aggregate(statement) or len(list(statement.find_all(exp.Select))) != 1:
        return []
    where = statement.args.get("where")
    compared = [
        condition.this
        for condition in (where.find_all(exp.In) if where else [])
        if isinstance(condition.this, exp.Column)
        and 2 <= len(condition.expressions) <= MAX_COMPARED
        and all(isinstance(e, exp.Literal) and e.this not in keep for e in condition.expressions)
        and (names_years(condition) or (frame is not None and compares(frame)))
    ]
    if not compared:
        return []
    edits = []
    columns = [p for p in statement.expressions if isinstance(p.unalias(), exp.Column)]
    for kept in columns:
        again = [p for p in columns if p is not kept and p.parent and p.unalias().sql() == kept.unalias().sql()]
        if not again or kept.parent is None:
            continue
        for projection in again:
            projection.pop()
        names = ", ".join(p.alias_or_name for p in (kept, *again))
        kept.replace(kept.unalias().copy())
        edits.append(f"{names} selected once as {kept.unalias().name}: each held the same cell")
    seen = {p.unalias().sql() for p in statement.expressions}
    column = compared[0]
    if column.sql() not in seen:
        statement.select(column.copy(), copy=False)
        edits.append(f"{column.name} selected: it tells the compared rows apart")
    return edits


def names_years(condition: exp.In) -> bool:
    return is_year_column(condition.this.name) or all(len(years_in(str(e.this))) == 1 for e in condition.expressions)


def computes_arithmetic(statement: exp.Select) -> bool:
    """A selected value is arithmetic the statement did itself (a change, a ratio), not a value it read."""
    return any(e.find(exp.Add, exp.Sub, exp.Mul, exp.Div) is not None for e in statement.expressions)


def item_filters(statement: exp.Select) -> dict[str, set[str]]:
    """column -> the strings the statement compares it with (`line_item = 'Total'`), wherever they sit;
    a label that names a year ('June 1, 2019') selects a year, not the item, and is left out."""
    filters: dict[str, set[str]] = {}
    for condition in statement.find_all(exp.EQ):
        sides = [condition.this, condition.expression]
        column = next((c for c in sides if isinstance(c, exp.Column)), None)
        literal = next((c for c in sides if isinstance(c, exp.Literal) and c.is_string), None)
        if column is not None and literal is not None and not years_in(literal.this):
            filters.setdefault(column.name, set()).add(literal.this)
    return filters


def year_values_statement(
    statement: exp.Select,
    tables: dict[str, dict[str, FieldType]],
    years: Sequence[int],
    named: dict[str, str] | None = None,
) -> exp.Select | None:
    """For a question over named years ("the change in X from 2018 to 2019", "X in 2019 and 2018
    respectively"): one value per year of what the statement filters on. The statement's item_filters on
    its one table are kept; it selects the year column and the one numeric column the statement reads,
    for the named years (no `years`: every year). `named` (table.column -> value: the row the question
    names) stands in for a statement that filters on no item, and the table's one numeric column for one
    that reads none. None when it reads several tables or numeric columns, or nothing names the item."""
    read = {t.name for t in statement.find_all(exp.Table)}
    if len(read) != 1:
        return None
    table = read.pop()
    columns = tables.get(table, {})
    year = next((c for c in columns if is_year_column(c)), None)
    numeric = {c.name for c in statement.find_all(exp.Column) if columns.get(c.name) in NUMERIC and c.name != year}
    if not numeric:
        numeric = {c for c, t in columns.items() if t in NUMERIC and c != year and not is_provenance(c)}
    if year is None or len(numeric) != 1:
        return None
    filters = {column: held for column, held in item_filters(statement).items() if column in columns}
    filters.pop(year, None)
    if not filters:
        filters = {key.split(".", 1)[1]: {value} for key, value in (named or {}).items() if key.startswith(f"{table}.")}
    if not filters or any(len(values) > 1 for values in filters.values()):
        return None
    where = [exp.column(name).eq(exp.Literal.string(values.pop())) for name, values in sorted(filters.items())]
    if years:
        where.append(exp.column(year).isin(*[exp.Literal.number(y) for y in years]))
    return exp.select(exp.column(year), exp.column(numeric.pop())).from_(table).where(exp.and_(*where))


MEASURE_FUNCTIONS = {Operation.sum: exp.Sum, Operation.average: exp.Avg}
DATED = (FieldType.date, FieldType.timestamp)


def period_aggregate_statement(
    statement: exp.Select,
    tables: dict[str, dict[str, FieldType]],
    years: Sequence[int],
    frame: QuestionFrame,
    named: dict[str, str] | None = None,
) -> exp.Select | None:
    """For a change between named years over a table of events (a row per shipment, no year column):
    the measure the question asks (frame.measure: a count, a total, an average) per year of the
    events' date, with the statement's item filters (or the row the question names). The date is the
    one the statement reads, else the one the question names ("dispatched"), else the table's first.
    None when the statement reads several tables, the measure is unknown, or its column is unclear."""
    read = {t.name for t in statement.find_all(exp.Table)}
    if len(read) != 1 or frame.measure is None or len(years) < 2:
        return None
    table = read.pop()
    columns = tables.get(table, {})
    date = event_date(statement, columns, frame.text)
    if date is None:
        return None
    if frame.measure is Operation.count:
        value: exp.Expression = exp.Count(this=exp.Star())
    else:
        column = measured_column(statement, columns, frame.text)
        if column is None:
            return None
        value = MEASURE_FUNCTIONS[frame.measure](this=exp.column(column))
    filters = {column: held for column, held in item_filters(statement).items() if column in columns}
    for key, held in (named or {}).items():
        if key.startswith(f"{table}."):
            filters.setdefault(key.split(".", 1)[1], {held})
    if any(len(values) > 1 for values in filters.values()):
        return None
    year = exp.Year(this=exp.column(date))
    where = [exp.column(name).eq(exp.Literal.string(next(iter(v)))) for name, v in sorted(filters.items())]
    where.append(year.copy().isin(*[exp.Literal.number(y) for y in years]))
    return (
        exp.select(exp.alias_(year.copy(), "year"), exp.alias_(value, "value"))
        .from_(table)
        .where(exp.and_(*where))
        .group_by(year.copy())
        .order_by(year.copy())
    )


def event_date(statement: exp.Select, columns: dict[str, FieldType], question: str) -> str | None:
    dated = [c for c, t in columns.items() if t in DATED]
    read = [c.name for c in statement.find_all(exp.Column) if c.name in dated]
    asked = content_stems(question)
    named = [c for c in dated if {stem(p) for p in c.split("_")} & asked]
    for choice in (read, named, dated):
        if len(set(choice)) == 1 or (choice is dated and choice):
            return choice[0]
    return None


def measured_column(statement: exp.Select, columns: dict[str, FieldType], question: str) -> str | None:
    """The numeric column the statement aggregates or reads, else the one the question names."""
    numeric = {c for c, t in columns.items() if t in NUMERIC and not is_provenance(c) and not is_year_column(c)}
    aggregated = {c.name for agg in statement.find_all(exp.AggFunc) for c in agg.find_all(exp.Column)} & numeric
    read = {c.name for c in statement.find_all(exp.Column)} & numeric
    asked = content_stems(question)
    named = {c for c in numeric if {stem(p) for p in c.split("_")} & asked}
    for choice in (aggregated, named, read):
        if len(choice) == 1:
            return choice.pop()
    return None


def sql_messages(
    node: PlanNode,
    contract: Contract,
    tables: Sequence[str],
    bound: dict[str, int],
    feedback: str | None = None,
    categories: dict[str, list[str]] | None = None,
    lost: dict[str, list[str]] | None = None,
) -> list[Message]:
    """bound: `$var_n.column` -> number of values it holds (the values stay out of the prompt);
    categories: the values to list, as named_values chose them; lost: lost_values."""
    ask = f"Sub-question: {node.question}"
    if lost:
        named = "; ".join(f"{column} = " + " or ".join(f"'{v}'" for v in values) for column, values in lost.items())
        ask += f"\nThe question names the rows: {named} (filter on them)"
    if node.returns:
        ask += f"\nReturn at least: {', '.join(node.returns)}"
    if bound:
        ask += "\nBound values: " + "; ".join(f"{ref} holds {n} value(s)" for ref, n in bound.items())
    catalog = schema_block(contract, tables)
    if categories:
        catalog += "\nValues:\n" + values_block(categories)
    period = SQL_PERIOD_INSTRUCTIONS.format(period_example=period_example(contract, tables))
    messages = [system(SQL_INSTRUCTIONS, period + "\n\nTables:\n" + catalog), user(ask)]
    if feedback:
        messages.append(user(f"The previous statement failed: {feedback}\nWrite a corrected statement."))
    return messages


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
    statement comparing it with another column compares it with that one (a searched customer's name
    is matched against customers.name, not customers' id column)."""
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

    statement = parse_select(REFERENCE.sub(to_placeholder, sql))
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


def with_missing_joins(
    statement: exp.Select, tables: dict[str, dict[str, FieldType]], allowed: Sequence[str], contract: Contract
) -> list[str]:
    """A column the statement names that its tables lack and one table it may join holds ("mode" of
    rail shipments, a column of carriers): that table is joined along its foreign key, in place. The
    statement's own columns are qualified first, so the join makes none of them ambiguous. Only for a
    statement with no subquery; the edits say which joins were added."""
    if len(list(statement.find_all(exp.Select))) != 1:
        return []
    sources = {t.alias_or_name: t.name for t in statement.find_all(exp.Table)}
    held = {c for name in sources.values() for c in tables.get(name, {})}
    named = set(statement.named_selects)
    missing = [
        c
        for c in statement.find_all(exp.Column)
        if (c.table and c.table not in sources) or (not c.table and c.name not in held and c.name not in named)
    ]
    edits: list[str] = []
    for column in missing:
        holders = [t for t in allowed if t not in sources.values() and column.name in tables.get(t, {})]
        if column.table:
            holders = [t for t in holders if t == column.table]
        keys = [fk for fk in contract.foreign_keys if len(holders) == 1 and joins(fk, holders[0], sources)]
        if len(keys) != 1:
            continue
        fk, holder = keys[0], holders[0]
        own, far = (fk.column, fk.target_column) if fk.target == holder else (fk.target_column, fk.column)
        near = next(alias for alias, name in sources.items() if name in (fk.source, fk.target) and name != holder)
        if not edits:
            qualify_own_columns(statement, sources, tables)
        statement.join(holder, on=exp.column(own, table=near).eq(exp.column(far, table=holder)), copy=False)
        sources[holder] = holder
        edits.append(f"joined {holder} for its column {column.name}")
    return edits


def joins(fk, holder: str, sources: dict[str, str]) -> bool:
    read = set(sources.values())
    return (fk.target == holder and fk.source in read) or (fk.source == holder and fk.target in read)


def qualify_own_columns(
    statement: exp.Select, sources: dict[str, str], tables: dict[str, dict[str, FieldType]]
) -> None:
    """Prefix each unqualified column with the one table read that holds it."""
    for column in statement.find_all(exp.Column):
        if not column.table and (alias := owner(column.name, sources, tables)) is not None:
            column.set("table", exp.to_identifier(alias))


def owner(column: str, sources: dict[str, str], tables: dict[str, dict[str, FieldType]]) -> str | None:
    """The alias of the one table read (alias -> table) that holds the column, else None."""
    owners = [alias for alias, name in sources.items() if column in tables.get(name, {})]
    return owners[0] if len(owners) == 1 else None


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
    """A copy whose unnamed aggregates are named for what they compute (count_invoice_id, sum_quantity)
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
    """count_rows, sum_quantity, count_distinct_sku; None for an aggregate over an expression
    (sum(quantity * unit_price) is no 'sum_quantity')."""
    argument = aggregate.this
    if argument is None or isinstance(argument, exp.Star):
        return f"{aggregate.key}_rows"
    if isinstance(argument, exp.Column):
        return f"{aggregate.key}_{argument.name}"
    if isinstance(argument, exp.Distinct) and [type(e) for e in argument.expressions] == [exp.Column]:
        return f"{aggregate.key}_distinct_{argument.expressions[0].name}"
    return None


def group_bare_columns(statement: exp.Select) -> list[str]:
    """A statement that aggregates (in its SELECT, HAVING or ORDER BY: "the warehouse with the largest
    total weight") and also selects plain columns is grouped by them, in place: the engine refuses
    it otherwise. Only for a statement with no subquery; the edit says what it grouped by."""
    if len(list(statement.find_all(exp.Select))) != 1:
        return []
    order, having = statement.args.get("order"), statement.args.get("having")
    clauses = [*statement.expressions, *(order.expressions if order else []), *([having] if having else [])]
    if not any(plain_aggregates(c) for c in clauses):
        return []
    group = statement.args.get("group")
    grouped = {g.sql() for g in group.expressions} if group else set()
    bare = [
        e.unalias()
        for e in statement.expressions
        if not plain_aggregates(e) and not e.find(exp.Window) and e.find(exp.Column) is not None
    ]
    missing = [e for e in bare if e.sql() not in grouped]
    if not missing:
        return []
    statement.group_by(*(e.copy() for e in missing), copy=False)
    return [f"grouped by {', '.join(e.sql() for e in missing)}"]


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
