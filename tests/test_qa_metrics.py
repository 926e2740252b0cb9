"""TAT-QA and HotpotQA metrics on hand-checked cases (benchmarks/qabench/metrics.py)."""

import pytest

from benchmarks.qabench.metrics import Score, hotpot_score, mean, parse_number, squad_normalize, tatqa_score


@pytest.mark.parametrize(
    ("text", "number"),
    [("$1,496.5", 1496.5), ("(12.6)", -12.6), ("22.22%", 22.22), ("-0.5", -0.5), ("fixed price", None), ("", None)],
)
def test_parse_number(text, number):
    assert parse_number(text) == number


def test_arithmetic_answer_matches_after_scale_and_rounding():
    # gold -12.6 million; the same number with the same scale is exact, F1 follows EM
    assert tatqa_score(-12.6, "arithmetic", "million", "-12.60", "million") == Score(em=1, f1=1)
    assert tatqa_score(-12.6, "arithmetic", "million", "-12,600,000", "") == Score(em=1, f1=1)
    assert tatqa_score(-12.6, "arithmetic", "million", "-12.6", "") == Score(em=0, f1=0)
    assert tatqa_score(-22.22, "arithmetic", "percent", "-22.222", "percent") == Score(em=1, f1=1)
    assert tatqa_score(-22.22, "arithmetic", "percent", "-22.22%", "") == Score(em=1, f1=1)
    assert tatqa_score(-22.22, "arithmetic", "percent", "-0.2222", "") == Score(em=0, f1=0)
    assert tatqa_score(2.5, "arithmetic", "", "2.49", "") == Score(em=0, f1=0)


def test_span_numbers_and_words():
    assert tatqa_score(["$1,496.5"], "span", "million", "1496.5", "million").em == 1
    assert tatqa_score(["2019"], "span", "", "2019", "").em == 1
    gold = ["our allowable incurred costs plus a profit"]
    score = tatqa_score(gold, "span", "", "allowable incurred costs plus profit", "")
    assert score.em == 0 and score.f1 == pytest.approx(2 * 1 * (5 / 6) / (1 + 5 / 6), abs=1e-4)


def test_multi_span_is_a_bag_aligned_one_to_one():
    gold = ["fixed-price type", "cost-plus type", "time-and-material type"]
    assert tatqa_score(gold, "multi-span", "", list(reversed(gold)), "").em == 1
    two = tatqa_score(gold, "multi-span", "", ["fixed-price type", "cost-plus type"], "")
    # 2 of 3 spans exact: precision 2/2, recall 2/3 -> F1 0.8
    assert two.em == 0 and two.f1 == pytest.approx(0.8)


def test_number_mismatch_inside_spans_scores_zero():
    assert tatqa_score(["increased by 5"], "span", "", "increased by 6", "").f1 == 0


def test_count_f1_is_em():
    assert tatqa_score(3, "count", "", "3", "") == Score(em=1, f1=1)
    assert tatqa_score(3, "count", "", "4", "") == Score(em=0, f1=0)


def test_empty_prediction_scores_zero():
    assert tatqa_score(["x"], "span", "", None, "") == Score(em=0, f1=0)
    assert tatqa_score(["x"], "span", "", [], "") == Score(em=0, f1=0)


def test_hotpot_squad_normalisation():
    assert squad_normalize("The  Eiffel-Tower!") == "eiffeltower"
    assert hotpot_score("Arthur's Magazine", "arthurs magazine") == Score(em=1, f1=1)
    assert hotpot_score("the Chicago Tribune", "Chicago Tribune newspaper") == Score(em=0, f1=0.8)
    assert hotpot_score("yes", "no") == Score(em=0, f1=0)
    assert hotpot_score("yes", "yes it is") == Score(em=0, f1=0)


def test_mean_is_in_percent():
    assert mean([Score(em=1, f1=1), Score(em=0, f1=0.5)]) == Score(em=50, f1=75)
