"""A Spark job that answers a table of questions into the lake: each chunk of questions is answered by a
lakeplanner service (`ask_column`), or in the executors against an OpenAI-compatible or vLLM endpoint
(`--in-executor`), and merged into `lakeplanner.answers_<name>` with `MERGE INTO ... ON
question_id`, so a job killed and run again leaves every id exactly once, skips the ids already answered
and asks again those that failed. The table is the one `lakeplanner batch` writes: `lakeplanner batch
--retry-failed` and the audit read it as they read their own.

    spark-submit spark_udfs/answer_job.py --lake /shared/lake --questions lake.lake.questions \\
        --name eval --service http://lakeplanner:8321 --api-key lpk_...
    python -m spark_udfs.answer_job --lake lake --questions questions.parquet --name eval --service URL
    spark-submit --conf spark.executorEnv.LAKEPLANNER_LLM_BACKEND=openai \\
        --conf spark.executorEnv.LAKEPLANNER_LLM_BASE_URL=http://vllm:8000/v1 \\
        spark_udfs/answer_job.py --lake /shared/lake --questions q.parquet --name eval --in-executor

`--questions` is a table of the session's catalogs (`lake.<namespace>.<table>`) or Parquet files; its
columns `id` and `question` (say others with --id-column and --question-column).
"""

from __future__ import annotations

import argparse
import math
import uuid
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from lakeplanner import __version__
from lakeplanner.batch.answers import AnswersTable, table_name
from lakeplanner.errors import LakeplannerError
from spark_udfs.ask import Answerer, InExecutor, Service, ask_column
from spark_udfs.session import lake_session

STAGED = "lakeplanner_answered_chunk"


class AnswerJobReport(BaseModel):
    table: str
    run_id: str
    questions: int
    already_answered: int
    asked: int
    chunks: int


def answers_table(lake: str | Path, name: str) -> str:
    """The answers table's Spark name, created (with the batch answers schema) if it is new."""
    from lakeplanner.ingest.settings import LakeSettings
    from lakeplanner.ingest.tables import CATALOG_NAME, open_catalog

    settings = LakeSettings()
    AnswersTable(open_catalog(Path(lake), settings.catalog_uri, settings.warehouse), name).table()
    return f"{CATALOG_NAME}.{table_name(name)}"


def read_questions(spark, source: str, id_column: str, question_column: str):
    """The questions as (question_id, question): a catalog table or Parquet files."""
    from pyspark.sql import functions as F

    frame = spark.read.parquet(source) if source.endswith(".parquet") or Path(source).is_dir() else spark.table(source)
    missing = [c for c in (id_column, question_column) if c not in frame.columns]
    if missing:
        raise LakeplannerError(
            f"the questions at {source} have no column {', '.join(missing)}",
            hint=f"pass --id-column/--question-column; its columns: {', '.join(frame.columns)}",
        )
    return frame.select(
        F.col(id_column).cast("string").alias("question_id"), F.col(question_column).alias("question")
    ).dropDuplicates(["question_id"])


def as_answer_rows(answered, target_schema, role: str | None, run_id: str):
    """ask_column's output as rows of the answers table, every column cast to the table's type."""
    from pyspark.sql import functions as F

    error = F.col("answer.error")
    values = {
        "question_id": F.col("question_id"),
        "question": F.col("question"),
        "role": F.lit(role),
        **{
            name: F.col(f"answer.{name}")
            for name in ("value", "items", "sentence", "citations", "confidence", "abstained", "reason", "trace_id")
        },
        "error_type": F.when(error.isNotNull(), F.substring_index(error, ":", 1)),
        "error": F.when(error.isNotNull(), F.trim(F.expr("substring(answer.error, instr(answer.error, ':') + 1)"))),
        "code_version": F.lit(__version__),
        "run_id": F.lit(run_id),
        "answered_at": F.current_timestamp(),
    }
    return answered.select(
        *(values.get(field.name, F.lit(None)).cast(field.dataType).alias(field.name) for field in target_schema.fields)
    )


def numbered_chunks(questions, chunk_size: int):
    """`questions` with `_chunk`: consecutive runs of `chunk_size` rows (zipWithIndex numbers the rows across
    partitions without gathering them in one)."""
    schema = questions.schema.add("_chunk", "long")
    numbered = questions.rdd.zipWithIndex().map(lambda pair: (*pair[0], pair[1] // chunk_size))
    return numbered.toDF(schema)


def merge_chunk(spark, rows, table: str) -> None:
    """One Iceberg commit: the chunk's rows replace those of their ids, or are added."""
    rows.createOrReplaceTempView(STAGED)
    spark.sql(
        f"MERGE INTO {table} t USING {STAGED} s ON t.question_id = s.question_id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )


def answer_into_lake(
    spark,
    questions,
    service: Answerer,
    *,
    lake: str | Path,
    name: str,
    chunk_size: int = 500,
    progress: Callable[[str], None] = print,
) -> AnswerJobReport:
    """Answer `questions` (a DataFrame of question_id, question) into the lake's answers table `name`."""
    from pyspark.sql import functions as F

    table = answers_table(lake, name)
    run_id = f"spark-{uuid.uuid4().hex[:12]}"
    done = spark.table(table).where("error_type IS NULL").select("question_id")
    # fixed before the first merge: evaluated again later, the anti-join would see merged ids and renumber the chunks
    keyed = numbered_chunks(questions.join(done, "question_id", "left_anti"), chunk_size).localCheckpoint(eager=True)
    total, left = questions.count(), keyed.count()
    chunks = math.ceil(left / chunk_size)
    progress(f"{total} questions, {total - left} already answered in {table}; asking {left} in {chunks} chunks")
    target = spark.table(table).schema
    for chunk in range(chunks):
        part = keyed.where(F.col("_chunk") == chunk).drop("_chunk")
        answered = as_answer_rows(ask_column(part, service), target, service.role, run_id)
        # answered once: MERGE reads its source more than once (to find the files to rewrite, then to write)
        merge_chunk(spark, answered.localCheckpoint(eager=True), table)
        progress(f"chunk {chunk + 1}/{chunks} merged into {table}")
    return AnswerJobReport(
        table=table, run_id=run_id, questions=total, already_answered=total - left, asked=left, chunks=chunks
    )


def main(argv: list[str] | None = None) -> AnswerJobReport:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lake", required=True, help="the lake directory (its catalog and warehouse settings)")
    parser.add_argument("--questions", required=True, help="lake.<namespace>.<table>, or a Parquet file or folder")
    parser.add_argument("--name", required=True, help="answers go to lakeplanner.answers_<name>")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--service", help="the lakeplanner service URL, e.g. http://lakeplanner:8321")
    where.add_argument(
        "--in-executor",
        action="store_true",
        help="ask in the executors themselves, with the model their environment names "
        "(spark.executorEnv.LAKEPLANNER_LLM_BACKEND=openai, LAKEPLANNER_LLM_BASE_URL=...)",
    )
    parser.add_argument("--api-key", help="an lpk_ key, if the service wants one")
    parser.add_argument("--role", help="ask under this role of the service's policy")
    parser.add_argument("--concurrency", type=int, default=4, help="questions in flight per Spark task")
    parser.add_argument("--chunk-size", type=int, default=500, help="questions per MERGE commit")
    parser.add_argument("--id-column", default="id")
    parser.add_argument("--question-column", default="question")
    parser.add_argument("--master", help="e.g. local[2] when run without spark-submit (which sets the master)")
    args = parser.parse_args(argv)
    spark = lake_session(args.lake, master=args.master, app_name=f"lakeplanner-answers-{args.name}")
    service = (
        InExecutor(lake=str(Path(args.lake).resolve()), role=args.role)
        if args.in_executor
        else Service(url=args.service, api_key=args.api_key, role=args.role, concurrency=args.concurrency)
    )
    report = answer_into_lake(
        spark,
        read_questions(spark, args.questions, args.id_column, args.question_column),
        service,
        lake=args.lake,
        name=args.name,
        chunk_size=args.chunk_size,
    )
    print(report.model_dump_json())
    return report


if __name__ == "__main__":
    main()
