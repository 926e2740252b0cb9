import json
import shutil

from typer.testing import CliRunner

from lakeplanner import sample_lake_path
from lakeplanner.cli import app
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend

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


def small_lake(tmp_path) -> str:
    from lakeplanner import Lake

    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(sample_lake_path() / "invoices.json", source / "invoices.json")
    with Lake.create(tmp_path / "lake") as lake:
        lake.ingest(source)
    return str(tmp_path / "lake")


QUESTION = "Which warehouse shipped invoice INV-1010?"


def test_schema_gaps_extend_and_log(tmp_path):
    lake = small_lake(tmp_path)
    gaps = runner.invoke(app, ["schema", "gaps", QUESTION, "--lake", lake])
    assert (
        gaps.exit_code == 1 and "warehouse, shipped" in gaps.output and "schema extend --term warehouse" in gaps.output
    )
    args = ["schema", "extend", "--term", "warehouse", "--description", "where goods leave from", "--lake", lake]
    extended = runner.invoke(app, [*args, "--field", "currency", "--by", "dana"])
    assert extended.exit_code == 0, extended.output
    assert "revision 2" in extended.output and "Warehouse (invoices): currency = invoices.currency" in extended.output
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "already holds warehouse; revision 2 unchanged" in again.output
    left = json.loads(runner.invoke(app, ["schema", "gaps", QUESTION, "--lake", lake, "--json"]).output)
    assert left["unresolved"] == ["shipped"] and left["proposed"] is None
    [version] = json.loads(runner.invoke(app, ["schema", "log", "--lake", lake, "--json"]).output)
    assert (version["revision"], version["by"], version["reason"]) == (2, "dana", "where goods leave from")
    table = runner.invoke(app, ["schema", "log", "--lake", lake])
    assert table.exit_code == 0 and "dana" in table.output and "Warehouse" in table.output


def test_schema_extend_names_the_fix(tmp_path):
    lake = small_lake(tmp_path)
    base = ["schema", "extend", "--description", "d", "--lake", lake]
    wrong = runner.invoke(app, [*base, "--term", "payer", "--field", "email"])
    assert wrong.exit_code == 2 and "no source has a field 'email'" in wrong.output and "billing_email" in wrong.output
    orphan = runner.invoke(app, [*base, "--term", "payer", "--of", "Customer", "--field", "customer_id"])
    assert orphan.exit_code == 2 and "no entity type 'Customer'" in orphan.output
    assert "no extensions yet" in runner.invoke(app, ["schema", "log", "--lake", lake]).output


def test_schema_gaps_propose_shows_what_the_llm_would_add_without_saving(tmp_path, monkeypatch):
    lake = small_lake(tmp_path)
    reply = {"entities": [{"name": "warehouse", "attributes": [{"name": "code", "field_id": "currency"}]}]}
    monkeypatch.setattr("lakeplanner.llm.get_llm", lambda: LLM(FakeBackend([json.dumps(reply)])))
    result = runner.invoke(app, ["schema", "gaps", QUESTION, "--lake", lake, "--propose", "--json"])
    assert result.exit_code == 1, result.output
    [entity] = json.loads(result.output)["proposed"]["entities"]
    assert entity["name"] == "Warehouse" and entity["attributes"][0]["name"] == "code"
    assert "no extensions yet" in runner.invoke(app, ["schema", "log", "--lake", lake]).output


def test_ask_extend_adds_terms_for_that_question_only(tmp_path, monkeypatch):
    from lakeplanner import Lake
    from lakeplanner.execute.results import Answer

    lake = small_lake(tmp_path)
    seen = []

    def ask(self, question, **kw):
        seen.append([e.name for e in self.contract.entities])
        return Answer(question=question, value="x", text="x", confidence=1.0)

    monkeypatch.setattr(Lake, "ask", ask)
    result = runner.invoke(app, ["ask", QUESTION, "--lake", lake, "--extend", "warehouse=where goods leave from"])
    assert result.exit_code == 0, result.output
    assert seen == [["Warehouse"]]
    with Lake.open(lake) as opened:
        assert opened.contract.entities == []
    bad = runner.invoke(app, ["ask", QUESTION, "--lake", lake, "--extend", "warehouse"])
    assert bad.exit_code == 2 and "not TERM=DESCRIPTION" in bad.output
    served = runner.invoke(app, ["ask", QUESTION, "--server", "http://127.0.0.1:9", "--extend", "a=b"])
    assert served.exit_code == 2 and "not with --server" in served.output
