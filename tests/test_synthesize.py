"""The answer step with a scripted LLM: arithmetic outside the LLM, grounding, confidence, abstention."""

import json

import pytest

from lakeplanner.errors import LakeplannerError
from lakeplanner.execute.grounding import composite_confidence, evaluate, grounding
from lakeplanner.execute.results import Evidence, NodeResult, SqlRun
from lakeplanner.execute.synthesize import synthesize
from lakeplanner.lineage.steps import Recorder
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.question import read_question

ROWS = NodeResult(
    label="$var_1",
    tool="sql",
    source="invoices",
    question="unpaid EUR invoices",
    exposed=True,
    rows=[{"n": 15, "total": 620176.77}],
    rows_total=1,
    row_keys={"invoices": ["INV-1003", "INV-1010"]},
    snapshots={"invoices": 42},
)
PASSAGE = NodeResult(
    label="$var_2",
    tool="vector",
    source="documents_contracts",
    question="terms",
    exposed=True,
    evidence=[
        Evidence.of(
            "paragraph",
            "documents_contracts/CTR-C010",
            (120, 260),
            "Either party may terminate for convenience with 60 days written notice.",
            document_id="CTR-C010",
        )
    ],
    rows=[{"document_id": "CTR-C010"}],
    rows_total=1,
)


def llm_drafting(*drafts):
    return LLM(
        FakeBackend([json.dumps({"answer": "", "sentence": "", "sources": [], "abstain": False, **d}) for d in drafts])
    )


def llm_saying(**draft):
    """The same draft each time it is asked (a first draft and its repair)."""
    return llm_drafting(draft, draft)


def test_a_cell_value_is_cited_by_row_key_and_snapshot():
    answer = synthesize(
        read_question("How many?"), [ROWS], llm_saying(answer="15", sentence="15 invoices.", sources=["R1"]), Recorder()
    )
    assert answer.value == "15" and answer.confidence == 1.0
    assert {(c.source, c.row_key, c.snapshot_id) for c in answer.citations} == {
        ("invoices", "INV-1003", 42),
        ("invoices", "INV-1010", 42),
    }


def test_the_rows_and_passages_shown_for_the_answer_are_counted_as_lake_data():
    from lakeplanner.lineage.steps import data_chars

    recorder = Recorder()
    synthesize(
        read_question("Notice?"), [PASSAGE], llm_saying(answer="60 days", sentence="60 days.", sources=["E1"]), recorder
    )
    shown = data_chars(recorder.steps)
    assert len(PASSAGE.evidence[0].snippet) < shown < 2 * len(PASSAGE.evidence[0].snippet) + 100


def test_arithmetic_is_computed_by_the_evaluator_not_the_llm():
    llm = llm_saying(answer="41,000", calculation="620176.77 / 15", sentence="The mean is high.", sources=["R1"])
    answer = synthesize(read_question("Mean unpaid amount?"), [ROWS], llm, Recorder())
    assert answer.value == "41,345.12" and "620176.77 / 15" in answer.text
    assert answer.confidence == 1.0


def test_a_span_answer_is_cited_with_offsets():
    llm = llm_saying(answer="60 days", sentence="60 days notice.", sources=["E1"])
    answer = synthesize(read_question("Notice period?"), [PASSAGE], llm, Recorder())
    [span] = answer.citations
    assert (span.document_id, span.start, span.end) == ("CTR-C010", 120, 260)
    assert answer.confidence == 0.9


def test_an_unsupported_answer_abstains():
    answer = synthesize(
        read_question("Notice period?"), [PASSAGE], llm_saying(answer="90 days", sentence="90."), Recorder()
    )
    assert answer.abstained and "not supported" in answer.reason and answer.value is None


def test_the_llm_may_abstain_with_a_reason():
    llm = llm_saying(abstain=True, reason="no phone numbers are stored")
    answer = synthesize(read_question("Phone?"), [ROWS], llm, Recorder())
    assert answer.abstained and answer.reason == "no phone numbers are stored"


def test_garbage_from_the_llm_falls_back_to_a_single_cell():
    one_cell = ROWS.model_copy(update={"rows": [{"n": 15}]})
    answer = synthesize(read_question("How many?"), [one_cell], LLM(FakeBackend(["nope"] * 3)), Recorder())
    assert answer.value == "15" and not answer.abstained


def test_a_nan_cell_from_a_division_by_zero_is_no_answer_not_a_crash():
    nan_cell = ROWS.model_copy(update={"rows": [{"ratio": float("nan")}]})
    answer = synthesize(read_question("What is the ratio?"), [nan_cell], LLM(FakeBackend(["nope"] * 3)), Recorder())
    assert answer.abstained


def test_no_data_abstains_without_calling_the_llm():
    empty = ROWS.model_copy(update={"rows": [], "rows_total": 0})
    backend = FakeBackend([])
    answer = synthesize(read_question("How many?"), [empty], LLM(backend), Recorder())
    assert answer.abstained and backend.calls == []


@pytest.mark.parametrize("expression", ["__import__('os')", "2 ** 1000000000", "x + 1", "1/0", "1e308 * 10"])
def test_the_evaluator_refuses_everything_but_arithmetic(expression):
    with pytest.raises(LakeplannerError):
        evaluate(expression)


def test_grounding_levels():
    assert grounding("620,176.77", [ROWS]) == 1.0
    assert grounding("60 days written notice", [PASSAGE]) == 0.9
    assert grounding("terminate with 60 days", [PASSAGE]) == 0.7
    assert grounding("a lighthouse", [PASSAGE]) == 0.0


def test_a_step_label_copied_as_the_answer_is_never_grounded():
    """Rows naming paragraph_1 once let '$var_1' pass as the number 1, with confidence 1.0."""
    documents = ROWS.model_copy(update={"rows": [{"document_id": "paragraph_1", "title": "Paragraph 1"}]})
    assert grounding("$var_1", [documents]) == 0.0
    assert grounding("$var_2.amount", [ROWS]) == 0.0


def test_composite_confidence_discounts_hops_and_partial_nodes():
    assert composite_confidence([ROWS], 1.0) == 1.0
    assert composite_confidence([ROWS, PASSAGE], 0.9) == round(0.95 * 0.9, 3)
    partial = PASSAGE.model_copy(update={"advice": ["evidence iteration stopped without sufficiency (step cap)"]})
    assert composite_confidence([partial], 0.9) == 0.72


def test_a_misquoted_single_value_is_replaced_by_the_cell():
    one_cell = ROWS.model_copy(update={"rows": [{"total": 620176.77}], "answer_description": "unpaid EUR total"})
    llm = llm_saying(answer="618,926.27", sentence="About 618,926.27 EUR.", sources=["R1"])
    answer = synthesize(read_question("Total unpaid?"), [one_cell], llm, Recorder())
    assert answer.value == "620,176.77" and answer.text == "unpaid EUR total: 620,176.77."
    assert answer.confidence == 1.0


def test_coverage_gate_abstains_when_nothing_mentions_the_asked_attribute(sample_lake):
    lake, _ = sample_lake
    contact = ROWS.model_copy(update={"rows": [{"billing_contact": "Lukas Vogel", "billing_email": "l@x.de"}]})
    backend = FakeBackend([])
    answer = synthesize(
        read_question("What is the phone number of the billing contact for invoice INV-1001?"),
        [contact],
        LLM(backend),
        Recorder(),
        lake.contract,
    )
    assert answer.abstained and answer.reason == "nothing in the lake mentions phone" and backend.calls == []
    llm = llm_saying(answer="l@x.de", sentence="l@x.de", sources=["R1"])
    answer = synthesize(
        read_question("What is the billing contact's e-mail address on invoice INV-1001?"),
        [contact],
        llm,
        Recorder(),
        lake.contract,
    )
    assert answer.value == "l@x.de"  # "e-mail" is covered by the billing_email column


def test_a_yes_or_no_is_grounded_only_in_something_retrieved():
    from lakeplanner.execute.grounding import grounding
    from lakeplanner.execute.results import NodeResult

    found = NodeResult(label="$var_1", tool="sql", source="t", question="q", rows=[{"nationality": "American"}])
    empty = NodeResult(label="$var_1", tool="sql", source="t", question="q")
    assert grounding("Yes", [found]) == 0.7
    assert grounding("no", [empty]) == 0.0


YEARS = NodeResult(
    label="$var_1",
    tool="sql",
    source="financials",
    question="other in 2019 and 2018",
    exposed=True,
    rows=[{"value": 44.1, "year": 2019}, {"value": 56.7, "year": 2018}],
    rows_total=2,
    row_keys={"financials": ["Other|2019", "Other|2018"]},
)


@pytest.mark.parametrize(
    ("said", "expression"),
    [
        ("-12.6", "44.1 - 56.7"),
        ("-22.22", "(44.1 - 56.7) / 56.7 * 100"),
        ("50.4", "(44.1 + 56.7) / 2"),
        ("12", None),  # no simple expression over two cells gives it
        ("2019", None),  # years are labels, never operands
    ],
)
def test_a_number_the_llm_computed_is_traced_to_cells_or_refused(said, expression):
    from lakeplanner.execute.arithmetic import derivation
    from lakeplanner.execute.grounding import normalised, numbers_in

    assert derivation(numbers_in(normalised(said)), [YEARS]) == expression


def test_the_llms_arithmetic_is_redone_by_the_evaluator():
    llm = llm_saying(answer="-12.6", sentence="Other fell by 12.6.", sources=["R1", "R2"], abstain=False)
    answer = synthesize(read_question("How much did Other move between the two years?"), [YEARS], llm, Recorder())
    assert answer.value == "-12.60" and "44.1 - 56.7" in answer.text and answer.confidence > 0.9
    assert len(llm.backend.calls) == 1  # no template reads "move": the model's number, traced to two cells


@pytest.mark.parametrize(
    ("question", "value", "shown"),
    [
        ("What was the change in Other from 2018 to 2019?", "-12.60", "(computed: 44.1 - 56.7 = -12.60)"),
        ("What was Other in 2019 and 2018 respectively?", "44.10; 56.70", "44.10, 56.70"),
        ("In which year was Other larger?", "2018", "2018"),
    ],
)
def test_what_code_computes_from_the_rows_is_answered_without_a_synthesis_call(question, value, shown):
    backend, frame = FakeBackend(), read_question(question, ("report_grid",))
    answer = synthesize(frame, [YEARS], LLM(backend), Recorder())
    assert backend.calls == [] and answer.value == value and shown in answer.text
    assert answer.confidence > 0.9 and {c.row_key for c in answer.citations} == {"Other|2019", "Other|2018"}


def test_the_coverage_gate_reads_what_the_statement_filtered_on(sample_lake):
    from lakeplanner.execute.results import SqlRun
    from lakeplanner.execute.synthesize import uncovered_terms

    lake, _ = sample_lake
    question = "What were the other non-current assets as at December 31, 2018?"
    bare = NodeResult(label="$var_1", tool="sql", source="f", question="q", rows=[{"value": 8620.0}], exposed=True)
    assert uncovered_terms(read_question(question), lake.contract, [bare])
    run = SqlRun(
        sql="SELECT value FROM f WHERE line_item = 'Other non-current assets'", engine="duckdb", snapshots={}, rows=1
    )
    filtered = bare.model_copy(update={"sql": [run]})
    assert uncovered_terms(read_question(question), lake.contract, [filtered]) == []


def test_asking_for_a_name_or_title_is_an_answer_shape_not_an_attribute(sample_lake):
    from lakeplanner.execute.synthesize import uncovered_terms

    lake, _ = sample_lake
    question = "What is the name of the fight song of the university in Lawrence, Kansas?"
    song = PASSAGE.model_copy(update={"evidence": [Evidence.of("paragraph", "d/KU", (0, 30), "Kansas Song is sung.")]})
    assert uncovered_terms(read_question(question), lake.contract, [song]) == []


def test_respective_is_a_modifier_not_an_attribute(sample_lake):
    from lakeplanner.execute.synthesize import uncovered_terms

    lake, _ = sample_lake
    question = "What are the respective totals of the unpaid invoices in 2019 and 2018?"
    assert uncovered_terms(read_question(question), lake.contract, [ROWS]) == []


def test_asking_for_a_definition_or_the_main_reason_names_no_attribute(sample_lake):
    from lakeplanner.execute.synthesize import uncovered_terms

    lake, _ = sample_lake
    nothing = lambda terms: set()  # noqa: E731
    for question in (
        'What is the definition of the term "late fee"?',
        "What is the primary reason for the increase in late fees?",
        "What is the main cause of the delay?",
        "What is the meaning of net 45?",
    ):
        assert uncovered_terms(read_question(question), lake.contract, [PASSAGE], nothing) == [], question


def test_the_coverage_gate_abstains_only_on_what_nothing_in_the_lake_mentions(sample_lake):
    from functools import partial

    from lakeplanner.execute.synthesize import uncovered_terms
    from lakeplanner.ingest.segments import mentioned

    lake, _ = sample_lake
    in_lake = partial(mentioned, lake.catalog)
    assert in_lake(["payment", "phone", "net 45"]) == {"payment", "net 45"}
    assert mentioned(lake.catalog, ["payment"], max_rows=0) is None  # too large to scan: not claimed
    unrelated = NodeResult(label="$var_1", tool="sql", source="t", question="q", rows=[{"n": 1}], exposed=True)
    assert uncovered_terms(
        read_question("What is the phone of customer C001?"), lake.contract, [unrelated], in_lake
    ) == ["phone"]
    # retrieved rows miss "schedule", but invoice documents mention one: no abstention
    asked = "What is the payment schedule of customer C001?"
    assert uncovered_terms(read_question(asked), lake.contract, [unrelated]) != []
    assert uncovered_terms(read_question(asked), lake.contract, [unrelated], in_lake) == []


def test_passages_answer_a_what_kind_question_without_naming_the_kind(sample_lake):
    """ "a French novelist" answers "what nationality"; a column would name it, so rows still gate."""
    from lakeplanner.execute.synthesize import uncovered_terms

    lake, _ = sample_lake
    novelist = Evidence.of("paragraph", "d/Verne", (0, 40), "Jules Verne was a French novelist and poet.")
    passages = PASSAGE.model_copy(update={"evidence": [novelist]})
    nothing = lambda terms: set()  # noqa: E731
    for asked in ("What nationality was Jules Verne?", "What occupation did Jules Verne and Hugo share?"):
        assert uncovered_terms(read_question(asked), lake.contract, [passages], nothing) == []
    assert uncovered_terms(read_question("What is the nationality of Jules Verne?"), lake.contract, [passages], nothing)
    assert uncovered_terms(read_question("What salary does Sanne Mulder earn?"), lake.contract, [ROWS], nothing) == [
        "salary"
    ]


def test_a_percentage_or_a_mean_is_grounded_in_its_cells_not_in_its_constants():
    from lakeplanner.execute.grounding import grounding

    assert grounding("-22.22", [YEARS], "(44.1 - 56.7) / 56.7 * 100") == 1.0
    assert grounding("50.4", [YEARS], "(44.1 + 56.7) / 2") == 1.0
    assert grounding("132.3", [YEARS], "44.1 * 3") == 0.0


def test_a_value_the_statement_repeated_on_every_row_is_the_answer():
    repeated = YEARS.model_copy(update={"rows": [{"change": 2.1}, {"change": 2.1}], "rows_total": 2})
    llm = llm_saying(answer="0", sentence="No change.", sources=["R1"], abstain=False)
    answer = synthesize(read_question("What was the change in Other?"), [repeated], llm, Recorder())
    assert answer.value == "2.10" and answer.confidence > 0.9


COMPONENTS = NodeResult(
    label="$var_1",
    tool="sql",
    source="cash_flows",
    question="net cash flows by activity",
    exposed=True,
    rows=[{"item": "Operating activities"}, {"item": "Investing activities"}, {"item": "Financing activities"}],
    rows_total=3,
)


def test_a_list_question_answers_with_one_grounded_item_per_value():
    said = ["Operating activities", "Investing activities", "Financing activities"]
    answer = synthesize(
        read_question("What are the components of net cash flows?"),
        [COMPONENTS],
        llm_saying(answer=said, sentence="Three."),
        Recorder(),
    )
    assert answer.items == said and answer.value == "; ".join(said) and answer.confidence == 1.0


def test_a_single_value_question_keeps_the_first_item_and_a_plain_string_is_one_item():
    listed = synthesize(
        read_question("What is the first activity?"),
        [COMPONENTS],
        llm_saying(answer=["Operating activities", "x"]),
        Recorder(),
    )
    assert listed.items == ["Operating activities"]
    plain = synthesize(
        read_question("What is the first activity?"),
        [COMPONENTS],
        llm_saying(answer="Investing activities"),
        Recorder(),
    )
    assert plain.items == ["Investing activities"]


def test_a_list_with_an_item_no_result_holds_abstains():
    said = ["Operating activities", "Tax activities"]
    answer = synthesize(
        read_question("What are the components of net cash flows?"), [COMPONENTS], llm_saying(answer=said), Recorder()
    )
    assert answer.abstained and "Tax activities" in answer.reason


def test_respective_values_of_named_years_are_listed_in_the_order_asked_whatever_the_llm_says():
    rows = [{"year": 2019, "value": 1609000.0}, {"year": 2018, "value": 1164000.0}, {"year": 2017, "value": 9.0}]
    taxes = NodeResult(label="$var_1", tool="sql", source="taxes", question="tax", exposed=True, rows=rows)
    question = "What are the respective values of income tax expense in 2018 and 2019?"
    said = llm_saying(answer=["1164000.0"], sentence="It was 1164000.")
    answer = synthesize(read_question(question, ("report_grid",)), [taxes], said, Recorder())
    assert answer.items == ["1,164,000", "1,609,000"]
    assert answer.text == f"{question.rstrip('?')}: 1,164,000, 1,609,000."


@pytest.mark.parametrize(
    ("question", "said", "item"),
    [
        (
            "What does the table show?",
            "The table shows the reconciliation of liabilities.",
            "the reconciliation of liabilities.",
        ),
        ("What does the plan allow?", "the plan allowed: early exercise", "early exercise"),
        ("What does the table show?", "The table", "The table"),  # nothing would be left
        ("What is shown?", "The table shows X", "The table shows X"),
        (
            "What is Goodwill?",
            "Goodwill is the excess of the purchase consideration over the fair value.",
            "the excess of the purchase consideration over the fair value.",
        ),
        ("What was the change in revenue?", "The change in revenue was 12.5", "12.5"),
    ],
)
def test_an_answer_that_restates_the_question_keeps_what_follows(question, said, item):
    from lakeplanner.question.predicate import unrestated

    assert unrestated(read_question(question), said) == item


def test_an_unsupported_answer_is_repaired_once_with_the_reason():
    share = NodeResult(
        label="$var_1",
        tool="sql",
        source="gains",
        question="unrealized gains",
        exposed=True,
        rows=[
            {"item": "U.S. government obligations", "value": 12.0},
            {"item": "Corporate bonds", "value": 388.0},
            {"item": "Total", "value": 400.0},
        ],
    )
    llm = llm_drafting(
        {"answer": "10.5%", "sentence": "10.5% of the total."},
        {"answer": "", "sentence": "3% of the total.", "calculation": "12 / 400 * 100", "sources": ["R1", "R2"]},
    )
    question = "What percentage of the total unrealized gain is from U.S. government obligations?"
    recorder = Recorder()
    answer = synthesize(read_question(question), [share], llm, recorder)
    assert answer.value == "3" and "12 / 400 * 100" in answer.text and answer.confidence == 1.0
    first, repair = (call[0] for call in llm.backend.calls)
    assert repair[: len(first)] == first and "'10.5%' is not supported" in repair[-1].content
    told = [s.attributes.get("lakeplanner.llm.because") for s in recorder.steps]
    assert told[0] is None and "'10.5%' is not supported" in told[1]  # the trace says why it was repaired


def test_an_unsupported_share_of_two_named_rows_is_computed_without_a_repair():
    rows = [{"item": "U.S. government obligations", "value": 12.0}, {"item": "Total", "value": 400.0}]
    share = NodeResult(label="$var_1", tool="sql", source="gains", question="gains", exposed=True, rows=rows)
    llm = llm_drafting({"answer": "10.5%", "sentence": "10.5% of the total."})
    question = "What percentage of the total unrealized gain is from U.S. government obligations?"
    answer = synthesize(read_question(question), [share], llm, Recorder())
    assert answer.value == "3" and "12 / 400 * 100" in answer.text and len(llm.backend.calls) == 1


@pytest.mark.parametrize(("said", "value"), [("11510.0 + 11065.0", "22,575"), ("1-90", None)])
def test_an_expression_written_as_the_answer_is_evaluated(said, value):
    rows = [{"year": 2019, "value": 11510.0}, {"year": 2018, "value": 11065.0}]
    revenue = NodeResult(label="$var_1", tool="sql", source="revenue", question="revenue", exposed=True, rows=rows)
    answer = synthesize(read_question("What was the total revenue?"), [revenue], llm_saying(answer=said), Recorder())
    assert answer.value == value and (value is None or "11510.0 + 11065.0" in answer.text)


def test_an_ungrounded_difference_of_two_named_items_is_computed_by_their_template():
    rows = [{"column_label": "1-90 days", "value": 1540.0}, {"column_label": "91-180 days", "value": 318.0}]
    past_due = NodeResult(label="$var_1", tool="sql", source="f", question="past due", rows=rows, exposed=True)
    llm = llm_saying(answer="10", sentence="The difference is 10.", sources=["R1"], abstain=False)
    answer = synthesize(
        read_question("What is the difference between 1-90 and 91-180 days past due?"), [past_due], llm, Recorder()
    )
    assert answer.value == "1,222" and "1540 - 318" in answer.text and not answer.abstained


def test_a_span_is_shown_as_the_passage_writes_it():
    from lakeplanner.execute.settle import verbatim

    standard = PASSAGE.model_copy(
        update={
            "evidence": [
                Evidence.of(
                    "paragraph", "d/1", (0, 60), "From 15 March 2020 the FRC’s Revised  Ethical Standard applies."
                )
            ]
        }
    )
    assert verbatim("FRC's revised Ethical Standard", [standard]) == "FRC’s Revised  Ethical Standard"
    assert verbatim("an other standard", [standard]) == "an other standard"
    assert verbatim("2020", [standard]) == "2020"


def test_asked_which_year_the_value_the_llm_copied_gives_its_rows_year():
    rows = [{"year": 2019, "value": 17.0}, {"year": 2018, "value": 4.0}]
    costs = NodeResult(label="$var_1", tool="sql", source="f", question="costs", rows=rows, exposed=True)
    llm = llm_saying(answer="17", sentence="It was 17 in 2019.", sources=["R1"], abstain=False)
    answer = synthesize(read_question("In which year were the integration costs larger?"), [costs], llm, Recorder())
    assert answer.value == "2019" and not answer.abstained


def test_asked_what_year_a_name_the_llm_wrote_gives_way_to_the_year_its_sentence_states():
    """HotpotQA 036: the answer step read 2000, the LLM answered the physicist's name."""
    passage = (
        "Carlo Rovelli is an Italian physicist who has worked in Italy, the United States and since 2000, in France."
    )
    read = PASSAGE.model_copy(update={"evidence": [Evidence.of("paragraph", "d/carlo_rovelli", (0, 99), passage)]})
    sentence = "Seven Brief Lessons on Physics was written by a physicist that has worked in France since 2000."
    llm = llm_saying(answer="Carlo Rovelli", sentence=sentence, sources=["E1"])
    asked = "Seven Brief Lessons on Physics was written by a physicist that has worked in France since what year?"
    assert synthesize(read_question(asked), [read], llm, Recorder()).value == "2000"


def test_an_answer_that_repeats_the_question_is_repaired():
    llm = llm_drafting(
        {"answer": "five step approach", "sentence": "The five step approach."},
        {"answer": "identify the contract", "sentence": "Identify the contract.", "sources": ["E1"]},
    )
    steps = PASSAGE.model_copy(
        update={
            "evidence": [Evidence.of("paragraph", "d/1", (0, 60), "The five step approach: identify the contract.")]
        }
    )
    answer = synthesize(read_question("What is the company's five step approach?"), [steps], llm, Recorder())
    assert answer.value == "identify the contract" and "only repeats words" in llm.backend.calls[1][0][-1].content


def test_the_one_value_the_question_names_is_no_answer_to_it():
    """The SQL step read the named staff row's own key, so its label came back as the answer."""
    from lakeplanner.execute.settle import is_the_value_named
    from lakeplanner.question.read import with_values

    asked = "Who supervises Ann Lee?"
    frame = with_values(read_question(asked), [(15, 22, "staff.full_name")])
    assert is_the_value_named(frame, "Ann Lee") and is_the_value_named(frame, "ann lee (E1003)")
    assert not is_the_value_named(frame, "Bo Chan (E1001)")
    two = "Who was hired first, Ann Lee or Bo Chan?"
    assert not is_the_value_named(with_values(read_question(two), [(21, 28, "s.n"), (32, 39, "s.n")]), "Ann Lee")
    rows = NodeResult(
        label="$var_1", tool="sql", source="staff", question="q", rows=[{"full_name": "Ann Lee"}], exposed=True
    )
    llm = llm_saying(answer="Ann Lee", sentence="Ann Lee supervises Ann Lee.", sources=["R1"])
    answer = synthesize(frame, [rows], llm, Recorder())
    assert answer.abstained and "only repeats words of the question" in answer.reason


def test_an_alternative_named_in_the_question_is_an_answer():
    from lakeplanner.question.answers import restates

    magazine = read_question("Which magazine was started first, Arthur's Magazine or First for Women?")
    assert not restates(magazine, "Arthur's Magazine")
    assert restates(read_question("What is the company's five step approach?"), "Five step approach.")
    assert restates(read_question("What is considered to be a cash equivalent?"), "cash equivalents")
    assert restates(magazine, "Magazine")  # the kind asked for, not one of them
    assert restates(read_question("Which warehouse shipped the pallets?"), "Warehouses")
    assert not restates(read_question("Which warehouse shipped the pallets?"), "Leeds warehouse")


def test_a_who_or_which_question_answered_by_a_name_it_states_repeats_it():
    """ "Who" and "which" ask for something the question does not name; only "A or B" offers names."""
    from lakeplanner.question.answers import restates

    assert restates(read_question("Who was the dispatcher that Ann Lee trained in 2021?"), "Ann Lee")
    assert restates(read_question("Under which manager did Omar Haddad lead the Leeds depot?"), "Omar Haddad")
    assert not restates(read_question("Who is older, Ann Lee or Omar Haddad?"), "Ann Lee")


def test_a_name_made_of_words_the_question_holds_apart_is_not_a_restatement():
    from lakeplanner.question.answers import restates

    asked = read_question("What is the name of the ferry that serves the harbour of the Northern Line?")
    assert not restates(asked, "Harbour Ferry")
    assert restates(asked, "the Northern Line")


def test_an_average_over_a_range_of_years_reads_every_year():
    rows = [{"year": 2017, "value": 1.5}, {"year": 2018, "value": 2.5}, {"year": 2019, "value": 4.0}]
    other = NodeResult(label="$var_1", tool="sql", source="f", question="other", rows=rows, exposed=True)
    llm = llm_saying(answer="2.75", sentence="It averaged 2.75.", sources=["R1"], abstain=False)
    answer = synthesize(read_question("What was the average Other between 2017-2019?"), [other], llm, Recorder())
    assert answer.value == "2.67" and "(1.5 + 2.5 + 4) / 3" in answer.text and answer.confidence > 0.9


def test_which_year_was_higher_is_decided_over_the_values_whatever_the_llm_says():
    rows = [{"year": 2019, "value": 17.0}, {"year": 2018, "value": 4.0}]
    costs = NodeResult(label="$var_1", tool="sql", source="f", question="costs", rows=rows, exposed=True)
    llm = llm_saying(answer="2018", sentence="It was larger in 2018.", sources=["R1"], abstain=False)
    answer = synthesize(read_question("In which year were the integration costs larger?"), [costs], llm, Recorder())
    assert answer.value == "2019" and "2018" not in answer.text


@pytest.mark.parametrize(
    "question, passage, span",
    [  # TAT-QA dev passages
        (
            "What do purchase obligations represent?",
            "Purchase obligations represent an estimate of open purchase orders and contractual obligations "
            "in the normal course of business. Other items follow.",
            "an estimate of open purchase orders and contractual obligations in the normal course of business",
        ),
        (
            "What were the pro-forma adjustments mainly comprised of?",
            "The pro-forma adjustments are mainly comprised of acquired inventory fair value costs and "
            "amortization of purchased intangible assets.",
            "acquired inventory fair value costs and amortization of purchased intangible assets",
        ),
        (
            "What does the company's compensation plan allow?",
            "We have a non-qualified deferred compensation plan that allows a group of employees within the "
            "U.S. to contribute base salary on a tax deferred basis.",
            "a group of employees within the U.S. to contribute base salary on a tax deferred basis",
        ),
        (
            "What is the company's five step approach?",
            "The Company applies the following five step approach: (1) identify the contract, (2) determine the price.",
            "(1) identify the contract, (2) determine the price",
        ),
        (
            "What is Tax Fees?",
            "Tax Fees include fees billed for tax compliance services.",
            "fees billed for tax compliance services",
        ),
        ("What does the table show?", "The table shows revenue by segment.", None),  # not a definition
        ("What was the revenue in 2019?", "The revenue in 2019 was up strongly on volume.", None),
    ],
)
def test_a_definition_is_read_off_the_passage_that_states_it(question, passage, span):
    from lakeplanner.execute.definitions import defined_span

    found = PASSAGE.model_copy(update={"evidence": [Evidence.of("paragraph", "d/1", (0, len(passage)), passage)]})
    defined = defined_span(read_question(question, ("report_grid",)), [found])
    assert (defined[2] if defined else None) == span


def test_a_definition_answers_when_the_llm_only_repeats_the_question():
    text = "Purchase obligations represent an estimate of open purchase orders."
    found = PASSAGE.model_copy(update={"evidence": [Evidence.of("paragraph", "d/7", (10, 10 + len(text)), text)]})
    llm = llm_saying(answer="purchase obligations", sentence="Purchase obligations.", sources=[])
    answer = synthesize(read_question("What do purchase obligations represent?"), [found], llm, Recorder())
    assert answer.value == "an estimate of open purchase orders" and not answer.abstained
    assert [(c.kind, c.start) for c in answer.citations] == [("span", 10)]


def test_a_percentage_change_over_a_divisor_of_two_point_something_is_grounded():
    rows = [{"year": 2019, "value": 3.1}, {"year": 2018, "value": 2.4}]
    additions = NodeResult(label="$var_1", tool="sql", source="f", question="additions", rows=rows, exposed=True)
    assert grounding("29.17", [additions], "(3.1 - 2.4) / 2.4 * 100") == 1.0
    assert grounding("5", [additions], "(3.1 + 6.9) / 2") == 0.0  # 6.9 is no cell; the mean's 2 is not read


def test_determiners_and_irregular_past_forms_are_not_terms_the_lake_must_mention():
    from lakeplanner.question.coverage import is_concept
    from lakeplanner.question.lexicon import lexicon

    words = lexicon()
    assert not is_concept("another", words) and not is_concept("paid", words) and is_concept("dividends", words)


def test_one_row_is_shown_with_the_keys_of_the_rows_behind_it():
    from lakeplanner.execute.answer_prompt import numbered_results

    total = NodeResult(
        label="$var_2",
        tool="sql",
        source="invoices",
        question="total_amount of the invoice",
        exposed=True,
        rows=[{"total_amount": 62131.5}],
        row_keys={"invoices": ["INV-1010"]},
    )
    assert numbered_results([total])[0] == "R1 (invoices INV-1010) total_amount: 62131.5"
    many = total.model_copy(update={"row_keys": {"invoices": [f"INV-{i}" for i in range(4)]}})
    assert numbered_results([many])[0] == "R1 (invoices) total_amount: 62131.5"


def test_which_row_is_named_when_the_sentence_leaves_its_key_out():
    total = NodeResult(
        label="$var_2",
        tool="sql",
        source="invoices",
        question="total_amount of the invoice",
        exposed=True,
        rows=[{"total_amount": 62131.5}],
        row_keys={"invoices": ["INV-1010"]},
    )
    question = "Which invoice was disputed because of a late delivery, and what is its total amount?"
    llm = llm_saying(answer="62,131.50", sentence="Its total amount is 62,131.50.", sources=["R1"])
    answer = synthesize(read_question(question), [total], llm, Recorder())
    assert answer.text == "INV-1010: Its total amount is 62,131.50."
    named = llm_saying(answer="62,131.50", sentence="Invoice INV-1010 totals 62,131.50.", sources=["R1"])
    assert synthesize(read_question(question), [total], named, Recorder()).text == "Invoice INV-1010 totals 62,131.50."
    other = llm_saying(answer="62,131.50", sentence="62,131.50.", sources=["R1"])
    assert synthesize(read_question("What is the total amount?"), [total], other, Recorder()).text == "62,131.50."


def test_a_search_passes_on_only_the_documents_its_answer_names():
    from lakeplanner.execute.nodes import named_documents

    rows = [
        {"document_id": "DOC-INV-1010", "linked_keys": ["INV-1010"]},
        {"document_id": "DOC-INV-1033", "linked_keys": ["INV-1033"]},
    ]
    assert named_documents(rows, "Invoice INV-1010") == rows[:1]
    assert named_documents(rows, "DOC-INV-1033") == rows[1:]
    assert named_documents(rows, "a late delivery") == [] and named_documents(rows, None) == []


def test_a_search_for_the_one_thing_asked_passes_on_its_first_choice_only():
    from lakeplanner.execute.nodes import the_one_asked
    from lakeplanner.question import read_question

    rows = [
        {"document_id": "DOC-SHP-7", "linked_table": "shipments", "linked_keys": ["SHP-7"]},
        {"document_id": "DOC-SHP-9", "linked_table": "shipments", "linked_keys": ["SHP-9"]},
    ]
    one = read_question("Which shipment was damaged in the storm, and what did it weigh?")
    assert the_one_asked(rows, one) == rows[:1]
    assert the_one_asked(rows, read_question("Which shipments were damaged in the storm?")) == rows
    other_kind = read_question("Which carrier damaged a shipment in the storm?")
    assert the_one_asked(rows, other_kind) == rows  # the documents are about shipments, not the carrier asked


def test_a_number_the_sentence_adds_that_nothing_states_is_found():
    from lakeplanner.execute.settle import unsupported_numbers

    memo = PASSAGE.model_copy(update={"rows": [{"customer_id": "C003"}]})
    question = "According to the Q3 2024 memo, which customer agreed to a payment plan?"
    made_up = "Kessler & Vogt agreed to a payment plan, and they have been issued 3 invoices in total."
    assert unsupported_numbers(made_up, ["Kessler & Vogt"], [memo], question) == [3.0]
    assert unsupported_numbers("Kessler & Vogt (C003) agreed in Q3 2024.", ["Kessler & Vogt"], [memo], question) == []
    assert unsupported_numbers("The total is 620,176.77 EUR.", ["620,176.77"], [ROWS], "What is the total?") == []


def test_a_row_asked_for_and_answered_with_its_documents_id_is_named_by_its_key():
    from lakeplanner.execute.answer_prompt import Draft
    from lakeplanner.execute.settle import rows_for_documents
    from lakeplanner.question import read_question

    report = NodeResult(
        label="$var_1",
        tool="vector",
        source="documents_shipments",
        question="q",
        rows=[{"document_id": "DOC-SHP-7", "linked_table": "shipments", "linked_key": "SHP-7"}],
    )
    draft = Draft(answer=["DOC-SHP-7", "1,250"], sentence="DOC-SHP-7 weighed 1,250 kg.", sources=["R1"], abstain=False)
    asked = read_question("Which shipment was damaged, and what did it weigh?")
    fixed = rows_for_documents(asked, draft, [report])
    assert fixed.answer == ["SHP-7", "1,250"] and fixed.sentence == "SHP-7 weighed 1,250 kg."
    address = "documents_shipments/DOC-SHP-7"  # the evidence's address, as a small model may copy it
    addressed = Draft(answer=[address], sentence=f"{address}.", sources=["R1"], abstain=False)
    fixed = rows_for_documents(asked, addressed, [report])
    assert fixed.answer == ["SHP-7"] and fixed.sentence == "SHP-7."
    documents = read_question("Which report tells of the damage?")
    assert rows_for_documents(documents, draft, [report]) == draft  # a report was asked for


def test_a_sentence_that_states_none_of_the_answer_is_found():
    from lakeplanner.execute.settle import omits_the_answer
    from lakeplanner.question import read_question

    asked = read_question("What notice period does the depot's lease specify?")
    copied = "Overdue rent accrues a late fee of 1.0% per month on the outstanding balance."
    assert omits_the_answer(copied, ["60 days"], asked)
    assert not omits_the_answer("The lease specifies a notice period of 60 days.", ["60 days"], asked)
    assert not omits_the_answer("The lease asks for sixty (60) days' notice.", ["60 days"], asked)
    assert not omits_the_answer("It weighs 1,250.5 kg.", ["1250.5"], asked)
    yes_no = read_question("Do both leases specify the same notice period?")
    assert not omits_the_answer("Both leases ask for 60 days.", ["yes"], yes_no)


def test_an_adjective_qualifying_the_asked_attribute_is_no_missing_concept(sample_lake):
    """Words that only qualify what is asked ("the average annual amount", "the nominal difference")
    are no concepts the lake must mention."""
    from lakeplanner.execute.synthesize import uncovered_terms
    from lakeplanner.question.coverage import is_concept
    from lakeplanner.question.lexicon import lexicon

    lake, _ = sample_lake
    terms = ["annual", "nominal", "historic", "previous", "phone", "amount", "rental", "metric", "receivable"]
    assert [t for t in terms if is_concept(t, lexicon())] == ["phone", "amount", "rental", "metric", "receivable"]
    asked = "What is the nominal difference of the totals of the unpaid invoices?"
    assert uncovered_terms(read_question(asked), lake.contract, [ROWS]) == []


def test_a_row_the_question_names_does_not_cover_the_attribute_it_asks(sample_lake):
    """The lake holds the customer, not their revenue target: the name found in the rows is no cover."""
    from lakeplanner.execute.synthesize import uncovered_terms

    lake, _ = sample_lake
    row = NodeResult(
        label="$var_1", tool="sql", source="customers", question="q", rows=[{"name": "Nordlicht Energie AG"}]
    )
    asked = "What is Nordlicht Energie's revenue target?"
    assert uncovered_terms(read_question(asked), lake.contract, [row], lambda terms: set()) == ["revenue", "target"]


def test_the_parts_of_a_date_ground_no_figure():
    """A count the LLM made up (-10) is not stated by a timestamp's day ('2023-01-10')."""
    import datetime as dt

    rows = [{"dispatched_at": dt.datetime(2023, 1, 10, 8, 15), "status": "delivered"}, {"sent": "2024-02-10"}]
    shipments = NodeResult(label="$var_1", tool="sql", source="shipments", question="q", rows=rows, exposed=True)
    assert grounding("-10", [shipments]) == 0.0
    assert grounding("delivered", [shipments]) == 1.0


def test_an_attribute_one_of_whose_words_names_a_column_is_covered(logistics):
    from lakeplanner.execute.synthesize import uncovered_terms

    unrelated = NodeResult(label="$var_1", tool="sql", source="t", question="q", rows=[{"n": 1}], exposed=True)
    assert (
        uncovered_terms(read_question("What is the licence plate of truck TRK-120?"), logistics.contract, [unrelated])
        == []
    )
    asked = "What is the fuel consumption of truck TRK-135?"
    assert uncovered_terms(read_question(asked), logistics.contract, [unrelated]) == ["fuel", "consumption"]


def test_the_one_cell_a_step_read_is_no_answer_when_the_question_names_it():
    truck = NodeResult(
        label="$var_1", tool="sql", source="trucks", question="q", rows=[{"truck_id": "TRK-135"}], exposed=True
    )
    made_up = {"answer": ["8.5"], "sentence": "It uses 8.5 l per 100 km.", "sources": ["R1"], "abstain": False}
    answer = synthesize(
        read_question("What is the fuel consumption of truck TRK-135?"), [truck], llm_saying(**made_up), Recorder()
    )
    assert answer.abstained and answer.value is None
    plate = truck.model_copy(update={"rows": [{"plate": "5155 RER"}]})
    answer = synthesize(
        read_question("What is the licence plate of truck TRK-135?"), [plate], llm_saying(**made_up), Recorder()
    )
    assert answer.value == "5155 RER"  # the cell the step read answers it
    dispatched = truck.model_copy(update={"rows": [{"dispatched_at": "2023-02-20 14:35:00+00:00"}]})
    asked = "How far in advance must a hazardous shipment be declared before dispatch?"
    assert synthesize(
        read_question(asked), [dispatched], llm_saying(**made_up), Recorder()
    ).abstained  # a date is no duration


def test_a_lookup_answer_that_is_a_part_of_the_one_text_cell_read_is_that_cell():
    truck = NodeResult(
        label="$var_1",
        tool="sql",
        source="trucks",
        question="q",
        rows=[{"truck_id": "TRK-120", "plate": "5155 RER"}],
        exposed=True,
    )
    part = {"answer": ["5155"], "sentence": "The plate is 5155.", "sources": ["R1"], "abstain": False}
    answer = synthesize(
        read_question("What is the licence plate of truck TRK-120?"), [truck], llm_saying(**part), Recorder()
    )
    assert answer.value == "5155 RER"
    asked = "How many seats does truck TRK-120 have?"  # a number asked: the part may be the answer
    assert synthesize(read_question(asked), [truck], llm_saying(**part), Recorder()).value != "5155 RER"


def test_a_second_question_joined_to_the_first_keeps_its_value():
    rows = NodeResult(
        label="$var_1",
        tool="sql",
        source="customers",
        question="q",
        rows=[{"name": "Kessler & Vogt Maschinenbau", "count_invoice_id": 2}],
        exposed=True,
    )
    both = {"answer": ["Kessler & Vogt Maschinenbau", "2"], "sentence": "Kessler, 2.", "sources": ["R1"]}
    asked = "Which customer agreed to a payment plan, and how many invoices has that customer been issued in total?"
    answer = synthesize(read_question(asked), [rows], llm_saying(**both, abstain=False), Recorder())
    assert "Kessler & Vogt Maschinenbau" in answer.value and "2" in answer.value, answer.value
    one = "Which customer agreed to a payment plan?"
    assert (
        synthesize(read_question(one), [rows], llm_saying(**both, abstain=False), Recorder()).value
        == "Kessler & Vogt Maschinenbau"
    )


def test_the_time_between_the_two_moments_of_one_row_is_computed_in_the_unit_asked():
    import datetime as dt

    timed = ROWS.model_copy(
        update={
            "rows": [
                {
                    "shipment_id": "SHP-1",
                    "dispatched_at": dt.datetime(2024, 3, 1, 12, 0, tzinfo=dt.UTC),
                    "delivered_at": "2024-03-02T10:00:00+00:00",
                }
            ],
            "row_keys": {"shipments": ["SHP-1"]},
        }
    )
    llm = llm_saying(answer="Rotterdam", sentence="It went via Rotterdam.", sources=["R1"])
    answer = synthesize(
        read_question("How many hours did shipment SHP-1 take from dispatch to delivery?"), [timed], llm, Recorder()
    )
    assert answer.value == "22" and answer.confidence == 1.0
    assert "delivered_at 2024-03-02T10:00:00 - dispatched_at 2024-03-01T12:00:00, in hours" in answer.text
    days = synthesize(
        read_question("How many days did shipment SHP-1 take?"), [timed], llm_saying(abstain=True), Recorder()
    )
    assert days.value == "0.92"
    untimed = synthesize(
        read_question("How many hours did shipment SHP-1 take?"), [ROWS], llm_saying(abstain=True), Recorder()
    )
    assert untimed.abstained  # no two moments: nothing to compute


def test_a_difference_of_two_items_answered_with_one_of_them_is_computed_by_their_template():
    def capacity(key, kg):
        return NodeResult(
            label="$var_1",
            tool="sql",
            source="trucks",
            question=f"capacity of {key}",
            rows=[{"capacity_kg": kg}],
            row_keys={"trucks": [key]},
            exposed=True,
        )

    results = [capacity("TRK-126", 24000), capacity("TRK-103", 18000)]
    copied = llm_saying(answer="24000", sentence="Truck TRK-126 carries 24000 kg.", sources=["R1"])
    question = "How many more kilograms can truck TRK-126 carry than truck TRK-103?"
    answer = synthesize(read_question(question), results, copied, Recorder())
    assert answer.value == "6,000" and "24000 - 18000" in answer.text
    computed = llm_saying(answer="6000", calculation="24000 - 18000", sentence="6000 kg more.", sources=["R1"])
    assert synthesize(read_question(question), results, computed, Recorder()).value == "6,000"


def test_a_text_cell_with_no_number_is_no_fallback_where_a_number_is_asked():
    from lakeplanner.execute.by_code import fallback_value

    warehouse = ROWS.model_copy(update={"rows": [{"from_wh": "WH-05"}]})
    assert fallback_value([warehouse], read_question("How many hours did shipment SHP-1 take?")) is None
    assert fallback_value([warehouse], read_question("Which warehouse dispatched shipment SHP-1?")) == "WH-05"
    plate = ROWS.model_copy(update={"rows": [{"plate": "5155 RER"}]})
    assert fallback_value([plate], read_question("How much is 5155 RER?")) is None  # named by the question


def test_a_calculation_over_the_years_rows_are_labelled_with_is_not_grounded():
    built = ROWS.model_copy(update={"rows": [{"year_built": 2011}, {"year_built": 2023}]})
    llm = llm_saying(answer="12", calculation="2023 - 2011", sentence="Kept for 12 years.", sources=["R1"])
    answer = synthesize(read_question("How long are vehicle telematics data kept?"), [built], llm, Recorder())
    assert answer.abstained


def overdue_rows(sql: str, rows: list[dict]) -> NodeResult:
    return NodeResult(
        label="$var_1",
        tool="sql",
        source="invoices",
        question="overdue invoices of C036",
        exposed=True,
        rows=rows,
        rows_total=len(rows),
        row_keys={"invoices": [r.get("invoice_id", "INV-1092") for r in rows]},
        sql=[SqlRun(sql=sql, engine="duckdb", snapshots={"invoices": 42}, rows=len(rows))],
    )


def test_a_count_answered_with_the_number_of_rows_listed_is_grounded_by_them():
    listed = overdue_rows("SELECT invoice_id FROM invoices WHERE status = 'overdue'", [{"invoice_id": "INV-1092"}])
    answer = synthesize(
        read_question("How many invoices of customer C036 are overdue?"),
        [listed],
        llm_saying(answer="1", sentence="One invoice is overdue.", sources=["R1"]),
        Recorder(),
    )
    assert not answer.abstained and answer.value == "1"
    assert [c.row_key for c in answer.citations] == ["INV-1092"]


def test_the_number_of_rows_of_an_aggregate_is_no_count():
    counted = overdue_rows("SELECT count(*) AS n FROM invoices WHERE status = 'overdue'", [{"n": 3}])
    answer = synthesize(
        read_question("How many invoices are overdue?"),
        [counted],
        llm_saying(answer="1", sentence="1.", sources=["R1"]),
        Recorder(),
    )
    assert answer.value != "1"


def counting_llm():
    backend = FakeBackend([json.dumps({"answer": ["wrong"], "sentence": "wrong.", "sources": [], "abstain": False})])
    return LLM(backend), backend


def one_cell(sql: str, cell) -> NodeResult:
    return NodeResult(
        label="$var_1",
        tool="sql",
        source="invoices",
        question="q",
        exposed=True,
        answer_description="Unpaid invoices",
        rows=[{"value": cell}],
        rows_total=1,
        sql=[SqlRun(sql=sql, engine="duckdb", snapshots={"invoices": 42}, rows=1)],
        row_keys={"invoices": ["INV-1003"]},
        snapshots={"invoices": 42},
    )


def test_a_single_cell_the_engine_computed_is_the_answer_without_a_synthesis_call():
    llm, backend = counting_llm()
    result = one_cell("SELECT COUNT(*) AS value FROM invoices WHERE paid = FALSE", 15)
    answer = synthesize(read_question("How many invoices are unpaid?"), [result], llm, Recorder())
    assert backend.calls == [] and answer.value == "15" and answer.confidence == 1.0
    assert answer.text == "Unpaid invoices: 15." and [c.row_key for c in answer.citations] == ["INV-1003"]


@pytest.mark.parametrize(
    "question, sql, cell",
    [
        ("Is invoice INV-1003 paid?", "SELECT paid AS value FROM invoices WHERE invoice_id = 'INV-1003'", True),
        ("Why was the invoice disputed?", "SELECT note AS value FROM invoices LIMIT 1", "late delivery"),
    ],
)
def test_a_single_cell_still_goes_to_the_model_where_it_may_not_be_the_answer(question, sql, cell):
    llm, backend = counting_llm()
    synthesize(read_question(question), [one_cell(sql, cell)], llm, Recorder())
    assert len(backend.calls) >= 1


def test_a_draft_writes_a_reason_only_when_it_abstains():
    """Constrained decoding: after `"abstain": false` the reason can only be empty; every other field
    is written as before (a model kept from the reason writes a calculation instead)."""
    from lakeplanner.execute.answer_prompt import Draft

    answered, abstained = Draft.model_json_schema()["anyOf"]
    assert answered["properties"]["abstain"] == {"const": False} and answered["properties"]["reason"] == {"const": ""}
    assert (
        abstained["properties"]["abstain"] == {"const": True} and abstained["properties"]["reason"]["type"] == "string"
    )
    assert list(answered["properties"]) == list(abstained["properties"]) == list(Draft.model_fields)
    assert answered["required"] == ["answer", "sentence", "sources", "abstain"]
    llama_cpp = pytest.importorskip("llama_cpp")
    from lakeplanner.llm.local import grammar_safe

    assert llama_cpp.LlamaGrammar.from_json_schema(json.dumps(grammar_safe(Draft.model_json_schema())), verbose=False)


def test_a_count_of_the_rows_one_step_listed_is_their_number_without_the_llm():
    """Twenty-one shipments listed (twenty shown to a model): the answer is 21, not a miscount."""
    from lakeplanner.execute.results import SqlRun

    listed = "SELECT shipment_id FROM shipments WHERE carrier = 'IBRF' LIMIT 200"
    rows = [{"shipment_id": f"SHP-{n}"} for n in range(21)]
    shipments = NodeResult(
        label="$var_2", tool="sql", source="shipments", question="q", exposed=True, rows=rows, rows_total=21,
        sql=[SqlRun(sql=listed, engine="duckdb", snapshots={}, rows=21)],
    )  # fmt: skip
    llm = llm_saying(answer="10", sentence="10 shipments.", sources=["R1"], abstain=False)
    asked = "The memo puts one carrier on probation. How many shipments did that carrier handle?"
    answer = synthesize(read_question(asked), [shipments], llm, Recorder())
    assert answer.value == "21" and answer.text == "21 shipments." and llm.backend.calls == []
    cut = shipments.model_copy(
        update={"sql": [SqlRun(sql=listed.replace("200", "21"), engine="duckdb", snapshots={}, rows=21)]}
    )
    for question, results in ((asked, [cut]), ("How many carriers are there?", [shipments])):
        model = llm_saying(answer="10", sentence="10.", sources=["R1"], abstain=False)
        synthesize(
            read_question(question), results, model, Recorder()
        )  # as many rows as its LIMIT (maybe more), or other rows
        assert len(model.backend.calls) >= 1
    one = one_cell("SELECT invoice_no AS value FROM invoices WHERE paid = FALSE", 1043)  # one row counted, not a count
    assert synthesize(read_question("How many invoices are unpaid?"), [one], llm, Recorder()).value == "1"


def test_a_lookup_one_passage_answered_needs_no_synthesis_call_when_switched_on():
    read = PASSAGE.model_copy(update={"answer": "60 days", "rows": []})
    question = "What notice period does contract CTR-C010 require to terminate for convenience?"
    backend = FakeBackend([])
    answer = synthesize(read_question(question), [read], LLM(backend), Recorder(), read_answers=True)
    assert backend.calls == [] and answer.value == "60 days" and answer.confidence > 0.0
    assert answer.text == "Either party may terminate for convenience with 60 days written notice."
    assert [c.document_id for c in answer.citations] == ["CTR-C010"]
    drafted = llm_saying(answer="60 days", sentence="60 days.", sources=["E1"])
    assert (
        synthesize(read_question(question), [read], drafted, Recorder()).value == "60 days"
    )  # off: the synthesis call answers
    unsure = read.model_copy(update={"advice": ["evidence iteration stopped without sufficiency (budget)"]})
    for results, asked in (([unsure], question), ([read], "Why may either party terminate the contract?")):
        backend = FakeBackend([json.dumps({"answer": [], "sentence": "", "sources": [], "abstain": True})] * 3)
        synthesize(read_question(asked), results, LLM(backend), Recorder(), read_answers=True)
        assert backend.calls, asked  # not sufficient, or not a lookup: the synthesis call decides


def test_a_count_a_passage_states_is_read_like_a_lookup_but_not_a_count_of_the_documents():
    stated = PASSAGE.model_copy(
        update={
            "answer": "1,250",
            "rows": [],
            "evidence": [
                Evidence.of(
                    "paragraph",
                    "documents_contracts/CTR-C010",
                    (0, 80),
                    "The depot employs 1,250 people. It opened in 1998.",
                    document_id="CTR-C010",
                )
            ],
        }
    )
    backend = FakeBackend([])
    asked = "The depot named in contract CTR-C010 employs how many people?"
    answer = synthesize(read_question(asked), [stated], LLM(backend), Recorder(), read_answers=True)
    assert backend.calls == [] and answer.value == "1,250" and answer.text == "The depot employs 1,250 people."
    for question, read in (
        ("How many contracts mention the depot?", stated),  # counts what the collection holds
        (asked, stated.model_copy(update={"answer": "the depot"})),  # no figure read
    ):
        backend = FakeBackend([json.dumps({"answer": [], "sentence": "", "sources": [], "abstain": True})] * 3)
        synthesize(read_question(question), [read], LLM(backend), Recorder(), read_answers=True)
        assert backend.calls, question


def test_a_lookup_a_chain_of_document_steps_answered_is_the_value_its_last_hop_read():
    """Every hop exposed: the one no other step reads from answers; two unrelated steps leave it to the call."""
    found = PASSAGE.model_copy(
        update={"label": "$var_1", "question": "which contract covers the depot", "answer": "CTR-C010", "rows": []}
    )
    hop = PASSAGE.model_copy(update={"question": "the notice period of $var_1.answer", "answer": "60 days", "rows": []})
    question = "What notice period does the contract covering the depot require to terminate for convenience?"
    backend = FakeBackend([])
    answer = synthesize(read_question(question), [found, hop], LLM(backend), Recorder(), read_answers=True)
    assert backend.calls == [] and answer.value == "60 days"
    apart = hop.model_copy(update={"question": "the notice period"})
    backend = FakeBackend([json.dumps({"answer": [], "sentence": "", "sources": [], "abstain": True})] * 3)
    synthesize(read_question(question), [found, apart], LLM(backend), Recorder(), read_answers=True)
    assert backend.calls
