"""An LLM may fill a frame field the reader left open, only with a span of the question."""

import json

from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.question import read_question
from lakeplanner.question.fill import fill_frame, undecided


def llm_pointing_at(words: str) -> LLM:
    return LLM(FakeBackend([json.dumps({"asked": words})]))


def test_a_question_with_no_question_word_gets_its_subject_from_the_llm_as_a_span():
    question = "Give the billing e-mail address of customer C001."
    assert undecided(read_question(question)) == ["subject"]
    frame = fill_frame(read_question(question), llm_pointing_at("billing e-mail address of customer C001"))
    assert frame.subject.text == "billing e-mail address of customer C001"
    assert question[frame.subject.start : frame.subject.end] == frame.subject.text
    assert frame.asked_attribute.text == "billing e-mail address" and frame.filled == ("subject",)
    assert read_question(question).filled == ()  # the filled frame travels on the plan: reading again fills nothing


def test_words_that_are_not_in_the_question_are_not_kept():
    question = "Tell me the weight of shipment S-17 in pounds."
    frame = fill_frame(read_question(question), llm_pointing_at("the shipment's gross mass"))
    assert frame.subject is None and frame.filled == () and frame.asked_attribute is None


def test_a_question_the_reader_decided_makes_no_call():
    backend = FakeBackend([])
    frame = read_question("What is the billing e-mail address of customer C001?")
    assert fill_frame(frame, LLM(backend)) is frame and backend.calls == []
    assert frame.asked_attribute.text == "the billing e-mail address"
