"""Batch question answering into the lake: questions in, an answers table out, exactly once per id."""

from lakeplanner.batch.inputs import BatchInputError, BatchQuestion, questions_of, read_source
from lakeplanner.batch.run import BatchReport, run_batch
from lakeplanner.batch.stream import QuestionColumns, question_blocks, rows_in

__all__ = [
    "BatchInputError",
    "BatchQuestion",
    "BatchReport",
    "QuestionColumns",
    "question_blocks",
    "questions_of",
    "read_source",
    "rows_in",
    "run_batch",
]
