"""The question frame: read once, deterministic, every field traceable to a span of the question."""

from pathlib import Path

import pytest
import yaml

from lakeplanner.contract.models import Contract, SourceKind, SourceSpec
from lakeplanner.question import Operation, packs_for, read_question

GOLDEN = yaml.safe_load((Path(__file__).parent / "data" / "frames" / "golden.yaml").read_text())


def observed(frame) -> dict:
    return {
        "operation": frame.operation.value,
        "direction": frame.direction,
        "superlative": frame.superlative,
        "years": frame.years,
        "year_order": list(frame.year_order) if frame.year_order else None,
        "asks_year": frame.asks_year,
        "several": frame.several,
        "reason": frame.reason is not None,
        "document": frame.document is not None or frame.names_document is not None,
        "entity": frame.entity,
        "counted": frame.counted_noun,
        "shape": frame.shape,
        "percent": frame.percent,
    }


def test_the_golden_set_covers_both_lakes_and_both_benchmarks():
    assert len(GOLDEN) >= 150
    assert {e["lake"] for e in GOLDEN} == {"sales", "logistics", "tatqa", "hotpotqa"}


@pytest.mark.parametrize("case", GOLDEN, ids=[f"{i:03d}-{c['lake']}" for i, c in enumerate(GOLDEN)])
def test_golden_frames(case):
    """Expected frames written by hand from the field definitions, not from the reader's output."""
    packs = ("report_grid",) if case["lake"] == "tatqa" else ()
    expected = {k: v for k, v in case.items() if k not in ("lake", "question")}
    assert observed(read_question(case["question"], packs)) == expected


def test_every_span_is_the_text_it_points_at():
    question = "By how much did the total weight of lost shipments change from 2023 to 2024, according to the memo?"
    frame = read_question(question)
    spans = [frame.operation_span, frame.document, frame.subject, *(p.span for p in frame.periods)]
    assert all(question[s.start : s.end] == s.text for s in spans if s is not None)
    assert frame.operation is Operation.change and frame.year_order == (2023, 2024)


def test_report_grid_wording_is_read_only_when_the_pack_is_on():
    question = "What were the sales in 2019 and 2018 respectively?"
    assert not read_question(question).several
    on = read_question(question, ("report_grid",))
    assert on.several and on.listed_years == (2019, 2018)
    share = "What is the percentage constitution of rent in total costs in 2019?"
    assert read_question(share, ("report_grid",)).operation is Operation.share
    assert read_question(share).operation is not Operation.share


def test_a_lake_with_a_report_grid_switches_its_pack_on():
    grid = SourceSpec(name="financials", kind=SourceKind.table, format="report", files=["f.report.csv"])
    plain = SourceSpec(name="shipments", kind=SourceKind.table, format="csv", files=["s.csv"])
    assert packs_for(Contract(sources=[grid, plain])) == ("report_grid",)
    assert packs_for(Contract(sources=[plain])) == () and packs_for(None) == ()


def test_labels_thresholds_and_ranges():
    assert read_question("What was the weighted-average interest rate in 2019?").operation is Operation.lookup
    assert read_question("How many years did sales exceed more than 200?").direction is None  # 'more than'
    assert read_question("What is the average revenue for 2017-2019?").listed_years == (2017, 2018, 2019)
    assert read_question("Which three carriers handled the most shipments?").superlative
    assert read_question("What are the top 5 carriers by weight?").limit == 5
    assert read_question("Why did revenue decline in 2019?").operation is Operation.reason


def test_an_unknown_pack_is_a_clear_error():
    with pytest.raises(ValueError, match="no question pack 'nope'"):
        read_question("What is X?", ("nope",))


def test_thresholds_and_negations_are_read():
    assert read_question("How many invoices were issued before 2024-06-01?").comparison == "lt"
    assert read_question("How many invoices have a total over 10000?").comparison == "gt"
    assert read_question("Which invoices are not yet paid?").negated
    assert read_question("Which invoice was paid?").comparison is None


@pytest.mark.parametrize(
    ("question", "operation"),
    [
        ("Which shipment was delayed by the storm, and what is its total weight?", Operation.lookup),
        ("Who manages the Leeds depot, and what is her average rating?", Operation.lookup),
        ("What is the total weight of the lost shipments?", Operation.sum),
        ("What is the average delay of each carrier's shipments?", Operation.average),
    ],
)
def test_one_things_own_total_is_its_attribute_not_an_aggregate(question, operation):
    assert read_question(question).operation is operation


@pytest.mark.parametrize(
    ("question", "one"),
    [
        ("Which carrier lost the pallet?", "carrier"),
        ("One pallet was lost in transit. Which depot had shipped it?", "depot"),
        ("One pallet was lost in transit. What did the carrier charge for it?", "pallet"),
        ("Which carriers lost a pallet?", None),
        ("Which depot shipped each order?", None),
        ("Which carrier shipped more than one pallet?", "carrier"),
        ("One of the pallets was lost. What did it weigh?", None),
        ("Who lost the pallet?", None),
        ("What is the total weight?", None),
        ("The audit flags one depot for late scans. How many pallets did that depot ship?", "depot"),
        ("How many pallets did one depot ship?", None),  # a question, not a statement that one is meant
    ],
)
def test_the_one_thing_meant_is_read_from_which_or_a_statement_saying_one(question, one):
    assert read_question(question).one == one


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("One pallet was lost in transit. Which depot had shipped it?", "Which pallet was lost in transit?"),
        ("The audit flags one depot for late scans. How many pallets?", "The audit flags which depot for late scans?"),
        ("The audit flags depots for late scans. How many pallets?", "The audit flags depots for late scans"),
    ],
)
def test_a_clause_stating_that_one_thing_is_meant_is_asked_which(question, asked):
    frame = read_question(question)
    assert frame.asked(frame.clauses[0]) == asked


def test_the_question_word_is_read_wherever_it_stands():
    assert read_question("When was order ORD-50020 placed?").wh == "when"
    assert read_question("order ORD-50042 was placed by whom?").wh == "who"
    assert read_question("For which customer was the shipment carried?").wh == "which"


@pytest.mark.parametrize(
    ("question", "measure"),
    [
        ("By how much did the number of shipments dispatched change from 2023 to 2024?", Operation.count),
        ("How did the total number of orders change in 2024?", Operation.count),
        ("By how much did the total weight shipped change between 2023 and 2024?", Operation.sum),
        ("How did the average order value change from 2023 to 2024?", Operation.average),
        ("What was the change in the weighted average interest rate from 2018 to 2019?", None),  # a label
        ("What is the change in revenue from 2018 to 2019?", None),
        ("What is the total weight of lost shipments?", None),  # a sum, not a change of one
    ],
)
def test_the_measure_is_what_a_change_is_taken_of(question, measure):
    assert read_question(question).measure is measure


@pytest.mark.parametrize(
    ("question", "attribute"),
    [
        ("What is the billing contact's e-mail address on invoice INV-1042?", "the billing contact's e-mail address"),
        ("What is the licence plate of truck TRK-120?", "the licence plate"),
        ("What were the other non-current assets as at December 31, 2018?", "the other non-current assets"),
        ("What monthly availability does the contract of the earliest customer guarantee?", "monthly availability"),
        ("Why was invoice INV-1010 disputed?", None),
    ],
)
def test_the_attribute_is_the_head_of_what_is_asked(question, attribute):
    frame = read_question(question)
    assert (frame.attribute.text if frame.attribute else None) == attribute


@pytest.mark.parametrize(
    ("text", "operation"),
    [
        ("number of invoices issued by customer C001", Operation.count),  # a step's noun phrase
        ("count of delayed shipments in 2024", Operation.count),
        ("What is the phone number of the billing contact for invoice INV-1001?", Operation.lookup),
    ],
)
def test_a_phrase_opening_with_number_of_counts_and_a_phone_number_does_not(text, operation):
    assert read_question(text).operation is operation


@pytest.mark.parametrize(
    ("question", "unit", "seconds"),
    [
        ("How many hours did shipment SHP-20054 take from dispatch to delivery?", "hours", 3600),
        ("Within how many days of delivery must a claim be filed?", "days", 86400),
        ("How many more kilograms can truck TRK-126 carry than truck TRK-103?", "kilograms", None),
        ("How much more euro did carrier A bill?", "euro", None),
        ("How many invoices were issued in 2024?", None, None),
    ],
)
def test_a_quantity_asked_in_a_unit_is_no_count(question, unit, seconds):
    frame = read_question(question)
    assert (frame.unit.text if frame.unit else None, frame.seconds_per_unit) == (unit, seconds)
    assert (frame.operation is Operation.count) is (unit is None)
    assert frame.shape == "number"


@pytest.mark.parametrize(
    ("question", "subject", "verb", "defines"),
    [
        ("What do purchase obligations represent?", "purchase obligations", "represent", True),
        ("What are the purchase obligations mainly comprised of?", "purchase obligations", "comprise", True),
        ("What does the accident policy cover?", "accident policy", "cover", True),
        ("What is the insurance coverage?", "insurance coverage", None, True),  # 'coverage' is no verb
        ("What does the table show?", "table", "show", False),
        ("What is the company's five step approach?", "company's five step approach", None, True),
        ("Which carrier lost the most shipments?", None, None, False),
    ],
)
def test_the_predicate_is_what_a_what_is_question_says_of_its_subject(question, subject, verb, defines):
    asked = read_question(question).predicate
    read = (asked.subject.text, asked.verb, asked.defines) if asked else (None, None, False)
    assert read == (subject, verb, defines)
    if asked is not None:
        assert question[asked.subject.start : asked.subject.end] == asked.subject.text


def test_an_owner_is_left_out_of_the_subject_only_where_a_pack_names_it():
    question = "What is the company's five step approach?"
    assert read_question(question, ("report_grid",)).predicate.subject.text == "five step approach"


def test_clauses_split_at_sentence_ends_and_joined_questions():
    frame = read_question("The Q4 memo puts one carrier on probation. How many shipments did it lose and which ones?")
    assert [c.text for c in frame.clauses] == [
        "The Q4 memo puts one carrier on probation",
        "How many shipments did it lose",
        "which ones",
    ]
    assert frame.clause_of(frame.counted).text == "How many shipments did it lose"
    assert [c.text for c in read_question("Which U.S. carrier, Acme Inc. or Zed Ltd. ships most?").clauses] == [
        "Which U.S. carrier, Acme Inc. or Zed Ltd. ships most"
    ]


def test_alternatives_are_things_offered_to_choose_from():
    assert read_question("Which magazine was started first, Arthur's Magazine or First for Women?").alternatives
    assert not read_question("What is the company's five step approach?").alternatives
    assert not read_question("Which carrier moved the pallets that Omar Haddad signed for?").alternatives
    assert read_question("Which carrier was cheaper between Acme and Borealis?").alternatives


@pytest.mark.parametrize(
    ("question", "cue"),
    [
        ("How is the fair value of the stock options granted during the year estimated?", "How is"),
        ("Why did revenue fall?", "Why"),
        ("What was the purpose of the memo?", "purpose"),
        ("What does the segment consist of?", "consist"),
        ("Is the data consistent?", None),  # 'consistent' is no composition
        ("How many shipments were estimated to arrive late?", None),  # a count, not a method
        ("What is the weight of the parcel described in claim CL-9?", None),  # where it is told of
        ("What is described in the claim?", "described"),
        ("What does the claim describe about the parcel described in it?", "describe"),
    ],
)
def test_prose_is_an_answer_a_table_cannot_hold(question, cue):
    prose = read_question(question).prose
    assert (prose.text[: len(cue)] if prose else None) == cue


@pytest.mark.parametrize(
    ("question", "noun"),
    [
        ("How many delayed road shipments were there in 2024?", "shipment"),
        ("How many pallets did the depot ship?", "pallet"),
        ("How many staff work at the depot?", "staff"),
        ("How many late pallets of the depot were lost?", "pallet"),
    ],
)
def test_what_a_count_counts_is_the_plural_noun_its_adjectives_lead_to(question, noun):
    assert read_question(question).counted_noun == noun


def test_the_coverage_gate_reads_the_asked_attribute_under_the_lakes_packs():
    """A word that names the reporting entity ("company") is an answer's shape only where the report
    pack is on; elsewhere it is a concept the lake must hold."""
    from lakeplanner.question.coverage import asked_concepts

    asked = "What is the company's rental income?"
    assert asked_concepts(read_question(asked, packs=("report_grid",))) == ["rental", "income"]
    assert asked_concepts(read_question(asked)) == ["company", "rental", "income"]
    assert asked_concepts(read_question("What is the original loan limit?")) == ["loan", "limit"]


def test_the_frame_answers_what_its_words_say():
    frame = read_question("How many loans did the Halden branch renew in 2023?")
    assert frame.says("halden BRANCH") and not frame.says("Oslo")
    assert frame.says_word("loans") and not frame.says_word("loan")
    assert "loan" in frame.content_stems and frame.opens_with_question_word
    assert frame.with_answer("12") == "How many loans did the Halden branch renew in 2023: 12."
    assert frame.rest_of_clause(frame.counted).startswith(frame.counted.text)
