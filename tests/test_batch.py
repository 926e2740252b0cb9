"""Batch answering into the lake: reading and checking questions, the answers table, exactly-once
commits, failures as rows, and a run killed with SIGKILL that resumes (scripted model, real engines)."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from batch_child import scripted, scripted_reply
from typer.testing import CliRunner

from lakeplanner import Lake, sample_lake_path
from lakeplanner.batch import BatchInputError, questions_of, read_source, run_batch
from lakeplanner.batch.answers import RUN_PROPERTY, table_name
from lakeplanner.cli import app
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend

CHILD = Path(__file__).parent / "batch_child.py"


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    lake = Lake.create(tmp_path_factory.mktemp("batch") / "lake")
    lake.ingest(sample_lake_path())
    yield lake
    lake.close()


def write_questions(path: Path, n: int, wording: str = "How many customers ({i})?") -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i:03d}", "question": wording.format(i=i)}) + "\n" for i in range(n)))
    return path


def counting(calls: Counter):
    def reply(messages, schema):
        calls[(schema or {}).get("title")] += 1
        return scripted_reply(schema)

    return LLM(FakeBackend(reply))


def test_missing_and_repeated_ids_are_named_before_any_work():
    rows = pa.table({"id": ["a", None, "b", "a"], "question": ["x", "y", "z", "w"]})
    with pytest.raises(BatchInputError, match=r"1 rows have no id \(rows 2\)"):
        questions_of(rows)
    rows = pa.table({"id": ["a", "b", "a"], "question": ["x", "y", "z"]})
    with pytest.raises(BatchInputError, match=r"'a' \(rows 1 and 3\)"):
        questions_of(rows)
    with pytest.raises(BatchInputError, match="no column 'question'"):
        questions_of(pa.table({"id": ["a"], "text": ["x"]}))


def test_a_template_asks_one_question_per_row(lake):
    invoices = read_source("invoices", lake)
    questions = questions_of(
        invoices, id_column="invoice_id", template="What are the payment terms of invoice {invoice_id}?"
    )
    assert len(questions) == invoices.num_rows
    assert questions[0].question == f"What are the payment terms of invoice {questions[0].id}?"
    with pytest.raises(BatchInputError, match="names nope"):
        questions_of(invoices, template="{nope}?")


def test_answers_are_committed_once_per_id_and_a_rerun_commits_nothing(lake, tmp_path):
    questions = questions_of(read_source(str(write_questions(tmp_path / "q.jsonl", 5)), lake))
    report = run_batch(lake, questions, name="once", llm=scripted(), commit_every=2, run_id="run1")
    assert (report.answered, report.failed, report.commits) == (5, 0, 3)
    table = lake.catalog.load_table(table_name("once"))
    rows = table.scan().to_arrow().to_pylist()
    assert sorted(r["question_id"] for r in rows) == [f"q{i:03d}" for i in range(5)]
    first = rows[0]
    # the one count cell is the answer without a synthesis call; the SQL writer's call is counted
    assert first["value"] == "40" and first["run_id"] == "run1" and first["llm_calls"] >= 1
    assert first["citations"] and first["citations"][0]["source"] == "customers"
    assert first["snapshots"][0]["table"] == "customers" and first["trace_id"]
    assert table.current_snapshot().summary[RUN_PROPERTY] == "run1"
    snapshots = len(table.snapshots())
    again = run_batch(lake, questions, name="once", llm=scripted(), commit_every=2)
    assert (again.already_done, again.answered, again.commits) == (5, 0, 0)
    assert len(lake.catalog.load_table(table_name("once")).snapshots()) == snapshots


def test_a_failing_question_is_a_row_and_retry_failed_asks_it_again(lake, tmp_path):
    questions = questions_of(read_source(str(write_questions(tmp_path / "q.jsonl", 3)), lake))

    def crash(messages, schema):
        raise RuntimeError("the model process died")

    report = run_batch(lake, questions, name="failing", llm=LLM(FakeBackend(crash)))
    rows = lake.catalog.load_table(table_name("failing")).scan().to_arrow().to_pylist()
    assert len(rows) == 3 and report.failed == 3
    failed = [r for r in rows if r["error_type"]]
    assert {(r["error_type"], r["error"]) for r in failed} == {("RuntimeError", "the model process died")}
    retried = run_batch(lake, questions, name="failing", llm=scripted(), retry_failed=True)
    assert retried.answered == len(failed)
    after = lake.catalog.load_table(table_name("failing")).scan().to_arrow().to_pylist()
    assert len(after) == 3 and not any(r["error_type"] for r in after)


def test_a_run_killed_mid_way_resumes_with_every_id_exactly_once(lake, tmp_path):
    source = write_questions(tmp_path / "q.jsonl", 12)
    lake.close()  # the child process opens the lake's Milvus Lite file
    child = subprocess.Popen([sys.executable, str(CHILD), str(lake.path), str(source), "0.3"], cwd=CHILD.parent)
    identifier = table_name("resume")
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            table = lake.catalog.load_table(identifier)
            if len(table.scan(selected_fields=("question_id",)).to_arrow()) >= 4:
                break
        except Exception:  # not created yet
            pass
        time.sleep(0.2)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    partial = lake.catalog.load_table(identifier).scan().to_arrow().num_rows
    assert 0 < partial < 12
    finished = subprocess.run(
        [sys.executable, str(CHILD), str(lake.path), str(source), "0"], cwd=CHILD.parent, capture_output=True, text=True
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    report = json.loads(finished.stdout.strip().splitlines()[-1])
    assert report["already_done"] == partial and report["answered"] == 12 - partial
    table = lake.catalog.load_table(identifier)
    ids = table.scan().to_arrow().column("question_id").to_pylist()
    assert sorted(ids) == sorted(set(ids)) == [f"q{i:03d}" for i in range(12)]
    # no answer written twice: each id's row, once committed, is the same in every later snapshot
    seen: dict[str, str] = {}
    for snapshot in table.snapshots():
        for row in table.scan(snapshot_id=snapshot.snapshot_id).to_arrow().to_pylist():
            assert seen.setdefault(row["question_id"], row["trace_id"]) == row["trace_id"]


def test_questions_of_one_template_are_planned_once(lake, tmp_path):
    source = write_questions(tmp_path / "q.jsonl", 4, "Count the customers of cohort {i}")
    questions = questions_of(read_source(str(source), lake))
    planned = Counter()
    report = run_batch(lake, questions, name="grouped", llm=counting(planned))
    assert (report.templates, report.plan_cache_hits, planned["GeneratedPlan"]) == (1, 3, 1)
    fresh = Counter()
    report = run_batch(lake, questions, name="ungrouped", llm=counting(fresh), plan_reuse=False)
    assert (report.templates, report.plan_cache_hits, fresh["GeneratedPlan"]) == (0, 0, 4)


def test_the_batch_command_shows_what_it_did(lake, tmp_path):
    source = write_questions(tmp_path / "q.jsonl", 2)
    result = CliRunner().invoke(app, ["batch", str(source), "--lake", str(lake.path), "--name", "cli", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["table"] == "lakeplanner.answers_cli" and report["answered"] + report["failed"] == 2
    bad = CliRunner().invoke(app, ["batch", "nowhere.csv", "--lake", str(lake.path)])
    assert bad.exit_code == 2 and "no file or lake table" in bad.output


@pytest.mark.usefixtures("ray_local")
def test_a_pool_of_ray_actors_answers_with_one_owner_of_the_vector_store(lake, tmp_path):
    """Two answerers, each with its own (scripted) model; searches go through the one actor that
    holds the Milvus Lite file, so the driver and the answerers never open it. The template's first
    question is planned before the rest start, so they all find its plan."""
    source = write_questions(tmp_path / "q.jsonl", 4, "How many customers joined in wave {i}?")
    questions = questions_of(read_source(str(source), lake))
    report = run_batch(lake, questions, name="pool", llm=scripted(), actors=2, commit_every=3)
    assert (report.answered, report.failed, report.commits) == (4, 0, 2)
    rows = lake.catalog.load_table(table_name("pool")).scan().to_arrow().to_pylist()
    assert sorted(r["question_id"] for r in rows) == [f"q{i:03d}" for i in range(4)]
    assert all(r["value"] == "40" for r in rows)
    assert sorted(str(r["cache"]) for r in rows) == ["None", "template", "template", "template"]


@pytest.mark.usefixtures("ray_local")
def test_a_pool_member_killed_mid_question_is_started_again_and_the_question_asked_again(lake, tmp_path):
    """SIGKILL of a worker: the answerer's process dies while it writes a step's SQL; Ray starts the actor
    again and its question is asked again, and the table still holds every id once."""
    killed = tmp_path / "killed"

    def reply(messages, schema):
        if (schema or {}).get("title") == "SqlDraft" and not killed.exists():
            killed.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return scripted_reply(schema)

    source = write_questions(tmp_path / "q.jsonl", 4, "How many customers signed in week {i}?")
    report = run_batch(
        lake, questions_of(read_source(str(source), lake)), name="killed", llm=LLM(FakeBackend(reply)), actors=2
    )
    assert killed.exists() and (report.answered, report.failed) == (4, 0)
    rows = lake.catalog.load_table(table_name("killed")).scan().to_arrow().to_pylist()
    assert sorted(r["question_id"] for r in rows) == [f"q{i:03d}" for i in range(4)]
