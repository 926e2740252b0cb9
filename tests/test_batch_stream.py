"""Questions streamed through Ray Data in blocks (Parquet files, a folder of them, JSONL, a lake table
read as Iceberg), answered and committed exactly once per id, resumed after a stop (scripted model,
real engines, local Ray)."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from batch_child import scripted
from typer.testing import CliRunner

from lakeplanner import Lake
from lakeplanner.batch import BatchInputError, QuestionColumns, question_blocks, rows_in, run_batch
from lakeplanner.batch.answers import table_name
from lakeplanner.cli import app

pytestmark = pytest.mark.usefixtures("ray_local")


@pytest.fixture(scope="module")
def lake(sample_lake):
    return sample_lake[0]


def questions_table(ids: list[str]) -> pa.Table:
    waves = ["".join(c for c in i if c.isdigit()) for i in ids]
    return pa.table({"id": ids, "question": [f"How many customers joined in wave {w}?" for w in waves]})


def parquet_folder(folder: Path, *parts: list[str]) -> Path:
    folder.mkdir()
    for n, ids in enumerate(parts):
        pq.write_table(questions_table(ids), folder / f"part-{n}.parquet")
    return folder


def answered_ids(lake: Lake, name: str) -> list[str]:
    rows = lake.catalog.load_table(table_name(name)).scan(selected_fields=("question_id",)).to_arrow()
    return sorted(rows.column("question_id").to_pylist())


def test_a_folder_of_parquet_files_comes_in_blocks_of_the_rows_asked_for(lake, tmp_path):
    folder = parquet_folder(tmp_path / "q", [f"a{i}" for i in range(5)], [f"b{i}" for i in range(4)])
    blocks = list(question_blocks(str(folder), lake, block_rows=4))
    assert [len(b) for b in blocks] == [4, 4, 1]
    assert sorted(q.id for b in blocks for q in b) == sorted([f"a{i}" for i in range(5)] + [f"b{i}" for i in range(4)])
    assert rows_in(str(folder), lake) == 9


def test_an_id_repeated_in_a_later_block_is_named_with_both_rows(lake, tmp_path):
    source = tmp_path / "q.parquet"
    pq.write_table(questions_table(["x1", "x2", "x3", "x1"]), source)
    with pytest.raises(BatchInputError, match=r"'x1' \(rows 1 and 4\)"):
        list(question_blocks(str(source), lake, block_rows=2))


def test_a_template_over_a_lake_table_reads_it_as_iceberg(lake):
    columns = QuestionColumns(id_column="customer_id", template="Which city is {name} based in?")
    blocks = list(question_blocks("customers", lake, columns, block_rows=16))
    questions = [q for b in blocks for q in b]
    assert len(questions) == rows_in("customers", lake) == lake.table("customers").scan().to_arrow().num_rows
    assert all(len(b) <= 16 for b in blocks) and len({q.id for q in questions}) == len(questions)
    assert questions[0].question.startswith("Which city is ")


def test_a_streamed_run_stopped_between_blocks_resumes_with_every_id_once(lake, tmp_path):
    ids = [f"s{i:02d}" for i in range(10)]
    source = parquet_folder(tmp_path / "q", ids[:6], ids[6:])

    def stopping(blocks, after: int):
        for n, block in enumerate(blocks):
            if n == after:
                raise KeyboardInterrupt
            yield block

    with pytest.raises(KeyboardInterrupt):
        blocks = stopping(question_blocks(str(source), lake, block_rows=3), 2)
        run_batch(lake, blocks, name="streamed", llm=scripted(), commit_every=3)
    first = answered_ids(lake, "streamed")  # Ray Data keeps no file order: any 6 of them
    assert len(first) == 6 and set(first) < set(ids)
    report = run_batch(
        lake, question_blocks(str(source), lake, block_rows=3), name="streamed", llm=scripted(), total=10
    )
    assert (report.questions, report.already_done, report.answered) == (10, 6, 4)
    assert report.templates == 1  # one template over every block: planned once
    assert answered_ids(lake, "streamed") == ids


def test_the_batch_command_streams_a_parquet_file(lake, tmp_path):
    source = tmp_path / "q.parquet"
    pq.write_table(questions_table([f"c{i}" for i in range(5)]), source)
    result = CliRunner().invoke(
        app,
        [
            "batch",
            str(source),
            "--lake",
            str(lake.path),
            "--name",
            "cli_stream",
            "--stream",
            "--block-rows",
            "2",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["questions"] == 5 and report["answered"] + report["failed"] == 5
    assert answered_ids(lake, "cli_stream") == [f"c{i}" for i in range(5)]
