"""Question-type templates for change, percentage change, average and ratio over two named years."""

import pytest

from lakeplanner.execute.arithmetic import values_by_year, year_arithmetic
from lakeplanner.execute.results import NodeResult
from lakeplanner.question import read_question


def framed(question):
    """The question as a report-grid lake reads it (these are TAT-QA shapes)."""
    return read_question(question, ("report_grid",))


def result(question, rows):
    return NodeResult(
        label="$var_1",
        tool="sql",
        source="financials",
        question=question,
        rows=rows,
        exposed=True,
        years=read_question(question).years,  # the step frame's years, as Plan.framed gives its node
    )


BY_YEAR = [result("other by year", [{"value": 44.1, "year": 2019}, {"value": 56.7, "year": 2018}])]
THREE_YEARS = [
    result("other", [{"value": 1.5, "year": 2017}, {"value": 2.5, "year": 2018}, {"value": 4.0, "year": 2019}])
]
ONE_NODE_PER_YEAR = [
    result("write-offs in the year 2018", [{"_col_0": 1.2}]),
    result("write-offs in 2019", [{"_col_0": 1.6}]),
]


@pytest.mark.parametrize(
    ("question", "results", "expression"),
    [
        ("What was the change in Other in 2019 from 2018?", BY_YEAR, "44.1 - 56.7"),
        ("What was the change in Other from 2019 to 2018?", BY_YEAR, "56.7 - 44.1"),
        ("What is the percentage change in Other from 2018 to 2019?", BY_YEAR, "(44.1 - 56.7) / 56.7 * 100"),
        ("What was the average Other for 2018 and 2019?", BY_YEAR, "(56.7 + 44.1) / 2"),
        ("What was the absolute percentage change in Other between 2018 and 2019?", BY_YEAR, "44.1 - 56.7"),
        ("What is the ratio of Other in fiscal 2019 to fiscal 2018?", BY_YEAR, "44.1 / 56.7"),
        ("What is the ratio of Other in 2018 to 2019?", BY_YEAR, "56.7 / 44.1"),
        ("What was the change in the Other ratio from 2018 to 2019?", BY_YEAR, "44.1 - 56.7"),
        ("What was the change in write-offs between 2018 and 2019?", ONE_NODE_PER_YEAR, "1.6 - 1.2"),
        ("What was the average Other between 2018-2019?", BY_YEAR, "(56.7 + 44.1) / 2"),
        ("What was the average Other between 2017-2019?", THREE_YEARS, "(1.5 + 2.5 + 4) / 3"),
        ("What was the change in Other from 2017 to 2019?", THREE_YEARS, "4 - 1.5"),  # the ends, not a span
        ("What was Other in 2019?", BY_YEAR, None),  # nothing to compute
        ("What was the change in Other from 2017 to 2019?", BY_YEAR, None),  # 2017 not retrieved
    ],
)
def test_templates(question, results, expression):
    assert year_arithmetic(framed(question), results) == expression


def test_two_values_for_one_year_are_ambiguous():
    mixed = [
        result("items", [{"value": 1.0, "year": 2019}, {"value": 2.0, "year": 2019}, {"value": 3.0, "year": 2018}])
    ]
    assert values_by_year(mixed) is None
    assert year_arithmetic(framed("What was the change from 2018 to 2019?"), mixed) is None


@pytest.mark.parametrize(
    ("question", "years"),
    [
        ("What is the revenue in 2019 and 2018 respectively?", [2019, 2018]),
        ("What is the EPS for fiscal years 2019 to 2017 respectively?", [2019, 2018, 2017]),
        ("What was the change in Other from 2017 to 2019?", []),  # arithmetic, not a list
        ("What was Other in 2019 and 2018?", []),  # nothing asks for a list
    ],
)
def test_a_per_year_list_names_its_years_in_order(question, years):
    from lakeplanner.execute.arithmetic import asks_per_year

    assert (list(framed(question).listed_years) if asks_per_year(framed(question)) else []) == years


def test_per_year_values_need_every_listed_year():
    from lakeplanner.execute.arithmetic import per_year_values

    assert per_year_values(framed("Other in 2018 and 2019, respectively?"), BY_YEAR) == [56.7, 44.1]
    assert per_year_values(framed("Other in 2017 and 2019, respectively?"), BY_YEAR) is None


PAST_DUE = [
    result(
        "low risk 1-90 and 91-180 days past due",
        [
            {"line_item": "Low risk country", "column_label": "91-180 days past due", "value": 318.0},
            {"line_item": "Low risk country", "column_label": "1-90 days past due", "value": 1540.0},
        ],
    )
]
PRICES = [result("high price", [{"date": "July 7, 2019", "high": 12.7}, {"date": "September 29, 2019", "high": 13.2}])]


@pytest.mark.parametrize(
    ("question", "results", "expression"),
    [
        ("What is the difference between 1-90 and 91-180 days past due in low risk country?", PAST_DUE, "1540 - 318"),
        ("What is the ratio of 91-180 to 1-90 days past due?", PAST_DUE, "318 / 1540"),
        (
            "What is the percentage increase in the high price from July 7, 2019 to September 29, 2019?",
            PRICES,
            "(13.2 - 12.7) / 12.7 * 100",
        ),
        ("What was the average high price on July 7, 2019 and September 29, 2019?", PRICES, "(12.7 + 13.2) / 2"),
        ("What percentage of 1-90 days past due is 91-180 days past due?", PAST_DUE, "318 / 1540 * 100"),
        ("What is the proportion of 91-180 over 1-90 days past due?", PAST_DUE, "318 / 1540"),
        ("What was the high price on July 7, 2019?", PRICES, None),  # nothing to compute
        ("What is the difference between high and low risk?", PAST_DUE, None),  # neither row is named
    ],
)
def test_two_named_items(question, results, expression):
    from lakeplanner.execute.arithmetic import item_arithmetic

    assert item_arithmetic(framed(question), results) == expression


def test_three_rows_are_not_two_items():
    from lakeplanner.execute.arithmetic import item_arithmetic

    rows = [*PAST_DUE[0].rows, {"line_item": "Low risk country", "column_label": "Current", "value": 9.0}]
    assert item_arithmetic(framed("What is the difference between 1-90 and 91-180?"), [result("all", rows)]) is None


def test_an_average_naming_no_year_is_over_every_year_held():
    from lakeplanner.execute.arithmetic import all_years_average

    assert all_years_average(framed("What was the average realized losses?"), THREE_YEARS) == "(1.5 + 2.5 + 4) / 3"
    assert all_years_average(framed("What is the weighted-average exchange rate?"), THREE_YEARS) is None  # a label
    assert all_years_average(framed("What was the average Other in 2019?"), THREE_YEARS) is None  # one year named


def test_a_change_naming_no_year_is_between_the_two_years_held():
    from lakeplanner.execute.arithmetic import asks_every_year

    assert year_arithmetic(framed("What was the change in the amount for Ireland?"), BY_YEAR) == "44.1 - 56.7"
    assert year_arithmetic(framed("What is the percentage change in Other?"), BY_YEAR) == "(44.1 - 56.7) / 56.7 * 100"
    assert asks_every_year(framed("What was the change in the amount for Ireland?"))
    assert year_arithmetic(framed("What was the change in Other?"), THREE_YEARS) is None  # which two?
    assert year_arithmetic(framed("Why did Other decline?"), BY_YEAR) is None  # a reason
    assert year_arithmetic(framed("What is the difference between A and B?"), BY_YEAR) is None  # two items


@pytest.mark.parametrize(
    ("question", "year"),
    [
        ("In which year was Other higher?", 2019),
        ("In which year was Other the lowest?", 2017),
        ("Between 2017 and 2018, which year has higher Other?", 2018),
        ("In which year was Other less than 2.0?", None),  # a threshold, not a comparison
        ("What was Other in 2019?", None),
    ],
)
def test_the_year_of_the_largest_or_smallest_value(question, year):
    from lakeplanner.execute.arithmetic import extreme_year

    assert extreme_year(framed(question), THREE_YEARS) == year


def test_an_infinite_or_missing_figure_is_no_operand():
    """A SQL division by zero yields inf or NaN: such a cell is skipped, not computed with."""
    from lakeplanner.execute.arithmetic import item_arithmetic

    broken = [
        result(
            "ratios",
            [{"line_item": "1-90 days past due", "value": float("inf")}, {"line_item": "91-180", "value": 318.0}],
        )
    ]
    assert item_arithmetic(framed("What is the percentage change from 1-90 days past due to 91-180?"), broken) is None
    assert (
        year_arithmetic(
            framed("What was the change from 2018 to 2019?"), [result("x", [{"value": float("nan"), "year": 2019}])]
        )
        is None
    )


def test_a_year_aliased_by_its_column_orders_the_values():
    """`YEAR(dispatched_at) AS dispatch_year`: any year-named column holds the period, not a figure."""
    rows = [{"dispatch_year": 2024, "n": 115}, {"dispatch_year": 2023, "n": 85}]
    question = framed("By how much did the number of shipments change from 2023 to 2024?")
    assert year_arithmetic(question, [result("shipments per year", rows)]) == "115 - 85"


def test_two_rows_read_by_the_keys_the_question_names_are_told_apart_by_those_keys():
    from lakeplanner.execute.arithmetic import item_arithmetic

    def weight(key, kg):
        return NodeResult(
            label="$var_1",
            tool="sql",
            source="shipments",
            question=f"weight of {key}",
            rows=[{"weight_kg": kg}],
            row_keys={"shipments": [key]},
            exposed=True,
        )

    both = [weight("SHP-20023", 4033.5), weight("SHP-20013", 6901.0)]
    heavier = read_question("How much heavier is shipment SHP-20013 than shipment SHP-20023?")
    assert item_arithmetic(heavier, both) == "6901 - 4033.5"
    trucks = read_question("How many more kilograms can truck SHP-20023 carry than truck SHP-20013?")
    assert item_arithmetic(trucks, both) == "4033.5 - 6901"
    unnamed = read_question("How much heavier is the first shipment than the second?")
    assert item_arithmetic(unnamed, both) is None
