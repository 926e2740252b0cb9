"""The executor (seed 000 §3.5): a validated plan becomes a Ray task graph, or runs in process.

Under Ray each node is a task whose inputs are its predecessors' bindings (ObjectRefs), so nodes
with no pending inputs run in parallel and Ray orders the rest. A task returns two objects: its full
result, which only the driver reads, and the slim binding its successors need. Results stream out in
the order they finish.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterator

from lakeplanner.errors import EngineError, MissingDependencyError, PlanError
from lakeplanner.execute.nodes import run_node
from lakeplanner.execute.results import NodeResult
from lakeplanner.execute.services import ActorServices, LocalServices, ServiceActor
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.execute.variables import Binding, referenced_columns, slim
from lakeplanner.llm.base import LLM, get_llm
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.policy import OPEN, Access
from lakeplanner.question import QuestionFrame
from lakeplanner.timebox import time_box

TIMEOUT_HINT = "raise LAKEPLANNER_EXEC_NODE_TIMEOUT_S (or [execute] node_timeout_s), or ask a narrower question"
RAY_START_ATTEMPTS = 2
NODE_RERUNS = 1


def start_ray(**options) -> None:
    """ray.init, tried twice: a local Ray on a loaded machine can miss its fixed 30 s start-up wait
    ("node timed out during startup") and come up on the next try."""
    import ray

    for attempt in range(1, RAY_START_ATTEMPTS + 1):
        try:
            ray.init(**options)
            return
        except Exception as e:  # ray raises a bare Exception for the start-up timeout
            ray.shutdown()
            if attempt == RAY_START_ATTEMPTS:
                raise EngineError(
                    f"Ray did not start: {str(e).splitlines()[0]}",
                    hint="set LAKEPLANNER_EXEC_RAY_ADDRESS to a running cluster, "
                    "or run in process with LAKEPLANNER_EXEC_MODE=serial",
                ) from e


def ray_started(settings: ExecSettings):
    """The ray module, started locally or connected to `settings.ray_address` unless it already is.
    Inside a Ray job, RAY_ADDRESS (set by `ray job submit`) names the cluster the job runs on."""
    try:
        import ray
    except ImportError as e:
        raise MissingDependencyError(
            "Ray is not installed", hint="pip install 'ray==2.60.0', or LAKEPLANNER_EXEC_MODE=serial"
        ) from e
    if not ray.is_initialized():
        address = settings.ray_address or os.environ.get("RAY_ADDRESS")
        start_ray(
            address=address,
            num_cpus=settings.ray_cpus if not address else None,
            include_dashboard=False,
            ignore_reinit_error=True,
            log_to_driver=False,
            configure_logging=False,
        )
    return ray


def topological(plan: Plan) -> list[PlanNode]:
    """Nodes in an order where every node follows its dependencies; PlanError when none can (a cycle,
    or a reference to a label no node binds: an unvalidated plan)."""
    dependencies = plan.dependencies()
    done: set[str] = set()
    order: list[PlanNode] = []
    pending = list(plan.nodes)
    while pending:
        ready = [n for n in pending if set(dependencies[n.label]) <= done]
        if not ready:
            waiting = "; ".join(f"{n.label} on {', '.join(sorted(set(dependencies[n.label]) - done))}" for n in pending)
            raise PlanError(
                f"no step can run: each waits on another or on a label no step binds ({waiting})",
                hint="validate the plan first (lakeplanner.plan.validate, or plan it with Planner.plan)",
            )
        for node in ready:
            order.append(node)
            done.add(node.label)
            pending.remove(node)
    return order


def has_branches(plan: Plan) -> bool:
    """Whether two steps of the plan can run at once: it is not one chain of steps."""
    dependencies = plan.dependencies()
    depth: dict[str, int] = {}
    for node in topological(plan):
        depth[node.label] = 1 + max((depth[label] for label in dependencies[node.label]), default=-1)
    return len(set(depth.values())) < len(depth)


def failed_input(node: PlanNode, inputs: dict[str, Binding]) -> str | None:
    broken = [f"{label} ({b.error})" for label, b in inputs.items() if b.error]
    return f"skipped: its input {', '.join(broken)} failed" if broken else None


def execute_node(
    node: PlanNode,
    needed: set[str],
    services,
    settings,
    frame: QuestionFrame | None,
    access: Access,
    *bindings: Binding,
) -> tuple[NodeResult, Binding]:
    """Run one node on its predecessors' bindings (positional, so Ray resolves them before the call),
    inside its time box: its LLM calls and SQL statements stop at node_timeout_s, in process too."""
    started = time.time_ns()
    inputs = {b.label: b for b in bindings}
    problem = failed_input(node, inputs)
    if problem:
        result = NodeResult.for_node(node, error=problem)
    else:
        with time_box(settings.node_timeout_s, hint=TIMEOUT_HINT):
            result = run_node(node, inputs, services, settings, frame, access)
    result.started_ns = started
    binding = slim(result, needed, settings.binding_cap)
    binding.error = result.error
    return result, binding


class Executor:
    """Runs plans over one lake. `mode` and the rest come from ExecSettings unless given."""

    def __init__(
        self,
        lake,
        llm: LLM | None = None,
        settings: ExecSettings | None = None,
        llm_factory: Callable[[], LLM] | None = None,
    ) -> None:
        self.lake = lake
        self.settings = settings or ExecSettings()
        self._llm = llm
        self.llm_factory = llm_factory or get_llm
        self._actor = None

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            self._llm = self.llm_factory()
        return self._llm

    def mode_for(self, plan: Plan) -> str:
        """Where `plan` runs. A chain gains nothing from Ray but its start-up and a second model, so `auto`
        runs it in process, unless this executor's Ray actor already holds the vector store."""
        if self.settings.mode != "auto":
            return self.settings.mode
        return "ray" if self._actor is not None or has_branches(plan) else "serial"

    def stream(self, plan: Plan, access: Access = OPEN) -> Iterator[NodeResult]:
        """Node results as they finish; every node reads only what `access` admits."""
        plan = plan.framed()  # each node carries its step's frame, to a Ray worker too
        if self.mode_for(plan) == "serial":
            yield from self._serial(plan, access)
        else:
            yield from self._ray(plan, access)

    def run(self, plan: Plan, access: Access = OPEN) -> list[NodeResult]:
        return list(self.stream(plan, access))

    def _serial(self, plan: Plan, access: Access) -> Iterator[NodeResult]:
        services = LocalServices(self.lake, self.llm)
        needed = referenced_columns(plan)
        bindings: dict[str, Binding] = {}
        for node in topological(plan):
            inputs = [bindings[label] for label in plan.dependencies()[node.label]]
            result, bindings[node.label] = execute_node(
                node, needed[node.label], services, self.settings, plan.frame, access, *inputs
            )
            yield result

    def _ray(self, plan: Plan, access: Access) -> Iterator[NodeResult]:
        ray = self._ray_module()
        services = self._actor_services(ray)
        # a node whose worker dies (killed, out of memory) runs once more: nodes only read, so a rerun is
        # safe; Ray never retries a task cancelled at its timeout, nor one that raised
        task = ray.remote(num_returns=2, max_retries=NODE_RERUNS)(execute_node)
        needed = referenced_columns(plan)
        results, bindings = {}, {}
        for node in topological(plan):
            inputs = [bindings[label] for label in plan.dependencies()[node.label]]
            results[node.label], bindings[node.label] = task.remote(
                node, needed[node.label], services, self.settings, plan.frame, access, *inputs
            )
        yield from self._collect(ray, plan, results)

    def _collect(self, ray, plan: Plan, results: dict) -> Iterator[NodeResult]:
        """Yield results as they finish. A node's clock starts when its inputs are done (at once for
        the roots); past node_timeout_s it is cancelled, and so are the nodes waiting on it."""
        dependencies = plan.dependencies()
        pending = {ref: label for label, ref in results.items()}
        finished: set[str] = set()
        ready_at = {label: time.monotonic() for label, deps in dependencies.items() if not deps}
        limit = self.settings.node_timeout_s
        while pending:
            now = time.monotonic()
            waits = [ready_at[label] + limit - now for label in pending.values() if label in ready_at]
            done, _ = ray.wait(list(pending), num_returns=1, timeout=max(0.0, min(waits, default=limit)))
            for ref in done:
                label = pending.pop(ref)
                finished.add(label)
                try:
                    yield ray.get(ref)
                except ray.exceptions.RayError as e:
                    yield failure(
                        plan.node(label),
                        f"the Ray task failed: {str(e).splitlines()[0]}",
                        "the Ray worker died; retry, or run with LAKEPLANNER_EXEC_MODE=serial",
                    )
            now = time.monotonic()
            for label, deps in dependencies.items():
                if label not in ready_at and set(deps) <= finished:
                    ready_at[label] = now
            for ref, label in list(pending.items()):
                if label in ready_at and now - ready_at[label] > limit:
                    ray.cancel(ref, force=True)
                    pending.pop(ref)
                    finished.add(label)
                    yield failure(plan.node(label), f"timed out after {limit:g} s", TIMEOUT_HINT)

    def _ray_module(self):
        return ray_started(self.settings)

    def _actor_services(self, ray) -> ActorServices:
        if self._actor is None:
            self.lake.release_vectors()  # Milvus Lite admits one process per file: the actor opens it
            factory = self.llm_factory if self._llm is None else actor_llm_factory(self._llm)
            self._actor = ray.remote(ServiceActor).options(max_concurrency=4).remote(self.lake.opener(), factory)
            try:
                self._model = ray.get(self._actor.model_name.remote())
            except ray.exceptions.RayError as e:
                self._actor = None
                raise EngineError(
                    f"the Ray service actor (LLM + Milvus) did not start: {str(e).splitlines()[0]}",
                    hint="see the Ray worker logs, or run with LAKEPLANNER_EXEC_MODE=serial",
                ) from e
        return ActorServices(self.lake.opener(), self._actor, self._model, self.llm.settings)

    def close(self) -> None:
        if self._actor is not None:
            import ray

            ray.get(self._actor.close.remote())
            ray.kill(self._actor)
            self._actor = None


def actor_llm_factory(llm: LLM) -> Callable[[], LLM]:
    """How the actor builds the driver's LLM: from its settings (a loaded model does not pickle);
    a backend that `travels` (a scripted one) goes as it is."""
    if llm.backend.travels:
        return lambda: llm
    return functools.partial(get_llm, llm.settings)


def failure(node: PlanNode, error: str, advice: str) -> NodeResult:
    return NodeResult.for_node(node, error=error, advice=[advice])
