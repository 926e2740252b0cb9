"""A batch run: every question not yet answered is asked and its answer committed, a few at a time,
to the answers table. Killed at any point and started again with the same command, it goes on from
the last commit; run again when finished, it commits nothing."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from pydantic import BaseModel

from lakeplanner.batch.answers import AnswersTable, answer_row, failure_row
from lakeplanner.batch.inputs import BatchQuestion
from lakeplanner.execute.ask import ask
from lakeplanner.execute.engine import Executor
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm.base import LLM
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
) -> BatchReport:
    """Answer `questions` into the lake's `answers_<name>` table, exactly once per question id."""
    started = time.perf_counter()
    run_id = run_id or uuid.uuid4().hex[:16]
    answers = AnswersTable(lake.catalog, name)
    committed = answers.committed()
    pending = to_do(questions, committed, retry_failed)
    report = BatchReport(
        run_id=run_id, table=answers.identifier, questions=len(questions), already_done=len(questions) - len(pending)
    )
    executor = Executor(lake, llm, settings or ExecSettings(mode="serial"))
    rows: list[dict] = []
    try:
        for done, question in enumerate(pending, 1):
            rows.append(answered(lake, executor, question, policy, run_id, report))
            if len(rows) >= commit_every:
                answers.commit(rows, run_id, replace=any(r["question_id"] in committed for r in rows))
                report.commits, rows = report.commits + 1, []
            progress(done, len(pending))
        if rows:
            answers.commit(rows, run_id, replace=any(r["question_id"] in committed for r in rows))
            report.commits += 1
    finally:
        executor.close()
    report.seconds = time.perf_counter() - started
    return report


def answered(lake, executor: Executor, question: BatchQuestion, policy, run_id: str, report: BatchReport) -> dict:
    """The question's row: its answer, or the error that stopped it (the batch goes on)."""
    started = time.perf_counter()
    model = executor.llm.model_name
    planned: list[PlanResult] = []
    try:
        answer = ask(lake, question.question, executor, on_plan=planned.append, access=access_for(question, policy))
    except Exception as e:  # one question's failure is its row, never the run's end
        report.failed += 1
        return failure_row(question, e, time.perf_counter() - started, model, run_id)
    report.answered += 1
    report.abstained += answer.abstained
    plan = planned[0].plan.model_dump_json() if planned else ""
    return answer_row(question, answer, plan, model, run_id)
