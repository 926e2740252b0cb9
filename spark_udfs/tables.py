"""A lake's tables as Spark DataFrames, read by Spark itself from the lake's Iceberg catalog (`lake_session`)."""

from __future__ import annotations

from lakeplanner.ingest.tables import CATALOG_NAME, table_identifier
from spark_udfs.session import SparkSetupError


def read_lake_table(spark, table: str, *, columns: tuple[str, ...] = (), snapshot_id: int | None = None):
    """One of the lake's tables (`invoices`, or `lakeplanner.answers_eval`), at its current snapshot or at
    `snapshot_id` (a snapshot an answer cites)."""
    if spark.conf.get(f"spark.sql.catalog.{CATALOG_NAME}", None) is None:
        raise SparkSetupError(
            f"this Spark session has no catalog {CATALOG_NAME!r}",
            hint="open the session with spark_udfs.lake_session(LAKE), or add lake_conf(LAKE) to its settings",
        )
    name = f"{CATALOG_NAME}.{table_identifier(table)}"
    reader = spark.read if snapshot_id is None else spark.read.option("snapshot-id", str(snapshot_id))
    frame = reader.table(name)
    return frame.select(*columns) if columns else frame
