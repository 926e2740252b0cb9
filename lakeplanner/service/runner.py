"""The one lake and model a service process owns, and the bounded queue in front of them.

Questions run one at a time (a local llama.cpp model and Milvus Lite serve one caller); up to
`queue` more wait, and the next is refused at once (429) instead of waiting without bound."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from lakeplanner.errors import AccessDeniedError, LakeplannerError
from lakeplanner.execute.ask import ask
from lakeplanner.execute.engine import Executor
from lakeplanner.execute.results import Answer, NodeResult
from lakeplanner.execute.runs import RUNS, RunRecord, load_run
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.lake import Lake
from lakeplanner.llm.base import LLM
from lakeplanner.plan.generate import prepare_planning
from lakeplanner.plan.model import Plan
from lakeplanner.plan.planner import Planner, PlanResult
from lakeplanner.policy import Access, lake_policy
from lakeplanner.service.answers import AnswerCache, lake_state, served_again
from lakeplanner.service.auth import Principal
from lakeplanner.service.metrics import Metrics
from lakeplanner.service.settings import ServeSettings


class BusyError(LakeplannerError):
    """Every queue slot is taken (429)."""


class TraceNotFoundError(LakeplannerError):
    """No recorded answer with that trace id is visible to the caller (404)."""


class CancelledError(LakeplannerError):
    """The client went away; the question stopped at the next step."""


class Runner:
    """The lake, its executor (model and engines), the policy, the answer cache and the admission
    queue of one service process."""

    def __init__(
        self,
        lake: str | Path | Lake,
        settings: ServeSettings,
        metrics: Metrics,
        llm: LLM | None = None,
        exec_settings: ExecSettings | None = None,
    ) -> None:
        self.owns_lake = not isinstance(lake, Lake)
        self.lake = Lake.open(lake) if self.owns_lake else lake
        self.settings = settings
        self.metrics = metrics
        self.policy = lake_policy(self.lake.path, settings.policy)
        self.executor = Executor(self.lake, llm, exec_settings)
        self.answers = AnswerCache()
        self.capacity = 1 + settings.queue
        self.waiting = 0
        self.counting = threading.Lock()
        self.one_at_a_time = threading.Lock()
        self.ready = threading.Event()
        self.problem: str | None = None

    def warm(self) -> None:
        """Load the model, open the engines and evaluate the planner's fixed prompt before the first
        question (readiness)."""
        try:
            with self.one_at_a_time:
                prepare_planning(self.executor.llm, self.lake.contract)
                self.lake.info()
            self.ready.set()
        except LakeplannerError as e:
            self.problem = e.message

    def access(self, principal: Principal, role: str | None) -> Access:
        """The grant of `principal` acting as `role` (its first role by default)."""
        role = role or (principal.roles[0] if principal.roles else None)
        if role is None or role not in principal.roles:
            raise AccessDeniedError(
                f"{principal.name} may not act as role {role!r}" if role else f"{principal.name} has no role",
                hint=f"ask as one of: {', '.join(principal.roles)}" if principal.roles else "ask for a role",
            )
        if self.policy is None:
            return Access(role=role, principal=principal.name)
        return self.policy.grant(role, principal.name, principal.claims)

    @contextmanager
    def slot(self) -> Iterator[None]:
        with self.counting:
            if self.waiting >= self.capacity:
                self.metrics.rejected.inc()
                raise BusyError(
                    f"{self.waiting} questions are running or waiting",
                    hint=f"retry after {self.settings.retry_after_s} s",
                )
            self.waiting += 1
            self.metrics.queue_depth.set(self.waiting)
        try:
            yield
        finally:
            with self.counting:
                self.waiting -= 1
                self.metrics.queue_depth.set(self.waiting)

    def answered_before(self, question: str, access: Access) -> tuple[Answer, Plan] | None:
        """The recorded answer to `question` under the same grant over the same lake, served again as a
        new traced answer; no model and no queue slot. None when there is none."""
        record = self.answers.get(AnswerCache.key(question, access, lake_state(self.lake)))
        if record is None:
            return None
        answer = served_again(self.lake, record, question, access, self.executor.settings.otlp_endpoint)
        self.count(answer)
        return answer, record.plan

    def ask(
        self,
        question: str,
        access: Access,
        use_cache: bool = True,
        on_plan: Callable[[PlanResult], None] | None = None,
        on_result: Callable[[NodeResult], None] | None = None,
    ) -> Answer:
        """Plan, execute and answer on the model, one question at a time; the answer is kept for
        `answered_before`."""
        with self.one_at_a_time:
            key = AnswerCache.key(question, access, lake_state(self.lake))
            answer = ask(
                self.lake,
                question,
                self.executor,
                use_cache=use_cache,
                on_plan=on_plan,
                on_result=on_result,
                access=access,
            )
            self.answers.put(key, load_run(self.lake.path, answer.trace_id))
        self.count(answer)
        return answer

    def count(self, answer: Answer) -> None:
        self.metrics.plan_cache.labels(result=answer.plan_cache or "miss").inc()
        self.metrics.tokens.labels(kind="input").inc(answer.usage.input_tokens)
        self.metrics.tokens.labels(kind="output").inc(answer.usage.output_tokens)
        self.metrics.llm_calls.inc(answer.usage.llm_calls)

    def plan(self, question: str, access: Access, use_cache: bool = True) -> PlanResult:
        with self.one_at_a_time:
            return Planner(self.lake, self.executor.llm, use_cache=use_cache, access=access).plan_question(question)

    def visible_record(self, trace_id: str, access: Access) -> RunRecord:
        """The run record of `trace_id`, when `access` may see it: its own, or any with `audit`."""
        missing = TraceNotFoundError(f"no trace {trace_id!r}", hint="list traces with GET /v1/traces")
        if not trace_id.isalnum() or not (self.lake.path / RUNS / f"{trace_id}.json").exists():
            raise missing
        record = load_run(self.lake.path, trace_id)
        if not access.audit and record.principal != access.principal:
            raise missing
        return record

    def close(self) -> None:
        with self.one_at_a_time:
            self.executor.close()
            if self.owns_lake:
                self.lake.close()
