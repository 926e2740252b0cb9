"""Financial-report grids (*.report.csv) become one long, typed table through the normal ingest."""

import csv

import pytest

from lakeplanner import Lake
from lakeplanner.errors import BadSourceError
from lakeplanner.ingest.report_tables import normalize_report, parse_cell
from lakeplanner.question.headers import scale_of

GRID = [
    ["", "", "Years Ended September 30,", ""],
    ["", "2019", "2018", "2017"],
    ["(in millions)", "", "", ""],
    ["Revenue:", "", "", ""],
    ["Fixed Price", "$  1,452.4", "$  1,146.2", "$  1,036.9"],
    ["Other", "(44.1)", "—", "70.8"],
    ["Margin", "12.5%", "11%", ""],
]


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("$  1,452.4", 1452.4, "$"),
        ("(1,234)", -1234.0, ""),
        ("$ (5.2)", -5.2, "$"),
        ("-$3", -3.0, "$"),
        ("12.5%", 12.5, "%"),
        ("(0.6)%", -0.6, "%"),
        ("−7", -7.0, ""),
        ("—", None, ""),
        ("", None, ""),
        ("n/a", None, ""),
        ("Net 30 days", None, ""),
        ("2019", 2019.0, ""),
    ],
)
def test_printed_numbers_parse_with_sign_and_unit(text, value, unit):
    cell = parse_cell(text)
    assert (cell.value, cell.unit) == (value, unit)


def test_scale_words():
    assert scale_of(["(in millions)"]) == "million"
    assert scale_of(["$'000"]) == "thousand"
    assert scale_of(["£m"]) == scale_of(["€m"]) == "million"
    assert scale_of(["£'000"]) == "thousand"
    assert scale_of(["In thousands, except per share"]) == "thousand"
    assert scale_of(["Total"]) == ""
    assert scale_of(["Number of shares (1,000)"]) == "thousand"
    assert scale_of(["(1,000)"]) == ""  # a negative cell, not a scale


def test_grid_becomes_a_row_per_line_item_and_year():
    table = normalize_report(GRID, "sales.report.csv").to_pylist()
    assert table[0] == {
        "section": "Revenue",
        "line_item": "Fixed Price",
        "column_label": "Years Ended September 30, 2019",
        "year": 2019,
        "value": 1452.4,
        "unit": "$",
        "scale": "million",
        "text": "$  1,452.4",
    }
    other = {r["year"]: r["value"] for r in table if r["line_item"] == "Other"}
    assert other == {2019: -44.1, 2018: None, 2017: 70.8}
    margin = [r for r in table if r["line_item"] == "Margin"]
    assert [(r["value"], r["unit"], r["scale"]) for r in margin] == [(12.5, "%", "percent"), (11.0, "%", "percent")]


def test_a_merged_header_cell_labels_the_columns_it_spans():
    from lakeplanner.ingest.report_tables import column_labels

    header = [
        ["", "Financial assets", "", "Financial liabilities", ""],
        ["", "2019", "2018", "2019", "2018"],
    ]
    assert column_labels(header, 5) == [
        "Financial assets 2019",
        "Financial assets 2018",
        "Financial liabilities 2019",
        "Financial liabilities 2018",
    ]
    shares = [
        ["", "Fiscal Year 2018", "", "Fiscal Year 2017", ""],
        ["", "Net Sales", "% of Total", "Net Sales", "% of Total"],
        ["Grocery", "1,234", "56%", "1,200", "55%"],
    ]
    rows = normalize_report(shares, "sales.report.csv").to_pylist()
    assert [(r["column_label"], r["year"]) for r in rows[:2]] == [
        ("Fiscal Year 2018 Net Sales", 2018),
        ("Fiscal Year 2018 % of Total", None),  # the year a merged label lends is not the column's own
    ]
    unlabelled_below = [["", "Total", "", "Change"], ["", "$", "", "%"]]
    assert column_labels(unlabelled_below, 4) == ["Total $", "column 3", "Change %"]


def test_a_grid_without_value_columns_is_refused():
    with pytest.raises(BadSourceError, match="label column"):
        normalize_report([["only"], ["labels"]], "x.report.csv")


def test_report_csv_is_ingested_as_an_iceberg_table(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    with (source / "sales.report.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows(GRID)
    (source / "notes.md").write_text("# Notes\n\nSales by contract type are shown in millions.\n")
    lake = Lake.create(tmp_path / "lake")
    report = lake.ingest(source)
    assert report.bad_files == []
    assert lake.table_names() == ["sales"]
    [[total]] = [list(r.values()) for r in lake.sql("SELECT sum(value) FROM sales WHERE year = 2019").to_pylist()]
    assert total == pytest.approx(1452.4 - 44.1 + 12.5)
    fields = {f.path for f in lake.contract.fields_of("sales")}
    assert {"line_item", "year", "value", "scale", "text"} <= fields
    lake.close()


def test_stacked_tables_label_each_block_by_its_own_header():
    grid = [
        ["", "", "As of December 31, 2019", ""],
        ["", "Amortized", "Unrealized", "Fair"],
        ["", "Cost", "Gains", "Value"],
        ["U.S. government obligations", "99,700", "—", "97,719"],
        ["", "", "As of December 31, 2018", ""],
        ["", "Amortized", "Unrealized", "Fair"],
        ["", "Cost", "Gains", "Value"],
        ["U.S. government obligations", "97,223", "416", "91,203"],
    ]
    rows = normalize_report(grid, "investments.report.csv").to_pylist()
    gains = [(r["year"], r["column_label"], r["value"]) for r in rows if "Gains" in r["column_label"]]
    assert gains[0] == (2019, "As of December 31, 2019 Unrealized Gains", None)  # "—": nil, kept
    assert gains[1:] == [(2018, "As of December 31, 2018 Unrealized Gains", 416.0)]
    assert {(r["year"], r["value"]) for r in rows if r["column_label"].endswith("Cost")} == {
        (2019, 99700.0),
        (2018, 97223.0),
    }
    assert all(r["line_item"] == "U.S. government obligations" for r in rows)


def test_a_block_of_years_inside_the_body_relabels_the_columns():
    grid = [
        ["", "Fiscal 2019", ""],
        ["", "Q1", "Total"],
        ["Gross margin", "40.1%", "40.6%"],
        ["", "Fiscal 2018", ""],
        ["", "Q1", "Total"],
        ["Gross margin", "42.5%", "41.2%"],
    ]
    rows = normalize_report(grid, "quarters.report.csv").to_pylist()
    assert [(r["year"], r["column_label"], r["value"]) for r in rows] == [
        (2019, "Fiscal 2019 Q1", 40.1),
        (2019, "Fiscal 2019 Total", 40.6),
        (2018, "Fiscal 2018 Q1", 42.5),
        (2018, "Fiscal 2018 Total", 41.2),
    ]


def test_label_rows_above_a_period_row_head_the_stacked_table_too():
    grid = [
        ["", "September 29,", "July 7,"],
        ["", "2019", "2019"],
        ["High", "$91.30", "$87.84"],
        ["", "September 30,", "July 8,"],
        ["", "2018", "2018"],
        ["High", "$93.98", "$92.46"],
    ]
    rows = normalize_report(grid, "prices.report.csv").to_pylist()
    assert [(r["column_label"], r["year"]) for r in rows[2:]] == [("September 30, 2018", 2018), ("July 8, 2018", 2018)]


def test_section_titles_and_wrapped_dates_in_value_columns_are_not_new_tables():
    grid = [
        ["", "2019", "2018"],
        ["Revenue", "32,582", "32,041"],
        ["", "Expenses:", ""],
        ["Sales and marketing", "7,398", "7,213"],
        ["Maturity date", "30/7/2021~", "28/6/2019~"],
        ["", "11/4/2024", "8/12/2023"],
        ["Hedge ratio", "1:1", "1:1"],
    ]
    rows = normalize_report(grid, "notes.report.csv").to_pylist()
    assert {r["column_label"] for r in rows} == {"2019", "2018"}
    assert [r["value"] for r in rows if r["line_item"] == "Sales and marketing"] == [7398.0, 7213.0]


def test_a_column_comparing_two_years_holds_no_year():
    grid = [
        ["", "Years Ended", "", "2019 vs. 2018"],
        ["", "July 27, 2019", "July 28, 2018", "Variance in Dollars"],
        ["Product", "$39,005", "$36,709", "$2,296"],
    ]
    rows = normalize_report(grid, "revenue.report.csv").to_pylist()
    assert [r["year"] for r in rows] == [2019, 2018, None]
