from lakeplanner.execute.confidence import MODEL_PLANNED, REPAIRED, UNPLANNED, path_factor
from lakeplanner.lineage.steps import Step


def call(purpose: str) -> Step:
    return Step(name="chat", start_ns=0, attributes={"lakeplanner.llm.purpose": purpose})


def statement(attempt: int) -> Step:
    return Step(name="sql", start_ns=0, attributes={"lakeplanner.sql.attempt": attempt})


def test_a_path_rules_chose_and_nothing_mended_keeps_its_confidence():
    assert path_factor([call("select"), statement(1), call("synthesize")]) == 1.0


def test_a_plan_the_model_wrote_is_held_less_sure():
    assert path_factor([call("plan"), statement(1)]) == MODEL_PLANNED


def test_each_kind_of_repair_discounts_the_path_once():
    for steps, replans in (([statement(1), statement(2)], 0), ([call("synthesize.repair")], 0), ([], 1)):
        assert path_factor(steps, replans) == REPAIRED
    assert path_factor([call("plan"), statement(2), call("synthesize.repair")], 2) == MODEL_PLANNED * REPAIRED


def test_a_question_searched_as_it_is_is_held_least_sure_whoever_planned():
    assert path_factor([call("plan")], planned=False) == UNPLANNED
