"""Rewrites of a written statement that read only the statement, the contract and the step (passes.py
runs them copy-on-write): missing joins, bare columns grouped, literals set to the values the lake
holds, filters the question did not ask dropped, compared values grouped and labelled."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from lakeplanner.contract.models import Contract, FieldType
from lakeplanner.execute.arithmetic import compares
from lakeplanner.execute.sql.periods import names_years
from lakeplanner.execute.sql.statement import (
    aggregate_name,
    compared_literals,
    conjuncts,
    drop_conjunct,
    is_aggregate,
    owner,
    plain_aggregates,
    table_of,
)
from lakeplanner.execute.sql.values import MAX_COMPARED, closest_value, string_comparisons
from lakeplanner.question import QuestionFrame
from lakeplanner.question.words import content_stems


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
    """`a.b_code = 'rail'`: a foreign key compared with a word that no key is and that one
    category column of the key's target table holds (b.mode); the filter becomes
    `a.b_code IN (SELECT code FROM b WHERE mode = 'rail')`. Edits in place."""
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


def select_asked_reference(
    statement: exp.Select, step: QuestionFrame, returns: Sequence[str], contract: Contract
) -> list[str]:
    """ "manager of the person named X", returning person_id: the step asks the id the row's
    `manager` column holds (a key of the same table), yet the statement selected the row's own
    `person_id`. A returned column that a foreign-key column of the same row points at, where the step
    names that column and does not filter on it, is read from it (`t1.manager AS person_id`). Edits in
    place."""
    wanted = step.content_stems
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


def drop_filters_beside_bound_choice(
    statement: exp.Select, columns_of: dict[str, dict[str, FieldType]], keep: set[str], asked: QuestionFrame
) -> list[str]:
    """`name = <bound> AND rating < 4.0 AND code LIKE 'AB-%'`: an earlier step already chose the
    row by the bound value, and the question names neither the other columns nor their values; they
    are guesses about the row ("under review" read as a low rating) that can only lose it. Each such
    condition on the same table is dropped from the conjunction. Edits in place."""
    wanted = asked.content_stems
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
            if any(v in keep or asked.says(v.strip("%")) for v in values):
                continue
            if not values or wanted & content_stems(other.name.replace("_", " ")):
                continue
            edits.append(
                f"{condition.sql('duckdb')} dropped (a bound value chose the row; the question asks no such filter)"
            )
            drop_conjunct(condition)
    return edits


def compared_lists(statement: exp.Select, frame: QuestionFrame | None, keep: set[str]) -> list[exp.In]:
    """The WHERE's `col IN (a, b, ...)` of 2 to MAX_COMPARED literals, none bound (`keep`), that name
    years or that the question compares."""
    where = statement.args.get("where")
    return [
        condition
        for condition in (where.find_all(exp.In) if where else [])
        if isinstance(condition.this, exp.Column)
        and 2 <= len(condition.expressions) <= MAX_COMPARED
        and all(isinstance(e, exp.Literal) and e.this not in keep for e in condition.expressions)
        and (names_years(condition) or (frame is not None and compares(frame)))
    ]


def group_compared_values(
    statement: exp.Select, frame: QuestionFrame | None = None, keep: set[str] = frozenset()
) -> list[str]:
    """An aggregate over `col IN (a, b)` with no GROUP BY merges what the question compares (the
    change between 2018 and 2019 summed over both years): group by that column instead, so each
    value stays visible and the arithmetic is done on them later. Values that are not years are
    grouped only when the question compares them: "rows with status open or overdue" asks for
    one total over both. Bound lists (`keep`) are left."""
    if statement.args.get("group") or not any(statement.find_all(exp.AggFunc)):
        return []
    compared = compared_lists(statement, frame, keep)
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
    """Rows read for values the question compares (`item IN ('Current assets', 'Fixed assets')`)
    are told apart by that column: it is selected when the statement leaves it out, and one column
    selected again under each compared value's name is selected once (every alias holds the same cell).
    Not for aggregates (`group_compared_values`) or bound lists (`keep`)."""
    if is_aggregate(statement) or len(list(statement.find_all(exp.Select))) != 1:
        return []
    compared = [condition.this for condition in compared_lists(statement, frame, keep)]
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


def with_missing_joins(
    statement: exp.Select, tables: dict[str, dict[str, FieldType]], allowed: Sequence[str], contract: Contract
) -> list[str]:
    """A column the statement names that its tables lack and one table it may join holds ("mode" of
    table a's rows, a column of table b): that table is joined along its foreign key, in place. The
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


def group_bare_columns(statement: exp.Select) -> list[str]:
    """A statement that aggregates (in its SELECT, HAVING or ORDER BY: "the site with the largest
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
