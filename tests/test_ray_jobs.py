"""The ray_jobs entry points, submitted through the Ray Jobs API to a real two-node Ray cluster
started on this machine; the answerers reach a scripted model through an OpenAI-compatible endpoint,
as actors on a cluster share a vLLM or hosted endpoint."""

import json
import sys
import time
from pathlib import Path

import pytest
from loopback import on_loopback
from ray_cluster import two_node_cluster
from scripted_endpoint import scripted_endpoint

from lakeplanner import Lake, sample_lake_path
from lakeplanner.batch.answers import RUN_PROPERTY, table_name

REPO = Path(__file__).parent.parent
FINISHED = {"SUCCEEDED", "FAILED", "STOPPED"}


@pytest.fixture(scope="module")
def cluster():
    with two_node_cluster() as cluster:
        yield cluster


def submit(client, entrypoint: str, env: dict | None = None, timeout_s: float = 120) -> str:
    """Submit, waiting for the head's job agent: right after `ray start` it may not be up yet."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return client.submit_job(entrypoint=entrypoint, runtime_env={"env_vars": env} if env else None)
        except RuntimeError as e:
            if "No available agent" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(2)


def wait_for(client, job: str, timeout_s: float = 300) -> str:
    deadline = time.monotonic() + timeout_s
    while (status := str(client.get_job_status(job).value)) not in FINISHED:
        assert time.monotonic() < deadline, client.get_job_logs(job)[-3000:]
        time.sleep(2)
    return status


def test_a_batch_job_and_an_ingest_job_run_on_the_cluster(cluster, tmp_path):
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(cluster.dashboard, headers={"Authorization": f"Bearer {cluster.token}"})
    lake = tmp_path / "lake"
    ingest = submit(client, f"{sys.executable} {REPO}/ray_jobs/ingest_lake.py {sample_lake_path()} --lake {lake}")
    assert wait_for(client, ingest) == "SUCCEEDED", client.get_job_logs(ingest)[-3000:]
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": f"How many customers are in region {i}?"}) + "\n" for i in range(6)
        )
    )
    app, calls = scripted_endpoint()
    with on_loopback(app) as url:
        env = {"LAKEPLANNER_LLM_BACKEND": "openai", "LAKEPLANNER_LLM_BASE_URL": f"{url}/v1"}
        command = (
            f"{sys.executable} {REPO}/ray_jobs/batch_ask.py {questions} --lake {lake} --name jobs --commit-every 2"
        )
        first = submit(client, command, env)
        assert wait_for(client, first) == "SUCCEEDED", client.get_job_logs(first)[-3000:]
        logs = client.get_job_logs(first)
        again = submit(client, command, env)
        assert wait_for(client, again) == "SUCCEEDED", client.get_job_logs(again)[-3000:]
    assert "6/6 questions" in logs and calls["GeneratedPlan"] == 1  # one template, planned once
    table = Lake.open(lake).catalog.load_table(table_name("jobs"))
    rows = table.scan().to_arrow().to_pylist()
    assert sorted(r["question_id"] for r in rows) == [f"q{i}" for i in range(6)]
    assert all(r["value"] == "40" and r["citations"] for r in rows)
    assert {s.summary[RUN_PROPERTY] for s in table.snapshots()} == {rows[0]["run_id"]}  # the rerun committed nothing
    assert "0 answered" in client.get_job_logs(again) and "0 commits" in client.get_job_logs(again)
