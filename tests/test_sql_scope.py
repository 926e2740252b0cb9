"""A written statement in another dialect's spelling, or reading tables a chain of keys joins: read in
its dialect or widened to those tables, not refused."""

import json

import duckdb
import pytest

from lakeplanner import Lake
from lakeplanner.contract.models import FieldType
from lakeplanner.errors import UnsafeSqlError
from lakeplanner.execute.sql.dialects import read_other_dialects
from lakeplanner.execute.sql.scope import connected, widened_tables
from lakeplanner.execute.sql.statement import checked
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.policy.readonly import parse_select, parse_statement

TABLES = {
    "depots": {"depot_id": FieldType.string, "city": FieldType.string},
    "couriers": {"courier_id": FieldType.string, "name": FieldType.string, "depot_id": FieldType.string},
    "parcels": {
        "parcel_id": FieldType.string,
        "courier_id": FieldType.string,
        "weight_kg": FieldType.number,
        "sent_on": FieldType.date,
    },
    "invoices_archive": {"archive_id": FieldType.string, "amount": FieldType.number},
}
JOINS = {"depots": {"couriers"}, "couriers": {"depots", "parcels"}, "parcels": {"couriers"}}


def parcels_db():
    db = duckdb.connect()
    db.execute("CREATE TABLE parcels (parcel_id TEXT, weight_kg DOUBLE, sent_on DATE)")
    db.execute("INSERT INTO parcels VALUES ('P1', 2.5, DATE '2024-03-01'), ('P2', 4.0, DATE '2024-03-20')")
    return db


@pytest.mark.parametrize(
    "written",
    [
        "SELECT parcel_id FROM parcels WHERE sent_on > DATE_SUB(DATE '2024-03-31', INTERVAL 15 DAY)",  # MySQL
        "SELECT parcel_id FROM parcels WHERE sent_on > DATEADD(day, -15, DATE '2024-03-31')",  # T-SQL
        "SELECT parcel_id FROM parcels WHERE sent_on > DATE_SUB(DATE '2024-03-31', 15)",  # Spark
    ],
)
def test_a_date_call_in_another_dialect_is_read_in_it_and_runs_in_duckdb(written):
    statement = parse_statement(written)
    edits = read_other_dialects(statement)
    assert len(edits) == 1 and " read as " in edits[0]
    checked(statement, TABLES, ["parcels"])  # the guard no longer refuses it
    assert parcels_db().execute(statement.sql("duckdb")).fetchall() == [("P2",)]


def test_a_format_call_is_read_as_the_dialect_that_knows_it():
    statement = parse_statement("SELECT DATE_FORMAT(sent_on, '%Y-%m') AS month FROM parcels")
    read_other_dialects(statement)
    assert sorted(parcels_db().execute(statement.sql("duckdb")).fetchall()) == [("2024-03",), ("2024-03",)]


def test_a_function_no_dialect_knows_is_refused_with_the_functions_duckdb_has():
    statement = parse_statement("SELECT MAGIC_WEIGHT(weight_kg) FROM parcels")
    assert read_other_dialects(statement) == []
    with pytest.raises(UnsafeSqlError) as refused:
        checked(statement, TABLES, ["parcels"])
    assert "date_diff" in refused.value.hint and "INTERVAL" in refused.value.hint


def test_a_file_reading_function_stays_refused_whatever_dialect_reads_it():
    statement = parse_statement("SELECT * FROM parcels WHERE parcel_id IN (SELECT pg_read_file('/etc/passwd'))")
    read_other_dialects(statement)
    with pytest.raises(UnsafeSqlError):
        checked(statement, TABLES, ["parcels"])


def test_a_statement_along_a_chain_of_keys_widens_its_step():
    statement = parse_select(
        "SELECT sum(p.weight_kg) FROM parcels p JOIN couriers c ON c.courier_id = p.courier_id "
        "JOIN depots d ON d.depot_id = c.depot_id WHERE d.city = 'Leeds'"
    )
    schema = LakeSchema(tables=TABLES, collections=set(), joins=JOINS)
    assert widened_tables(statement, ["parcels", "couriers"], schema) == ["depots"]
    assert widened_tables(statement, ["parcels", "couriers", "depots"], schema) == []


def test_a_statement_reading_an_unjoined_or_denied_table_is_not_widened():
    unjoined = parse_select("SELECT count(*) FROM parcels p, invoices_archive a WHERE a.amount > 10")
    schema = LakeSchema(tables=TABLES, collections=set(), joins=JOINS)
    assert widened_tables(unjoined, ["parcels"], schema) == []
    denied = LakeSchema(tables=TABLES, collections=set(), joins=JOINS, denied=frozenset({"depots"}))
    chain = parse_select("SELECT count(*) FROM couriers c JOIN depots d ON d.depot_id = c.depot_id")
    assert widened_tables(chain, ["couriers"], denied) == []
    assert not connected(["parcels", "depots"], JOINS)


def chain_lake(tmp_path) -> Lake:
    """Depots, their couriers and the parcels they sent: parcels -> couriers -> depots."""
    raw = tmp_path / "raw"
    raw.mkdir()
    cities = ["Leeds", "York", "Hull", "Bath", "Ely"]
    depots = [f"D{n}" for n in range(1, 6)]
    rows = "".join(f"{d},{c}\n" for d, c in zip(depots, cities, strict=True))
    (raw / "depots.csv").write_text("depot_id,city\n" + rows)
    couriers = [(f"C{n:02d}", f"Courier {n}", depots[n % 5]) for n in range(20)]
    (raw / "couriers.csv").write_text("courier_id,name,depot_id\n" + "".join(",".join(c) + "\n" for c in couriers))
    parcels = [(f"P{n:03d}", couriers[n % 20][0], 1.0 + n % 7, f"2024-03-{1 + n % 28:02d}") for n in range(80)]
    (raw / "parcels.csv").write_text(
        "parcel_id,courier_id,weight_kg,sent_on\n" + "".join(f"{p},{c},{w},{d}\n" for p, c, w, d in parcels)
    )
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(raw)
    return lake, sum(w for _, c, w, _ in parcels if dict((x, z) for x, _, z in couriers)[c] == "D1")


CHAIN_SQL = (
    "SELECT sum(p.weight_kg) AS total FROM parcels p JOIN couriers c ON c.courier_id = p.courier_id "
    "JOIN depots d ON d.depot_id = c.depot_id WHERE d.city = 'Leeds' AND p.sent_on > DATE_SUB(DATE '2024-03-31', 60)"
)


def test_an_aggregate_along_a_key_chain_runs_widened_and_says_so(tmp_path):
    lake, leeds = chain_lake(tmp_path)
    assert {(fk.source, fk.target) for fk in lake.contract.foreign_keys} >= {
        ("parcels", "couriers"),
        ("couriers", "depots"),
    }
    plan = {
        "nodes": [
            {
                "question": "total weight of the parcels sent by couriers of the Leeds depot",
                "tool": "sql",
                "label": "$var_1",
                "source": "parcels",
                "should_expose_answer": True,
                "answer_description": "the total weight",
            }
        ]
    }
    replies = {
        "GeneratedPlan": plan,
        "SqlDraft": {"sql": CHAIN_SQL},
        "Draft": {"answer": "6.5", "sentence": "They weigh 6.5 kg.", "sources": ["E1"], "abstain": False},
    }
    backend = FakeBackend(lambda messages, schema: json.dumps(replies.get((schema or {}).get("title"), {})))
    answer = lake.ask("What is the total weight of the parcels sent by couriers of the Leeds depot?", llm=LLM(backend))
    [run] = [r for n in answer.nodes for r in n.sql]
    assert "depots" in run.sql and "INTERVAL" in run.sql.upper()
    edits = [s.attributes.get("lakeplanner.dataops.edits", "") for n in answer.nodes for s in n.steps]
    assert any("step widened to " in e and " read as " in e for e in edits), edits
    assert answer.nodes[0].rows == [{"total": leeds}]  # every parcel of the Leeds depot's couriers
