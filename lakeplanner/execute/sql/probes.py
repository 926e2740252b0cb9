"""Rewrites that ask the engine which rows hold a value before they change the statement: bound values
compared in the column that holds them, key filters the question did not ask, literals moved to the
column that holds them (passes.py names them `probes_engine`)."""

from __future__ import annotations

from sqlglot import exp

from lakeplanner.contract.models import Contract, FieldType
from lakeplanner.contract.profile import is_provenance
from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.sql.statement import compared_literal, compared_literals, table_of
from lakeplanner.execute.sql.values import string_comparisons
from lakeplanner.question import QuestionFrame
from lakeplanner.question.words import content_stems, stem, tokens


def drop_unasked_key_filters(
    statement: exp.Select,
    engine,
    contract: Contract,
    columns_of: dict[str, dict[str, FieldType]],
    asked: QuestionFrame,
    keep: set[str] = frozenset(),
) -> list[str]:
    """`a.owner = 'ABCD'` where the user's question names neither the key nor anything of the
    row it points at (its name, country, mode): the value was copied from the prompt's example rows,
    not asked for, and the filter would answer another question. Such a condition on a key column (a
    foreign key's, or an id-like one, compared with a key or with a row's label) is dropped from its
    conjunction or WHERE; a key the question names by its row ("North Way Ltd" for 'NWAY') stays.
    Words of the lake's table and column names are not names of rows ("unit cost" does not name
    'Unit Works SIA'). Edits in place."""
    schema_words = {stem(w) for t, columns in columns_of.items() for name in (t, *columns) for w in tokens(name)}
    wanted = asked.content_stems - schema_words
    edits = []
    for condition in list(statement.find_all(exp.EQ)):
        column, literal = compared_literal(condition)
        if column is None or literal.this in keep or asked.says(literal.this):
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
    when it is id-like, or the label of a table whose rows an id-like key identifies (an entity's name,
    not the item label of a report's row); None for any other column."""
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
    """`people.person_id = 'Jane Roe'` matched nothing: the question named a row
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


def compare_bound_values_where_held(
    statement: exp.Select, engine, columns_of: dict[str, dict[str, FieldType]], keep: set[str]
) -> list[str]:
    """`a.name ILIKE 'QWRT'` where 'QWRT', bound from an earlier step (a search read it in a
    memo), is no row's name but one's code: a bound value is compared with the column of its
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
