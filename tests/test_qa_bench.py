"""The QA benchmark's plumbing: sampling, answer formatting, report pairing (benchmarks/qabench)."""

import collections
import json

from benchmarks.qabench.answers import predicted_scale, prediction_items
from benchmarks.qabench.data import SAMPLE, largest_remainder, load, make_sample, tatqa, write_source
from benchmarks.qabench.methods import counting
from benchmarks.qabench.report import write_report
from lakeplanner.lineage.steps import Recorder
from lakeplanner.llm import LLM, user
from lakeplanner.llm.base import RoutedLLM
from lakeplanner.llm.fake import FakeBackend


def test_committed_sample_is_the_seeded_stratified_sample():
    questions, _ = tatqa()
    ids = json.loads(SAMPLE.read_text())["ids"]
    assert ids == make_sample(questions) and len(set(ids)) == 300
    by_id = {q.uid: q for q in questions}
    strata = collections.Counter((q.answer_type, q.answer_from) for q in questions)
    sampled = collections.Counter((by_id[i].answer_type, by_id[i].answer_from) for i in ids)
    assert set(sampled) == set(strata)  # every answer type x source is in it
    for key, n in strata.items():
        assert abs(sampled[key] - 300 * n / len(questions)) <= 1
    first = collections.Counter((by_id[i].answer_type, by_id[i].answer_from) for i in ids[:100])
    assert set(first) == set(strata)


def test_largest_remainder_sums_to_size_with_one_seat_minimum():
    seats = largest_remainder({"a": 90, "b": 9, "c": 1}, 10)
    assert sum(seats.values()) == 10 and seats["c"] == 1 and seats["a"] >= 8


def test_load_orders_the_sample_and_hotpot_takes_the_first_n():
    questions, contexts = load("tatqa", 5)
    assert [q.uid for q in questions] == json.loads(SAMPLE.read_text())["ids"][:5]
    assert all(q.context in contexts for q in questions)
    hotpot, hotpot_contexts = load("hotpotqa", 3)
    assert [q.uid for q in hotpot] == ["hotpot-000", "hotpot-001", "hotpot-002"]
    assert len(hotpot_contexts["hotpot-000"].paragraphs) == 10


def test_context_is_written_as_a_report_grid_and_markdown(tmp_path):
    _, contexts = tatqa()
    context = next(iter(contexts.values()))
    write_source(context, tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[0] == "financials.report.csv" and names[1:] == [f"paragraph_{i}.md" for i in range(1, len(names))]


def test_prediction_items():
    assert prediction_items(None) == []
    assert prediction_items(["a ", ""]) == ["a"]
    assert prediction_items("fixed-price; cost-plus") == ["fixed-price", "cost-plus"]
    assert prediction_items("1,234 and 5,678") == ["1,234", "5,678"]
    assert prediction_items("12, 14") == ["12", "14"]
    assert prediction_items("1,234") == ["1,234"]
    assert prediction_items("sales, general and administrative") == ["sales, general and administrative"]


def test_predicted_scale():
    texts = ["Years Ended", "(in millions)", "Revenue grew"]
    assert predicted_scale("What is the percentage change in revenue?", ["-22.2"], texts) == "percent"
    assert predicted_scale("What is the change in revenue?", ["12.5%"], texts) == "percent"
    assert predicted_scale("What is the change in revenue?", ["-12.6"], texts) == "million"
    assert predicted_scale("How many segments are there?", ["3"], texts) == ""
    assert predicted_scale("Which years does the table cover?", ["2019", "2018"], texts) == ""
    assert predicted_scale("What are the contract types?", ["fixed price"], texts) == ""
    declared_later = ["Balance", "losses of $23 million expire", "tax benefits are as follows (in thousands):"]
    assert predicted_scale("What is the change in the balance?", ["-362"], declared_later) == "thousand"
    restated = ["Cash from operations consisted of $24.2 million of net income and other items."]
    assert predicted_scale("What were non-cash charges?", ["47,625"], ["Net income", "$24,193"], restated) == "thousand"
    elsewhere = ["The company raised $145.0 million."]
    assert predicted_scale("What were non-cash charges?", ["47,625"], ["Net income", "$24,193"], elsewhere) == "million"


def test_report_pairs_methods_on_the_same_questions(tmp_path):
    ids = json.loads(SAMPLE.read_text())["ids"]
    runs = tmp_path / "runs"
    runs.mkdir()

    questions, _ = load("tatqa", 4)
    gold = {q.uid: q.answer for q in questions}

    def record(uid, em, kind="arithmetic"):
        return {
            "uid": uid,
            "prediction": (gold[uid] if isinstance(gold[uid], list) else [str(gold[uid])]) if em else [],
            "answer_type": kind,
            "answer_from": "table",
            "em": em,
            "f1": em,
            "abstained": em == 0,
            "seconds": 10.0,
            "llm_calls": 2,
            "prompt_tokens": 100,
            "completion_tokens": 10,
            "data_chars": 50,
            "model": "m",
        }

    (runs / "tatqa-lakeplanner.jsonl").write_text("\n".join(json.dumps(record(i, 1)) for i in ids[:4]) + "\n")
    (runs / "tatqa-rag.jsonl").write_text("\n".join(json.dumps(record(i, i == ids[0])) for i in ids[:2]) + "\n")
    results = write_report(runs, tmp_path)
    t = results["tatqa"]
    assert (t["n"], t["em"], t["em_rag"], t["em_gain_over_rag"], t["paired_n"]["rag"]) == (4, 100.0, 50.0, 50.0, 2)
    assert t["em_react"] is None and results["hotpotqa"]["n"] == 0
    assert t["methods"]["lakeplanner"]["em_by_answer_type"] == {"arithmetic": {"n": 4, "em": 100.0}}
    assert {"n", "em", "f1", "em_rag", "em_react", "em_dag", "em_gain_over_rag", "em_gain_over_react"} <= set(t)
    markdown = (tmp_path / "qa.md").read_text()
    assert "not yet measured" in markdown and "| gain 50.0 on 2 | partial (2 of 300): on track |" in markdown
    assert results["tatqa-holdout"]["n"] == 0 and "## tatqa-holdout" not in markdown


def test_report_gives_the_holdouts_gap_to_the_300(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    fixed, _ = load("tatqa", 2)
    holdout, _ = load("tatqa-holdout", 2)

    def record(q, em):
        prediction = (q.answer if isinstance(q.answer, list) else [str(q.answer)]) if em else []
        return (
            {"uid": q.uid, "prediction": prediction, "answer_type": q.answer_type, "answer_from": q.answer_from}
            | {"em": em, "f1": em, "abstained": not em, "seconds": 5.0, "llm_calls": 1, "prompt_tokens": 10}
            | {"completion_tokens": 1, "data_chars": 5, "model": "m", "code": "c"}
        )

    (runs / "tatqa-lakeplanner.jsonl").write_text("\n".join(json.dumps(record(q, 1)) for q in fixed) + "\n")
    (runs / "tatqa-holdout-lakeplanner.jsonl").write_text(
        "\n".join(json.dumps(record(q, i == 0)) for i, q in enumerate(holdout)) + "\n"
    )
    h = write_report(runs, tmp_path)["tatqa-holdout"]
    assert (h["n"], h["em"], h["em_gap_to_300"]) == (2, 50.0, -50.0)
    assert "EM gap to the 300: -50.0" in (tmp_path / "qa.md").read_text()


def test_react_loops_over_tools_and_answers_at_the_step_limit(sample_lake):
    from benchmarks.qabench.methods import REACT_STEPS, run_react
    from lakeplanner.llm import LLM
    from lakeplanner.llm.fake import FakeBackend

    lake, _ = sample_lake
    steps = [
        {"thought": "count", "action": "sql", "input": f"SELECT count(*) + {i} AS n FROM customers"}
        for i in range(REACT_STEPS)
    ]
    replies = [json.dumps(s) for s in steps] + [json.dumps({"answer": ["40"]})]
    llm = LLM(FakeBackend(replies))
    outcome = run_react(lake, "How many customers are there?", llm)
    assert outcome.value == ["40"] and len(outcome.trace) == REACT_STEPS + 1
    assert "Observation: n=" in outcome.trace[0] and outcome.data_chars > 0


def test_react_that_repeats_a_step_answers_from_what_it_has_seen(sample_lake):
    from benchmarks.qabench.methods import run_react
    from lakeplanner.llm import LLM
    from lakeplanner.llm.fake import FakeBackend

    lake, _ = sample_lake
    step = json.dumps({"thought": "count", "action": "sql", "input": "SELECT count(*) AS n FROM customers"})
    llm = LLM(FakeBackend([step, step, json.dumps({"answer": ["40"]})]))
    outcome = run_react(lake, "How many customers are there?", llm)
    assert outcome.value == ["40"] and len(outcome.trace) == 2 and outcome.trace[1] == "forced finish: ['40']"


def test_the_holdout_sample_is_outside_the_fixed_300_and_reproducible():
    from benchmarks.qabench.data import HOLDOUT, SAMPLE, make_holdout, tatqa

    questions, _ = tatqa()
    taken = set(json.loads(SAMPLE.read_text())["ids"])
    held = json.loads(HOLDOUT.read_text())["ids"]
    assert len(held) == 100 and not set(held) & taken
    assert make_holdout(questions, taken) == held


def test_calibration_counts_confident_wrong_and_unsure_right_answers():
    from benchmarks.qabench.report import calibration

    records = [
        {"em": 0, "confidence": 0.95, "abstained": False},
        {"em": 1, "confidence": 0.4, "abstained": False},
        {"em": 1, "confidence": 0.99, "abstained": False},
        {"em": 0, "confidence": 0.0, "abstained": True},  # an abstention claims nothing
        {"em": 0, "abstained": False},  # recorded before confidence was
    ]
    assert calibration(records) == {"answers_scored": 3, "confident_wrong": 1, "right_below_half": 1}


def test_a_rerun_is_compared_with_the_run_it_replaces_question_by_question():
    from benchmarks.qabench.report import compare_runs

    def record(uid, em, prediction):
        return {"uid": uid, "question": f"q {uid}", "gold": ["1"], "prediction": prediction, "em": em, "seconds": 10}

    old = [record("a", 1, ["1"]), record("b", 0, []), record("c", 1, ["1"])]
    new = [record("a", 0, ["2"]), record("b", 1, ["1"])]
    lines = compare_runs(old, new).splitlines()
    assert lines[0] == "2 questions in both: EM 1 before, 1 now; seconds 20 before, 20 now"
    assert lines[1].startswith("lost a 'q a'") and lines[2].startswith("gained b 'q b'") and len(lines) == 3


def test_calibration_figures_count_confident_wrong_answers_and_right_rates_by_signal():
    from benchmarks.calibration import SIGNALS, figures

    def answer(right, confidence, **on):
        return {"right": right, "confidence": confidence, "signals": {s: on.get(s, False) for s in SIGNALS}}

    f = figures([answer(True, 1.0), answer(False, 0.95, repaired=True), answer(True, 0.4, repaired=True)])
    assert (f["answers"], f["right"], f["confident_wrong"], f["right_below_half"]) == (3, 2, 1, 1)
    assert f["brier"] == round((0 + 0.95**2 + 0.6**2) / 3, 3)
    assert f["signals"]["repaired"] == {"with": 2, "right_with": 0.5, "without": 1, "right_without": 1.0}
    assert [b["answers"] for b in f["buckets"]] == [1, 0, 0, 2]


def test_a_routed_llm_is_counted_over_all_its_models():
    large, small = LLM(FakeBackend(["big reply"] * 2)), LLM(FakeBackend(["small"]))
    counted, backend = counting(RoutedLLM(large, {"hseq.select": small}))
    recorder = Recorder()
    for purpose in ("plan", "hseq.select", "sql.write"):
        recorder.complete(counted, purpose, [user("one two three")])
    assert (backend.usage.calls, backend.usage.completion_tokens) == (3, 5)
    assert not large.backend.replies and not small.backend.replies  # each model answered its own calls
