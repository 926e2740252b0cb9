"""Text columns that hold dates, timestamps or formatted numbers are typed at ingest, whole or not at all."""

import datetime as dt

import pyarrow as pa

from lakeplanner.ingest.typed import typed_column, typed_text_columns

UTC = dt.UTC


def typed(values):
    return typed_column(pa.array(values, pa.string()))


def test_timestamps_with_a_zone_or_offset_become_utc_instants():
    out = typed(["2024-01-08T11:59:00Z", "2024-03-05T08:15:00+01:00", None])
    assert out.type == pa.timestamp("us", tz="UTC")
    assert out.to_pylist()[:2] == [
        dt.datetime(2024, 1, 8, 11, 59, tzinfo=UTC),
        dt.datetime(2024, 3, 5, 7, 15, tzinfo=UTC),
    ]


def test_naive_timestamps_stay_wall_clock_and_mixed_ones_stay_text():
    assert typed(["2024-01-08 11:59", "2024-01-09T10:00:00"]).type == pa.timestamp("us")
    assert typed(["2024-01-08T11:59:00Z", "2024-01-09T10:00:00"]) is None


def test_dates_in_one_common_format_per_column():
    assert typed(["14 March 2016", "2 May 2019"]).to_pylist() == [dt.date(2016, 3, 14), dt.date(2019, 5, 2)]
    assert typed(["Mar 14, 2016", "May 2, 2019"]).to_pylist() == [dt.date(2016, 3, 14), dt.date(2019, 5, 2)]
    assert typed(["2016-03-14", "2019-05-02"]).type == pa.date32()
    assert typed(["03/14/2016", "05/02/2019"]).to_pylist() == [dt.date(2016, 3, 14), dt.date(2019, 5, 2)]
    assert typed(["14.03.2016", "02.05.2019"]).to_pylist() == [dt.date(2016, 3, 14), dt.date(2019, 5, 2)]


def test_day_and_month_order_nothing_settles_stays_text():
    assert typed(["03/04/2016", "05/02/2019"]) is None
    assert typed(["14 March 2016", "2016-05-02"]) is None  # two formats in one column


def test_formatted_numbers_become_numbers():
    assert typed(["1,234.50", "12.00", "(350.25)"]).to_pylist() == [1234.5, 12.0, -350.25]
    assert typed(["$1,234", "$56"]).to_pylist() == [1234, 56]
    assert typed(["EUR 1,200.00", "EUR 80.50"]).type == pa.float64()


def test_codes_and_mixed_currencies_stay_text():
    assert typed(["00123", "00456"]) is None  # a leading zero: a code, not a number
    assert typed(["12", "34"]) is None  # plain digits are the readers' to type
    assert typed(["$1,234", "€56"]) is None
    assert typed(["1,234.50", "n/a"]) is None


def test_provenance_and_typed_columns_are_left_alone():
    table = pa.table({"_lp_file": ["2024-01-01"], "n": [1], "when": ["2024-01-08T11:59:00Z"]})
    out = typed_text_columns(table)
    assert out.schema.field("_lp_file").type == pa.string() and out.schema.field("n").type == pa.int64()
    assert out.schema.field("when").type == pa.timestamp("us", tz="UTC")
