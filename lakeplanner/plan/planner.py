"""The planning pipeline: cache lookup -> a plan the question determines (no LLM call) -> generation ->
validation -> DataOps repair -> cache store."""

from __future__ import annotations

from functools import cached_property

from pydantic import BaseModel

from lakeplanner.errors import LakeplannerError, LLMUnavailableError
from lakeplanner.llm.base import LLM, get_llm
from lakeplanner.llm.embeddings import default_embedder
from lakeplanner.plan.cache import Context, PlanCache, cache_for, context_of, known_values
from lakeplanner.plan.dataops import Replanner, repair
from lakeplanner.plan.findings import Code, Finding
from lakeplanner.plan.generate import Generator, Pruner
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan
from lakeplanner.plan.restore import plan_from_question, restore_lost_parts
from lakeplanner.plan.single_source import one_table_plan
from lakeplanner.policy import OPEN, Access, denied_sources, scoped_contract
from lakeplanner.question import QuestionFrame
from lakeplanner.question.asked import frame_question
from lakeplanner.question.known import KnownValues
from lakeplanner.question.lexicon import packs_for


class PlanResult(BaseModel):
    question: str
    plan: Plan
    findings: list[Finding]
    edits: list[str]
    replans: int
    advice: list[str]
    cache: str | None = None  # exact, template, semantic, or None when generated
    cached_from: str | None = None
    tables_shown: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.findings


class Planner:
    """Plans questions over one lake for one context (role, policy flags)."""

    def __init__(
        self,
        lake,
        llm: LLM | None = None,
        *,
        context: Context | None = None,
        use_cache: bool = True,
        access: Access = OPEN,
    ) -> None:
        """`access` decides what the planner's prompt shows and what a valid plan may read; plans are
        cached per `context`, by default the access's role and policy version."""
        contract = scoped_contract(lake.contract, access)
        self.context = context or context_of(access)
        self.schema = LakeSchema.from_contract(contract, denied_sources(lake.contract, access))
        self.llm = llm
        self.pruner = Pruner(contract, embed=lambda texts: default_embedder().embed_passages(list(texts)))
        self.contract = contract
        self.cache: PlanCache | None = cache_for(lake, embed=default_embedder().embed_query) if use_cache else None
        self.lake = lake

    @cached_property
    def known(self) -> KnownValues:
        """The key values the lake holds, to find those a question names (the cache's, when it has one)."""
        return self.cache.known if self.cache is not None else known_values(self.lake)

    def read(self, question: str, llm: LLM | None = None) -> QuestionFrame:
        """The question's frame under the lake's packs, filled by `llm` when given, with the lake
        values it names bound to their columns: what `plan` is handed."""
        return frame_question(question, packs_for(self.contract), llm=llm, held=self.known)

    def plan_question(self, question: str) -> PlanResult:
        """`plan` of the question read without filling its open fields (the CLI's and service's plan)."""
        return self.plan(self.read(question))

    def generator(self) -> Generator:
        self.llm = self.llm or get_llm()
        return Generator(self.llm, self.contract, self.pruner)

    def plan(self, frame: QuestionFrame) -> PlanResult:
        """The plan for the question `frame` read (filled and bound: see `read`); every plan it
        returns carries the frame, and each node the frame of its sub-question."""
        question = frame.text
        if self.cache is not None and (hit := self.cache.get(frame, self.context)) is not None:
            fixed = repair(hit.plan.framed(frame), self.schema)
            if fixed.ok:
                return PlanResult(
                    question=question,
                    plan=fixed.plan.framed(frame),
                    findings=[],
                    edits=fixed.edits,
                    replans=0,
                    advice=[],
                    cache=hit.kind,
                    cached_from=hit.source_question,
                )
        determined = plan_from_question(frame, self.known, self.schema) or one_table_plan(frame, self.schema)
        if determined is not None:
            plan, edits = determined
            plan = plan.framed(frame)
            if self.cache is not None:
                self.cache.put(frame, plan, self.context)
            return PlanResult(question=question, plan=plan, findings=[], edits=edits, replans=0, advice=[])
        generator = self.generator()
        tables = self.pruner.select(question)
        try:
            draft = generator.generate(question, tables=tables).framed(frame)
            replan = framed_replans(generator.replanner(question, tables), frame)
            fixed = repair(draft, self.schema, replan=replan)
        except LLMUnavailableError:  # nothing else can answer without it (the fallback search asks it too)
            raise
        except LakeplannerError as e:  # the LLM wrote garbage, or the repairs ran out: say so, don't crash
            return PlanResult(
                question=question,
                plan=Plan(question=question, frame=frame),
                findings=[Finding(code=Code.empty_plan, node=None, message=e.message)],
                edits=[],
                replans=0,
                advice=[f"no plan: {e.message}" + (f" ({e.hint})" if e.hint else "")],
                tables_shown=tables,
            )
        if fixed.ok:
            plan, restored = restore_lost_parts(fixed.plan, frame, self.known, self.schema)
        else:
            plan, restored = fixed.plan.framed(frame), []
        if fixed.ok and self.cache is not None:
            self.cache.put(frame, plan, self.context)
        return PlanResult(
            question=question,
            plan=plan,
            findings=fixed.findings,
            edits=fixed.edits + restored,
            replans=fixed.replans,
            advice=fixed.advice,
            tables_shown=tables,
        )


def framed_replans(replan: Replanner, frame: QuestionFrame) -> Replanner:
    """A replanner whose drafts carry the question's frame, like the first draft."""
    return lambda plan, findings: replan(plan, findings).framed(frame)
