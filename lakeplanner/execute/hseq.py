"""HSEQ evidence iteration (seed 001 §2.4-2.5, App. 9.1, 9.3.5).

A stream of segments (paragraphs of the retrieved documents, in retrieval order) is shown through a
window of W unseen segments. Each step the LLM selects up to k of them, may name the answer it read,
and says whether the selection suffices. Selected segments pull their structural neighbours (the
section heading, the next paragraph, the row a document is linked to) to the front of the stream.
The loop stops on sufficiency after T_min steps, at T_max, when the evidence token budget is spent,
or when the stream runs dry; the selection becomes the canonical evidence package.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from pydantic import BaseModel, Field, create_model

from lakeplanner.errors import LLMOutputError
from lakeplanner.execute.results import Evidence, canonical, document_address
from lakeplanner.ingest.segments import content_hash
from lakeplanner.lineage.steps import Recorder
from lakeplanner.llm.base import LLM, Message, clipped, system, user
from lakeplanner.question import Operation, QuestionFrame

SNIPPET_CHARS = 400
SELECT_TOKENS = 240

ITERATE_INSTRUCTIONS = """You pick evidence for a question from numbered passages of a data lake. \
Select the 1 to {k} passages most useful for answering the question. Set sufficient to true when the \
passages selected so far are enough to answer. If they state the answer, copy it into answer (a short \
value: a name, id, number, date or phrase, as written); else leave it empty."""


@dataclass(frozen=True)
class Segment:
    """A paragraph, sentence or row of the lake's HSEQ segments table."""

    id: str
    level: str
    parent: str | None
    source: str
    container: str  # document id, or table name for rows
    position: int
    content: str
    start: int | None = None
    end: int | None = None
    row_key: str | None = None
    heading: str | None = None
    hash: str = ""

    def uri(self) -> str:
        return document_address(self.source, self.container)

    def evidence(self) -> Evidence:
        if self.level == "row":
            return Evidence.of(
                "row",
                self.source,
                (self.position, self.position),
                self.content[:SNIPPET_CHARS],
                row_key=self.row_key,
                sha1=self.hash,
            )
        return Evidence.of(
            self.level,
            self.uri(),
            (self.start or 0, self.end or 0),
            self.content[:SNIPPET_CHARS],
            document_id=self.container,
            heading=self.heading,
            sha1=self.hash,
        )

    def tokens(self) -> int:
        return len(self.content[:SNIPPET_CHARS]) // 4 + 1


def passages(paragraph: Segment, sentences: Sequence[Segment]) -> list[Segment]:
    """A paragraph longer than a snippet, as passages: runs of its whole sentences that each fit one
    (a longer sentence stands alone), each the paragraph's exact text between its offsets, so no part
    of the paragraph is out of the LLM's sight. A paragraph that fits, or has one run, stays whole."""
    runs: list[list[Segment]] = []
    for sentence in sorted(sentences, key=lambda x: x.start or 0):
        if runs and (sentence.end or 0) - (runs[-1][0].start or 0) <= SNIPPET_CHARS:
            runs[-1].append(sentence)
        else:
            runs.append([sentence])
    if len(paragraph.content) <= SNIPPET_CHARS or len(runs) < 2 or paragraph.start is None:
        return [paragraph]
    out = []
    for i, run in enumerate(runs):
        start, end = run[0].start or 0, run[-1].end or 0
        text = paragraph.content[start - paragraph.start : end - paragraph.start]
        out.append(
            replace(
                paragraph,
                id=f"{paragraph.id}/r{i}",
                level="passage",
                parent=paragraph.id,
                content=text,
                start=start,
                end=end,
                hash=content_hash(text),
            )
        )
    return out


# Question-type guidance (seed 001 §2.4: heuristic guidance when the planner gives none): what kind
# of evidence ends the search, from the frame of the step's question.
GUIDANCE = {
    "reason": "a passage stating the reason",
    "number": "a passage stating the number or amount asked for",
    "date": "a passage stating the date or period",
    "year": "a passage stating the date or period",
    "entity": "a passage naming the party",
}
GUIDANCE_BY_DEFAULT = "passages that answer the question"


def guidance_for(frame: QuestionFrame | None, planner_hint: str | None = None) -> str:
    """The planner's description of the answer when it gave one, else the guidance for the frame of
    the step's question."""
    if planner_hint:
        return planner_hint
    if frame is None:
        return GUIDANCE_BY_DEFAULT
    kind = "reason" if frame.operation is Operation.reason else frame.shape
    return GUIDANCE.get(kind, GUIDANCE_BY_DEFAULT)


class Budget(BaseModel):
    window: int = 8
    top_k: int = 3
    min_steps: int = 1
    max_steps: int = 3
    evidence_tokens: int = 1200


class Selection(BaseModel):
    """Every field is required, so constrained decoding cannot stop at an empty object."""

    selected: list[str]
    sufficient: bool
    answer: clipped(200)


def selection_model(ids: Sequence[str], k: int) -> type[Selection]:
    """Selection whose ids are limited to the window (constrained decoding cannot invent one)."""
    choice = Literal[tuple(ids)]  # type: ignore[valid-type]
    return create_model("Selection", __base__=Selection, selected=(list[choice], Field(min_length=1, max_length=k)))


@dataclass
class Iteration:
    """The state of one HSEQ run; `trace` keeps each step's window, picks and flag for the lineage."""

    selected: list[Segment] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    answer: str = ""
    sufficient: bool = False
    steps: int = 0
    stop: str = ""
    trace: list[dict] = field(default_factory=list)


Neighbours = Callable[[Segment], list[Segment]]


def window_prompt(question: str, guidance: str, window: list[Segment], chosen: list[Segment], k: int) -> list[Message]:
    lines = [f"Question: {question}"]
    if guidance:
        lines.append(f"Look for: {guidance}")
    if chosen:
        lines.append("Already selected:\n" + "\n".join(f"- {s.content[:200]}" for s in chosen))
    lines.append("Passages:")
    for i, s in enumerate(window, 1):
        where = f"[{s.container}" + (f" / {s.heading}" if s.heading else "") + "]"
        lines.append(f"p{i} {where} {s.content[:SNIPPET_CHARS]}")
    return [system(ITERATE_INSTRUCTIONS.format(k=k)), user("\n".join(lines))]


def iterate(
    question: str,
    stream: list[Segment],
    llm: LLM,
    recorder: Recorder,
    *,
    budget: Budget,
    guidance: str = "",
    neighbours: Neighbours = lambda s: [],
) -> Iteration:
    state = Iteration()
    queue = list(stream)
    while True:
        window = [s for s in queue if s.id not in state.seen][: budget.window]
        if not window:
            state.stop = "stream exhausted"
            break
        ids = [f"p{i}" for i in range(1, len(window) + 1)]
        fallback = ""
        try:
            pick: Selection = recorder.complete(
                llm,
                "hseq.select",
                window_prompt(question, guidance, window, state.selected, budget.top_k),
                selection_model(ids, budget.top_k),
                max_tokens=SELECT_TOKENS,
                data_chars=sum(len(s.content[:SNIPPET_CHARS]) for s in window)
                + sum(len(s.content[:200]) for s in state.selected),
            ).value
        except LLMOutputError as e:  # keep the reranker's order rather than lose the node
            pick = Selection(selected=ids[: budget.top_k], sufficient=False, answer="")
            fallback = f"the LLM gave no valid selection; took the {budget.top_k} best ranked: {e.message[:120]}"
        chosen = [window[ids.index(i)] for i in dict.fromkeys(pick.selected)][: budget.top_k]
        state.steps += 1
        state.seen |= {s.id for s in window}
        state.selected += [s for s in chosen if s not in state.selected]
        if pick.answer.strip():
            state.answer = pick.answer.strip()
        state.sufficient = pick.sufficient and bool(state.selected)
        state.trace.append(
            {"window": [s.id for s in window], "selected": [s.id for s in chosen], "sufficient": pick.sufficient}
            | ({"fallback": fallback} if fallback else {})
        )
        front = [n for s in chosen for n in neighbours(s) if n.id not in state.seen]
        queue = list(dict.fromkeys(front)) + [s for s in queue if s.id not in state.seen and s not in front]
        if state.sufficient and state.steps >= budget.min_steps:
            state.stop = "sufficient"
            break
        if state.steps >= budget.max_steps:
            state.stop = "step cap"
            break
        if sum(s.tokens() for s in state.selected) >= budget.evidence_tokens:
            state.stop = "token budget"
            break
    return state


def package(selected: list[Segment]) -> list[Evidence]:
    return canonical([s.evidence() for s in selected])
