"""The repairs a written statement goes through, in order. Each pass is copy-on-write: it copies the
statement, changes the copy and returns it with what it changed (in words, for the trace), so the
statement it was handed stays as written. Rewrites (rewrites.py) read the statement, the lake's
contract and the step; probes (probes.py) also ask the engine which rows hold a value, and say so
by `probes_engine`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from lakeplanner.contract.models import Contract, FieldType
from lakeplanner.execute.sql.dialects import read_other_dialects
from lakeplanner.execute.sql.probes import compare_bound_values_where_held, drop_unasked_key_filters
from lakeplanner.execute.sql.ranges import filter_named_range
from lakeplanner.execute.sql.rewrites import (
    drop_filters_beside_bound_choice,
    drop_self_cancelling,
    drop_unheld_category_filters,
    fix_category_literals,
    fix_key_literals,
    group_bare_columns,
    group_compared_values,
    label_compared_rows,
    match_dates_as_text,
    select_asked_reference,
    with_missing_joins,
)
from lakeplanner.question import QuestionFrame


@dataclass(frozen=True)
class StepContext:
    """What the passes of one SQL step may read."""

    columns_of: dict[str, dict[str, FieldType]]  # every table of the lake the role may read, with its columns
    allowed: tuple[str, ...]  # the tables the step reads
    contract: Contract
    frame: QuestionFrame  # the question's frame when the step asks part of it, else the step's own
    step: QuestionFrame  # the step's sub-question, as written
    asked: QuestionFrame | None = None  # the question the step asks part of (None: the step is the question)
    returns: tuple[str, ...] = ()
    categories: dict[str, list[str]] = field(default_factory=dict)  # the step's tables' category values
    bound: frozenset[str] = frozenset()  # literals bound from earlier steps: never repaired away
    engine: Any = None  # only probes read it


@dataclass(frozen=True)
class SqlPass:
    name: str
    change: Callable[[exp.Select, StepContext], list[str]]  # changes the statement it is given
    applies: Callable[[StepContext], bool] = lambda step: True
    probes_engine: bool = False

    def __call__(self, statement: exp.Select, step: StepContext) -> tuple[exp.Select, list[str]]:
        if not self.applies(step):
            return statement, []
        copy = statement.copy()
        return copy, self.change(copy, step)


def bound(step: StepContext) -> bool:
    return bool(step.bound)


def asks_part(step: StepContext) -> bool:
    return step.asked is not None


# Before the statement is checked against the step's tables: calls in another dialect's spelling, the
# joins its columns need, the GROUP BY its bare columns need.
SHAPE_PASSES: tuple[SqlPass, ...] = (
    SqlPass("functions of other dialects", lambda s, c: read_other_dialects(s)),
    SqlPass("missing joins", lambda s, c: with_missing_joins(s, c.columns_of, c.allowed, c.contract)),
    SqlPass("bare columns grouped", lambda s, c: group_bare_columns(s)),
)
# After the check, in this order (a probe may drop a filter a later rewrite would have repaired).
REPAIR_PASSES: tuple[SqlPass, ...] = (
    SqlPass("dates compared as text", lambda s, c: match_dates_as_text(s, c.columns_of)),
    SqlPass(
        "named range filtered",
        lambda s, c: filter_named_range(s, c.frame, c.step, c.columns_of),
        applies=lambda c: bool(c.frame.ranges),
    ),
    SqlPass("asked reference selected", lambda s, c: select_asked_reference(s, c.step, c.returns, c.contract)),
    SqlPass(
        "bound values compared where held",
        lambda s, c: compare_bound_values_where_held(s, c.engine, c.columns_of, c.bound),
        applies=bound,
        probes_engine=True,
    ),
    SqlPass(
        "filters beside a bound choice dropped",
        lambda s, c: drop_filters_beside_bound_choice(s, c.columns_of, c.bound, c.asked or c.step),
        applies=bound,
    ),
    SqlPass(
        "unasked key filters dropped",
        lambda s, c: drop_unasked_key_filters(s, c.engine, c.contract, c.columns_of, c.asked, keep=c.bound),
        applies=asks_part,
        probes_engine=True,
    ),
    SqlPass(
        "key literals fixed",
        lambda s, c: fix_key_literals(s, c.categories, c.contract, c.columns_of, keep=c.bound),
    ),
    SqlPass("category literals fixed", lambda s, c: fix_category_literals(s, c.categories, keep=c.bound)),
    SqlPass(
        "unheld category filters dropped",
        lambda s, c: drop_unheld_category_filters(s, c.categories, keep=c.bound),
        applies=bound,
    ),
    SqlPass("compared values grouped", lambda s, c: group_compared_values(s, c.frame, keep=c.bound)),
    SqlPass("self-cancelling filters dropped", lambda s, c: drop_self_cancelling(s)),
    SqlPass("compared rows labelled", lambda s, c: label_compared_rows(s, c.frame, keep=c.bound)),
)


def apply_passes(statement: exp.Select, step: StepContext, passes: tuple[SqlPass, ...]) -> tuple[exp.Select, list[str]]:
    """The statement after each pass in turn, and every change they made."""
    edits: list[str] = []
    for sql_pass in passes:
        statement, changed = sql_pass(statement, step)
        edits += changed
    return statement, edits
