"""What nodes call besides the SQL engine: the LLM and document search.

In process (serial mode) they are the driver's objects. Under Ray one actor owns them: the model is
loaded once, and Milvus Lite, which admits one process per file, is opened once; node tasks reach
both through the actor's handle.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from lakeplanner.errors import AccessDeniedError
from lakeplanner.execute.engines import get_engine
from lakeplanner.ingest.vectors import SearchHit, _string_literal
from lakeplanner.injection import withheld
from lakeplanner.lineage import semconv
from lakeplanner.llm.base import LLM, Backend, Message, RawCompletion
from lakeplanner.llm.embeddings import default_embedder, default_reranker
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.policy import Access, GuardedEngine, readable, scoped_contract
from lakeplanner.policy.model import parse_predicate
from lakeplanner.storage import LakeStorage


def search_and_rerank(lake, collection: str, text: str, filter: str, limit: int) -> list[SearchHit]:
    """Hybrid search (dense + BM25, RRF), then the cross-encoder reorders the hits."""
    vector = default_embedder().embed_query(text)
    hits = [as_data(h) for h in lake.vectors.hybrid_search(collection, text, vector, limit=limit, filter=filter)]
    if len(hits) < 2:
        return hits
    scores = default_reranker().score(text, [h.chunk.text[:2000] for h in hits])
    order = sorted(range(len(hits)), key=lambda i: -float(scores[i]))
    return [hits[i].model_copy(update={"score": float(scores[i])}) for i in order]


def as_data(hit: SearchHit) -> SearchHit:
    """The hit with any sentence addressed to the model withheld from its text and title."""
    chunk = hit.chunk
    text, title = withheld(chunk.text), withheld(chunk.title)
    if (text, title) == (chunk.text, chunk.title):
        return hit
    return hit.model_copy(update={"chunk": chunk.model_copy(update={"text": text, "title": title})})


def relevance(query: str, texts: Sequence[str]) -> list[float]:
    return [float(x) for x in default_reranker().score(query, list(texts))]


class LocalServices:
    def __init__(self, lake, llm: LLM) -> None:
        self.lake = lake
        self.llm = llm

    def search(self, collection: str, text: str, filter: str, limit: int) -> list[SearchHit]:
        return search_and_rerank(self.lake, collection, text, filter, limit)

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        return relevance(query, texts)


class ServiceActor:
    """Hosted by Ray: one LLM and one Milvus Lite connection for every node task."""

    def __init__(self, open_lake: Callable[[], LakeStorage], llm_factory: Callable[[], LLM]) -> None:
        self.lake = open_lake()
        self.llm = llm_factory()
        self.one_call_at_a_time = threading.Lock()  # the actor is threaded; a llama.cpp model is not

    def generate(self, messages: list[dict], schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        with self.one_call_at_a_time:
            return self.llm.backend.generate([Message(**m) for m in messages], schema=schema, max_tokens=max_tokens)

    def model_name(self) -> tuple[str, str]:
        """(model, provider) of the actor's LLM."""
        return self.llm.model_name, self.llm.backend.provider

    def search(self, collection: str, text: str, filter: str, limit: int) -> list[SearchHit]:
        return search_and_rerank(self.lake, collection, text, filter, limit)

    def rerank(self, query: str, texts: list[str]) -> list[float]:
        return relevance(query, texts)

    def close(self) -> None:
        self.lake.close()
        self.llm.close()


class ActorBackend(Backend):
    """An LLM backend whose calls run in the service actor (validation and repair stay in the task)."""

    def __init__(self, actor, model_name: str, provider: str) -> None:
        self.actor = actor
        self.model_name = model_name
        self.provider = provider

    def generate(self, messages: Sequence[Message], *, schema: dict[str, Any] | None, max_tokens: int) -> RawCompletion:
        import ray

        return ray.get(self.actor.generate.remote([m.model_dump() for m in messages], schema, max_tokens))


class ActorServices:
    """The services as seen from a Ray task: picklable (a way to open the lake and an actor handle)."""

    def __init__(self, open_lake: Callable[[], LakeStorage], actor, model: tuple[str, str], settings) -> None:
        self.open_lake = open_lake
        self.actor = actor
        self.model_name, self.provider = model
        self.settings = settings

    @functools.cached_property
    def lake(self) -> LakeStorage:
        return self.open_lake()

    @functools.cached_property
    def llm(self) -> LLM:
        return LLM(ActorBackend(self.actor, self.model_name, self.provider), self.settings)

    def search(self, collection: str, text: str, filter: str, limit: int) -> list[SearchHit]:
        import ray

        return ray.get(self.actor.search.remote(collection, text, filter, limit))

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        import ray

        return ray.get(self.actor.rerank.remote(query, list(texts)))

    def __getstate__(self) -> dict:
        return {k: self.__dict__[k] for k in ("open_lake", "actor", "model_name", "provider", "settings")}


MAX_HIDDEN_KEYS = 5_000  # hidden row keys a search filter names (see Governed.hidden_rows)


class Governed:
    """The services as one request's role may use them: the contract it may see, an engine that
    rewrites each statement by its policy, and searches of the collections it may read only."""

    def __init__(self, services, access: Access) -> None:
        self.services = services
        self.access = access

    @property
    def lake(self):
        return self.services.lake

    @property
    def llm(self) -> LLM:
        return self.services.llm

    @functools.cached_property
    def whole_contract(self):
        """schema.yaml, read once for the node."""
        return self.lake.contract

    @functools.cached_property
    def contract(self):
        return scoped_contract(self.whole_contract, self.access)

    def check(self, source: str, recorder) -> None:
        """AccessDeniedError when the role may not read `source`; the decision is a span either way."""
        allowed = readable(self.whole_contract, self.access, source)
        decision = {
            semconv.KIND: semconv.GUARDRAIL,
            "lakeplanner.policy.decision": "allowed" if allowed else "denied",
            "lakeplanner.policy.source": source,
        }
        with recorder.step("policy.check", **self.access.decisions(), **decision):
            if not allowed:
                raise AccessDeniedError(
                    f"role {self.access.role!r} may not read {source}",
                    hint="ask about the tables and collections your role may read",
                )

    def engine(self, settings):
        engine = get_engine(settings.sql_engine, self.lake, settings)
        if not self.access.restricted:
            return engine
        return GuardedEngine(engine, self.access, self.columns_of)

    def columns_of(self, table: str) -> list[str]:
        return [f.name for f in self.lake.table(table).schema().fields]

    def search(self, collection: str, text: str, filter: str, limit: int) -> list[SearchHit]:
        """Hybrid search of a collection the role may read, without the documents tied to rows its
        row filters hide (their link or citation names such a row)."""
        if not self.access.reads_collection(collection):
            raise AccessDeniedError(f"role {self.access.role!r} may not search {collection}")
        both = " and ".join(f"({e})" for e in (filter, self.hidden_rows) if e)
        return self.services.search(collection, text, both, limit)

    @functools.cached_property
    def hidden_rows(self) -> str:
        """A Milvus expression that keeps out chunks linked to rows a row filter hides: by their keys,
        or, when a table's keys cannot be named (too many, or a key of several columns), every chunk
        linked to that table."""
        kept_out = []
        schema = LakeSchema.from_contract(self.whole_contract)
        engine = get_engine("duckdb", self.lake, None)
        for table, predicate in sorted(self.access.row_filters.items()):
            linked = f"linked_table == {_string_literal(table)}"
            key = schema.row_key(table)
            if len(key) != 1:
                kept_out.append(f"not ({linked})")
                continue
            admitted = exp.func("COALESCE", exp.paren(parse_predicate(predicate, table)), exp.false())
            statement = exp.select(exp.column(key[0], quoted=True)).from_(table).where(exp.not_(admitted))
            keys = sorted({str(v) for v in engine.run(statement).table.column(0).to_pylist() if v is not None})
            if len(keys) > MAX_HIDDEN_KEYS:
                kept_out.append(f"not ({linked})")
            elif keys:
                named = ", ".join(map(_string_literal, keys))
                kept_out.append(f"not ({linked} and array_contains_any(linked_keys, [{named}]))")
        return " and ".join(kept_out)

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        return self.services.rerank(query, texts)
