"""spark_udfs in a local PySpark session: a DataFrame of questions answered by a running lakeplanner
service (real engines, scripted model) with citations and per-row errors, the same through the SQL
function, and the lake's tables read into Spark."""

import os
import sys

import pytest
from batch_child import scripted
from loopback import on_loopback

from lakeplanner.execute.settings import ExecSettings
from lakeplanner.service.app import create_app
from lakeplanner.service.settings import ServeSettings

pyspark = pytest.importorskip("pyspark", reason="the [spark] extra is not installed")
from spark_udfs import Service, ask_column, read_lake_table, register_ask  # noqa: E402

QUESTIONS = [("q1", "How many customers are there?"), ("q2", "How many customers (2)?"), ("q3", "  ")]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lakeplanner-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    yield session
    session.stop()


@pytest.fixture
def service(sample_lake):
    lake, _ = sample_lake
    app = create_app(lake, ServeSettings(), llm=scripted(), exec_settings=ExecSettings(mode="serial"), warm=False)
    with on_loopback(app) as url:
        yield Service(url=url, concurrency=2)


def test_a_dataframe_of_questions_comes_back_with_cited_answers_and_row_errors(spark, service):
    questions = spark.createDataFrame(QUESTIONS, "id string, question string").repartition(2)
    rows = {r["id"]: r["answer"] for r in ask_column(questions, service).collect()}
    assert set(rows) == {"q1", "q2", "q3"}
    for key in ("q1", "q2"):
        answer = rows[key]
        assert answer.value == "40" and answer.error is None and answer.trace_id
        assert answer.citations and answer.citations[0].source == "customers"
    assert rows["q3"].error == "ValueError: the question is empty"


def test_sql_users_call_lakeplanner_ask(spark, service):
    register_ask(spark, service)
    spark.createDataFrame(QUESTIONS[:2], "id string, question string").createOrReplaceTempView("questions")
    rows = spark.sql("SELECT id, lakeplanner_ask(question) AS a FROM questions ORDER BY id").collect()
    assert [(r["id"], r["a"].value) for r in rows] == [("q1", "40"), ("q2", "40")]


def test_a_service_that_is_down_is_an_error_per_row_not_a_failed_job(spark):
    down = Service(url="http://127.0.0.1:9", retries=1)
    rows = ask_column(spark.createDataFrame(QUESTIONS[:1], "id string, question string"), down).collect()
    assert rows[0]["answer"].error.startswith("ServiceUnreachableError: cannot reach lakeplanner")


def test_lake_tables_read_into_spark(spark, sample_lake):
    lake, _ = sample_lake
    frame = read_lake_table(spark, lake.path, "customers", columns=("customer_id", "segment"))
    assert frame.columns == ["customer_id", "segment"]
    assert frame.count() == lake.table("customers").scan().to_arrow().num_rows
    assert frame.filter("segment = 'Enterprise'").count() == 14
