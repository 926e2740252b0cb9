"""Plan generation (seed 000 §3.2): one LLM pass from the question and the lake's contract.

The prompt lists the tables (typed columns with examples, keys), the document collections and the
links between them. For large lakes the contract is pruned first to the tables most similar to the
question (embedding + word overlap) and their key neighbours, so the prompt stays bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field, create_model

from lakeplanner.contract.models import Contract, SourceKind
from lakeplanner.llm.base import LLM, Message, system, user
from lakeplanner.plan.examples import plan_examples
from lakeplanner.plan.filters import COLLECTION_FIELDS
from lakeplanner.plan.findings import Finding
from lakeplanner.plan.model import Plan, PlanNode, Tool
from lakeplanner.question.link import shared_word_scores

MAX_TABLES = 8
MAX_OUTPUT_TOKENS = 800

INSTRUCTIONS = """You turn a question about a data lake into a plan: a short list of steps. Each step \
reads exactly ONE source with one tool:
- sql: a sub-question answered from one table (filters, joins along the listed joins, counts, sums)
- vector: a sub-question answered by reading documents of one collection
- graph: follow the listed joins or links from earlier rows to related rows or documents
Steps are labelled $var_1, $var_2, ... in order. A later step uses an earlier step's result by writing \
$var_N.column in its question. List in `returns` the columns later steps need. Mark the step(s) whose \
result answers the question with should_expose_answer. Each step asks a small sub-question in plain \
words, never the whole question and never SQL. Use one sql step when one table (with its joins) \
answers the question; start with a vector step when the question names something only documents \
tell (a dispute, a memo, a clause, a reason). For a change, difference, average or percentage, one \
sql step fetches every value it needs (e.g. both years) and the answer does the arithmetic. Use only \
the sources and columns listed below."""


class GeneratedNode(BaseModel):
    """One step; its label is its position ($var_1 first), so the model cannot mislabel it."""

    tool: Tool
    source: str
    question: str = Field(max_length=240)
    returns: list[str] = Field(default_factory=list, max_length=6)
    should_expose_answer: bool = False
    answer_description: str | None = Field(None, max_length=160)


class GeneratedPlan(BaseModel):
    """The JSON the model must produce (also its constrained-decoding schema)."""

    nodes: list[GeneratedNode] = Field(max_length=4)


def output_model(sources: Sequence[str]) -> type[GeneratedPlan]:
    """GeneratedPlan whose `source` may only name the sources shown in the prompt, so constrained
    decoding cannot invent a table."""
    names = Literal[tuple(sources)]  # type: ignore[valid-type]
    node = create_model("GeneratedNode", __base__=GeneratedNode, source=(names, ...))
    return create_model("GeneratedPlan", __base__=GeneratedPlan, nodes=(list[node], Field(max_length=4)))


def table_description(contract: Contract, name: str) -> str:
    fields = contract.fields_of(name)
    return f"{name.replace('_', ' ')}: " + ", ".join(f"{f.column} ({', '.join(f.examples[:2])})" for f in fields)


Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass
class Pruner:
    """Ranks tables for a question; keeps the prompt bounded on lakes with many tables."""

    contract: Contract
    embed: Embed | None = None
    _vectors: np.ndarray | None = None

    def tables(self) -> list[str]:
        return [s.name for s in self.contract.sources if s.kind is SourceKind.table]

    def select(self, question: str, limit: int = MAX_TABLES) -> list[str]:
        names = self.tables()
        if len(names) <= limit:
            return names
        descriptions = [table_description(self.contract, n) for n in names]
        scores = np.array(shared_word_scores(question, descriptions), np.float32)
        if self.embed is not None:
            if self._vectors is None:
                self._vectors = self.embed(descriptions)
            scores += self._vectors @ self.embed([question])[0]
        top = [names[i] for i in np.argsort(-scores)[:limit]]
        return self.with_neighbours(top, limit + limit // 2)

    def with_neighbours(self, chosen: list[str], cap: int) -> list[str]:
        out = list(chosen)
        for fk in self.contract.foreign_keys:
            for a, b in ((fk.source, fk.target), (fk.target, fk.source)):
                if a in chosen and b not in out and len(out) < cap:
                    out.append(b)
        return out


def contract_prompt(contract: Contract, tables: list[str]) -> str:
    lines = ["Tables (sql, graph):"]
    for name in tables:
        lines.append(f"- {name}")
        for f in contract.fields_of(name):
            if f.column:
                examples = ", ".join(e[:30] for e in f.examples[:2])
                lines.append(f"    {f.column} {f.type}" + (f" e.g. {examples}" if examples else ""))
    keys = [f"{k.source}.{'+'.join(k.columns)}" for k in contract.identity_keys if k.identifier and k.source in tables]
    if keys:
        lines.append("Row keys: " + ", ".join(keys))
    joins = [
        f"{fk.source}.{fk.column} -> {fk.target}.{fk.target_column} ({fk.cardinality})"
        for fk in contract.foreign_keys
        if fk.source in tables or fk.target in tables
    ]
    if joins:
        lines.append("Joins: " + "; ".join(joins))
    collections = [s for s in contract.sources if s.kind is SourceKind.documents]
    if collections:
        lines.append("Document collections (vector, graph); metadata fields: " + ", ".join(COLLECTION_FIELDS[:8]))
        for source in collections:
            titles = ", ".join(
                f.examples[0] for f in contract.fields_of(source.name) if f.path == "title" and f.examples
            )
            lines.append(f"- {source.name}: {source.records} documents" + (f", e.g. {titles[:60]}" if titles else ""))
    links = [
        f"documents of {lk.collection} cite {lk.source}.{lk.column} values (chunk field linked_keys)"
        if lk.match == "cited"
        else f"{lk.source}.{lk.column} -> documents of {lk.collection} (by {lk.match})"
        for lk in contract.links
        if lk.source in tables
    ]
    if links:
        lines.append("Row-document links: " + "; ".join(links))
    return "\n".join(lines)


def plan_messages(
    question: str, contract: Contract, tables: list[str], feedback: Sequence[Finding] = ()
) -> list[Message]:
    messages = [
        system(f"{INSTRUCTIONS}\n\n{plan_examples(contract)}\n\n", contract_prompt(contract, tables)),
        user(f"Question: {question}"),
    ]
    if feedback:
        problems = "\n".join(f"- {f.code.value} {f.node or ''}: {f.message}" for f in feedback)
        messages.append(user(f"A previous plan had these problems:\n{problems}\nWrite a corrected plan."))
    return messages


def planner_prefix(contract: Contract) -> list[Message]:
    """The system prompt every planning call on this lake starts with, as far as no question decides it:
    the instructions and examples, and the schema too when the lake has few enough tables to be shown
    whole (a larger lake's schema slice depends on the question)."""
    tables = Pruner(contract).tables()
    if len(tables) <= MAX_TABLES:
        return plan_messages("", contract, tables)[:1]
    return [system(f"{INSTRUCTIONS}\n\n{plan_examples(contract)}\n\n")]


def prepare_planning(llm: LLM, contract: Contract) -> int:
    """Evaluate the planner's fixed prompt for this lake now (and keep its state, on disk too), so that
    the first question, in this process or a later one, does not wait for it; returns the tokens evaluated."""
    return llm.for_purpose("plan").prepare(planner_prefix(contract))


def to_plan(question: str, generated: GeneratedPlan) -> Plan:
    return Plan(
        question=question,
        nodes=tuple(
            PlanNode(
                question=n.question,
                tool=n.tool.value,
                label=f"$var_{i}",
                source=n.source,
                returns=tuple(n.returns),
                should_expose_answer=n.should_expose_answer,
                answer_description=n.answer_description,
            )
            for i, n in enumerate(generated.nodes, 1)
        ),
    )


@dataclass
class Generator:
    llm: LLM
    contract: Contract
    pruner: Pruner

    def generate(self, question: str, feedback: Sequence[Finding] = (), tables: list[str] | None = None) -> Plan:
        tables = tables if tables is not None else self.pruner.select(question)
        sources = tables + [s.name for s in self.contract.sources if s.kind is SourceKind.documents]
        done = self.llm.complete(
            plan_messages(question, self.contract, tables, feedback),
            output_model(sources),
            max_tokens=MAX_OUTPUT_TOKENS,
        )
        return to_plan(question, done.value)

    def replanner(self, question: str, tables: list[str]) -> Callable[[Plan, list[Finding]], Plan]:
        return lambda plan, findings: self.generate(question, findings, tables)
