"""The question stage: each question is read once into a typed frame that every later stage reads."""

from lakeplanner.question.frame import BoundValue, Operation, Period, QuestionFrame, Span
from lakeplanner.question.lexicon import packs_for
from lakeplanner.question.read import read_question

__all__ = ["BoundValue", "Operation", "Period", "QuestionFrame", "Span", "packs_for", "read_question"]
