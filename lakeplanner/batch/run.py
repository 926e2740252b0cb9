"""A batch run: every question not yet answered is asked and its answer committed, a few at a time,
to the answers table. Killed at any point and started again with the same command, it goes on from
the last commit; run again when finished, it commits nothing."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator

from pydantic import BaseModel

from lakeplanner.batch.answers import AnswersTable
from lakeplanner.batch.asking import Asking, answered
from lakeplanner.batch.inputs import BatchQuestion
from lakeplanner.batch.pool import pool_rows
from lakeplanner.execute.engine import Executor, actor_llm_factory
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm.base import LLM, get_llm
from lakeplanner.plan.cache import known_values
from lakeplanner.policy import Policy
from lakeplanner.question.template import template_of

Progress = Callable[[int, int | None], None]  # (questions done in this run, questions to do, when known)


class BatchReport(BaseModel):
    run_id: str
    table: str
    questions: int
    already_done: int
    answered: int = 0
    abstained: int = 0
    failed: int = 0
    templates: int = 0  # plan templates among the questions asked: each planned once when plans are reused
    plan_cache_hits: int = 0
    commits: int = 0
    seconds: float = 0.0


def to_do(questions: list[BatchQuestion], committed: dict[str, bool], retry_failed: bool) -> list[BatchQuestion]:
    """The questions with no committed answer (and, with `retry_failed`, those whose answer is a failure)."""
    return [q for q in questions if q.id not in committed or (retry_failed and committed[q.id])]


def template_phases(lake, pending: list[BatchQuestion], seen: set | None = None) -> list[list[BatchQuestion]]:
    """The first question of each plan template (per role), then the rest: by the time the rest are
    asked, on any member of a pool, their template's plan is in the lake's plan cache. A template in
    `seen` (planned in an earlier block, which this adds to) has no first question here."""
    known = known_values(lake)
    seen = set() if seen is None else seen
    leaders, followers = [], []
    for question in pending:
        key = (template_of(question.question, known), question.role)
        (followers if key in seen else leaders).append(question)
        seen.add(key)
    return [phase for phase in (leaders, followers) if phase]


def run_batch(
    lake,
    questions: list[BatchQuestion] | Iterable[list[BatchQuestion]],
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
    plan_reuse: bool = True,
    total: int | None = None,
) -> BatchReport:
    """Answer `questions` into the lake's `answers_<name>` table, exactly once per question id: in
    this process (`actors` 0), or on a Ray pool of `actors` answerers, each with its own model.

    `questions` is a list, or blocks of them as `question_blocks` streams them (`total`: how many
    questions the blocks hold, when known, for progress); a block is read when the one before it
    has been asked. With `plan_reuse`, questions that share a plan template are planned once (the
    first of each, then the rest from the plan cache); without it every question is planned afresh."""
    started = time.perf_counter()
    run_id = run_id or uuid.uuid4().hex[:16]
    answers = AnswersTable(lake.catalog, name)
    committed = answers.committed()
    report = BatchReport(run_id=run_id, table=answers.identifier, questions=0, already_done=0)
    settings = settings or ExecSettings(mode="serial")
    blocks = [questions] if isinstance(questions, list) else questions
    if isinstance(questions, list):
        total = len(to_do(questions, committed, retry_failed))
    elif total is not None:
        total = max(total - sum(1 for failed in committed.values() if not (retry_failed and failed)), 0)
    seen: set = set()

    def phases() -> Iterator[list[BatchQuestion]]:
        for block in blocks:
            pending = to_do(block, committed, retry_failed)
            report.questions += len(block)
            report.already_done += len(block) - len(pending)
            block_phases = template_phases(lake, pending, seen) if plan_reuse else [pending]
            report.templates = len(seen)
            yield from block_phases

    rows: list[dict] = []
    asking = Asking(policy=policy, run_id=run_id, plan_reuse=plan_reuse)
    lineage = BatchLineage(settings.openlineage, lake, name, answers.identifier, run_id)
    lineage.emit("START")
    try:
        for done, row in enumerate(answer_rows(lake, phases(), llm, settings, asking, actors), 1):
            report.failed += row["error_type"] is not None
            report.plan_cache_hits += row.get("cache") is not None
            report.answered += row["error_type"] is None
            report.abstained += bool(row.get("abstained"))
            rows.append(row)
            if len(rows) >= commit_every:
                report.commits += commit_rows(answers, rows, committed, run_id)
                rows = []
            progress(done, total)
        report.commits += commit_rows(answers, rows, committed, run_id)
    except BaseException:
        lineage.emit("FAIL")
        raise
    lineage.emit("COMPLETE", answers)
    report.seconds = time.perf_counter() - started
    return report


class BatchLineage:
    """The batch run's OpenLineage events, when the settings name a target."""

    def __init__(self, target: str | None, lake, name: str, table: str, run_id: str) -> None:
        self.target, self.lake, self.name, self.table = target, lake, name, table
        self.run = str(uuid.uuid5(uuid.NAMESPACE_URL, f"lakeplanner:batch:{run_id}"))

    def emit(self, state: str, answers: AnswersTable | None = None) -> None:
        if not self.target:
            return
        from lakeplanner.lineage.openlineage import batch_event, emit_event, lake_namespace

        snapshot = answers.table().current_snapshot() if answers is not None else None
        namespace = lake_namespace(self.lake.path)
        emit_event(
            self.target,
            batch_event(state, self.run, self.name, namespace, self.table, snapshot and snapshot.snapshot_id),
        )


def commit_rows(answers: AnswersTable, rows: list[dict], committed: dict[str, bool], run_id: str) -> int:
    """Commit `rows` (replacing the committed rows of ids asked again); the commits made: 0 or 1."""
    if not rows:
        return 0
    answers.commit(rows, run_id, replace=any(r["question_id"] in committed for r in rows))
    return 1


def answer_rows(
    lake, phases: Iterable[list[BatchQuestion]], llm: LLM | None, settings: ExecSettings, asking: Asking, actors: int
) -> Iterator[dict]:
    """The rows of each phase's questions as they are answered, here or on a Ray pool; a phase starts
    when the one before it has ended."""
    if actors:
        factory = actor_llm_factory(llm) if llm is not None else get_llm
        yield from pool_rows(lake, phases, actors=actors, llm_factory=factory, settings=settings, asking=asking)
        return
    executor = Executor(lake, llm, settings)
    try:
        for phase in phases:
            for question in phase:
                yield answered(lake, executor, question, asking)
    finally:
        executor.close()
