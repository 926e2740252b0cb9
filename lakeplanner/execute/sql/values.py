"""The lake values a SQL step meets: the category values of its tables, those the step names or the
question names and the step lost, the filters that hold or miss them, and the feedback a statement
that matched nothing gets."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from sqlglot import exp

from lakeplanner.contract.models import Contract
from lakeplanner.contract.profile import is_provenance
from lakeplanner.execute.sql.prompt import values_block
from lakeplanner.execute.sql.statement import conjuncts
from lakeplanner.injection import addresses_the_model
from lakeplanner.policy.scope import MASKED
from lakeplanner.question import QuestionFrame
from lakeplanner.question.words import content_stems, tokens

MAX_CATEGORY_VALUES, SHOWN_CATEGORY_VALUES, MAX_CATEGORY_TABLE_ROWS = 60, 30, 100_000


MAX_COMPARED = 5


def category_values(lake, contract: Contract, tables: Sequence[str], step: QuestionFrame) -> dict[str, list[str]]:
    """`table.column` -> the values of its category columns (few distinct strings, small tables),
    those sharing words with the sub-question first: the LLM must spell a filter value exactly."""
    wanted = step.word_tokens
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
            values.sort(key=lambda v: -len(wanted & set(tokens(v))))
            shown[f"{name}.{column}"] = values
    return shown


def named_values(categories: dict[str, list[str]], step: QuestionFrame) -> dict[str, list[str]]:
    """The category values the SQL prompt lists: those sharing a content word with the sub-question.
    The others are lake data the LLM need not see: fix_category_literals still knows them, and a
    statement that matches nothing is told the values of the columns it filtered on."""
    asked = step.content_stems
    shown = {column: [v for v in values if asked & content_stems(v)] for column, values in categories.items()}
    return {column: values[:SHOWN_CATEGORY_VALUES] for column, values in shown.items() if values}


def lost_values(categories: dict[str, list[str]], step: QuestionFrame, asked: QuestionFrame) -> dict[str, list[str]]:
    """The category values the user's question names in full while the step's sub-question names no
    value of that column: the planner wrote "the value for 2018 and 2019" for "the total cost of
    goods in 2018 and 2019", and the SQL would have nothing to filter on. Only the most specific
    are kept, over all columns ("Total cost of goods", not also the section "Cost of goods").
    With no sub-question: the rows the question names."""
    in_question, in_step = asked.content_stems, step.content_stems
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


def named_row(categories: dict[str, list[str]], asked: QuestionFrame) -> dict[str, str]:
    """table.column -> value: the one row the question names; empty when it names none, or several
    values of one column ("trade receivables up to three months": the total or the part?)."""
    named = lost_values(categories, QuestionFrame(text=""), asked)
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
    statement: exp.Select,
    categories: dict[str, list[str]],
    keep: set[str] = frozenset(),
    asked: QuestionFrame | None = None,
) -> list[str]:
    """`column = 'x'`, `IN`, `LIKE` and `ILIKE` conditions on a category column whose string matches no
    value the column holds, case aside (`name ILIKE 'Acme Works Ltd'`). Bound values (`keep`)
    and values the question names (`asked`: "how many requests are cancelled?") are left out: they may
    rightly match nothing."""
    held = {key.split(".", 1)[1]: values for key, values in categories.items()}
    found = []
    for column, literals in string_comparisons(statement, (exp.EQ, exp.In, exp.Like, exp.ILike)):
        if column.name not in held:
            continue
        for literal in literals:
            if literal.this in keep or (asked is not None and asked.says(literal.this.strip("%"))):
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


def closest_value(literal: str, values: Sequence[str]) -> str | None:
    """The held value a filter literal most likely means ('Write-offs' -> 'Write-offs, net of
    recoveries'), or None when it is held as written or nothing is close."""
    if literal in values:
        return None
    lower = literal.casefold().strip()
    named = set(tokens(lower))
    for match in (
        [v for v in values if v.casefold().strip() == lower],
        [v for v in values if v.casefold().startswith(lower)],
        [v for v in values if named and named <= set(tokens(v))],
        difflib.get_close_matches(literal, values, n=1, cutoff=0.6),
    ):
        if match:
            return min(match, key=len)
    return None
