"""lakeplanner for Spark pipelines: ask a DataFrame's questions of a lakeplanner service, register
`lakeplanner_ask` for Spark SQL, read the lake's Iceberg tables with Spark SQL (`lake_session`), and
answer a table of questions into the lake's answers table (`answer_into_lake`, spark_udfs/answer_job.py)."""

from spark_udfs.answer_job import AnswerJobReport, answer_into_lake
from spark_udfs.ask import ANSWER, InExecutor, Service, answers_of, ask_column, register_ask
from spark_udfs.session import SparkSetupError, lake_conf, lake_session
from spark_udfs.tables import read_lake_table

__all__ = [
    "ANSWER",
    "AnswerJobReport",
    "InExecutor",
    "Service",
    "SparkSetupError",
    "answer_into_lake",
    "answers_of",
    "ask_column",
    "lake_conf",
    "lake_session",
    "read_lake_table",
    "register_ask",
]
