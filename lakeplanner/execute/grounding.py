"""How far an answer is grounded in the results: its value found in a cell or a passage, its numbers
stated there or computed from them, and the confidence of an answer from its grounding and the
results' own."""

from __future__ import annotations

import datetime as dt
import math
import re

from simpleeval import InvalidExpression, SimpleEval

from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.arithmetic import (
    is_year_column,
)
from lakeplanner.execute.results import NodeResult
from lakeplanner.plan.model import REFERENCE
from lakeplanner.question.words import (
    marked_tokens,
)

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


_STANDALONE = re.compile(r"(?<![\w.,-])-?\d[\d,]*(?:\.\d+)?(?![\w-])")


SPACE = re.compile(r"\s+")


_ISO_DATE_START = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}|$)")


# a percentage's 100, a mean's count: not read (but "/ 2.4" divides by a cell)
_CONSTANTS = re.compile(r"\*\s*100\b(?!\.\d)|/\s*2\b(?!\.\d)|/\s*[3-9]\)*\s*$")


_EXPRESSION = re.compile(r"^[\d\s.,()+*/-]*\d\s+[-+*/]\s+\(?\s*-?\d[\d\s.,()+*/-]*$")  # spaced: '1-90' is no sum


_TYPOGRAPHIC = str.maketrans("\u2018\u2019\u02bc\u201c\u201d\u2013\u2014", "'''\"\"--")


def normalised(text: str) -> str:
    return SPACE.sub(" ", str(text).casefold().replace(",", "")).strip(" .")


def numbers_in(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in _NUMBER.findall(text)]


def evaluate(calculation: str) -> float:
    """Arithmetic on literal numbers only (+ - * / ** ( ), round, abs, min, max)."""
    evaluator = SimpleEval(functions={"round": round, "abs": abs, "min": min, "max": max}, names={})
    try:
        value = evaluator.eval(calculation.replace(",", ""))
    except (InvalidExpression, SyntaxError, ZeroDivisionError, TypeError) as e:
        raise LakeplannerError(f"the calculation {calculation!r} cannot be evaluated: {e}") from e
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise LakeplannerError(f"the calculation {calculation!r} gave no number")
    return float(value)


def format_number(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"


def grounding(value: str, results: list[NodeResult], calculated_from: str = "") -> float:
    """c_ground (seed 002 App. D): 1.0 when the value is a cell of a structured result (or computed from
    cells), 0.9 when a passage states it, 0.7 when a passage states most of its words, else 0. A yes or
    no is a judgement over what was retrieved: 0.7 when something was, else 0."""
    if normalised(value) in ("yes", "no"):
        return 0.7 if any(r.rows or r.evidence for r in results) else 0.0
    if REFERENCE.search(value):  # a step's label the model copied ('$var_1') is no value of the lake
        return 0.0
    items = [(k, v) for r in results for row in r.rows for k, v in row.items() if v is not None]
    cells = {normalised(v) for _, v in items}
    # the parts of a date are no figures: '2023-01-10' does not state -10
    numbered = [(k, round(n, 6)) for k, v in items if not is_temporal(v) for n in numbers_in(normalised(v))]
    cell_numbers = {n for _, n in numbered}
    passages = " ".join(normalised(e.snippet) for r in results for e in r.evidence)
    passage_numbers = {round(n, 6) for n in numbers_in(passages)}
    if calculated_from:  # a year a row is labelled with is no operand ('2023 - 2011' of two years built)
        operands = {round(n, 6) for n in numbers_in(_CONSTANTS.sub("", calculated_from))}
        figures = {n for k, n in numbered if not is_year_column(k)}
        return 1.0 if operands <= figures else 0.9 if operands <= figures | passage_numbers else 0.0
    target = normalised(value)
    if not target:
        return 0.0
    if target in cells or any(target in c for c in cells if len(target) >= 4):
        return 1.0
    numbers = {round(n, 6) for n in numbers_in(target)}
    if numbers and numbers <= cell_numbers and len(target) <= 24:
        return 1.0
    if not numbers <= cell_numbers | passage_numbers:  # a number nobody stated is never grounded
        return 0.0
    if target in passages:
        return 0.9
    words = [w for w in marked_tokens(target) if len(w) > 2]
    present = sum(1 for w in words if w in passages or w in " ".join(cells))
    return 0.7 if words and present / len(words) >= 0.6 else 0.0


def is_temporal(value: object) -> bool:
    return isinstance(value, dt.date | dt.time) or (isinstance(value, str) and _ISO_DATE_START.match(value) is not None)


def composite_confidence(results: list[NodeResult], c_ground: float) -> float:
    """c = c_link * c_node * c_ground: one tool is 1.0 and each further hop discounts the path; a node
    that returned nothing or stopped without sufficiency counts as a partial match (0.8)."""
    c_link = 0.95 ** max(0, len(results) - 1)
    partial = any((not r.rows and not r.evidence) or any("without sufficiency" in a for a in r.advice) for r in results)
    c_node = 0.8 if partial else 1.0
    return round(c_link * c_node * c_ground, 3)


def standalone_numbers(text: str) -> set[float]:
    """Numbers written on their own ('3 rows', '1,250.5'), not inside a word or id ('Q3', 'A003')."""
    return {round(float(n.replace(",", "")), 6) for n in _STANDALONE.findall(text)}


def folded(text: str) -> str:
    return text.lower().translate(_TYPOGRAPHIC)
