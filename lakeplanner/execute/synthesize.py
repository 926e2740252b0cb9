"""The final answer (seed 000 §3.5, seed 002 §3.5, App. D): one LLM call over the exposed results,
arithmetic by a safe evaluator, a grounding check, composite confidence, citations, abstention."""

from __future__ import annotations

import time
from collections.abc import Callable

from lakeplanner.contract.models import Contract
from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.answer_prompt import EMPTY_DRAFT, Draft, numbered_results, repair_request, synthesis_messages
from lakeplanner.execute.by_code import cell_answer, computed_by_code, counted_rows, fallback_value, passage_answer
from lakeplanner.execute.definitions import defined_span
from lakeplanner.execute.grounding import normalised
from lakeplanner.execute.results import Answer, NodeResult
from lakeplanner.execute.settle import definition, settle, settled_answer
from lakeplanner.lineage.steps import Recorder
from lakeplanner.llm.base import LLM, assistant, user
from lakeplanner.question import QuestionFrame
from lakeplanner.question.coverage import asked_concepts, spellings, sufficiency
from lakeplanner.question.words import (
    hyphenated_tokens,
    singular,
)

NOTHING_MENTIONS = "nothing in the lake mentions"  # the coverage gate's reason
SYNTHESIS_ATTEMPTS = 2  # a first draft and one repair
Mentions = Callable[[list[str]], "set[str] | None"]


def uncovered_terms(
    frame: QuestionFrame, contract: Contract, results: list[NodeResult], mentions: Mentions | None = None
) -> list[str]:
    """Coverage gate (seed 002 §3.5): the words of the attribute a what-question asks ("what is the X of
    ...") that neither the schema nor any retrieved row, column or passage mentions, nor (`mentions`)
    any text of the lake. When all of them are missing, the lake cannot hold what the question asks
    for (a phone number in a lake without phone numbers), whatever the LLM says. A word of the
    attribute that names a column covers it ("code" of "the postal code" in a column `code`).
    Passages alone never leave a "what KIND ..." question uncovered: "a British anthropologist"
    answers "what profession" without the word; table columns do name what they hold."""
    if frame.asked_attribute is None or (frame.asks_kind and not any(r.tool == "sql" and r.rows for r in results)):
        return []
    concepts = asked_concepts(frame)
    unresolved = {t.lower() for t in sufficiency(frame.text, contract).unresolved}
    if not concepts or any(t not in unresolved for t in concepts):
        return []
    seen = " ".join(
        [normalised(f"{k} {v}") for r in results for row in r.rows for k, v in row.items() if v is not None]
        + [normalised(e.snippet) for r in results for e in r.evidence]
        + [normalised(run.sql) for r in results for run in r.sql if run.rows]  # its filters say what rows are
    )
    words = set().union(*map(spellings, hyphenated_tokens(seen)))
    missing = [t for t in concepts if not spellings(t) & words]
    if len(missing) < len(concepts):
        return []
    found = mentions([singular(t) for t in missing]) if mentions else set()
    return [] if found else missing  # None: the lake is too large to scan, the retrieved results decide


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
    by_code = (
        cell_answer(frame, exposed) or counted_rows(frame, exposed) or read or (EMPTY_DRAFT if code.decides else None)
    )
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
        outcome = definition(frame, outcome.draft, defined, index, exposed)
    if outcome.c_ground == 0.0:
        return abstain(answer, outcome.failure, started)
    return settled_answer(answer, outcome, frame, results, exposed, index, started)


def abstain(answer: Answer, reason: str, started: float) -> Answer:
    answer.abstained = True
    answer.reason = reason
    answer.text = f"I cannot answer this from the lake: {reason}"
    answer.timings["synthesis_s"] = time.perf_counter() - started
    return answer
