"""The planning pipeline: cache lookup -> a plan the question determines (no LLM call) -> generation ->
validation -> DataOps repair -> cache store."""

from __future__ import annotations

from functools import cached_property

from pydantic import BaseModel

from lakeplanner.errors import LakeplannerError, LLMUnavailableError
from lakeplanner.llm.base import LLM, get_llm
from lakeplanner.llm.embeddings import default_embedder
from lakeplanner.plan.cache import Context, KnownValues, PlanCache, cache_for, context_of, known_values
from lakeplanner.plan.dataops import plan_from_question, repair, restore_lost_parts
from lakeplanner.plan.generate import Generator, Pruner
from lakeplanner.plan.model import Plan
from lakeplanner.plan.single_source import one_table_plan
from lakeplanner.plan.validate import Code, Finding, LakeSchema
from lakeplanner.policy import OPEN, Access, denied_sources, scoped_contract
from lakeplanner.question import QuestionFrame, packs_for, read_question
from lakeplanner.question.read import with_values


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

    def frame_of(self, question: str) -> QuestionFrame:
        """The question's frame with the lake values it names bound to their columns."""
        frame = read_question(question, packs_for(self.contract))
        found = self.known.find(question)
        return with_values(frame, found, self.known.mentions(question, found))

    def generator(self) -> Generator:
        self.llm = self.llm or get_llm()
        return Generator(self.llm, self.contract, self.pruner)

    def plan(self, question: str) -> PlanResult:
        if self.cache is not None and (hit := self.cache.get(question, self.context)) is not None:
            fixed = repair(hit.plan, self.schema)
            if fixed.ok:
                return PlanResult(
                    question=question,
                    plan=fixed.plan,
                    findings=[],
                    edits=fixed.edits,
                    replans=0,
                    advice=[],
                    cache=hit.kind,
                    cached_from=hit.source_question,
                )
        determined = plan_from_question(question, self.known, self.schema) or one_table_plan(
            self.frame_of(question), self.schema
        )
        if determined is not None:
            plan, edits = determined
            if self.cache is not None:
                self.cache.put(question, plan, self.context)
            return PlanResult(question=question, plan=plan, findings=[], edits=edits, replans=0, advice=[])
        generator = self.generator()
        tables = self.pruner.select(question)
        try:
            draft = generator.generate(question, tables=tables)
            fixed = repair(draft, self.schema, replan=generator.replanner(question, tables))
        except LLMUnavailableError:  # nothing else can answer without it (the fallback search asks it too)
            raise
        except LakeplannerError as e:  # the LLM wrote garbage, or the repairs ran out: say so, don't crash
            return PlanResult(
                question=question,
                plan=Plan(question=question),
                findings=[Finding(code=Code.empty_plan, node=None, message=e.message)],
                edits=[],
                replans=0,
                advice=[f"no plan: {e.message}" + (f" ({e.hint})" if e.hint else "")],
                tables_shown=tables,
            )
        plan, restored = restore_lost_parts(fixed.plan, self.known, self.schema) if fixed.ok else (fixed.plan, [])
        if fixed.ok and self.cache is not None:
            self.cache.put(question, plan, self.context)
        return PlanResult(
            question=question,
            plan=plan,
            findings=fixed.findings,
            edits=fixed.edits + restored,
            replans=fixed.replans,
            advice=fixed.advice,
            tables_shown=tables,
        )
