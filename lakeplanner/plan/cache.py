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
import itertools
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError
from sqlglot import exp

import lakeplanner
from lakeplanner.contract.models import SourceKind
from lakeplanner.ingest.segments import stored_documents
from lakeplanner.plan.model import WITHOUT_FRAMES, Plan
from lakeplanner.policy import Access
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.words import TOKEN, stem, word_set

_NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?![\w-])")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")
_WORDS = re.compile(r"[a-z0-9_]+")
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


@dataclass(frozen=True)
class Slot:
    kind: str  # number, date, string, or table.column for a known entity value
    value: str


def normalise(question: str) -> str:
    return " ".join(question.lower().replace("?", " ").replace(",", " ").split())


class KnownValues:
    """Entity values the lake holds (ids, names, categories), to find slots in a question."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values  # casefolded value -> "table.column"
        ordered = sorted(values, key=len, reverse=True)
        self.pattern = (
            re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, ordered)) + r")(?![\w-])", re.I) if ordered else None
        )

    @classmethod
    def from_columns(cls, columns: Iterable[tuple[str, str, Iterable[object]]]) -> KnownValues:
        values = {}
        for table, column, distinct in columns:
            for value in distinct:
                text = str(value).strip()
                if 2 <= len(text) <= 60 and not _NUMBER.fullmatch(text):
                    values.setdefault(text.casefold(), f"{table}.{column}")
        return cls(values)

    def find(self, text: str) -> list[tuple[int, int, str]]:
        if self.pattern is None:
            return []
        return [(m.start(), m.end(), self.values[m.group(0).casefold()]) for m in self.pattern.finditer(text)]

    @functools.cached_property
    def worded(self) -> dict[str, list[str]]:
        """value -> the stems of its words, for the values of two distinctive words or more."""
        stems = {value: [stem(w) for w in TOKEN.findall(value)] for value in self.values}
        return {value: said for value, said in stems.items() if sum(map(distinctive, said)) >= 2}

    @functools.cached_property
    def phrases(self) -> dict[tuple[str, str], set[str]]:
        """(stem, next stem) -> the worded values whose words hold that pair."""
        index: dict[tuple[str, str], set[str]] = {}
        for value, said in self.worded.items():
            for pair in itertools.pairwise(said):
                index.setdefault(pair, set()).add(value)
        return index

    def mentions(self, text: str, found: list[tuple[int, int, str]] | None = None) -> list[tuple[int, int, str]]:
        """Values the text names by a run of their words rather than in full (stems compared, two
        distinctive words or more): "cash and cash equivalents" names the row "net increase (decrease)
        in cash and cash equivalents", "Acme Freight" the carrier "Acme Freight Ltd". A run inside a
        value named in full (`found`, `find`'s spans when given), or inside a longer run, is left out; a
        run that several columns hold is bound to each."""
        words = list(TOKEN.finditer(text.lower()))
        said = [stem(w.group(0)) for w in words]
        exact = [(start, end) for start, end, _ in (self.find(text) if found is None else found)]
        runs: dict[tuple[int, int], set[str]] = {}
        for value in set().union(*(self.phrases.get(pair, set()) for pair in itertools.pairwise(said))):
            if (run := shared_run(said, self.worded[value])) is None:
                continue
            start, end = words[run[0]].start(), words[run[1]].end()
            if not any(s <= start and end <= e for s, e in exact):
                runs.setdefault((start, end), set()).add(self.values[value])
        return sorted(
            (start, end, column)
            for (start, end), columns in runs.items()
            if not any(s <= start and end <= e and (s, e) != (start, end) for s, e in runs)
            for column in columns
        )


def distinctive(word: str) -> bool:
    """A word that can tell one value from another: not a function word, a number or a generic part of
    a name (id, name, amount...)."""
    return len(word) > 1 and not word.isdigit() and word not in word_set("stopwords") and word not in GENERIC_PARTS


def shared_run(said: list[str], value: list[str]) -> tuple[int, int] | None:
    """The first and last index in `said` of its longest run of words the value holds in the same
    order, trimmed to distinctive words at both ends; None when that run has fewer than two."""
    best, at = 0, 0
    ending = [0] * (len(value) + 1)
    for i, word in enumerate(said):
        ending = [0] + [ending[j] + 1 if word == value[j] else 0 for j in range(len(value))]
        if max(ending) > best:
            best, at = max(ending), i
    run = list(range(at - best + 1, at + 1))
    while run and not distinctive(said[run[0]]):
        run.pop(0)
    while run and not distinctive(said[run[-1]]):
        run.pop()
    return (run[0], run[-1]) if sum(distinctive(said[i]) for i in run) >= 2 else None


def extract_slots(question: str, known: KnownValues) -> tuple[str, list[Slot]]:
    """The template text (placeholders in order) and the slot values, left to right."""
    spans: list[tuple[int, int, str, str]] = []
    for match in _QUOTED.finditer(question):
        spans.append((match.start(), match.end(), "string", match.group(1) or match.group(2)))
    for start, end, kind in known.find(question):
        spans.append((start, end, kind, question[start:end]))
    for match in _DATE.finditer(question):
        spans.append((match.start(), match.end(), "date", match.group(0)))
    for match in _NUMBER.finditer(question):
        spans.append((match.start(), match.end(), "number", match.group(0)))
    chosen: list[tuple[int, int, str, str]] = []
    for span in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if not chosen or span[0] >= chosen[-1][1]:
            chosen.append(span)
    template, cursor = [], 0
    for start, end, kind, _ in chosen:
        template += [question[cursor:start], f"<{kind}>"]
        cursor = end
    template.append(question[cursor:])
    return normalise("".join(template)), [Slot(kind, value) for _, _, kind, value in chosen]


_TOKEN = re.compile(r"<[^>]+>|[a-z0-9_]+")


def canonical(template: str) -> str:
    """The bag of content words: function words dropped, aggregate synonyms and plurals merged.

    Paraphrases that only reword ("tell me the total for invoice <x>" / "what is the total of invoice
    <x>") share it, so they hit without an embedding; slot placeholders keep their order."""
    tokens = _TOKEN.findall(template)
    slots = [t for t in tokens if t.startswith("<")]
    words = sorted(stem(t) for t in tokens if not t.startswith("<") and t not in word_set("filler"))
    return " ".join(words) + " | " + " ".join(slots)


def template_of(question: str, known: KnownValues) -> str:
    """The key a question's plan is cached under, before schema and context: questions that share it
    are answered by one plan with their own slot values."""
    return canonical(extract_slots(question, known)[0])  # its placeholders name the slots' kinds, in order


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
    raw = set(_WORDS.findall(template))
    words = raw | {stem(w) for w in raw}
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
        return hit if hit is not None and not self.foreign_values(hit.plan, question) else None

    def foreign_values(self, plan: Plan, question: str) -> list[str]:
        """Lake values the plan names literally that the question does not (a document id, a category
        the cached question searched for): such a plan answers the other question."""
        asked = question.casefold()
        written = " ".join(t for n in plan.nodes for t in (n.question, n.sql, n.filter) if t)
        return [written[a:b] for a, b, _ in self.known.find(written) if written[a:b].casefold() not in asked]

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


def known_values(lake) -> KnownValues:
    """Ids and categories the lake's tables hold (id-like columns, and columns with few values), and
    the ids of its documents: each is a slot of a question's template."""
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


GENERIC_PARTS = {"id", "date", "amount", "name", "number", "code", "value", "type", "no", "lp"}


def schema_vocabulary(contract) -> dict[str, frozenset[str]]:
    """Table and column names -> the distinctive words that mention them (due_date -> {due})."""
    vocabulary: dict[str, frozenset[str]] = {}
    for source in contract.sources:
        parts = [p.rstrip("s") for p in source.name.split("__")[-1].split("_") if p]
        vocabulary[f"table:{source.name}"] = frozenset(p for p in parts if p not in {"document"}) or frozenset(parts)
    for entry in contract.fields:
        if entry.column and not entry.column.startswith("_lp_"):
            parts = [p.rstrip("s") for p in entry.column.split("_") if p]
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
