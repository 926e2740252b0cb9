"""Settling a draft into the answer: items copied as the results write them, years and keys put
back, sentences that state the answer, the answer's citations, and why a draft fails."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.answer_prompt import Draft, with_row_key
from lakeplanner.execute.arithmetic import (
    derivation,
    is_number,
    year_of,
)
from lakeplanner.execute.by_code import ByCode, distinct_rows, fallback_value, last_statement_aggregates
from lakeplanner.execute.grounding import (
    _EXPRESSION,
    composite_confidence,
    evaluate,
    folded,
    format_number,
    grounding,
    normalised,
    numbers_in,
    standalone_numbers,
)
from lakeplanner.execute.results import Answer, Citation, NodeResult, document_address
from lakeplanner.ingest.segments import SEGMENTS_TABLE
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.answers import restates
from lakeplanner.question.predicate import unrestated
from lakeplanner.question.words import (
    mention_pattern,
    stem,
)
from lakeplanner.question.years import is_year_number, years_in

_BRACKETED_KEY = re.compile(r"\s*\([^()]*\)$")  # "Ann Lee (P1003)": a label with its key


def rows_for_documents(frame: QuestionFrame, draft: Draft, exposed: list[NodeResult]) -> Draft:
    """ "Which X ...?" answered with the id of the document about it ("DOC-K-1010"): the key of
    the row the document is linked to ("K-1010"), in the answer and the sentence; rows were asked for.
    The id may come as the evidence's address, its collection first ("documents_x/DOC-K-1010")."""
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
        sentence = mention_pattern(document).sub(lambda _, key=about[document]: key, sentence)
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
        sentence = frame.with_answer(f"{items[0]} {frame.unit.text}")
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
            stated = frame.with_answer(", ".join(items))
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
        draft = draft.model_copy(update={"sentence": frame.with_answer(items[0]), "abstain": False})
    if c_ground == 0.0 and (cell := fallback_value(exposed, frame)) is not None:
        description = next((r.answer_description for r in exposed if r.answer_description), None) or "Answer"
        items, c_ground, calculated = [cell], 1.0, ""
        draft = draft.model_copy(update={"sentence": f"{description}: {cell}."})
    if c_ground == 0.0:
        said = "; ".join(items) or draft.calculation
        failure = f"the answer {said!r} is not supported by the retrieved rows or passages"
        return Settled(items, draft, failure=failure, repairable=True)
    if unsupported_numbers(draft.sentence, items, exposed, question) or omits_the_answer(draft.sentence, items, frame):
        draft = draft.model_copy(update={"sentence": frame.with_answer("; ".join(items))})
    return Settled(items, draft, c_ground, calculated)


def counts_the_rows(frame: QuestionFrame, items: list[str], exposed: list[NodeResult]) -> bool:
    """A count question answered with the number of rows its one table step returned ("how many
    X of K036 are overdue?" over the rows of those X): a figure no cell states, yet
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
    beside the answer ("Overdue amounts accrue a charge ..." for "60 days"). A yes/no answer is
    said in words of its own."""
    if frame.operation is Operation.yes_no or not items:
        return False
    said, numbers = normalised(sentence), standalone_numbers(normalised(sentence))

    def stated(item: str) -> bool:
        wanted = standalone_numbers(normalised(item))
        return normalised(item) in said or (bool(wanted) and wanted <= numbers)

    return not any(map(stated, items))


def definition(
    frame: QuestionFrame,
    draft: Draft,
    defined: tuple[NodeResult, int, str],
    index: dict[str, tuple[NodeResult, int | None]],
    exposed: list[NodeResult],
) -> Settled:
    """The span a passage states for "what does X represent?", when the LLM's answers failed; cited."""
    result, i, span = defined
    source = next(key for key, (r, j) in index.items() if r is result and j == i)
    sentence = frame.with_answer(span)
    draft = draft.model_copy(update={"sentence": sentence, "sources": [source], "abstain": False})
    return Settled([span], draft, grounding(span, exposed))


def whole_cell(item: str, frame: QuestionFrame, results: list[NodeResult]) -> str:
    """The one text cell a one-row lookup read, when the LLM copied only a part of it ("5155" of the
    code "5155 ABC"); not for a question asking a number, where a part may be the answer."""
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
    if len(numbers) != 1 or is_year_number(numbers[0]):
        return item
    years = {
        year_of(row)
        for r in results
        for row in r.rows
        if any(is_number(v) and round(float(v), 6) == round(numbers[0], 6) for v in row.values())
    }
    return str(years.pop()) if len(years) == 1 and None not in years else item


def year_stated(item: str, sentence: str, frame: QuestionFrame) -> str:
    """Asked for a year, the LLM named something else ("Jane Roe") while its sentence states the
    year ("... has worked in France since 2000"): the one year the sentence states and the question
    does not. The item itself when it holds a number or the sentence states no such single year."""
    if numbers_in(item):
        return item
    years = set(years_in(sentence)) - set(frame.years)
    return str(years.pop()) if len(years) == 1 else item


def answer_items(frame: QuestionFrame, written: list[str]) -> list[str]:
    """The LLM's items, blank and repeated ones dropped, without a restated question ("The table shows
    X" to "what does the table show?" is X); only the first when the question asks for one value."""
    items = list(dict.fromkeys(unrestated(frame, item) for item in written if item.strip()))
    return items if frame.several else items[:2] if frame.second_ask else items[:1]


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
