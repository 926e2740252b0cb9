"""`lakeplanner batch` end to end with the real local model on two sample questions whose answers are
known. Marked real_model but not slow: CI runs it (about 2 minutes on 2 cores)."""

import json

import pytest
from typer.testing import CliRunner

from lakeplanner import Lake, sample_lake_path
from lakeplanner.batch.answers import table_name
from lakeplanner.cli import app

pytestmark = pytest.mark.real_model
KNOWN = {"enterprise": ("How many customers are in the Enterprise segment?", "14")}


def test_a_batch_on_the_real_model_writes_cited_answers(tmp_path):
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(sample_lake_path())
    lake.close()
    source = tmp_path / "questions.jsonl"
    source.write_text("".join(json.dumps({"id": k, "question": q}) + "\n" for k, (q, _) in KNOWN.items()))
    result = CliRunner().invoke(app, ["batch", str(source), "--lake", str(lake.path), "--name", "real", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["question_id"]: r for r in lake.catalog.load_table(table_name("real")).scan().to_arrow().to_pylist()}
    for key, (_, expected) in KNOWN.items():
        row = rows[key]
        assert row["error_type"] is None and not row["abstained"], row["reason"]
        assert expected in f"{row['value']} {row['sentence']}"
        assert row["citations"] and row["model"] and row["input_tokens"] > 0
    lake.close()
