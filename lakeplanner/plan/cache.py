"""Plan cache (seed 000 §3.1): exact, template and semantic reuse of validated plans, per schema
signature and execution context, LRU-bounded and persisted in the lake.

A template is the normalised question with its slot values (numbers, dates, quoted strings and
entity values the lake knows) replaced by typed placeholders; the cached plan carries the same
placeholders, so a new question with new values instantiates it. A semantic hit needs a close
embedding *and* the same intent (aggregate words and schema terms), so a near miss ("average"
instead of "total", another table) is never served. Every hit is validated again by the caller.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError
from sqlglot import exp

import lakeplanner
from lakeplanner.contract.models import SourceKind
from lakeplanner.ingest.segments import SEGMENTS_TABLE, stored_documents
from lakeplanner.ingest.tables import catalog_state
from lakeplanner.plan.model import WITHOUT_FRAMES, Plan
from lakeplanner.policy import Access
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.known import GENERIC_PARTS, KnownValues
from lakeplanner.question.template import Slot, canonical, extract_slots, normalise, template_words
from lakeplanner.question.words import identifier_words, singular

SEMANTIC_THRESHOLD = 0.85
WORDING_ONLY = frozenset({Operation.lookup, Operation.yes_no, Operation.list})  # a paraphrase may switch them


class Context(BaseModel):
    """Who asks, under which policy: a cached plan is never served across contexts."""

    model_config = ConfigDict(frozen=True)

    role: str = "default"
    policy: tuple[str, ...] = ()

    def key(self) -> str:
        return f"{self.role}|{','.join(sorted(self.policy))}"


DEFAULT_CONTEXT = Context()


def context_of(access: Access) -> Context:
    """The cache context of a request: its role, and the version of the policy that granted it."""
    return Context(role=access.role, policy=(access.policy_version,) if access.policy_version else ())


def intent(
    frame: QuestionFrame, template: str, vocabulary: dict[str, frozenset[str]]
) -> tuple[frozenset[str], frozenset[str]]:
    """What a paraphrase keeps: what the question's frame says is asked (a computed operation, a
    ranking or comparison direction, a threshold, a year asked for, a negation, when / where)
    and the schema items (tables, columns) mentioned. How it is worded (a yes/no or a "tell me"
    question) is not intent.

    `vocabulary` maps a table or column name to the words that name it; an item is mentioned when all
    of its words occur (plural or singular)."""
    asked = {f"op:{frame.operation.value}"} if frame.operation not in WORDING_ONLY else set()
    if frame.direction:
        asked.add(f"{'rank' if frame.superlative else 'compare'}:{frame.direction}")
    if frame.comparison:
        asked.add(f"threshold:{frame.comparison}")
    if frame.asks_year:
        asked.add("asks:year")
    if frame.negated:
        asked.add("not")
    if frame.wh in ("when", "where"):  # a date, a place: another attribute of the row ('who' is 'which X')
        asked.add(f"asks:{frame.wh}")
    words = template_words(template)
    return frozenset(asked), frozenset(item for item, needed in vocabulary.items() if needed and needed <= words)


# ---------------------------------------------------------------- plan parameterisation


def literal_sql(slot: Slot) -> str:
    if slot.kind == "number":
        return exp.Literal.number(slot.value).sql()
    return exp.Literal.string(slot.value).sql()


def json_escaped(text: str) -> str:
    return json.dumps(text)[1:-1]


def parameterise(plan: Plan, slots: list[Slot]) -> str:
    """The plan as JSON with each slot value replaced by {{sql<i>}} (as a SQL literal) or {{s<i>}}."""
    text = plan.model_dump_json(exclude=WITHOUT_FRAMES)
    for i, slot in enumerate(slots):
        for form, marker in ((literal_sql(slot), f"{{{{sql{i}}}}}"), (slot.value, f"{{{{s{i}}}}}")):
            bounded = re.compile(r"(?<![\w$.{])" + re.escape(json_escaped(form)) + r"(?![\w}])")
            text = bounded.sub(lambda _, marker=marker: marker, text)
    return text


def instantiate(template: str, slots: list[Slot]) -> Plan:
    text = template
    for i, slot in enumerate(slots):
        text = text.replace(f"{{{{sql{i}}}}}", json.dumps(literal_sql(slot))[1:-1])
        text = text.replace(f"{{{{s{i}}}}}", json.dumps(slot.value)[1:-1])
    return Plan.model_validate_json(text)


# ---------------------------------------------------------------- the cache


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive flock on `path` (created when missing) for the block."""
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class CacheEntry(BaseModel):
    question: str
    template: str
    slot_kinds: list[str]
    plan_template: str
    signature: str
    context: str
    aggregates: list[str]  # what the question's frame says is asked (intent)
    terms: list[str]
    vector: list[float] = []


class CacheHit(BaseModel):
    plan: Plan
    kind: str  # exact, template, semantic
    source_question: str


Embed = Callable[[str], np.ndarray]


class PlanCache:
    """LRU of validated plans keyed by (normalised question or template, schema signature, context)."""

    def __init__(
        self,
        path: Path | None,
        signature: str,
        known: KnownValues,
        vocabulary: dict[str, frozenset[str]],
        *,
        embed: Embed | None = None,
        capacity: int = 1000,
    ) -> None:
        self.path = path
        self.signature = signature
        self.known = known
        self.vocabulary = vocabulary
        self.embed = embed
        self.capacity = capacity
        self.entries: OrderedDict[str, CacheEntry] = OrderedDict()
        self.load()

    def load(self) -> None:
        """Read the persisted cache, keeping only entries made under the current schema signature."""
        if self.path is None or not self.path.exists():
            return
        for line in self.path.read_text().splitlines():
            try:
                entry = CacheEntry.model_validate_json(line)
            except ValidationError:  # a line written by another version: the cache only loses it
                continue
            if entry.signature == self.signature:
                self.entries[self.key(canonical(entry.template), entry.context)] = entry

    def save(self) -> None:
        if self.path is None:
            return
        # several processes share a lake's cache (batch actors, service replicas): under a lock, the
        # entries another process wrote since this one loaded are read back in before the file is replaced
        with locked(self.path.with_suffix(".lock")):
            mine = list(self.entries.items())
            self.entries = OrderedDict()
            self.load()
            for key, entry in mine:
                self.entries[key] = entry
                self.entries.move_to_end(key)
            self.evict()
            tmp = self.path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text("".join(e.model_dump_json() + "\n" for e in self.entries.values()))
            tmp.replace(self.path)

    def evict(self) -> None:
        """Drop the least recently used entries beyond capacity."""
        while len(self.entries) > self.capacity:
            self.entries.popitem(last=False)

    def key(self, template: str, context: str) -> str:
        return hashlib.sha256(f"{template}\x1f{self.signature}\x1f{context}".encode()).hexdigest()

    def put(self, frame: QuestionFrame, plan: Plan, context: Context = DEFAULT_CONTEXT) -> None:
        """Keep `plan` for the question `frame` read (frames are not kept: a hit is framed by its asker)."""
        question = frame.text
        template, slots = extract_slots(question, self.known)
        aggregates, terms = intent(frame, template, self.vocabulary)
        vector = self.embed(template).tolist() if self.embed else []
        entry = CacheEntry(
            question=normalise(question),
            template=template,
            slot_kinds=[s.kind for s in slots],
            plan_template=parameterise(plan, slots),
            signature=self.signature,
            context=context.key(),
            aggregates=sorted(aggregates),
            terms=sorted(terms),
            vector=vector,
        )
        key = self.key(canonical(template), entry.context)
        self.entries[key] = entry
        self.entries.move_to_end(key)
        self.evict()
        self.save()

    def get(self, frame: QuestionFrame, context: Context = DEFAULT_CONTEXT) -> CacheHit | None:
        question = frame.text
        template, slots = extract_slots(question, self.known)
        key = self.key(canonical(template), context.key())
        entry = self.entries.get(key)
        hit = None
        if entry is not None and entry.slot_kinds == [s.kind for s in slots]:
            self.entries.move_to_end(key)
            kind = "exact" if entry.question == normalise(question) else "template"
            hit = CacheHit(plan=instantiate(entry.plan_template, slots), kind=kind, source_question=entry.question)
        hit = hit or self.semantic(frame, template, slots, context)
        return hit if hit is not None and not self.foreign_values(hit.plan, frame) else None

    def foreign_values(self, plan: Plan, frame: QuestionFrame) -> list[str]:
        """Lake values the plan names literally that the question does not (a document id, a category
        the cached question searched for): such a plan answers the other question."""
        written = " ".join(t for n in plan.nodes for t in (n.question, n.sql, n.filter) if t)
        return [written[a:b] for a, b, _ in self.known.find(written) if not frame.says(written[a:b])]

    def semantic(self, frame: QuestionFrame, template: str, slots: list[Slot], context: Context) -> CacheHit | None:
        if self.embed is None:
            return None
        aggregates, terms = intent(frame, template, self.vocabulary)
        candidates = [
            e
            for e in self.entries.values()
            if e.context == context.key()
            and e.vector
            and e.slot_kinds == [s.kind for s in slots]
            and set(e.aggregates) == aggregates
            and set(e.terms) == terms
        ]
        if not candidates:
            return None
        query = self.embed(template)
        scores = [float(np.dot(query, np.asarray(e.vector, np.float32))) for e in candidates]
        best = int(np.argmax(scores))
        if scores[best] < SEMANTIC_THRESHOLD:
            return None
        entry = candidates[best]
        return CacheHit(plan=instantiate(entry.plan_template, slots), kind="semantic", source_question=entry.question)


# ---------------------------------------------------------------- building the cache for a lake

MAX_CATEGORY = 200


KNOWN_KEPT = 8  # lake states whose known values a process keeps


@functools.cache
def known_values_kept() -> dict[tuple, KnownValues]:
    return {}


def known_values(lake) -> KnownValues:
    """Ids and categories the lake's tables hold (id-like columns, and columns with few values), and
    the ids of its documents: each is a slot of a question's template. Read once per state of the
    lake's catalog and contract (every question of a batch asks for them)."""
    read = {s.table for s in lake.contract.sources if s.table} | {SEGMENTS_TABLE}
    state = catalog_state(lake.catalog, read)
    if state is None:
        return read_known_values(lake)
    key = (str(lake.path.resolve()), lake.contract.signature(), state)
    kept = known_values_kept()
    if key not in kept:
        while len(kept) >= KNOWN_KEPT:
            kept.pop(next(iter(kept)))
        kept[key] = read_known_values(lake)
    return kept[key]


def read_known_values(lake) -> KnownValues:
    columns = []
    contract = lake.contract
    for source in contract.sources:
        if source.table is None:
            continue
        wanted = [
            f.column
            for f in contract.fields_of(source.name)
            if f.column
            and f.type == "string"
            and ("id_like" in f.tags or f.cardinality <= MAX_CATEGORY)
            and "free_text" not in f.tags
        ]
        if wanted:
            arrow = lake.table(source.table).scan(selected_fields=tuple(wanted)).to_arrow()
            columns += [(source.name, c, set(arrow.column(c).drop_null().to_pylist())) for c in wanted]
    collections = [s.name for s in contract.sources if s.kind is SourceKind.documents]
    for collection, documents in stored_documents(lake.catalog, collections).items():
        columns.append((collection, "document_id", {doc_id for doc_id, _ in documents}))
    return KnownValues.from_columns(columns)


def schema_vocabulary(contract) -> dict[str, frozenset[str]]:
    """Table and column names -> the distinctive words that mention them (due_date -> {due})."""
    vocabulary: dict[str, frozenset[str]] = {}
    for source in contract.sources:
        parts = [singular(p) for p in identifier_words(source.name.split("__")[-1])]
        vocabulary[f"table:{source.name}"] = frozenset(p for p in parts if p not in {"document"}) or frozenset(parts)
    for entry in contract.fields:
        if entry.column and not entry.column.startswith("_lp_"):
            parts = [singular(p) for p in identifier_words(entry.column)]
            distinctive = [p for p in parts if p not in GENERIC_PARTS]
            vocabulary.setdefault(f"column:{entry.column}", frozenset(distinctive or parts))
    return vocabulary


def cache_for(lake, context_path: Path | None = None, *, embed: Embed | None = None, capacity: int = 1000) -> PlanCache:
    """The lake's persisted plan cache under its current schema signature and this release of
    lakeplanner: a plan another release made (its repairs and checks since changed) is planned again."""
    contract = lake.contract
    return PlanCache(
        context_path or lake.path / "plan_cache.jsonl",
        f"{contract.signature()}@{lakeplanner.__version__}",
        known_values(lake),
        schema_vocabulary(contract),
        embed=embed,
        capacity=capacity,
    )
