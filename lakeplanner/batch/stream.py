"""Questions streamed through Ray Data: a lake table (read as Iceberg) or Parquet, CSV or JSONL files,
one file or a folder of them, of any size, in blocks of rows; the driver holds one block at a time
(and the ids seen so far, to keep them unique)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
from pydantic import BaseModel

from lakeplanner.batch.inputs import BatchInputError, BatchQuestion, questions_of
from lakeplanner.execute.engine import ray_started
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.ingest.tables import CATALOG_NAME, catalog_location, table_identifier

BLOCK_ROWS = 1024
READERS = {".parquet": "read_parquet", ".csv": "read_csv", ".jsonl": "read_json", ".json": "read_json"}


class QuestionColumns(BaseModel):
    """Where a batch's rows hold each question's id and text (or the template that writes it)."""

    id_column: str = "id"
    question_column: str = "question"
    template: str | None = None


def suffix_of(source: str) -> str:
    """The file type of a file, or of the files of a folder (the first it holds)."""
    path = Path(source)
    if path.is_dir():
        found = sorted(p.suffix.lower() for p in path.rglob("*") if p.suffix.lower() in READERS)
        if not found:
            raise BatchInputError(f"{source} holds no .parquet, .csv or .jsonl files", hint="point at the files")
        return found[0]
    return path.suffix.lower()


def question_dataset(source: str, lake, settings: ExecSettings | None = None):
    """The questions as a Ray Data dataset: a lake table through the lake's Iceberg catalog, else files;
    on the Ray `settings` name (started here unless it runs)."""
    ray_started(settings or ExecSettings())
    import ray.data

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the batch command shows its own
    context.print_on_execution_start = False

    if not Path(source).exists():
        if source not in lake.table_names():
            raise BatchInputError(
                f"no file, folder or lake table {source!r}",
                hint=f"pass .parquet/.csv/.jsonl files or one of the lake's tables: {', '.join(lake.table_names())}",
            )
        uri, warehouse = catalog_location(lake.path, lake.storage.catalog_uri, lake.storage.warehouse)
        kind = "rest" if uri.startswith(("http://", "https://")) else "sql"
        return ray.data.read_iceberg(
            table_identifier=table_identifier(source),
            catalog_kwargs={"name": CATALOG_NAME, "type": kind, "uri": uri, "warehouse": warehouse},
        )
    reader = READERS.get(suffix_of(source))
    if reader is None:
        raise BatchInputError(f"cannot read {Path(source).name}", hint="questions come as .parquet, .csv or .jsonl")
    return getattr(ray.data, reader)(str(Path(source).resolve()))


def rows_in(source: str, lake) -> int | None:
    """The number of questions without reading them into memory: from Parquet footers or Iceberg
    manifests, by counting a JSONL file's lines; None for CSV (a quoted field may hold a line break)."""
    path = Path(source)
    if not path.exists():
        return sum(task.file.record_count for task in lake.table(source).scan().plan_files())
    suffix = suffix_of(source)
    files = sorted(path.rglob(f"*{suffix}")) if path.is_dir() else [path]
    if suffix == ".parquet":
        return sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    if suffix == ".jsonl":
        return sum(sum(1 for line in f.open("rb") if line.strip()) for f in files)
    return None


def question_blocks(
    source: str,
    lake,
    columns: QuestionColumns | None = None,
    block_rows: int = BLOCK_ROWS,
    settings: ExecSettings | None = None,
) -> Iterator[list[BatchQuestion]]:
    """The questions of `source`, `block_rows` at a time, read by Ray Data's streaming executor; an id
    missing or repeated (also across blocks) is a BatchInputError naming its rows, when its block comes."""
    columns = columns or QuestionColumns()
    seen: dict[str, int] = {}
    first_row = 1
    for batch in question_dataset(source, lake, settings).iter_batches(batch_size=block_rows, batch_format="pyarrow"):
        yield questions_of(
            batch,
            id_column=columns.id_column,
            question_column=columns.question_column,
            template=columns.template,
            first_row=first_row,
            seen=seen,
        )
        first_row += batch.num_rows
