"""lakeplanner for Spark pipelines: ask a DataFrame's questions of a lakeplanner service, register
`lakeplanner_ask` for Spark SQL, read the lake's Iceberg tables as DataFrames."""

from spark_udfs.ask import ANSWER, Service, answers_of, ask_column, register_ask
from spark_udfs.tables import read_lake_table

__all__ = ["ANSWER", "Service", "answers_of", "ask_column", "read_lake_table", "register_ask"]
