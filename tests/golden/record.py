"""Record the golden files of the sample lakes with the real local model.

    python -m tests.golden.record                      # every question not yet recorded, both lakes
    python -m tests.golden.record --lake sales --force # re-record one lake from scratch
    python -m tests.golden.record --reuse-replies      # again, the model asked only prompts not held

Each lake is ingested into a temporary folder; each question is asked in process, in order, without
the plan cache, on the local model wrapped so that every call's reply is kept in the lake's cassette,
and every vector and relevance score the encoders computed in its tape (tests/golden/encoders.py).
A question's golden file is written once it is answered, the cassette after every question, so an
interrupted run resumes where it stopped. A question one of whose calls failed (a time-out) is not
written: a rerun asks it again. With --reuse-replies the lake is re-recorded from scratch, but a
prompt the old cassette holds gets its recorded reply: when only retrieval or the encoders changed,
the model answers only the prompts that changed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from lakeplanner import Lake, sample_lake_path
from lakeplanner.llm.local import LocalBackend
from lakeplanner.llm.settings import LLMSettings
from tests.golden.cassette import Cassette, RecordingBackend
from tests.golden.encoders import TAPE_NAME, EncoderTape, install
from tests.golden.golden import LAKES, ask_pinned, cassette_path, golden_path, lake_dir, questions, write_golden


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def model_settings() -> LLMSettings:
    """The local default model as a user gets it, prefix states kept in memory only."""
    return LLMSettings(backend="local", model="default", prefix_states_on_disk=False)


def to_record(lake: str) -> list[tuple[int, str]]:
    return [(i, q) for i, q in enumerate(questions(lake), start=1) if not golden_path(lake, i).exists()]


def record_lake(lake: str, model: LocalBackend, work: Path, reused: Cassette | None = None) -> None:
    pending = to_record(lake)
    if not pending:
        log(f"{lake}: every question recorded")
        return
    backend = RecordingBackend(model, Cassette(cassette_path(lake)), reused)
    tape = EncoderTape(lake_dir(lake) / TAPE_NAME)
    install(tape, recording=True)
    opened = Lake.create(work / lake)
    opened.ingest(sample_lake_path(lake))
    tape.save()
    try:
        for index, question in pending:
            record_question(opened, lake, index, question, backend)
            tape.save()
    finally:
        opened.close()


def record_question(lake: Lake, name: str, index: int, question: str, backend: RecordingBackend) -> None:
    started = time.perf_counter()
    backend.failures.clear()
    golden = ask_pinned(lake, question, backend, model_settings())
    backend.cassette.save()
    seconds = time.perf_counter() - started
    if backend.failures:
        log(f"{name} q{index:02d} NOT written ({seconds:.0f} s), a call failed: {backend.failures[0]}")
        return
    write_golden(golden_path(name, index), golden)
    log(f"{name} q{index:02d} {seconds:.0f} s -> {golden['answer']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", choices=LAKES, action="append", help="only this lake (repeatable)")
    parser.add_argument("--force", action="store_true", help="drop the lake's recorded files first")
    parser.add_argument(
        "--reuse-replies",
        action="store_true",
        help="drop the lake's recorded files first, but answer a prompt the old cassette holds from it",
    )
    args = parser.parse_args(argv)
    lakes = args.lake or list(LAKES)
    reused = {lake: Cassette(cassette_path(lake)) for lake in lakes} if args.reuse_replies else {}
    if args.force or args.reuse_replies:
        for lake in lakes:
            shutil.rmtree(lake_dir(lake), ignore_errors=True)
    model = LocalBackend(model_settings())
    try:
        with tempfile.TemporaryDirectory(prefix="golden-") as work:
            for lake in lakes:
                record_lake(lake, model, Path(work), reused.get(lake))
    finally:
        model.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
