"""A batch run: every question not yet answered is asked and its answer committed, a few at a time,
to the answers table. Killed at any point and started again with the same command, it goes on from
the last commit; run again when finished, it commits nothing."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

from pydantic import BaseModel

from lakeplanner.batch.answers import AnswersTable, answer_row, failure_row
from lakeplanner.batch.inputs import BatchQuestion
from lakeplanner.batch.pool import pool_rows
from lakeplanner.execute.ask import ask
from lakeplanner.execute.engine import Executor, actor_llm_factory
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm.base import LLM, get_llm
from lakeplanner.plan.planner import PlanResult
from lakeplanner.policy import OPEN, Access, Policy

Progress = Callable[[int, int], None]  # (questions done in this run, questions to do)


class BatchReport(BaseModel):
    run_id: str
    table: str
    questions: int
    already_done: int
    answered: int = 0
    abstained: int = 0
    failed: int = 0
    commits: int = 0
    seconds: float = 0.0


def to_do(questions: list[BatchQuestion], committed: dict[str, bool], retry_failed: bool) -> list[BatchQuestion]:
    """The questions with no committed answer (and, with `retry_failed`, those whose answer is a failure)."""
    return [q for q in questions if q.id not in committed or (retry_failed and committed[q.id])]


def access_for(question: BatchQuestion, policy: Policy | None) -> Access:
    """The question's role under the lake's policy (its principal's claims are not known in a batch)."""
    if policy is None or question.role is None:
        return OPEN
    return policy.grant(question.role, question.principal or "batch")


def run_batch(
    lake,
    questions: list[BatchQuestion],
    *,
    name: str,
    llm: LLM | None = None,
    settings: ExecSettings | None = None,
    policy: Policy | None = None,
    commit_every: int = 8,
    retry_failed: bool = False,
    run_id: str | None = None,
    progress: Progress = lambda done, total: None,
    actors: int = 0,
) -> BatchReport:
    """Answer `questions` into the lake's `answers_<name>` table, exactly once per question id: in
    this process (`actors` 0), or on a Ray pool of `actors` answerers, each with its own model."""
    started = time.perf_counter()
    run_id = run_id or uuid.uuid4().hex[:16]
    answers = AnswersTable(lake.catalog, name)
    committed = answers.committed()
    pending = to_do(questions, committed, retry_failed)
    report = BatchReport(
        run_id=run_id, table=answers.identifier, questions=len(questions), already_done=len(questions) - len(pending)
    )
    settings = settings or ExecSettings(mode="serial")
    rows: list[dict] = []
    for done, row in enumerate(answer_rows(lake, pending, llm, settings, policy, run_id, actors), 1):
        report.failed += row["error_type"] is not None
        report.answered += row["error_type"] is None
        report.abstained += bool(row.get("abstained"))
        rows.append(row)
        if len(rows) >= commit_every or done == len(pending):
            answers.commit(rows, run_id, replace=any(r["question_id"] in committed for r in rows))
            report.commits, rows = report.commits + 1, []
        progress(done, len(pending))
    report.seconds = time.perf_counter() - started
    return report


def answer_rows(
    lake, pending: list[BatchQuestion], llm: LLM | None, settings: ExecSettings, policy, run_id: str, actors: int
) -> Iterator[dict]:
    """The rows of `pending` as they are answered, here or on a Ray pool."""
    if actors:
        factory = actor_llm_factory(llm) if llm is not None else get_llm
        yield from pool_rows(
            lake, pending, actors=actors, llm_factory=factory, settings=settings, policy=policy, run_id=run_id
        )
        return
    executor = Executor(lake, llm, settings)
    try:
        for question in pending:
            yield answered(lake, executor, question, policy, run_id)
    finally:
        executor.close()


def answered(lake, executor: Executor, question: BatchQuestion, policy, run_id: str) -> dict:
    """The question's row: its answer, or the error that stopped it (the batch goes on)."""
    started = time.perf_counter()
    model = executor.llm.model_name
    planned: list[PlanResult] = []
    try:
        answer = ask(lake, question.question, executor, on_plan=planned.append, access=access_for(question, policy))
    except Exception as e:  # one question's failure is its row, never the run's end
        return failure_row(question, e, time.perf_counter() - started, model, run_id)
    plan = planned[0].plan.model_dump_json() if planned else ""
    return answer_row(question, answer, plan, model, run_id)
