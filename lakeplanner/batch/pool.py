"""Batch answering on Ray: a pool of answerer actors, each with its own model and engines, and one
actor that owns the lake's Milvus Lite file (one process may open it) and searches for all of them.
On a cluster the answerers spread over its nodes; with an OpenAI-compatible or vLLM endpoint they
share it instead of each loading the model."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from lakeplanner.batch.asking import Asking
from lakeplanner.batch.inputs import BatchQuestion
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm.base import LLM

# a member whose process dies (a killed worker, out of memory, a lost node) is started again and the
# question it held asked again, up to this many times; answering has no side effect until the driver commits
RESTARTS = 3


class VectorsActor:
    """Holds the lake's vector store; every answerer's searches run here."""

    def __init__(self, lake_path: str) -> None:
        from lakeplanner.lake import Lake

        self.lake = Lake.open(lake_path)

    def call(self, name: str, args: tuple, kwargs: dict):
        return getattr(self.lake.vectors, name)(*args, **kwargs)

    def close(self) -> None:
        self.lake.close()


class RemoteVectors:
    """The vector store as an answerer sees it: each method call goes to the VectorsActor."""

    def __init__(self, actor) -> None:
        self.actor = actor

    def __getattr__(self, name: str) -> Callable:
        import ray

        def call(*args, **kwargs):
            return ray.get(self.actor.call.remote(name, args, kwargs))

        return call

    def close(self) -> None:
        """The VectorsActor owns the connection."""


class Answerer:
    """One pool member: the lake (searching through the VectorsActor), a model, an executor."""

    def __init__(self, lake_path: str, llm_factory: Callable[[], LLM], settings: ExecSettings, vectors) -> None:
        from lakeplanner.execute.engine import Executor
        from lakeplanner.lake import Lake

        self.lake = Lake.open(lake_path)
        self.lake.__dict__["vectors"] = RemoteVectors(vectors)  # never opens the Milvus Lite file itself
        self.executor = Executor(self.lake, llm_factory(), settings)

    def answer(self, question: BatchQuestion, asking: Asking) -> dict:
        from lakeplanner.batch.asking import answered

        return answered(self.lake, self.executor, question, asking)


def pool_rows(
    lake,
    phases: Iterable[list[BatchQuestion]],
    *,
    actors: int,
    llm_factory: Callable[[], LLM],
    settings: ExecSettings,
    asking: Asking,
) -> Iterator[dict]:
    """The answer rows of each phase's questions, in the order they finish, from `actors` answerers
    on Ray; a phase starts when the one before it has ended."""
    from lakeplanner.execute.engine import ray_started

    ray = ray_started(settings)
    from ray.util import ActorPool

    lake.release_vectors()  # the VectorsActor opens the Milvus Lite file
    path = str(lake.path.resolve())
    restarting = {"max_restarts": RESTARTS, "max_task_retries": RESTARTS}
    vectors = ray.remote(VectorsActor).options(max_concurrency=8, **restarting).remote(path)
    serial = settings.model_copy(update={"mode": "serial"})  # each answerer runs its plans in process
    answerer = ray.remote(Answerer).options(**restarting)
    members = [answerer.remote(path, llm_factory, serial, vectors) for _ in range(actors)]
    try:
        pool = ActorPool(members)
        for phase in phases:
            yield from pool.map_unordered(lambda member, q: member.answer.remote(q, asking), phase)
    finally:
        for member in members:
            ray.kill(member)
        ray.get(vectors.close.remote())
        ray.kill(vectors)
