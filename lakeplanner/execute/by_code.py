"""Answers code settles without the answer writer: a cell the question asks for, a count of the rows
read, a passage's answer read by its selector, and arithmetic over years or items by its templates."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass

from sqlglot import exp

from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.answer_prompt import Draft
from lakeplanner.execute.arithmetic import (
    all_years_average,
    elapsed_time,
    extreme_year,
    item_arithmetic,
    per_year_values,
    year_arithmetic,
)
from lakeplanner.execute.compare import Comparison, compared
from lakeplanner.execute.grounding import (
    _ISO_DATE_START,
    SPACE,
    format_number,
    normalised,
    standalone_numbers,
)
from lakeplanner.execute.results import NodeResult
from lakeplanner.execute.sql.statement import is_aggregate
from lakeplanner.ingest.segments import SENTENCE_END
from lakeplanner.policy.readonly import parse_select
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.answers import restates
from lakeplanner.question.steps import referenced_labels
from lakeplanner.question.words import (
    stem,
)


def distinct_rows(rows: list[dict]) -> list[dict]:
    """A scalar the statement repeated on every row it scanned counts once."""
    return list({json.dumps(row, sort_keys=True, default=str): row for row in rows}.values())


def fallback_value(results: list[NodeResult], frame: QuestionFrame) -> str | None:
    """A single structured cell is the answer by itself (c_ground 1.0): used when the LLM cannot
    answer, or when it misquotes the one value the SQL engine computed. Not a cell the question
    itself names (the row's id, for "what is the weight of item X-135?"), nor a date
    where the question asks for a number, an entity or a yes/no ("how long are backups kept?"), nor
    a text with no number where it asks for a number."""
    cells = [
        next(iter(rows[0].values()))
        for r in results
        if r.tool != "vector" and len(rows := distinct_rows(r.rows)) == 1 and len(rows[0]) == 1
    ]
    if len(cells) != 1 or cells[0] is None or (isinstance(cells[0], float) and not math.isfinite(cells[0])):
        return None  # NULL, or NaN / infinity from a division by zero: no value
    cell = cells[0]
    value = format_number(float(cell)) if isinstance(cell, float) else str(cell)
    if isinstance(cell, str) and restates(frame, value):
        return None
    dated = isinstance(cell, dt.date) or _ISO_DATE_START.match(value) is not None
    if dated and frame.shape in ("number", "entity", "yes_no"):
        return None
    return None if frame.shape == "number" and not standalone_numbers(normalised(value)) else value  # "X-05"


CELL_OPERATIONS = frozenset({Operation.lookup, Operation.extreme, Operation.count, Operation.sum, Operation.average})


AGGREGATED = frozenset({Operation.count, Operation.sum, Operation.average})


def cell_answer(frame: QuestionFrame, exposed: list[NodeResult]) -> Draft | None:
    """A draft without an LLM call, when the one table step a lookup, extreme or aggregate question
    exposes returned one cell: the engine has computed the answer and a model could only copy it
    (the same grounding checks settle it). A count, sum or average needs a statement that aggregates:
    one row of ids is what is counted, not the count."""
    if (
        frame.operation not in CELL_OPERATIONS
        or frame.several
        or frame.second_ask
        or frame.prose
        or frame.document
        or frame.shape == "yes_no"
        or len(exposed) != 1
        or exposed[0].tool == "vector"
        or (value := fallback_value(exposed, frame)) is None
    ):
        return None
    if frame.operation in AGGREGATED and last_statement_aggregates(exposed[0]) is not True:
        return None
    description = exposed[0].answer_description or "Answer"
    return Draft(answer=[value], sentence=f"{description}: {value}.", sources=["R1"], abstain=False)


def passage_answer(
    frame: QuestionFrame, exposed: list[NodeResult], index: dict[str, tuple[NodeResult, int | None]]
) -> Draft | None:
    """A draft without an LLM call for a lookup the one document step exposed answered: its evidence
    selector read the value in a passage it selected (only a value a passage states is kept) and
    judged the evidence sufficient. The answer is that value, the sentence the passage's sentence
    stating it; the same grounding checks settle it. A count a passage states ("a population of
    how many inhabitants?") is such a lookup too. Of a chain of steps, all exposed, the step that answers
    is the last hop (`last_hop`): the earlier ones found what it searched by."""
    read = last_hop(exposed)
    if (
        read is None
        or not (frame.operation is Operation.lookup or states_a_count(frame, read))
        or frame.several
        or frame.second_ask
        or frame.prose
        or frame.shape == "yes_no"
    ):
        return None
    if read.tool != "vector" or not read.answer or any("without sufficiency" in a for a in read.advice):
        return None
    value = read.answer.strip()
    for number, (result, i) in index.items():
        if result is read and i is not None and value.casefold() in read.evidence[i].snippet.casefold():
            sentence = sentence_stating(read.evidence[i].snippet, value)
            return Draft(answer=[value], sentence=sentence, sources=[number], abstain=False)
    return None


def last_hop(exposed: list[NodeResult]) -> NodeResult | None:
    """The one exposed step no other exposed step reads from ("where is $var_1.answer based?" after
    "who wrote the book?"); None when several are (two sides of a comparison, two asks)."""
    read_from = set().union(*(referenced_labels(r.question) for r in exposed))
    last = [r for r in exposed if r.label not in read_from]
    return last[0] if len(last) == 1 else None


def states_a_count(frame: QuestionFrame, read: NodeResult) -> bool:
    """ "How many X?" answered by a document step whose answer holds a number: a figure the passage
    states. Not when X is what the searched collection holds ("how many reports ...?" over a
    collection of reports counts documents, which no passage states)."""
    if frame.operation is not Operation.count or frame.counted_noun is None:
        return False
    counted = stem(frame.counted_noun)
    holds = {stem(w) for w in re.split(r"[^a-z0-9]+", read.source.casefold()) if w}
    return read.tool == "vector" and counted not in holds and any(c.isdigit() for c in read.answer or "")


def sentence_stating(text: str, value: str) -> str:
    """The first sentence of `text` that holds `value`, as written; the value itself when none does."""
    for sentence in SENTENCE_END.split(SPACE.sub(" ", text)):
        if value.casefold() in sentence.casefold():
            return sentence.strip()
    return value


def counted_rows(frame: QuestionFrame, exposed: list[NodeResult]) -> Draft | None:
    """A draft without an LLM call for "how many X ...?" when the one step exposed listed the rows
    of X (not aggregated, not cut at its LIMIT): their number is the answer, and a model reading
    twenty rows of them could only miscount (counts_the_rows settles it)."""
    if frame.operation is not Operation.count or frame.several or frame.second_ask or len(exposed) != 1:
        return None
    [listed] = exposed
    noun = frame.counted_noun
    if listed.tool != "sql" or not listed.rows or noun is None or stem(listed.source) != stem(noun):
        return None
    if last_statement_aggregates(listed) is not False or cut_at_limit(listed):
        return None
    n = listed.rows_total
    return Draft(answer=[str(n)], sentence=f"{n} {listed.source.replace('_', ' ')}.", sources=["R1"], abstain=False)


@dataclass(frozen=True)
class ByCode:
    """What code computes from the results, read once per question. `settle` takes its items from the
    first five whatever a draft says; `paired` (two items' or every year's template) only replaces a
    number the draft could not ground."""

    templated: str | None  # a change / percentage change / ratio / average over named years
    listed: list[float] | None  # the values of the years a question asks for one by one
    comparison: Comparison | None  # a yes/no comparison of what each step read
    extreme: int | None  # the year of the largest or smallest value
    elapsed: tuple[float, str] | None  # the time between two moments of a row
    paired: str | None

    @property
    def decides(self) -> bool:
        """A draft could only write the sentence, which `settle` then writes from the question."""
        return any(v is not None for v in (self.templated, self.listed, self.comparison, self.extreme, self.elapsed))


def computed_by_code(frame: QuestionFrame, exposed: list[NodeResult]) -> ByCode:
    return ByCode(
        templated=year_arithmetic(frame, exposed),
        listed=per_year_values(frame, exposed),
        comparison=compared(frame, exposed),
        extreme=extreme_year(frame, exposed),
        elapsed=elapsed_time(frame, exposed),
        paired=item_arithmetic(frame, exposed) or all_years_average(frame, exposed),
    )


def cut_at_limit(result: NodeResult) -> bool:
    """The step's last statement returned as many rows as its LIMIT allows: there may be more."""
    limit = parse_select(result.sql[-1].sql).args.get("limit")
    bound = limit.expression if limit is not None else None
    return isinstance(bound, exp.Literal) and result.rows_total >= int(bound.this)


def last_statement_aggregates(result: NodeResult) -> bool | None:
    """Whether the statement that produced a step's rows aggregates; None when no statement ran or it
    cannot be read."""
    if not result.sql:
        return None
    try:
        return is_aggregate(parse_select(result.sql[-1].sql))
    except LakeplannerError:
        return None
