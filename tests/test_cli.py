import json

from typer.testing import CliRunner

from lakeplanner import sample_lake_path
from lakeplanner.cli import app

runner = CliRunner()


def test_help_teaches_the_first_commands():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "lakeplanner ingest --sample --lake ./lake" in result.output
    for command in ("ingest", "lake", "schema"):
        assert command in result.output
    assert "exclusion manifest" in runner.invoke(app, ["ingest", "--help"]).output.lower()


def test_ingest_info_schema_round_trip(tmp_path):
    lake = str(tmp_path / "lake")
    result = runner.invoke(app, ["ingest", str(sample_lake_path() / "documents" / "contracts"), "--lake", lake])
    assert result.exit_code == 0, result.output
    assert "contract revision 1" in result.output

    info = json.loads(runner.invoke(app, ["lake", "info", "--lake", lake, "--json"]).output)
    assert info["collections"] == [{"name": "documents", "chunks": 37}]

    shown = runner.invoke(app, ["schema", "show", "--lake", lake])
    assert shown.exit_code == 0 and "document_id" in shown.output
    assert runner.invoke(app, ["schema", "validate", "--lake", lake]).exit_code == 0

    (tmp_path / "lake" / "schema.yaml").write_text("sources: not-a-list\n")
    broken = runner.invoke(app, ["schema", "validate", "--lake", lake])
    assert broken.exit_code == 2 and "not a valid lakeplanner contract" in broken.output


def test_missing_lake_names_the_fix(tmp_path):
    result = runner.invoke(app, ["lake", "info", "--lake", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "no lake at" in result.output and "lakeplanner ingest SRC --lake" in result.output
