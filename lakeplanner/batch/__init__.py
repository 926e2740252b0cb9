"""Batch question answering into the lake: questions in, an answers table out, exactly once per id."""

from lakeplanner.batch.inputs import BatchInputError, BatchQuestion, questions_of, read_source
from lakeplanner.batch.run import BatchReport, run_batch

__all__ = ["BatchInputError", "BatchQuestion", "BatchReport", "questions_of", "read_source", "run_batch"]
