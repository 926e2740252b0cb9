"""The datasets as questions over small lakes: one lake per TAT-QA context or HotpotQA question."""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
import shutil
from collections import defaultdict
from functools import cache
from pathlib import Path

from pydantic import BaseModel

import lakeplanner
from lakeplanner import Lake

DATA = Path(__file__).resolve().parent.parent / "data"
TATQA = DATA / "tatqa" / "tatqa_dataset_dev.json"
HOTPOT = DATA / "hotpotqa" / "hotpot_dev_distractor_first100.json"
SAMPLE = DATA / "tatqa" / "sample300.json"
SAMPLE_SEED, SAMPLE_SIZE, SHARED_SIZE = 20261122, 300, 100
HOLDOUT = DATA / "tatqa" / "holdout100.json"  # outside the 300: never tuned on, run once to see generalisation
HOLDOUT_SEED, HOLDOUT_SIZE = 20261125, 100


class Question(BaseModel):
    uid: str
    dataset: str
    context: str  # the lake it is asked over
    question: str
    answer: object
    answer_type: str
    answer_from: str
    scale: str = ""


class Context(BaseModel):
    uid: str
    table: list[list[str]] = []
    paragraphs: list[tuple[str, str]]  # (title, text)


def tatqa() -> tuple[list[Question], dict[str, Context]]:
    questions, contexts = [], {}
    for item in json.loads(TATQA.read_text()):
        uid = item["table"]["uid"]
        paragraphs = [
            (f"Paragraph {p['order']}", p["text"]) for p in sorted(item["paragraphs"], key=lambda p: p["order"])
        ]
        contexts[uid] = Context(uid=uid, table=item["table"]["table"], paragraphs=paragraphs)
        for q in item["questions"]:
            questions.append(
                Question(
                    uid=q["uid"],
                    dataset="tatqa",
                    context=uid,
                    question=q["question"],
                    answer=q["answer"],
                    answer_type=q["answer_type"],
                    answer_from=q["answer_from"],
                    scale=q["scale"],
                )
            )
    return questions, contexts


def hotpotqa() -> tuple[list[Question], dict[str, Context]]:
    questions, contexts = [], {}
    for i, item in enumerate(json.loads(HOTPOT.read_text())):
        uid = f"hotpot-{i:03d}"
        titles, sentences = item["context"]["title"], item["context"]["sentences"]
        contexts[uid] = Context(uid=uid, paragraphs=[(t, "".join(s)) for t, s in zip(titles, sentences, strict=True)])
        questions.append(
            Question(
                uid=uid,
                dataset="hotpotqa",
                context=uid,
                question=item["question"],
                answer=item["answer"],
                answer_type=item["type"],
                answer_from=item["level"],
            )
        )
    return questions, contexts


def largest_remainder(counts: dict[tuple, int], size: int) -> dict[tuple, int]:
    """Seats per stratum in proportion to its count, at least one each, summing to `size`."""
    total = sum(counts.values())
    quotas = {k: size * n / total for k, n in counts.items()}
    seats = {k: max(1, int(q)) for k, q in quotas.items()}
    for k in sorted(quotas, key=lambda k: quotas[k] - int(quotas[k]), reverse=True):
        if sum(seats.values()) >= size:
            break
        seats[k] += 1
    while sum(seats.values()) > size:
        k = max((k for k in seats if seats[k] > 1), key=lambda k: seats[k] - quotas[k])
        seats[k] -= 1
    return seats


def strata_of(questions: list[Question]) -> dict[tuple, list[str]]:
    strata: dict[tuple, list[str]] = defaultdict(list)
    for q in questions:
        strata[q.answer_type, q.answer_from].append(q.uid)
    return strata


def make_holdout(questions: list[Question], taken: set[str]) -> list[str]:
    """100 ids outside `taken` (the fixed 300), stratified like it, with their own seed."""
    rng = random.Random(HOLDOUT_SEED)
    strata = strata_of([q for q in questions if q.uid not in taken])
    seats = largest_remainder({k: len(v) for k, v in strata.items()}, HOLDOUT_SIZE)
    chosen = [uid for key in sorted(strata) for uid in rng.sample(strata[key], seats[key])]
    rng.shuffle(chosen)
    return chosen


def make_sample(questions: list[Question]) -> list[str]:
    """300 ids stratified by (answer type, answer source); the first 100 are stratified too."""
    rng = random.Random(SAMPLE_SEED)
    strata = strata_of(questions)
    counts = {k: len(v) for k, v in strata.items()}
    big, small = largest_remainder(counts, SAMPLE_SIZE), largest_remainder(counts, SHARED_SIZE)
    first, rest = [], []
    for key in sorted(strata):
        chosen = rng.sample(strata[key], big[key])
        first += chosen[: small[key]]
        rest += chosen[small[key] :]
    rng.shuffle(first)
    rng.shuffle(rest)
    return first + rest


def write_sample() -> None:
    questions, _ = tatqa()
    header = {
        "seed": SAMPLE_SEED,
        "strata": "answer_type x answer_from, largest remainder, >= 1 each",
        "first_100": "stratified the same way; shared by every method",
    }
    SAMPLE.write_text(json.dumps({**header, "ids": make_sample(questions)}, indent=1) + "\n")


def write_holdout() -> None:
    questions, _ = tatqa()
    taken = set(json.loads(SAMPLE.read_text())["ids"])
    header = {
        "seed": HOLDOUT_SEED,
        "strata": "answer_type x answer_from over the dev questions outside sample300.json",
        "use": "run once at the end of a change, never tuned on: the honest figure of how the TAT-QA pack generalises",
    }
    HOLDOUT.write_text(json.dumps({**header, "ids": make_holdout(questions, taken)}, indent=1) + "\n")


def load(dataset: str, n: int | None) -> tuple[list[Question], dict[str, Context]]:
    """The questions a run asks, in order: TAT-QA's fixed sample (or all), its holdout, HotpotQA's first n."""
    if dataset == "tatqa-holdout":
        questions, contexts = tatqa()
        by_id = {q.uid: q for q in questions}
        chosen = [by_id[uid] for uid in json.loads(HOLDOUT.read_text())["ids"]]
        return (chosen if n is None else chosen[:n]), contexts
    questions, contexts = tatqa() if dataset == "tatqa" else hotpotqa()
    if dataset == "tatqa" and (n is None or n <= SAMPLE_SIZE):
        by_id = {q.uid: q for q in questions}
        questions = [by_id[uid] for uid in json.loads(SAMPLE.read_text())["ids"]]
    return (questions if n is None else questions[:n]), contexts


def file_stem(title: str, taken: set[str]) -> str:
    stem = re.sub(r"[^0-9a-zA-Z]+", "_", title).strip("_").lower()[:60] or "paragraph"
    name, k = stem, 2
    while name in taken:
        name, k = f"{stem}_{k}", k + 1
    taken.add(name)
    return name


def write_source(context: Context, folder: Path) -> None:
    """The context as raw files a user would drop in a folder: the report grid and the text."""
    folder.mkdir(parents=True, exist_ok=True)
    if context.table:
        with (folder / "financials.report.csv").open("w", newline="") as fh:
            csv.writer(fh).writerows(context.table)
    taken: set[str] = set()
    for title, text in context.paragraphs:
        (folder / f"{file_stem(title, taken)}.md").write_text(f"# {title}\n\n{text.strip()}\n")


@cache
def builder_version() -> str:
    """A digest of the ingest and contract code: a lake built by other code is built again."""
    package = Path(lakeplanner.__file__).parent
    digest = hashlib.sha256()
    for path in sorted([*(package / "ingest").glob("*.py"), *(package / "contract").glob("*.py")]):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def lake_for(context: Context, workdir: Path) -> Lake:
    """The context's lake, ingested once through the product's API and reused by every method until
    the code that builds lakes changes."""
    root = workdir / context.uid
    ready = root / "ready"
    if ready.exists() and ready.read_text().strip() == builder_version():
        return Lake.open(root / "lake")
    if root.exists():
        shutil.rmtree(root)  # a build that stopped half way, or one by other ingest code
    write_source(context, root / "source")
    lake = Lake.create(root / "lake")
    report = lake.ingest(root / "source")
    if report.bad_files:
        raise RuntimeError(f"context {context.uid}: {report.bad_files}")
    ready.write_text(builder_version() + "\n")
    return lake
