"""Optional LLM audit (seed 000 §3.3): does the plan still answer the question that was asked?"""

from __future__ import annotations

from pydantic import BaseModel, Field

from lakeplanner.llm.base import LLM, system, user
from lakeplanner.plan.findings import Code, Finding
from lakeplanner.plan.model import Plan

INSTRUCTIONS = """You review query plans. Given a question and the steps of a plan, say whether running \
the steps answers exactly that question. Flag drift: a different entity, attribute, aggregate, filter or \
time range than asked, or a step that answers something else. Be brief."""


class AuditVerdict(BaseModel):
    answers_the_question: bool
    problems: list[str] = Field(default_factory=list, max_length=4)


def describe(plan: Plan) -> str:
    return "\n".join(
        f"{n.label} [{n.tool} on {n.source}] {n.question}" + (" (answer)" if n.should_expose_answer else "")
        for n in plan.nodes
    )


def audit(llm: LLM, question: str, plan: Plan) -> list[Finding]:
    """An intent_drift finding per problem the model names; none when it judges the plan faithful."""
    verdict = llm.complete(
        [system(INSTRUCTIONS), user(f"Question: {question}\nPlan:\n{describe(plan)}")], AuditVerdict, max_tokens=200
    ).value
    if verdict.answers_the_question:
        return []
    problems = verdict.problems or ["the plan does not answer the question"]
    return [Finding(code=Code.intent_drift, node=None, message=p) for p in problems]
