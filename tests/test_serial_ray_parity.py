"""One question, read once: asked in process and on a local Ray task graph, it is read into the same
frame, planned into the same plan (each node carrying the same step frame) and answered alike. The
model is replayed from the golden cassette, so both runs hear the same replies."""

from __future__ import annotations

import pytest

from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm import LLM
from lakeplanner.llm.settings import LLMSettings
from lakeplanner.plan.planner import PlanResult
from tests.golden.cassette import Cassette, ReplayBackend
from tests.golden.golden import cassette_path, questions

# chains and branches, a document-to-row hop, arithmetic over two rows: plans of two and three steps
ASKED = (19, 24, 27, 29)


def asked_on(lake, question: str, mode: str) -> tuple[PlanResult, object]:
    plans: list[PlanResult] = []
    llm = LLM(ReplayBackend(Cassette(cassette_path("logistics")), "logistics"), LLMSettings(backend="fake"))
    try:
        answer = lake.ask(question, llm=llm, settings=ExecSettings(mode=mode), use_cache=False, on_plan=plans.append)
    finally:
        lake.close_executor()  # the session's lake goes on without this run's Ray actor
    return plans[-1], answer


def outcome(answer) -> dict:
    return {
        "value": answer.value,
        "abstained": answer.abstained,
        "items": answer.items,
        "nodes": [(r.label, r.ok, [run.sql for run in r.sql], r.rows_total, r.answer) for r in answer.nodes],
        "citations": sorted(c.model_dump_json() for c in answer.citations),
    }


@pytest.mark.parametrize("number", ASKED)
def test_a_question_reads_plans_and_answers_alike_serially_and_on_ray(logistics, ray_local, number):
    question = questions("logistics")[number - 1]
    serial_plan, serial = asked_on(logistics, question, "serial")
    ray_plan, on_ray = asked_on(logistics, question, "ray")
    assert serial_plan.plan.frame is not None and serial_plan.plan.frame.text == question
    assert ray_plan.plan.frame == serial_plan.plan.frame
    assert all(node.frame is not None for node in serial_plan.plan.framed().nodes)
    assert ray_plan.plan == serial_plan.plan
    assert outcome(on_ray) == outcome(serial)
