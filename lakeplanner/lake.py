"""The typed Python API: `Lake` is the lake's storage handle (create / open, ingest, info, SQL) that
also asks questions: plan, execute and answer, over the stages below it."""

from __future__ import annotations

from collections.abc import Callable

from lakeplanner.execute.ask import ask
from lakeplanner.execute.engine import Executor
from lakeplanner.execute.results import Answer, NodeResult
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm.base import LLM
from lakeplanner.plan.cache import Context
from lakeplanner.plan.planner import PlanResult
from lakeplanner.policy import OPEN, Access
from lakeplanner.storage import (
    SAMPLE_LAKES,
    CollectionInfo,
    LakeInfo,
    LakeStorage,
    TableInfo,
    sample_lake_path,
)

__all__ = ["SAMPLE_LAKES", "CollectionInfo", "Lake", "LakeInfo", "LakeStorage", "TableInfo", "sample_lake_path"]


class Lake(LakeStorage):
    """A lake directory (see `LakeStorage`) that answers questions; it keeps one executor between them."""

    _executor: Executor | None = None

    def ask(
        self,
        question: str,
        *,
        llm: LLM | None = None,
        settings: ExecSettings | None = None,
        context: Context | None = None,
        use_cache: bool = True,
        on_result: Callable[[NodeResult], None] | None = None,
        on_plan: Callable[[PlanResult], None] | None = None,
        access: Access | None = None,
    ) -> Answer:
        """Plan, execute and answer `question` with citations (or abstain), traced in the lake.

        `access` (a role's grant, from `Policy.grant`) limits what is read; by default everything.
        `on_plan` receives the plan result once planning ends, `on_result` each exposed node result as soon as
        it exists (streaming)."""
        executor = self.executor(llm, settings)
        return ask(
            self,
            question,
            executor,
            context=context,
            use_cache=use_cache,
            on_result=on_result,
            on_plan=on_plan,
            access=access or OPEN,
        )

    def executor(self, llm: LLM | None = None, settings: ExecSettings | None = None) -> Executor:
        """The executor questions run on: kept between questions, replaced when a model or settings are given."""
        if self._executor is None or llm is not None or settings is not None:
            self.close_executor()
            self._executor = Executor(self, llm, settings)
        return self._executor

    def close_executor(self) -> None:
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    def close(self) -> None:
        self.close_executor()
        super().close()
