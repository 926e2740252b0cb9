"""Periods that are not years: quarters, halves, months and ranges of dates, read from the question and
filtered on the statement's date column where the writer left them out."""

from datetime import date

import duckdb
import pytest

from lakeplanner.contract.models import FieldType
from lakeplanner.execute.sql.ranges import filter_named_range
from lakeplanner.execute.sql.statement import checked
from lakeplanner.policy.readonly import parse_select
from lakeplanner.question import QuestionFrame
from lakeplanner.question.dates import date_ranges
from lakeplanner.question.read import read_question


@pytest.mark.parametrize(
    "question, start, end, grain",
    [
        ("How many meters were read in Q3 2024?", date(2024, 7, 1), date(2024, 10, 1), "quarter"),
        ("Outages in the fourth quarter of 2023?", date(2023, 10, 1), date(2024, 1, 1), "quarter"),
        ("Load in 2025 Q1 by feeder", date(2025, 1, 1), date(2025, 4, 1), "quarter"),
        ("Average bill in the first half of 2024", date(2024, 1, 1), date(2024, 7, 1), "half"),
        ("Claims in H2 2022", date(2022, 7, 1), date(2023, 1, 1), "half"),
        ("Visits in March 2024", date(2024, 3, 1), date(2024, 4, 1), "month"),
        ("Refunds in Sept. 2023", date(2023, 9, 1), date(2023, 10, 1), "month"),
        ("In 2021, how many permits were issued in February?", date(2021, 2, 1), date(2021, 3, 1), "month"),
        ("Rainfall between May and August 2024", date(2024, 5, 1), date(2024, 9, 1), "range"),
        ("Rentals from 2024-03-01 to 2024-05-31", date(2024, 3, 1), date(2024, 6, 1), "range"),
    ],
)
def test_a_period_shorter_than_a_year_is_read_as_a_range(question, start, end, grain):
    [named] = read_question(question).ranges
    assert (named.start, named.end, named.grain) == (start, end, grain)
    assert question[named.span.start : named.span.end] == named.span.text


@pytest.mark.parametrize(
    "question",
    [
        "How many hours may a specimen wait before it is rejected?",  # 'may' is a verb
        "How many permits were issued in February?",  # no year to place it in
        "Compare February of 2021 and 2022",  # two years: which February is unsaid
        "What was the total in 2024?",  # a year is a period already
    ],
)
def test_no_range_is_guessed(question):
    assert date_ranges(question) == ()


def test_two_halves_are_two_ranges_in_the_order_named():
    ranges = read_question("How much higher was the load in H2 than in H1 2024?").ranges
    assert [(r.start, r.grain) for r in ranges] == [(date(2024, 7, 1), "half"), (date(2024, 1, 1), "half")]


COLUMNS = {
    "readings": {"meter_id": FieldType.string, "read_on": FieldType.date, "kwh": FieldType.number},
    "outages": {"outage_id": FieldType.string, "began_at": FieldType.timestamp, "ended_at": FieldType.timestamp},
}


def repaired(sql: str, question: str, step: str | None = None) -> tuple[str, list[str]]:
    statement = checked(parse_select(sql), COLUMNS, list(COLUMNS))
    frame = read_question(question)
    edits = filter_named_range(statement, frame, QuestionFrame(text=step or question), COLUMNS)
    return statement.sql("duckdb"), edits


def readings_db():
    db = duckdb.connect()
    db.execute("CREATE TABLE readings (meter_id TEXT, read_on DATE, kwh DOUBLE)")
    db.execute(
        "INSERT INTO readings VALUES ('M1', DATE '2024-06-30', 5), ('M1', DATE '2024-07-01', 7), "
        "('M2', DATE '2024-09-30', 11), ('M2', DATE '2024-10-01', 13)"
    )
    return db


def test_a_named_quarter_the_statement_left_out_is_filtered_on_its_date_column():
    sql, edits = repaired("SELECT sum(kwh) AS total FROM readings", "What was the total kWh read in Q3 2024?")
    assert edits and "Q3 2024" in edits[0]
    assert readings_db().execute(sql).fetchall() == [(18.0,)]


def test_a_year_filter_is_narrowed_to_the_named_month():
    sql, _ = repaired(
        "SELECT count(*) AS n FROM readings WHERE EXTRACT(year FROM read_on) = 2024",
        "How many readings were taken in September 2024?",
    )
    assert readings_db().execute(sql).fetchall() == [(1,)]


def test_a_statement_that_already_ranges_its_dates_is_left_as_written():
    sql = "SELECT count(*) FROM readings WHERE read_on >= '2024-07-01' AND read_on < '2024-10-01'"
    assert repaired(sql, "How many readings in Q3 2024?")[1] == []


def test_a_timestamp_is_compared_by_its_day_and_an_ambiguous_column_is_not_chosen():
    sql, edits = repaired("SELECT count(*) FROM outages", "How many outages in March 2024?")
    assert edits == []  # two timestamps, neither read: which one the question means is not said
    sql, edits = repaired("SELECT count(*) FROM outages WHERE began_at IS NOT NULL", "How many outages in March 2024?")
    assert "CAST(outages.began_at AS DATE) >=" in sql and edits


def test_a_step_that_does_not_quote_the_range_is_not_filtered():
    question = "How many readings in Q3 2024 came from the meters of the north depot?"
    assert repaired("SELECT meter_id FROM readings", question, step="the meters of the north depot")[1] == []


def test_two_named_ranges_are_no_filter():
    assert repaired("SELECT sum(kwh) FROM readings", "How much more in H2 than in H1 2024?")[1] == []


def dated_lake(tmp_path, documents: dict[str, str] | None = None):
    from lakeplanner import Lake

    raw = tmp_path / "raw"
    raw.mkdir()
    rows = "".join(f"M{n % 4},2024-{1 + n % 12:02d}-{1 + n % 28:02d},{n}.5\n" for n in range(48))
    (raw / "readings.csv").write_text("meter_id,read_on,kwh\n" + rows)
    for name, text in (documents or {}).items():
        (raw / name).write_text(text)
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(raw)
    return lake


def never_called(messages, schema):
    raise AssertionError("a question about a period the lake holds nothing of needs no model call")


def test_a_period_the_lake_holds_nothing_of_abstains_at_once_and_names_what_it_holds(tmp_path):
    from lakeplanner.llm import LLM
    from lakeplanner.llm.fake import FakeBackend

    lake = dated_lake(tmp_path)
    [read_on] = [f for f in lake.contract.fields if f.column == "read_on"]
    assert (read_on.first, read_on.last) == ("2024-01-01", "2024-12-24")
    for question in ("What was the average kWh read in 2023?", "How many readings in Q1 2025?"):
        answer = lake.ask(question, llm=LLM(FakeBackend(never_called)))
        assert answer.abstained and "2024-01-01 to 2024-12-24" in answer.reason, answer.reason
        assert answer.nodes == []


def test_a_period_only_the_documents_name_is_not_gated(tmp_path):
    from lakeplanner.question.coverage import period_gap

    lake = dated_lake(tmp_path, {"tariffs.md": "# Tariffs\n\nIn 2023 the night tariff was 0.19 per kWh.\n"})
    assert [s.years for s in lake.contract.sources if s.kind == "documents"] == [[2023]]
    assert period_gap(read_question("What was the night tariff in 2023?"), lake.contract) is None
    assert period_gap(read_question("How many readings in 2022?"), lake.contract) is not None
    assert period_gap(read_question("How many readings after 2025-01-01?"), lake.contract) is None
    assert period_gap(read_question("How many readings in March 2024?"), lake.contract) is None


def test_two_compared_halves_are_read_once_each_and_subtracted(tmp_path):
    import json

    from lakeplanner.llm import LLM
    from lakeplanner.llm.fake import FakeBackend

    lake = dated_lake(tmp_path)
    question = "How much higher was the total kWh in H2 than in H1 2024?"
    plan = {
        "nodes": [
            {
                "question": question,
                "tool": "sql",
                "label": "$var_1",
                "source": "readings",
                "should_expose_answer": True,
                "answer_description": "the difference",
            }
        ]
    }
    replies = {
        "GeneratedPlan": plan,
        "SqlDraft": {"sql": "SELECT sum(kwh) AS total FROM readings WHERE read_on >= '2024-07-01'"},
        "Draft": {"answer": "0", "sentence": "", "sources": ["E1"], "abstain": False},
    }
    backend = FakeBackend(lambda messages, schema: json.dumps(replies.get((schema or {}).get("title"), {})))
    answer = lake.ask(question, llm=LLM(backend))
    halves = {r["period"]: r["total"] for r in answer.nodes[0].rows}
    rows = [(1 + n % 12, n + 0.5) for n in range(48)]
    second, first = (sum(k for m, k in rows if m > 6), sum(k for m, k in rows if m <= 6))
    assert halves == {"H2": second, "H1 2024": first}
    assert float(answer.value) == pytest.approx(second - first), answer.text
