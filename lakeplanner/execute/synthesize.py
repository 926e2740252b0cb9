"""The final answer (seed 000 §3.5, seed 002 §3.5, App. D): one LLM call over the exposed results,
arithmetic by a safe evaluator, a grounding check, composite confidence, citations, abstention."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from simpleeval import InvalidExpression, SimpleEval
from sqlglot import exp

from lakeplanner.contract.models import Contract
from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.arithmetic import (
    all_years_average,
    derivation,
    elapsed_time,
    extreme_year,
    is_number,
    is_year_column,
    item_arithmetic,
    per_year_values,
    year_arithmetic,
    year_of,
)
from lakeplanner.execute.compare import Comparison, compared
from lakeplanner.execute.definitions import defined_span
from lakeplanner.execute.results import Answer, Citation, NodeResult, document_address
from lakeplanner.execute.sql import is_aggregate
from lakeplanner.ingest.segments import SEGMENTS_TABLE, SENTENCE_END
from lakeplanner.lineage.steps import Recorder
from lakeplanner.llm.base import LLM, Message, assistant, clipped, system, user
from lakeplanner.plan.extension import TERM, sufficiency
from lakeplanner.plan.model import REFERENCE
from lakeplanner.policy.readonly import parse_select
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.read import years_in
from lakeplanner.question.words import content_sequence, content_words, stem, word_set

ROWS_SHOWN = 20
NOTHING_MENTIONS = "nothing in the lake mentions"  # the coverage gate's reason
SYNTHESIS_ATTEMPTS = 2  # a first draft and one repair
CELL_CHARS = 120
MAX_KEYS_SHOWN = 3
SNIPPET_SHOWN = 500
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_STANDALONE = re.compile(r"(?<![\w.,-])-?\d[\d,]*(?:\.\d+)?(?![\w-])")
_SPACE = re.compile(r"\s+")
_ISO_DATE_START = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}|$)")
# a percentage's 100, a mean's count: not read (but "/ 2.4" divides by a cell)
_CONSTANTS = re.compile(r"\*\s*100\b(?!\.\d)|/\s*2\b(?!\.\d)|/\s*[3-9]\)*\s*$")
Mentions = Callable[[list[str]], "set[str] | None"]
_BRACKETED_KEY = re.compile(r"\s*\([^()]*\)$")  # "Ann Lee (E1003)": a label with its key
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_EXPRESSION = re.compile(r"^[\d\s.,()+*/-]*\d\s+[-+*/]\s+\(?\s*-?\d[\d\s.,()+*/-]*$")  # spaced: '1-90' is no sum
_TYPOGRAPHIC = str.maketrans("\u2018\u2019\u02bc\u201c\u201d\u2013\u2014", "'''\"\"--")
# words that ask to compute, explain or name ("the change in revenue", "the percentage constitution of
# X in Y", "the reason for the decline", "the name of the song"), name the reporting entity ("the
# company") or qualify the ask ("the respective values"), not an attribute the lake must hold
# fmt: off
ANSWER_SHAPES = frozenset({
    "change", "changes", "difference", "increase", "decrease", "growth", "decline", "average", "mean",
    "total", "sum", "ratio", "percentage", "proportion", "share", "rate", "count", "number", "amount",
    "value", "reason", "reasons", "cause", "causes", "purpose", "factor", "factors", "explanation",
    "driver", "drivers", "effect", "impact", "company", "group", "components", "component", "name", "names",
    "title", "respective", "various", "constitution", "composition", "portion", "fraction",
    "definition", "meaning", "description",
})
# fmt: on
PREPOSITIONS = {
    "across",
    "according",
    "along",
    "among",
    "around",
    "behind",
    "below",
    "beside",
    "despite",
    "during",
    "including",
    "inside",
    "onto",
    "toward",
    "towards",
    "upon",
    "within",
    "without",
    "whom",
}

# past forms, superlatives, adverbs and adjectives: what qualifies the asked attribute, not the attribute
# ("-al" and "-ic" are left out by ending: rental, principal and metric are nouns)
ADJECTIVE_ENDINGS = ("ed", "est", "ly", "ous", "ful", "less")
QUALIFIERS = frozenset(
    {"annual", "nominal", "actual", "additional", "financial", "fiscal", "historical", "historic", "general"}
    | {"operational", "original", "initial", "final", "internal", "external", "federal", "regional", "global"}
    | {"normal", "typical", "overall", "approximate", "respective", "primary", "main", "principal", "major"}
)
# determiners and irregular past forms: "another name for", "the amount paid out"
NOT_CONCEPTS = frozenset(
    {"another", "other", "each", "every", "such", "paid", "made", "held", "sold", "spent", "bought", "built"}
    | {"taken", "given", "grown", "known", "shown", "done", "won", "lost", "kept", "brought", "met", "set"}
)
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


_EMPTY = Draft(answer=[], sentence="", sources=[], abstain=False)  # a draft code settles the answer of


def row_source(result: NodeResult) -> str:
    """The table a result's rows come from; for one row (a lookup, or an aggregate over a few rows),
    also the keys of the rows behind it, so "which invoice" is answerable when the SQL selected none."""
    keys = [key for held in result.row_keys.values() for key in held]
    if len(result.rows) == 1 and 0 < len(keys) <= MAX_KEYS_SHOWN:
        return f"{result.source} {', '.join(keys)}"
    return result.source


def with_row_key(frame: QuestionFrame, text: str, exposed: list[NodeResult]) -> str:
    """A "Which invoice ...?" answered from one row of invoices: the sentence names the row's key when
    the LLM left it out ("Total amount: 62,131.50." -> "INV-1010: Total amount: 62,131.50.")."""
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
            lines.append(f"E{e} ({item.uri}) {_SPACE.sub(' ', item.snippet[:SNIPPET_SHOWN])}")
            index[f"E{e}"] = (result, i)
        if result.tool == "vector" and result.answer:
            lines.append(f"(the passages of {result.label} were read as: {result.answer})")
    return "\n".join(lines), index


def synthesis_messages(question: str, block: str) -> list[Message]:
    return [system(SYNTHESIS_INSTRUCTIONS), user(f"Results:\n{block or '(none)'}\n\nQuestion: {question}")]


def normalised(text: str) -> str:
    return _SPACE.sub(" ", str(text).casefold().replace(",", "")).strip(" .")


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
    words = [w for w in re.findall(r"[a-z0-9@.%-]+", target) if len(w) > 2]
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


def citations_for(
    sources: list[str], index: dict[str, tuple[NodeResult, int | None]], results: list[NodeResult]
) -> list[Citation]:
    chosen = [index[s] for s in dict.fromkeys(s.strip().upper() for s in sources) if s.strip().upper() in index]
    if not chosen:  # cite everything shown when the model named nothing
        chosen = [(r, i) for r in results for i in range(min(len(r.evidence), 5))]
        chosen += [(r, None) for r in results if r.tool != "vector" and r.rows]
    out: list[Citation] = []
    for result, i in chosen:
        if result.tool == "vector" and i is not None and i < len(result.evidence):
            item = result.evidence[i]
            if item.level == "row":
                out.append(
                    Citation(kind="row", source=item.uri, row_key=item.meta.get("row_key"), snippet=item.snippet[:200])
                )
            else:
                out.append(
                    Citation(
                        kind="span",
                        source=item.uri.split("/")[0],
                        document_id=item.meta.get("document_id"),
                        start=item.offsets[0],
                        end=item.offsets[1],
                        snippet=item.snippet[:200],
                        snapshot_id=result.snapshots.get(SEGMENTS_TABLE),
                    )
                )
        else:
            for table, keys in result.row_keys.items():
                for key in keys[:10]:
                    out.append(Citation(kind="row", source=table, snapshot_id=result.snapshots.get(table), row_key=key))
    unique = {(c.kind, c.source, c.row_key, c.document_id, c.start): c for c in out}
    return list(unique.values())


def distinct_rows(rows: list[dict]) -> list[dict]:
    """A scalar the statement repeated on every row it scanned counts once."""
    return list({json.dumps(row, sort_keys=True, default=str): row for row in rows}.values())


def fallback_value(results: list[NodeResult], frame: QuestionFrame) -> str | None:
    """A single structured cell is the answer by itself (c_ground 1.0): used when the LLM cannot
    answer, or when it misquotes the one value the SQL engine computed. Not a cell the question
    itself names (the truck's id, for "what is the fuel consumption of truck TRK-135?"), nor a date
    where the question asks for a number, an entity or a yes/no ("how long are GPS data kept?"), nor
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
    return None if frame.shape == "number" and not standalone_numbers(normalised(value)) else value  # "WH-05"


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
    "who directed the film?"); None when several are (two sides of a comparison, two asks)."""
    read_from = {f"$var_{m.group(1)}" for r in exposed for m in REFERENCE.finditer(r.question)}
    last = [r for r in exposed if r.label not in read_from]
    return last[0] if len(last) == 1 else None


def states_a_count(frame: QuestionFrame, read: NodeResult) -> bool:
    """ "How many X?" answered by a document step whose answer holds a number: a figure the passage
    states. Not when X is what the searched collection holds ("how many incidents ...?" over the
    incident reports counts documents, which no passage states)."""
    if frame.operation is not Operation.count or frame.counted_noun is None:
        return False
    counted = stem(frame.counted_noun)
    holds = {stem(w) for w in re.split(r"[^a-z0-9]+", read.source.casefold()) if w}
    return read.tool == "vector" and counted not in holds and any(c.isdigit() for c in read.answer or "")


def sentence_stating(text: str, value: str) -> str:
    """The first sentence of `text` that holds `value`, as written; the value itself when none does."""
    for sentence in SENTENCE_END.split(_SPACE.sub(" ", text)):
        if value.casefold() in sentence.casefold():
            return sentence.strip()
    return value


def counted_rows(frame: QuestionFrame, exposed: list[NodeResult]) -> Draft | None:
    """A draft without an LLM call for "how many shipments ...?" when the one step exposed listed the
    shipments (not aggregated, not cut at its LIMIT): their number is the answer, and a model reading
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
    listed: list[float] | None  # the values of the years a "respectively" question names
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


def uncovered_terms(
    frame: QuestionFrame, contract: Contract, results: list[NodeResult], mentions: Mentions | None = None
) -> list[str]:
    """Coverage gate (seed 002 §3.5): the words of the attribute a what-question asks ("what is the X of
    ...") that neither the schema nor any retrieved row, column or passage mentions, nor (`mentions`)
    any text of the lake. When all of them are missing, the lake cannot hold what the question asks
    for (a phone number in a lake without phone numbers), whatever the LLM says. A word of the
    attribute that names a column covers it ("plate" of "the licence plate" in a column `plate`).
    Passages alone never leave a "what KIND ..." question uncovered: "a British anthropologist"
    answers "what nationality" without the word; table columns do name what they hold."""
    question = frame.text
    if frame.asked_attribute is None or (frame.asks_kind and not any(r.tool == "sql" and r.rows for r in results)):
        return []
    concepts = [
        t.lower()
        for t in TERM.findall(frame.attribute.text)
        if is_concept(t) and t.lower() not in ANSWER_SHAPES | word_set("not_concepts") and not is_name(t, question)
    ]
    unresolved = {t.lower() for t in sufficiency(question, contract).unresolved}
    if not concepts or any(t not in unresolved for t in concepts):
        return []
    seen = " ".join(
        [normalised(f"{k} {v}") for r in results for row in r.rows for k, v in row.items() if v is not None]
        + [normalised(e.snippet) for r in results for e in r.evidence]
        + [normalised(run.sql) for r in results for run in r.sql if run.rows]  # its filters say what rows are
    )
    words = {w.rstrip("s") for w in _WORD.findall(seen)} | {w.replace("-", "") for w in _WORD.findall(seen)}
    missing = [t for t in concepts if not {t.rstrip("s"), t.replace("-", "")} & words]
    if len(missing) < len(concepts):
        return []
    found = mentions([t.rstrip("s") for t in missing]) if mentions else set()
    return [] if found else missing  # None: the lake is too large to scan, the retrieved results decide


def is_name(term: str, question: str) -> bool:
    """A capitalised word inside the question ("Sanne" in "What is Sanne Mulder's salary?") names a
    row, not the attribute asked: that the lake holds the row says nothing about the attribute."""
    return term[:1].isupper() and not question.lstrip().startswith(term)


def is_concept(term: str) -> bool:
    """Roughly a noun: not a past form, superlative, adverb or adjective ("annual", "nominal",
    "historic"), nor a preposition or determiner (no tagger here)."""
    lower = term.lower()
    return not lower.endswith(ADJECTIVE_ENDINGS) and lower not in PREPOSITIONS | NOT_CONCEPTS | QUALIFIERS


def synthesize(
    frame: QuestionFrame,
    results: list[NodeResult],
    llm: LLM,
    recorder: Recorder,
    contract: Contract | None = None,
    mentions: Mentions | None = None,
    read_answers: bool = False,
) -> Answer:
    """`mentions` says which terms the lake's text holds anywhere (ingest.segments.mentioned): the
    coverage gate abstains only on terms that nothing in the lake mentions. `frame` is the question
    read by the lake's packs, filled and bound. `read_answers`: see `passage_answer`."""
    started = time.perf_counter()
    question = frame.text
    exposed = [r for r in results if r.exposed] or results[-1:]
    answer = Answer(question=question, nodes=results, advice=[a for r in results for a in r.advice])
    failed = [r for r in exposed if not r.ok]
    exposed = [r for r in exposed if r.ok]
    if not any(r.rows or r.evidence for r in exposed):
        reason = "; ".join(f"{r.label}: {r.error}" for r in failed) or "the lake holds no data that answers it"
        return abstain(answer, reason, started)
    missing = uncovered_terms(frame, contract, results, mentions) if contract is not None else []
    if missing:
        return abstain(answer, f"{NOTHING_MENTIONS} {', '.join(missing)}", started)
    block, index = numbered_results(exposed)
    read = passage_answer(frame, exposed, index) if read_answers else None
    code = computed_by_code(frame, exposed)
    by_code = cell_answer(frame, exposed) or counted_rows(frame, exposed) or read or (_EMPTY if code.decides else None)
    if by_code is not None:  # settled without the synthesis call
        outcome = settle(frame, by_code, exposed, code)
        if outcome.c_ground > 0.0:
            return settled_answer(answer, outcome, frame, results, exposed, index, started)
    messages, failure = synthesis_messages(question, block), ""
    for attempt in range(SYNTHESIS_ATTEMPTS):
        try:
            draft: Draft = recorder.complete(
                llm,
                "synthesize" if attempt == 0 else "synthesize.repair",
                messages,
                Draft,
                max_tokens=260,
                data_chars=len(block),
                because=failure,
            ).value
        except LakeplannerError as e:
            value = fallback_value(exposed, frame)
            if value is None:
                return abstain(answer, f"no answer could be written: {e.message}", started)
            draft = Draft(answer=[value], sentence=value, sources=[], abstain=False)
        outcome = settle(frame, draft, exposed, code)
        if outcome.c_ground > 0.0 or not outcome.repairable:
            break
        failure = outcome.failure
        messages = [*messages, assistant(draft.model_dump_json()), user(repair_request(failure))]
    if outcome.c_ground == 0.0 and (defined := defined_span(frame, exposed)) is not None:
        outcome = definition(question, outcome.draft, defined, index, exposed)
    if outcome.c_ground == 0.0:
        return abstain(answer, outcome.failure, started)
    return settled_answer(answer, outcome, frame, results, exposed, index, started)


def rows_for_documents(frame: QuestionFrame, draft: Draft, exposed: list[NodeResult]) -> Draft:
    """ "Which invoice ...?" answered with the id of the document about it ("DOC-INV-1010"): the key of
    the row the document is linked to ("INV-1010"), in the answer and the sentence; rows were asked for.
    The id may come as the evidence's address, its collection first ("documents_invoices/DOC-INV-1010")."""
    kind = frame.one or frame.entity
    about: dict[str, str] = {}
    for r in exposed:
        for row in r.rows:
            linked = stem(row.get("linked_table") or "") == stem(kind) if kind else False
            if linked and row.get("document_id") and row.get("linked_key"):
                document, key = str(row["document_id"]), str(row["linked_key"])
                about[document] = about[document_address(r.source, document)] = key
    named = {about[item.strip()] for item in draft.answer if item.strip() in about}
    if not named:
        return draft
    sentence = draft.sentence
    for document in sorted((d for d in about if about[d] in named), key=len, reverse=True):  # addresses first
        sentence = re.sub(rf"(?<![\w-]){re.escape(document)}(?![\w-])", about[document], sentence)
    answer = [about.get(item.strip(), item) for item in draft.answer]
    return draft.model_copy(update={"answer": answer, "sentence": sentence})


def settled_answer(
    answer: Answer,
    outcome: Settled,
    frame: QuestionFrame,
    results: list[NodeResult],
    exposed: list[NodeResult],
    index: dict[str, tuple[NodeResult, int | None]],
    started: float,
) -> Answer:
    answer.value, answer.items = "; ".join(outcome.items), outcome.items
    answer.text = with_row_key(frame, outcome.draft.sentence or answer.value, exposed)
    if outcome.calculated:
        answer.text += f" (computed: {outcome.calculated} = {answer.value})"
    answer.citations = citations_for(outcome.draft.sources, index, exposed)
    answer.confidence = composite_confidence(results, outcome.c_ground)
    answer.timings["synthesis_s"] = time.perf_counter() - started
    return answer


@dataclass(frozen=True)
class Settled:
    """A draft turned into the answer's items: computed, templated or copied, and how well grounded.
    c_ground 0.0 is a failure; `repairable` when re-asking with the failure may help."""

    items: list[str]
    draft: Draft
    c_ground: float = 0.0
    calculated: str = ""
    failure: str = ""
    repairable: bool = False


def settle(frame: QuestionFrame, draft: Draft, exposed: list[NodeResult], code: ByCode) -> Settled:
    question = frame.text
    draft = rows_for_documents(frame, draft, exposed)
    if code.elapsed is not None:  # two moments of one row, by code
        value, taken = code.elapsed
        items = [format_number(value)]
        sentence = f"{question.rstrip('?')}: {items[0]} {frame.unit.text}."
        return Settled(items, draft.model_copy(update={"sentence": sentence, "abstain": False}), 1.0, taken)
    computed = code.templated is not None or code.listed is not None or code.extreme is not None
    if draft.abstain and not computed and code.comparison is None and code.paired is None:
        return Settled([], draft, failure=draft.reason or "the results do not contain the answer")
    items = [whole_cell(verbatim(i, exposed), frame, exposed) for i in answer_items(frame, draft.answer)]
    calculated = ""
    if frame.asks_year:
        items = [year_stated(year_holding(i, exposed), draft.sentence, frame) for i in items]
    if computed:  # listed: one cell per year, in the order named; extreme: the year of the largest or smallest
        if code.templated is not None:
            items, calculated = [format_number(evaluate(code.templated))], code.templated
        elif code.listed is not None:
            items = [format_number(v) for v in code.listed]
        else:
            items = [str(code.extreme)]
        if draft.abstain or not all(i in draft.sentence for i in items):  # the sentence would state other numbers
            stated = f"{question.rstrip('?')}: {', '.join(items)}."
            draft = draft.model_copy(update={"sentence": stated, "abstain": False})
    elif code.comparison is not None:  # decided over what each step read; every passage shown is cited
        items = [code.comparison.value]
        sentence = f"{code.comparison.value.capitalize()} ({code.comparison.sentence})."
        draft = draft.model_copy(update={"sentence": sentence, "sources": [], "abstain": False})
    elif draft.calculation.strip() or (len(items) == 1 and _EXPRESSION.match(items[0])):
        expression = draft.calculation.strip() or items[0]  # an expression written as the answer is one too
        try:
            items, calculated = [format_number(evaluate(expression))], expression
        except LakeplannerError as e:
            return Settled([], draft, failure=e.message, repairable=True)
    if not calculated and items and all(restates(frame, item) or is_the_value_named(frame, item) for item in items):
        failure = f"the answer {'; '.join(items)!r} only repeats words of the question"
        return Settled(items, draft, failure=failure, repairable=True)
    c_ground = min((grounding(item, exposed, calculated) for item in items), default=0.0)
    if c_ground == 0.0 and counts_the_rows(frame, items, exposed):
        c_ground = 1.0  # each counted row is shown and cited
    if c_ground == 0.0 and (derived := derivation(numbers_in(normalised("; ".join(items))), exposed)) is not None:
        items, calculated = [format_number(evaluate(derived))], derived  # its arithmetic, redone by the evaluator
        c_ground = grounding(items[0], exposed, calculated)
    if code.paired is not None and not calculated and copies_an_operand(items, code.paired):
        c_ground = 0.0  # a difference or ratio of two items answered with one of them: the template's
    if c_ground == 0.0 and code.paired is not None:  # the LLM's number is not grounded: the items' or years' template
        items, calculated = [format_number(evaluate(code.paired))], code.paired
        c_ground = grounding(items[0], exposed, calculated)
        draft = draft.model_copy(update={"sentence": f"{question.rstrip('?')}: {items[0]}.", "abstain": False})
    if c_ground == 0.0 and (cell := fallback_value(exposed, frame)) is not None:
        description = next((r.answer_description for r in exposed if r.answer_description), None) or "Answer"
        items, c_ground, calculated = [cell], 1.0, ""
        draft = draft.model_copy(update={"sentence": f"{description}: {cell}."})
    if c_ground == 0.0:
        said = "; ".join(items) or draft.calculation
        failure = f"the answer {said!r} is not supported by the retrieved rows or passages"
        return Settled(items, draft, failure=failure, repairable=True)
    if unsupported_numbers(draft.sentence, items, exposed, question) or omits_the_answer(draft.sentence, items, frame):
        draft = draft.model_copy(update={"sentence": f"{question.rstrip('?')}: {'; '.join(items)}."})
    return Settled(items, draft, c_ground, calculated)


def last_statement_aggregates(result: NodeResult) -> bool | None:
    """Whether the statement that produced a step's rows aggregates; None when no statement ran or it
    cannot be read."""
    if not result.sql:
        return None
    try:
        return is_aggregate(parse_select(result.sql[-1].sql))
    except LakeplannerError:
        return None


def counts_the_rows(frame: QuestionFrame, items: list[str], exposed: list[NodeResult]) -> bool:
    """A count question answered with the number of rows its one table step returned ("how many
    invoices of C036 are overdue?" over the rows of those invoices): a figure no cell states, yet
    the rows state it."""
    tables = [r for r in exposed if r.tool == "sql" and r.rows]
    if frame.operation is not Operation.count or len(tables) != 1:
        return False
    if last_statement_aggregates(tables[0]) is not False:  # its rows are counts or sums, not what is counted
        return False
    return numbers_in(normalised("; ".join(items))) == [float(tables[0].rows_total)]


def copies_an_operand(items: list[str], expression: str) -> bool:
    """The one number answered is an operand of the two items' expression (a cell copied, not computed)."""
    said = numbers_in(normalised("; ".join(items)))
    return len(said) == 1 and round(said[0], 6) in {round(n, 6) for n in numbers_in(expression)}


def unsupported_numbers(sentence: str, items: list[str], exposed: list[NodeResult], question: str) -> list[str]:
    """Numbers the sentence states that neither the answer, the question, a row nor a passage states:
    the LLM's sentence may add a figure it made up beside a grounded answer."""
    stated = [*items, question]
    stated += [str(v) for r in exposed for row in r.rows for v in row.values() if v is not None]
    stated += [e.snippet for r in exposed for e in r.evidence]
    known = {n for text in stated for n in standalone_numbers(normalised(text))}
    return [n for n in standalone_numbers(normalised(sentence)) if n not in known]


def omits_the_answer(sentence: str, items: list[str], frame: QuestionFrame) -> bool:
    """The sentence states none of the answer's items, by words or by number: the LLM copied a passage
    beside the answer ("Overdue amounts accrue a late fee ..." for "60 days"). A yes/no answer is
    said in words of its own."""
    if frame.operation is Operation.yes_no or not items:
        return False
    said, numbers = normalised(sentence), standalone_numbers(normalised(sentence))

    def stated(item: str) -> bool:
        wanted = standalone_numbers(normalised(item))
        return normalised(item) in said or (bool(wanted) and wanted <= numbers)

    return not any(map(stated, items))


def standalone_numbers(text: str) -> set[float]:
    """Numbers written on their own ('3 invoices', '1,250.5'), not inside a word or id ('Q3', 'C003')."""
    return {round(float(n.replace(",", "")), 6) for n in _STANDALONE.findall(text)}


def definition(
    question: str,
    draft: Draft,
    defined: tuple[NodeResult, int, str],
    index: dict[str, tuple[NodeResult, int | None]],
    exposed: list[NodeResult],
) -> Settled:
    """The span a passage states for "what does X represent?", when the LLM's answers failed; cited."""
    result, i, span = defined
    source = next(key for key, (r, j) in index.items() if r is result and j == i)
    sentence = f"{question.rstrip('?')}: {span}."
    draft = draft.model_copy(update={"sentence": sentence, "sources": [source], "abstain": False})
    return Settled([span], draft, grounding(span, exposed))


def repair_request(failure: str) -> str:
    """What the LLM is told when its answer could not be used (DataOps repair of the final step)."""
    return (
        f"That answer cannot be used: {failure}. Copy the answer exactly as a row or passage writes it. "
        "When it needs arithmetic, write the expression over numbers copied from the results in calculation "
        '(a share of a total: "part / total * 100") and leave answer empty. Abstain when the results do '
        "not hold it."
    )


def whole_cell(item: str, frame: QuestionFrame, results: list[NodeResult]) -> str:
    """The one text cell a one-row lookup read, when the LLM copied only a part of it ("5155" of the
    plate "5155 RER"); not for a question asking a number, where a part may be the answer."""
    if frame.operation is not Operation.lookup or frame.shape not in ("text", "entity"):
        return item
    cells = [
        v
        for r in results
        if r.tool != "vector" and len(rows := distinct_rows(r.rows)) == 1
        for v in rows[0].values()
        if isinstance(v, str)
    ]
    parts = [c for c in cells if item != c and item in c.split()]
    return parts[0] if len(parts) == 1 else item


def verbatim(item: str, results: list[NodeResult]) -> str:
    """A span as the source writes it: the LLM's copy may differ in case, spacing, or a typographic quote
    or dash (FRC's for FRC’s); the answer shows the cited text."""
    tokens = item.split()
    if len(tokens) < 2 or not any(c.isalpha() for c in item):
        return item
    pattern = re.compile(r"\s+".join(re.escape(folded(t)) for t in tokens))
    texts = [e.snippet for r in results for e in r.evidence]
    texts += [v for r in results for row in r.rows for v in row.values() if isinstance(v, str)]
    for text in texts:
        if len(folded(text)) == len(text) and (found := pattern.search(folded(text))):
            return text[found.start() : found.end()]
    return item


def restates(frame: QuestionFrame, item: str) -> bool:
    """The item is a phrase of the question, plurals and word order aside ("five step approach" for
    "What is the company's five step approach?", "cash equivalents" for "what is a cash equivalent?"),
    where the question offers no alternatives to choose from; or the kind of thing asked for itself
    ("Carrier" for "Which carrier moved it?"), whatever the question offers. A name made of words the
    question holds apart ("Harbour Line" for "which line serves the harbour?") is not a restatement."""
    words = {stem(w) for w in content_words(item)}
    if not words or words == {stem(w) for w in content_words(frame.entity or "")}:
        return bool(words)
    if frame.alternatives:
        return False
    asked = [stem(w) for w in content_sequence(frame.text)]
    return any(set(asked[i : i + len(words)]) == words for i in range(len(asked) - len(words) + 1))


def is_the_value_named(frame: QuestionFrame, item: str) -> bool:
    """The item is the one lake value the question names (its key or label, a label's key in brackets
    aside): "who supervises Ann Lee?" answered "Ann Lee" read the named row, not the related one."""
    if len(frame.values) != 1:
        return False
    return _BRACKETED_KEY.sub("", item).strip().casefold() == frame.values[0].span.text.strip().casefold()


def year_holding(item: str, results: list[NodeResult]) -> str:
    """The year of the one row holding the value the LLM copied, for a question asking which year (it
    found the row and wrote its value); the item itself when it is a year or no single row holds it."""
    numbers = numbers_in(item)
    if len(numbers) != 1 or 1900 <= numbers[0] <= 2100:
        return item
    years = {
        year_of(row)
        for r in results
        for row in r.rows
        if any(is_number(v) and round(float(v), 6) == round(numbers[0], 6) for v in row.values())
    }
    return str(years.pop()) if len(years) == 1 and None not in years else item


def year_stated(item: str, sentence: str, frame: QuestionFrame) -> str:
    """Asked for a year, the LLM named something else ("Carlo Rovelli") while its sentence states the
    year ("... has worked in France since 2000"): the one year the sentence states and the question
    does not. The item itself when it holds a number or the sentence states no such single year."""
    if numbers_in(item):
        return item
    years = set(years_in(sentence)) - set(frame.years)
    return str(years.pop()) if len(years) == 1 else item


def folded(text: str) -> str:
    return text.lower().translate(_TYPOGRAPHIC)


def answer_items(frame: QuestionFrame, written: list[str]) -> list[str]:
    """The LLM's items, blank and repeated ones dropped, without a restated question ("The table shows
    X" to "what does the table show?" is X); only the first when the question asks for one value."""
    items = list(dict.fromkeys(unrestated(frame, item) for item in written if item.strip()))
    return items if frame.several else items[:2] if frame.second_ask else items[:1]


def unrestated(frame: QuestionFrame, item: str) -> str:
    """What follows the question's words in an answer that restates them: "The table shows X" to "what
    does the table show?", "Goodwill is X" to "what is goodwill?"."""
    item = item.strip()
    asked = frame.predicate
    if asked is None:
        return item
    verb = rf"{re.escape(asked.verb)}(?:s|es|ed|d)?\b(?:\s+of\b)?" if asked.verb else ""
    if asked.auxiliary == "be":
        verb = rf"(?:is|are|was|were)\b(?:\s+\w+ly)?(?:\s+{verb})?" if verb else r"(?:is|are|was|were)\b"
    said = re.compile(rf"(?:the\s+)?(?:[\w-]+'s\s+)?{re.escape(asked.subject.text)}\s+{verb}[\s:,]*", re.I)
    restated = said.match(item)
    return item[restated.end() :] or item if restated else item


def abstain(answer: Answer, reason: str, started: float) -> Answer:
    answer.abstained = True
    answer.reason = reason
    answer.text = f"I cannot answer this from the lake: {reason}"
    answer.timings["synthesis_s"] = time.perf_counter() - started
    return answer
