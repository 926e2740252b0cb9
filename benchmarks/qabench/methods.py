"""The four methods, one function each, over the same lake and the same LLM.

- lakeplanner: the product (`ask`: plan with validation, repair and cache -> execute -> synthesize).
- dag: a plain DAG planner in the style of LLMCompiler: one generated plan, executed as is (no
  validation, repair or cache), answered by the same synthesis.
- rag: retrieve from both stores (top table rows by the reranker, top chunks by hybrid search),
  one generation.
- react: a thought/action loop over an SQL tool and a search tool, at most 8 steps; at the limit,
  or when it repeats a step it has taken (a loop that would only repeat itself), it must give its
  final answer from what it has seen.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from typing import Literal

import duckdb
from pydantic import BaseModel, Field

from lakeplanner import Lake
from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.ask import ask
from lakeplanner.execute.engine import Executor
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.ingest.readers import PROVENANCE_FILE
from lakeplanner.llm.base import LLM, Message, RoutedLLM, Usage
from lakeplanner.llm.embeddings import default_embedder, default_reranker
from lakeplanner.plan.generate import Generator, Pruner, contract_prompt
from lakeplanner.plan.planner import PlanResult
from lakeplanner.question import QuestionFrame

RAG_ROWS, RAG_CHUNKS, REACT_STEPS, OBSERVATION_CHARS = 12, 5, 8, 1500


class Outcome(BaseModel):
    value: str | list[str] | None
    text: str = ""  # lakeplanner's answer sentence
    abstained: bool = False
    reason: str | None = None
    data_chars: int = 0
    confidence: float | None = None  # lakeplanner's and the plain DAG's composite confidence
    trace: list[str] = []  # ReAct's steps, a trace id for the others


class CountingBackend:
    """Wraps a backend to count every generation, whoever calls it (planner, nodes, synthesis)."""

    def __init__(self, inner, tally: list[Usage] | None = None) -> None:
        self.inner = inner
        self.tally = tally or [Usage()]  # shared by the backends of one routed LLM

    @property
    def usage(self) -> Usage:
        return self.tally[0]

    def generate(self, *args, **kwargs):
        raw = self.inner.generate(*args, **kwargs)
        self.tally[0] += raw.usage
        return raw

    def sibling(self, inner) -> CountingBackend:
        """A wrapper of another backend that counts into the same tally."""
        return CountingBackend(inner, self.tally)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def counting(llm: LLM, wrap: Callable[..., CountingBackend] = CountingBackend) -> tuple[LLM, CountingBackend]:
    """`llm` with every generation counted (by `wrap`, a CountingBackend class); a routed LLM's other
    models count into the same usage."""
    backend = wrap(llm.backend)
    counted = LLM(backend, llm.settings)
    if not isinstance(llm, RoutedLLM):
        return counted, backend
    backends = {id(llm.backend): backend}
    for routed in llm.routes.values():
        backends.setdefault(id(routed.backend), backend.sibling(routed.backend))
    routes = {p: LLM(backends[id(r.backend)], r.settings) for p, r in llm.routes.items()}
    return RoutedLLM(counted, routes), backend


def message(role: str, content: str) -> Message:
    return Message(role=role, content=content)


# ---------------------------------------------------------------- lakeplanner and the plain DAG


class OnePassPlanner:
    """LLMCompiler-style planning: the generated plan is executed as it comes."""

    def __init__(self, lake: Lake, llm: LLM) -> None:
        contract = lake.contract
        pruner = Pruner(contract, embed=lambda texts: default_embedder().embed_passages(list(texts)))
        self.generator = Generator(llm, contract, pruner)

    def plan(self, frame: QuestionFrame) -> PlanResult:
        plan = self.generator.generate(frame.text).framed(frame)
        return PlanResult(question=frame.text, plan=plan, findings=[], edits=[], replans=0, advice=[])


def answer_outcome(answer) -> Outcome:
    return Outcome(
        value=None if answer.abstained else (answer.items or answer.value),
        text=answer.text or "",
        abstained=answer.abstained,
        reason=answer.reason,
        data_chars=answer.data_chars,
        confidence=answer.confidence,
        trace=[answer.trace_id or ""],
    )


def run_lakeplanner(lake: Lake, question: str, llm: LLM) -> Outcome:
    executor = Executor(lake, llm, ExecSettings(mode="serial"))
    return answer_outcome(ask(lake, question, executor))


def run_dag(lake: Lake, question: str, llm: LLM) -> Outcome:
    executor = Executor(lake, llm, ExecSettings(mode="serial"))
    try:
        return answer_outcome(ask(lake, question, executor, planner=OnePassPlanner(lake, llm), use_cache=False))
    except LakeplannerError as e:
        return Outcome(value=None, abstained=True, reason=e.message)


# ---------------------------------------------------------------- RAG


class RagAnswer(BaseModel):
    answer: list[str] = Field(description="the answer: one item per span or number, one number for a calculation")


RAG_INSTRUCTIONS = (
    "Answer the question from the table rows and passages below. Copy spans exactly; for a calculation "
    "give only the resulting number. Reply with JSON."
)


def row_texts(lake: Lake) -> list[str]:
    rows = []
    for name in lake.table_names():
        for row in lake.table(name).scan().to_arrow().to_pylist():
            cells = [f"{k}={v}" for k, v in row.items() if not k.startswith("_lp_") and v not in (None, "")]
            rows.append(f"{name}: " + "; ".join(cells))
    return rows


def top_rows(lake: Lake, question: str, k: int) -> list[str]:
    rows = row_texts(lake)
    if len(rows) <= k:
        return rows
    scores = default_reranker().score(question, rows)
    best = sorted(range(len(rows)), key=lambda i: -scores[i])[:k]
    return [rows[i] for i in sorted(best)]


def top_chunks(lake: Lake, question: str, k: int) -> list[str]:
    vector = default_embedder().embed_query(question)
    hits = [h for c in lake.vectors.collections() for h in lake.vectors.hybrid_search(c, question, vector, limit=k)]
    hits.sort(key=lambda h: -h.score)
    return [h.chunk.text for h in hits[:k]]


def run_rag(lake: Lake, question: str, llm: LLM) -> Outcome:
    rows, chunks = top_rows(lake, question, RAG_ROWS), top_chunks(lake, question, RAG_CHUNKS)
    context = "Table rows:\n" + "\n".join(rows) + "\n\nPassages:\n" + "\n\n".join(chunks)
    done = llm.complete(
        [message("system", RAG_INSTRUCTIONS), message("user", f"{context}\n\nQuestion: {question}")], RagAnswer
    )
    return Outcome(value=done.value.answer or None, data_chars=sum(map(len, rows)) + sum(map(len, chunks)))


# ---------------------------------------------------------------- ReAct


class ReactStep(BaseModel):
    thought: str = Field(description="what to find out next, briefly")
    action: Literal["sql", "search", "finish"]
    input: str = Field(description="a DuckDB SELECT, a search text, or the final answer")


REACT_INSTRUCTIONS = """Answer the question by using tools, one step at a time.
Tools:
- sql: run one DuckDB SELECT over the tables below; you see up to 20 result rows.
- search: find passages in the documents; you see the 3 best.
- finish: give the final answer (a span, a number, or items separated by "; ").
Do arithmetic in SQL. Reply with JSON: thought, action, input."""


def sql_observation(lake: Lake, query: str) -> str:
    try:
        result = lake.sql(query)
    except (duckdb.Error, ValueError) as e:
        return f"SQL error: {str(e).splitlines()[0]}"
    columns = [c for c in result.column_names if not c.startswith("_lp_") and c != PROVENANCE_FILE]
    rows = result.select(columns).slice(0, 20).to_pylist()
    return "\n".join("; ".join(f"{k}={v}" for k, v in r.items()) for r in rows) or "no rows"


def run_react(lake: Lake, question: str, llm: LLM) -> Outcome:
    tools: dict[str, Callable[[str], str]] = {
        "sql": lambda q: sql_observation(lake, q),
        "search": lambda q: "\n\n".join(top_chunks(lake, q, 3)) or "nothing found",
    }
    system = REACT_INSTRUCTIONS + "\n\n" + contract_prompt(lake.contract, lake.table_names())
    transcript, shown, taken = [], 0, set()
    for _ in range(REACT_STEPS):
        messages = [message("system", system), message("user", f"Question: {question}")]
        if transcript:
            messages.append(message("user", "Steps so far:\n" + "\n".join(transcript) + "\nNext step?"))
        step = llm.complete(messages, ReactStep).value
        if step.action == "finish":
            return Outcome(value=step.input.strip() or None, data_chars=shown, trace=transcript)
        if (step.action, step.input.strip()) in taken:
            break
        taken.add((step.action, step.input.strip()))
        observation = tools[step.action](step.input)[:OBSERVATION_CHARS]
        shown += len(observation)
        transcript.append(f"{step.action}: {step.input}\nObservation: {observation}")
    # at the step limit or on a repeated step the loop must answer from what it has seen, as ReAct
    # setups usually force
    messages = [
        message("system", system),
        message("user", f"Question: {question}"),
        message("user", "Steps so far:\n" + "\n".join(transcript) + "\nNo more tools: give the final answer."),
    ]
    final = llm.complete(messages, RagAnswer).value.answer
    transcript.append(f"forced finish: {final}")
    return Outcome(value=final or None, data_chars=shown, trace=transcript)


METHODS: dict[str, Callable[[Lake, str, LLM], Outcome]] = {
    "lakeplanner": run_lakeplanner,
    "rag": run_rag,
    "react": run_react,
    "dag": run_dag,
}


def timed(method: str, lake: Lake, question: str, llm: LLM) -> tuple[Outcome, Usage, float, str | None]:
    """Run one method; an LLM or engine failure is recorded as an abstention with its message, and so is
    a crash (with its type), so that one question cannot stop a run that would crash on it again on resume."""
    counted, backend = counting(llm)
    started = time.perf_counter()
    error = None
    try:
        outcome = METHODS[method](lake, question, counted)
    except LakeplannerError as e:
        error = e.message
        outcome = Outcome(value=None, abstained=True, reason=e.message)
    except Exception as e:  # a bug in one question is recorded, the run goes on
        error = f"{type(e).__name__}: {e}"
        traceback.print_exc()
        outcome = Outcome(value=None, abstained=True, reason=error)
    return outcome, backend.usage, time.perf_counter() - started, error
