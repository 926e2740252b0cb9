"""Bad input gets a clear error and loses nothing."""

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from lakeplanner import Lake
from lakeplanner.cli import app

BAD = Path(__file__).parent / "data" / "bad"
EXPECTED = json.loads((BAD / "EXPECTED.json").read_text())


def test_bad_files_are_named_and_valid_ones_ingested(tmp_path):
    lake = Lake.create(tmp_path / "lake")
    report = lake.ingest(BAD)
    reasons = {b.path: f"{b.reason} {b.hint or ''}".lower() for b in report.bad_files}
    bad = {n: e for n, e in EXPECTED.items() if e["reason"] != "valid"}
    assert set(reasons) == set(bad)
    for name, expected in bad.items():
        assert expected["keyword"] in reasons[name], (name, reasons[name])
    assert lake.table_names() == ["valid_orders"]
    assert lake.table("valid_orders").scan().to_arrow().num_rows == 10
    assert {c.name: c.chunks for c in lake.info().collections} == {"documents": 1}
    assert lake.validate() == []
    lake.close()


def test_a_source_that_turns_bad_commits_nothing_and_keeps_its_data(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    shutil.copy(BAD / "valid_orders.csv", folder / "orders.csv")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(folder)
    before = lake.table("orders").current_snapshot().snapshot_id
    (folder / "orders.csv").write_bytes((BAD / "ragged.csv").read_bytes())
    report = lake.ingest(folder)
    assert [b.path for b in report.bad_files] == ["orders.csv"] and report.ingested == 0
    table = lake.table("orders")
    assert table.current_snapshot().snapshot_id == before and len(table.snapshots()) == 1
    assert table.scan().to_arrow().num_rows == 10
    assert lake.contract.source("orders").records == 10
    lake.close()


def test_cli_exit_code_is_non_zero_only_when_nothing_valid_was_ingested(tmp_path):
    only_bad = tmp_path / "only_bad"
    only_bad.mkdir()
    for name in ("ragged.csv", "empty.csv"):
        shutil.copy(BAD / name, only_bad / name)
    runner = CliRunner()
    result = runner.invoke(app, ["ingest", str(only_bad), "--lake", str(tmp_path / "a")])
    assert result.exit_code == 1 and "ragged.csv" in result.output
    result = runner.invoke(app, ["ingest", str(BAD), "--lake", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
