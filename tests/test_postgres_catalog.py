"""One PostgreSQL catalog for every surface: a throwaway cluster (tests/pg_cluster.py) holds the catalog of a
lake that is ingested, asked, batched, served and read by Spark SQL (real engines, scripted model)."""

import json
import os
import subprocess
import sys

import pyarrow as pa
import pytest
import sqlalchemy
from batch_child import scripted
from loopback import on_loopback
from pg_cluster import postgres_bin, postgres_cluster

from lakeplanner import Lake
from lakeplanner.batch import questions_of, run_batch
from lakeplanner.batch.answers import AnswersTable
from lakeplanner.client import Client
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.service.app import create_app
from lakeplanner.service.settings import ServeSettings
from lakeplanner.storage import sample_lake_path

pytest.importorskip("psycopg", reason="the [postgres] extra is not installed")
pytestmark = pytest.mark.skipif(postgres_bin() is None, reason="PostgreSQL is not installed (make postgres)")
SERIAL = ExecSettings(mode="serial")


@pytest.fixture(scope="module")
def catalog_uri():
    with postgres_cluster() as uri, pytest.MonkeyPatch.context() as env:
        env.setenv("LAKEPLANNER_LAKE_CATALOG_URI", uri)
        yield uri


@pytest.fixture(scope="module")
def lake(catalog_uri, tmp_path_factory):
    lake = Lake.create(tmp_path_factory.mktemp("pg") / "lake")
    lake.ingest(sample_lake_path())
    yield lake
    lake.close()


def catalog_rows(uri: str) -> list[tuple[str, str, str]]:
    with sqlalchemy.create_engine(uri).connect() as db:
        query = "SELECT catalog_name, table_namespace, table_name FROM iceberg_tables"
        return [tuple(row) for row in db.execute(sqlalchemy.text(query))]


def test_ingest_files_its_tables_in_the_postgresql_catalog(lake, catalog_uri):
    assert not (lake.path / "catalog.db").exists()
    filed = catalog_rows(catalog_uri)
    assert {name for _, namespace, name in filed if namespace == "lake"} == set(lake.table_names())
    assert {catalog for catalog, _, _ in filed} == {"lake"}


def test_ask_batch_and_serve_read_and_write_through_it(lake, catalog_uri):
    answer = lake.ask("How many customers are there?", llm=scripted(), settings=SERIAL)
    assert answer.value == "40" and answer.citations[0].snapshot_id
    questions = questions_of(pa.table({"id": ["b1", "b2"], "question": ["How many customers are there?"] * 2}))
    report = run_batch(lake, questions, name="pg", llm=scripted(), settings=SERIAL)
    assert report.answered == 2
    assert AnswersTable(lake.catalog, "pg").committed() == {"b1": False, "b2": False}
    assert ("lake", "lakeplanner", "answers_pg") in catalog_rows(catalog_uri)
    app = create_app(lake, ServeSettings(), llm=scripted(), exec_settings=SERIAL, warm=False)
    with on_loopback(app) as url, Client(url) as client:
        assert client.ask("How many customers are there?").value == "40"


SPARK_COUNTS = """
import json, sys
from spark_udfs import lake_session
spark = lake_session(sys.argv[1], master="local[1]", spark__ui__enabled="false")
print(json.dumps({t: spark.table(f"lake.lake.{t}").count() for t in sys.argv[2:]}))
"""


def test_spark_sql_reads_the_same_catalog(lake, catalog_uri):
    pytest.importorskip("pyspark", reason="the [spark] extra is not installed")
    tables = lake.table_names()
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    run = subprocess.run(
        [sys.executable, "-c", SPARK_COUNTS, str(lake.path), *tables], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    counts = json.loads(run.stdout.strip().splitlines()[-1])
    assert counts == {t: lake.table(t).scan().to_arrow().num_rows for t in tables}
