"""One question of a batch asked: its answer row, or the row of the error that stopped it."""

from __future__ import annotations

import time

from pydantic import BaseModel

from lakeplanner.batch.answers import answer_row, failure_row
from lakeplanner.batch.inputs import BatchQuestion
from lakeplanner.execute.ask import ask
from lakeplanner.execute.engine import Executor
from lakeplanner.plan.planner import PlanResult
from lakeplanner.policy import OPEN, Access, Policy


class Asking(BaseModel):
    """How every question of a run is asked (travels to each pool member)."""

    policy: Policy | None = None
    run_id: str
    plan_reuse: bool = True


def access_for(question: BatchQuestion, policy: Policy | None) -> Access:
    """The question's role under the lake's policy (its principal's claims are not known in a batch)."""
    if policy is None or question.role is None:
        return OPEN
    return policy.grant(question.role, question.principal or "batch")


def answered(lake, executor: Executor, question: BatchQuestion, asking: Asking) -> dict:
    """The question's row: its answer, or the error that stopped it (the batch goes on)."""
    started = time.perf_counter()
    model = executor.llm.model_name
    planned: list[PlanResult] = []
    try:
        answer = ask(
            lake,
            question.question,
            executor,
            on_plan=planned.append,
            access=access_for(question, asking.policy),
            use_cache=asking.plan_reuse,
        )
    except Exception as e:  # one question's failure is its row, never the run's end
        return failure_row(question, e, time.perf_counter() - started, model, asking.run_id)
    plan = planned[0].plan.model_dump_json() if planned else ""
    return answer_row(question, answer, plan, model, asking.run_id)
