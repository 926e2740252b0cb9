"""A lake's tables as Spark DataFrames, here: read through pyiceberg into Arrow, then into Spark (the
Iceberg Spark runtime jar is what a cluster uses instead; README.md says how to configure it)."""

from __future__ import annotations

from pathlib import Path


def read_lake_table(spark, lake: str | Path, table: str, *, columns: tuple[str, ...] = ()):
    """The current snapshot of one of the lake's tables (`invoices`, or `lakeplanner.answers_eval`)."""
    from lakeplanner.lake import Lake

    opened = Lake.open(Path(lake))
    try:
        scan = opened.table(table).scan(selected_fields=columns or ("*",))
        return spark.createDataFrame(scan.to_arrow())
    finally:
        opened.close()
