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
