"""The answer writer's prompt: the results numbered (rows R1.., passages E1..) with the keys they
cite, the reply it must write (a Draft), and the request to repair a failed draft."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from lakeplanner.execute.grounding import SPACE
from lakeplanner.execute.results import NodeResult
from lakeplanner.llm.base import Message, clipped, system, user
from lakeplanner.question import QuestionFrame
from lakeplanner.question.words import (
    stem,
)

ROWS_SHOWN = 20


CELL_CHARS = 120


MAX_KEYS_SHOWN = 3


SNIPPET_SHOWN = 500


SYNTHESIS_INSTRUCTIONS = """You answer a question about a data lake from the results below, and from \
nothing else. Rows are numbered R1, R2, ... and document passages E1, E2, .... Reply with JSON: \
answer (the short value as a list: one item, a name, id, number, date or phrase copied as written in \
the results; one item per value when the question asks for several, in the order it names them), \
sentence (one sentence that answers the question), sources (the R and E numbers you used), \
calculation (only when the answer needs arithmetic on numbers in the results: the expression, e.g. \
"1250.5 - 300"; a change from A to B is B - A, a percentage change (B - A) / A * 100; leave answer empty, \
it will be computed for you), abstain (true when the results do not contain what the question asks) and \
reason (why, when you abstain)."""


def reason_only_when_abstaining(schema: dict[str, Any]) -> None:
    """The Draft's schema as its two shapes, so constrained decoding writes a reason only after
    `"abstain": true`: after an answer it was read by nothing, cost about 35 generated tokens, and
    could run past the token limit. After an answer the reason may still be written, empty: a model
    kept from writing it writes a calculation instead, which would be evaluated."""
    properties, required = schema.pop("properties"), schema.pop("required")  # "type": "object" stays
    answered = properties | {"abstain": {"const": False}, "reason": {"const": ""}}
    schema["anyOf"] = [
        {"type": "object", "properties": answered, "required": required},
        {"type": "object", "properties": properties | {"abstain": {"const": True}}, "required": required},
    ]


class Draft(BaseModel):
    """answer, sentence, sources and abstain are required: constrained decoding must write them.
    An answer written as one string (an endpoint without constrained decoding) is one item."""

    model_config = ConfigDict(json_schema_extra=reason_only_when_abstaining)

    answer: Annotated[list[clipped(300)], BeforeValidator(lambda v: [v] if isinstance(v, str) else v)] = Field(
        max_length=12
    )
    sentence: clipped(400)
    sources: list[str] = Field(max_length=12)
    abstain: bool
    calculation: clipped(200) = ""
    reason: clipped(300) = ""


EMPTY_DRAFT = Draft(answer=[], sentence="", sources=[], abstain=False)  # a draft code settles the answer of


def row_source(result: NodeResult) -> str:
    """The table a result's rows come from; for one row (a lookup, or an aggregate over a few rows),
    also the keys of the rows behind it, so "which X" is answerable when the SQL selected none."""
    keys = [key for held in result.row_keys.values() for key in held]
    if len(result.rows) == 1 and 0 < len(keys) <= MAX_KEYS_SHOWN:
        return f"{result.source} {', '.join(keys)}"
    return result.source


def with_row_key(frame: QuestionFrame, text: str, exposed: list[NodeResult]) -> str:
    """A "Which X ...?" answered from one row of table X: the sentence names the row's key when
    the LLM left it out ("Total amount: 62,131.50." -> "K-1010: Total amount: 62,131.50.")."""
    if frame.entity is None:
        return text
    keys = [
        held[0]
        for r in exposed
        for table, held in r.row_keys.items()
        if len(r.rows) == 1 and len(held) == 1 and stem(table) == stem(frame.entity)
    ]
    if len(set(keys)) != 1 or keys[0].casefold() in text.casefold():
        return text
    return f"{keys[0]}: {text}"


def numbered_results(results: list[NodeResult]) -> tuple[str, dict[str, tuple[NodeResult, int | None]]]:
    """The prompt block and what each R/E number points to."""
    lines: list[str] = []
    index: dict[str, tuple[NodeResult, int | None]] = {}
    r = e = 0
    for result in results:
        if result.tool != "vector":
            where = row_source(result)
            for i, row in enumerate(result.rows[:ROWS_SHOWN]):
                r += 1
                cells = ", ".join(f"{k}: {str(v)[:CELL_CHARS]}" for k, v in row.items() if v is not None)
                lines.append(f"R{r} ({where}) {cells}")
                index[f"R{r}"] = (result, i)
            if result.rows_total > ROWS_SHOWN:
                lines.append(f"... {result.rows_total - ROWS_SHOWN} more rows of {result.source}")
        for i, item in enumerate(result.evidence):
            e += 1
            lines.append(f"E{e} ({item.uri}) {SPACE.sub(' ', item.snippet[:SNIPPET_SHOWN])}")
            index[f"E{e}"] = (result, i)
        if result.tool == "vector" and result.answer:
            lines.append(f"(the passages of {result.label} were read as: {result.answer})")
    return "\n".join(lines), index


def synthesis_messages(question: str, block: str) -> list[Message]:
    return [system(SYNTHESIS_INSTRUCTIONS), user(f"Results:\n{block or '(none)'}\n\nQuestion: {question}")]


def repair_request(failure: str) -> str:
    """What the LLM is told when its answer could not be used (DataOps repair of the final step)."""
    return (
        f"That answer cannot be used: {failure}. Copy the answer exactly as a row or passage writes it. "
        "When it needs arithmetic, write the expression over numbers copied from the results in calculation "
        '(a share of a total: "part / total * 100") and leave answer empty. Abstain when the results do '
        "not hold it."
    )
