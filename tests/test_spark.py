"""spark_udfs in a local PySpark session: a DataFrame of questions answered by a running lakeplanner
service (real engines, scripted model) with citations and per-row errors, the same through the SQL
function, and the lake's tables read into Spark."""

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from batch_child import scripted
from loopback import on_loopback
from pyiceberg.exceptions import NoSuchTableError
from typer.testing import CliRunner

from lakeplanner import Lake
from lakeplanner.batch.answers import AnswersTable
from lakeplanner.cli import app
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.service.app import create_app
from lakeplanner.service.settings import ServeSettings

pyspark = pytest.importorskip("pyspark", reason="the [spark] extra is not installed")
from pyspark.sql import functions as F  # noqa: E402

from spark_udfs import Service, answer_into_lake, ask_column, lake_session, read_lake_table, register_ask  # noqa: E402
from spark_udfs.session import SparkSetupError, jdbc_catalog, lake_conf  # noqa: E402
from spark_udfs.shading import SHADED, pyspark_jackson_jars, write_shaded_jackson  # noqa: E402

QUESTIONS = [("q1", "How many customers are there?"), ("q2", "How many customers (2)?"), ("q3", "  ")]


@pytest.fixture(scope="module")
def spark(sample_lake):
    """One session for the module, its catalog `lake` the sample lake's Iceberg catalog (the jars join the
    class path only when the JVM starts, so this is the process's first session)."""
    lake, _ = sample_lake
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = lake_session(
        lake.path,
        master="local[2]",
        app_name="lakeplanner-tests",
        spark__ui__enabled="false",
        spark__sql__shuffle__partitions="2",
    )
    yield session
    session.stop()


ASKED: list[str] = []  # the POST /v1/ask requests the service fixture received


@pytest.fixture
def service(sample_lake):
    lake, _ = sample_lake
    app = create_app(lake, ServeSettings(), llm=scripted(), exec_settings=ExecSettings(mode="serial"), warm=False)

    @app.middleware("http")
    async def count_asks(request, call_next):
        if request.url.path == "/v1/ask":
            ASKED.append(request.url.path)
        return await call_next(request)

    ASKED.clear()
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
    frame = read_lake_table(spark, "customers", columns=("customer_id", "segment"))
    assert frame.columns == ["customer_id", "segment"]
    assert frame.count() == lake.table("customers").scan().to_arrow().num_rows
    assert frame.filter("segment = 'Enterprise'").count() == 14


def lake_rows(lake, table: str) -> list[str]:
    """A table's rows as lakeplanner reads them: their content hashes, sorted (a checksum of the table)."""
    return sorted(lake.sql(f"SELECT _lp_hash FROM {table}").column(0).to_pylist())


def test_spark_sql_reads_every_table_ingest_wrote_as_the_lake_does(spark, sample_lake):
    lake, _ = sample_lake
    for table in lake.table_names():
        spark_rows = sorted(r[0] for r in spark.sql(f"SELECT _lp_hash FROM lake.lake.{table}").collect())
        assert spark_rows == lake_rows(lake, table), table


def test_a_cited_snapshot_opens_in_spark_with_the_rows_it_cited(spark, service, sample_lake):
    lake, _ = sample_lake
    answer = ask_column(spark.createDataFrame(QUESTIONS[:1], "id string, question string"), service).first()["answer"]
    cited = answer.citations[0]
    pinned = spark.sql(f"SELECT _lp_hash FROM lake.lake.{cited.source} VERSION AS OF {cited.snapshot_id}")
    at_snapshot = lake.table(cited.source).scan(snapshot_id=cited.snapshot_id).to_arrow()
    assert sorted(r[0] for r in pinned.collect()) == sorted(at_snapshot.column("_lp_hash").to_pylist())
    by_reader = read_lake_table(spark, cited.source, columns=("_lp_hash",), snapshot_id=cited.snapshot_id)
    assert by_reader.count() == at_snapshot.num_rows


def test_a_table_spark_writes_is_read_by_the_lake_at_each_snapshot(spark, sample_lake):
    lake, _ = sample_lake
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.spark_scratch")
    spark.sql("CREATE OR REPLACE TABLE lake.spark_scratch.visits (id BIGINT, site STRING) USING iceberg")
    spark.sql("INSERT INTO lake.spark_scratch.visits VALUES (1, 'north'), (2, 'south')")
    first = lake.table("spark_scratch.visits").current_snapshot().snapshot_id
    spark.sql("INSERT INTO lake.spark_scratch.visits VALUES (3, 'east')")
    table = lake.table("spark_scratch.visits")
    assert sorted(table.scan().to_arrow().column("site").to_pylist()) == ["east", "north", "south"]
    assert table.scan(snapshot_id=first).to_arrow().num_rows == 2
    assert spark.sql(f"SELECT count(*) FROM lake.spark_scratch.visits VERSION AS OF {first}").first()[0] == 2


def question_ids(lake, name: str) -> list[str]:
    return lake.catalog.load_table(f"lakeplanner.answers_{name}").scan().to_arrow().column("question_id").to_pylist()


def questions_frame(spark, ids: list[str], empty: tuple[str, ...] = ()):
    rows = [(i, "  " if i in empty else "How many customers are there?") for i in ids]
    return spark.createDataFrame(rows, "question_id string, question string")


def test_answers_merged_by_spark_land_once_and_a_rerun_asks_only_the_failures(spark, service, sample_lake):
    lake, _ = sample_lake
    name = f"spark_{uuid.uuid4().hex[:8]}"
    ids = ["a1", "a2", "a3", "a4"]
    report = answer_into_lake(
        spark, questions_frame(spark, ids, empty=("a4",)), service, lake=lake.path, name=name, chunk_size=2
    )
    assert (report.asked, report.chunks) == (4, 2)
    assert len(ASKED) == 3  # each question asked once (the empty one never reaches the service)
    assert sorted(question_ids(lake, name)) == ids
    committed = AnswersTable(lake.catalog, name).committed()  # what `lakeplanner batch --retry-failed` reads
    assert committed == {"a1": False, "a2": False, "a3": False, "a4": True}
    rerun = answer_into_lake(spark, questions_frame(spark, ids), service, lake=lake.path, name=name)
    assert (rerun.already_answered, rerun.asked) == (3, 1)
    assert sorted(question_ids(lake, name)) == ids
    assert not any(AnswersTable(lake.catalog, name).committed().values())
    row = spark.table(f"lake.lakeplanner.answers_{name}").where("question_id = 'a1'").first()
    assert row.value == "40" and row.citations[0].source == "customers" and row.error_type is None


def test_a_killed_spark_job_run_again_leaves_every_id_once(spark, service, sample_lake, tmp_path):
    lake, _ = sample_lake
    name = f"killed_{uuid.uuid4().hex[:8]}"
    ids = [f"k{i}" for i in range(8)]
    questions = tmp_path / "questions.parquet"
    pq.write_table(pa.table({"id": ids, "question": ["How many customers are there?"] * len(ids)}), questions)
    command = [sys.executable, "-m", "spark_udfs.answer_job", "--lake", str(lake.path), "--questions", str(questions)]
    command += ["--name", name, "--service", service.url, "--chunk-size", "1", "--master", "local[1]"]
    job = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and job.poll() is None:
        try:
            if question_ids(lake, name):
                break  # the first chunk is in: kill the job (and its JVM) in the middle of the rest
        except NoSuchTableError:
            pass
        time.sleep(0.1)
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    before = question_ids(lake, name)
    assert 0 < len(before) < len(ids) and len(before) == len(set(before))
    rerun = answer_into_lake(spark, questions_frame(spark, ids), service, lake=lake.path, name=name)
    assert rerun.already_answered == len(before)
    assert sorted(question_ids(lake, name)) == ids


def append_from_spark(spark, table: str, question_id: str) -> None:
    target = spark.table(table).schema
    row = spark.createDataFrame([(question_id,)], "question_id string")
    columns = (F.lit(None).cast(f.dataType).alias(f.name) for f in target.fields if f.name != "question_id")
    row.select("question_id", *columns).select(*target.fieldNames()).writeTo(table).append()


def test_spark_and_pyiceberg_commits_to_one_table_at_once_both_land(spark, sample_lake, monkeypatch):
    lake, _ = sample_lake
    name = f"both_{uuid.uuid4().hex[:8]}"
    table = f"lake.lakeplanner.answers_{name}"
    answers = AnswersTable(lake.catalog, name)
    loaded = answers.table
    base = {"question": "q", "abstained": False, "run_id": "r", "answered_at": datetime.now(UTC)}
    raced = []

    def loaded_then_overtaken():
        """The table as pyiceberg loaded it, after which Spark commits first (once): pyiceberg loses the race and
        redoes its commit on Spark's snapshot (its own commit.retry.num-retries)."""
        current = loaded()
        if not raced:
            raced.append(current.metadata_location)
            append_from_spark(spark, table, "s-race")
        return current

    loaded()
    monkeypatch.setattr(answers, "table", loaded_then_overtaken)
    answers.commit([{**base, "question_id": "p-race"}], run_id="pyiceberg")
    assert raced and lake.catalog.load_table(f"lakeplanner.answers_{name}").metadata_location != raced[0]

    def commit_from_pyiceberg() -> None:
        for i in range(6):
            answers.commit([{**base, "question_id": f"p{i}"}], run_id="pyiceberg")

    writer = threading.Thread(target=commit_from_pyiceberg)
    writer.start()
    for i in range(6):
        append_from_spark(spark, table, f"s{i}")
    writer.join()
    expected = ["p-race", "s-race", *(f"p{i}" for i in range(6)), *(f"s{i}" for i in range(6))]
    assert sorted(question_ids(lake, name)) == sorted(expected)


def test_catalog_uris_become_the_jdbc_catalog_spark_opens():
    assert jdbc_catalog("sqlite:////data/lake/catalog.db") == {"uri": "jdbc:sqlite:/data/lake/catalog.db"}
    assert jdbc_catalog("postgresql+psycopg://lp:s3cret@db.internal:6543/lake") == {
        "uri": "jdbc:postgresql://db.internal:6543/lake",
        "jdbc.user": "lp",
        "jdbc.password": "s3cret",
    }
    with pytest.raises(SparkSetupError, match="'mysql' catalog"):
        jdbc_catalog("mysql+pymysql://db/lake")


def test_a_rest_catalog_lake_is_told_which_runtime_spark_needs(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEPLANNER_LAKE_CATALOG_URI", "http://iceberg-rest:8181")
    with pytest.raises(SparkSetupError) as raised:
        lake_conf(tmp_path)
    assert "iceberg-spark-runtime-3.5_2.12:1.10.2" in raised.value.hint


def test_the_relocated_jackson_names_only_the_shaded_package(tmp_path):
    shaded = write_shaded_jackson(pyspark_jackson_jars(), tmp_path / "shaded.jar")
    with zipfile.ZipFile(shaded) as jar:
        classes = [name for name in jar.namelist() if name.endswith(".class")]
        assert classes and all(name.startswith(SHADED) for name in classes)
        factory = jar.read(f"{SHADED}core/JsonFactoryBuilder.class")
    assert factory[:4] == b"\xca\xfe\xba\xbe"
    assert f"L{SHADED}core/JsonFactory;".encode() in factory
    assert b"Lcom/fasterxml/jackson/" not in factory


def test_lake_spark_conf_prints_settings_to_paste(tmp_path):
    Lake.create(tmp_path / "lake").close()
    result = CliRunner().invoke(app, ["lake", "spark-conf", "--lake", str(tmp_path / "lake"), "--submit"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "--conf spark.sql.catalog.lake=org.apache.iceberg.spark.SparkCatalog" in lines
    assert f"--conf spark.sql.catalog.lake.uri=jdbc:sqlite:{(tmp_path / 'lake' / 'catalog.db').resolve()}" in lines


def test_answers_asked_in_the_executors_against_an_openai_compatible_endpoint(spark, sample_lake):
    """No service: each Python worker opens the lake and asks a scripted OpenAI-compatible endpoint."""
    from scripted_endpoint import scripted_endpoint

    from spark_udfs import InExecutor

    lake, _ = sample_lake
    endpoint, calls = scripted_endpoint()
    name = f"spark_{uuid.uuid4().hex[:8]}"
    with on_loopback(endpoint) as url:
        asker = InExecutor(lake=str(lake.path.resolve()), llm={"backend": "openai", "base_url": f"{url}/v1"})
        report = answer_into_lake(spark, questions_frame(spark, ["e1", "e2"]), asker, lake=lake.path, name=name)
    assert report.asked == 2 and sorted(question_ids(lake, name)) == ["e1", "e2"]
    assert sum(calls.values()) > 0 and not any(AnswersTable(lake.catalog, name).committed().values())
    row = spark.table(f"lake.lakeplanner.answers_{name}").where("question_id = 'e1'").first()
    assert row.value == "40" and row.citations[0].source == "customers"
