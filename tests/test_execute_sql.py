"""SQL node rules without an LLM: binding as literals, the statement checks, row keys, pushdown."""

import pytest
from pyiceberg import expressions as ice
from sqlglot import exp

from lakeplanner.contract.models import FieldType
from lakeplanner.errors import SqlError
from lakeplanner.execute.engines import iceberg_filter, pushdown
from lakeplanner.execute.sql.statement import bind, checked, with_row_keys
from lakeplanner.plan.model import PlanNode
from lakeplanner.policy.readonly import parse_select
from lakeplanner.question import QuestionFrame

TABLES = {
    "customers": {"customer_id": FieldType.string, "name": FieldType.string, "segment": FieldType.string},
    "invoices": {"invoice_id": FieldType.string, "customer_id": FieldType.string, "total": FieldType.number},
}


def test_bound_values_enter_as_literals_never_as_sql():
    hostile = "C1'); DROP TABLE customers; --"
    statement = bind(
        "SELECT name FROM customers WHERE customer_id IN ($var_1.customer_id)",
        {"$var_1": {"customer_id": ["C001", hostile]}},
    )
    [in_list] = list(statement.find_all(exp.In))
    assert [e.this for e in in_list.expressions] == ["C001", hostile]
    assert not list(statement.find_all(exp.Drop))
    assert "'C1''); DROP TABLE customers; --'" in statement.sql("duckdb")


def test_equality_with_several_bound_values_becomes_in():
    statement = bind(
        "SELECT * FROM invoices WHERE customer_id = $var_2.customer_id", {"$var_2": {"customer_id": ["a", "b"]}}
    )
    assert "customer_id IN ('a', 'b')" in statement.sql("duckdb")


def test_an_empty_binding_matches_nothing():
    statement = bind(
        "SELECT * FROM invoices WHERE customer_id IN ($var_1.customer_id)", {"$var_1": {"customer_id": []}}
    )
    assert "IN (NULL)" in statement.sql("duckdb")


def test_unbound_reference_is_named():
    with pytest.raises(SqlError, match=r"\$var_3.customer_id is not bound"):
        bind("SELECT * FROM invoices WHERE customer_id IN ($var_3.customer_id)", {})


@pytest.mark.parametrize(
    "sql, message",
    [
        ("DELETE FROM customers", "only SELECT"),
        ("SELECT 1; SELECT 2", "2 statements"),
        ("SELEC name FROM customers", "does not parse"),
        ("SELECT name FROM customers WHERE segment = 'Enterprise (in millions", "does not parse"),  # cut off
    ],
)
def test_only_one_select_may_run(sql, message):
    with pytest.raises(SqlError, match=message):
        parse_select(sql)


def test_checks_tables_columns_and_adds_a_limit():
    with pytest.raises(SqlError, match="may not read"):
        checked(parse_select("SELECT * FROM secrets"), TABLES, ["customers"])
    with pytest.raises(SqlError, match="unknown name"):
        checked(parse_select("SELECT phone FROM customers"), TABLES, ["customers"])
    limited = checked(parse_select("SELECT name FROM customers"), TABLES, ["customers"], limit=50)
    assert limited.args["limit"].expression.this == "50"
    capped = checked(parse_select("SELECT name FROM customers LIMIT 100000"), TABLES, ["customers"], limit=50)
    assert capped.args["limit"].expression.this == "50"


def test_unnamed_aggregates_are_named_for_what_they_compute():
    sql = "SELECT c.name, count(i.invoice_id), count(*), sum(i.total) AS total, count(DISTINCT c.segment), "
    sql += "sum(i.total) * 2, sum(i.total * 2) FROM customers c JOIN invoices i ON i.customer_id = c.customer_id "
    sql += "GROUP BY c.name ORDER BY count(*) DESC"
    statement = checked(parse_select(sql), TABLES, TABLES)
    names = statement.named_selects
    assert names[:5] == ["name", "count_invoice_id", "count_rows", "total", "count_distinct_segment"]
    assert all(n.startswith("_col_") for n in names[5:])  # arithmetic on or in an aggregate keeps its position name
    assert 'ORDER BY "count_rows" DESC' in statement.sql("duckdb")


def test_output_columns_sharing_a_name_are_told_apart():
    self_join = "SELECT mine.total, theirs.total, mine.total - theirs.total FROM invoices mine JOIN invoices theirs "
    self_join += "ON mine.customer_id = theirs.customer_id WHERE mine.invoice_id = 'I1' AND theirs.invoice_id = 'I2'"
    assert checked(parse_select(self_join), TABLES, TABLES).named_selects[:2] == ["mine_total", "theirs_total"]
    computed = "SELECT sum(total) AS figure, avg(total) AS figure, count(*) AS n FROM invoices"
    assert checked(parse_select(computed), TABLES, TABLES).named_selects == ["figure_1", "figure_2", "n"]


def test_row_keys_follow_rows_and_aggregates():
    keys = {"customers": ["customer_id"], "invoices": ["invoice_id"]}
    plain = with_row_keys(
        checked(parse_select("SELECT name FROM customers ORDER BY name LIMIT 1"), TABLES, TABLES), keys
    )
    assert "CAST(customers.customer_id AS TEXT) AS _lp_keys_customers" in plain.sql("duckdb")
    grouped = with_row_keys(
        checked(parse_select("SELECT segment, count(*) AS n FROM customers GROUP BY segment"), TABLES, TABLES), keys
    )
    assert "ARRAY_AGG(DISTINCT CAST" in grouped.sql("duckdb")


def test_single_table_predicates_are_pushed_down():
    statement = checked(
        parse_select(
            "SELECT c.name, i.total FROM invoices i JOIN customers c ON i.customer_id = c.customer_id "
            "WHERE i.total > 100 AND c.segment IN ('SMB', 'Public') AND i.total + 1 > 2"
        ),
        TABLES,
        TABLES,
    )
    plan = pushdown(statement)
    invoices = plan["i"]
    assert invoices[0] == "invoices" and invoices[1] == {"customer_id", "total"}
    assert "GreaterThan(term=Reference(name='total')" in repr(invoices[2])
    assert "In(" in repr(plan["c"][2]) and "segment" in repr(plan["c"][2])


def test_flipped_comparison_is_normalised():
    condition = parse_select("SELECT * FROM t WHERE 5 < x").args["where"].this
    assert iceberg_filter(condition) == ("", ice.GreaterThan("x", 5))


def test_a_bare_reference_names_the_only_bound_column():
    statement = bind("SELECT * FROM invoices WHERE invoice_id IN ($var_1)", {"$var_1": {"invoice_id": ["INV-1"]}})
    assert "invoice_id IN ('INV-1')" in statement.sql("duckdb")


def test_execution_settings_come_from_the_execute_table(tmp_path, monkeypatch):
    from lakeplanner.execute.settings import ExecSettings

    (tmp_path / "lakeplanner.toml").write_text('[llm]\nthreads = 3\n[execute]\nmode = "serial"\nwindow = 4\n')
    monkeypatch.setenv("LAKEPLANNER_CONFIG", str(tmp_path / "lakeplanner.toml"))
    monkeypatch.setenv("LAKEPLANNER_EXEC_WINDOW", "5")
    settings = ExecSettings()
    assert (settings.mode, settings.window) == ("serial", 5)


@pytest.mark.parametrize(
    ("literal", "fixed"),
    [
        ("Write-offs", "Write-offs, net of recoveries"),
        ("total sales", "Total sales"),
        ("Totl sales", "Total sales"),
        ("Fixed Price", None),  # held as written
        ("Goodwill", None),  # nothing close: left for the engine to match nothing
    ],
)
def test_a_filter_literal_is_pointed_at_a_held_value(literal, fixed):
    from lakeplanner.execute.sql.values import closest_value

    held = ["Fixed Price", "Other", "Total sales", "Write-offs, net of recoveries"]
    assert closest_value(literal, held) == fixed


def test_category_literals_are_fixed_in_the_statement_but_bound_values_kept():
    from lakeplanner.execute.sql.rewrites import fix_category_literals

    statement = parse_select(
        "SELECT value FROM financials WHERE line_item = 'Write-offs' AND year = 2019 "
        "OR line_item IN ('total sales', 'Unbound')"
    )
    held = {"financials.line_item": ["Total sales", "Write-offs, net of recoveries", "Unbounded debt"]}
    edits = fix_category_literals(statement, held, keep={"Unbound"})
    sql = statement.sql("duckdb")
    assert "line_item = 'Write-offs, net of recoveries'" in sql and "IN ('Total sales', 'Unbound')" in sql
    assert len(edits) == 2


def test_a_category_filter_no_row_holds_is_dropped_where_earlier_results_choose_the_rows():
    """Documents tell of the dispute; the status column holds no 'disputed': the condition would empty
    the step whatever rows the search found."""
    from lakeplanner.execute.sql.rewrites import drop_unheld_category_filters

    held = {"shipments.state": ["delivered", "in transit", "lost"]}
    statement = parse_select(
        "SELECT carrier FROM shipments WHERE doc_id IN ('D1', 'D2') AND state = 'damaged' AND state = 'Lost'"
    )
    edits = drop_unheld_category_filters(statement, held, keep={"D1", "D2"})
    assert statement.sql("duckdb") == (
        "SELECT carrier FROM shipments WHERE doc_id IN ('D1', 'D2') AND state = 'Lost'"
    )  # 'Lost' is close to a held value: fix_category_literals spells it
    assert edits == ["state = 'damaged' dropped (no row holds it; earlier results choose the rows)"]
    alone = parse_select("SELECT carrier FROM shipments WHERE state = 'damaged'")
    assert drop_unheld_category_filters(alone, held) == []  # the only filter: the step's retry tells the values


def test_an_aggregate_over_compared_values_is_grouped_by_them():
    from lakeplanner.execute.sql.rewrites import group_compared_values

    statement = parse_select(
        "SELECT SUM(value) AS v FROM financials WHERE line_item = 'Total' AND year IN (2018, 2019)"
    )
    assert group_compared_values(statement) and "GROUP BY year" in statement.sql("duckdb")
    assert "SELECT SUM(value) AS v, year" in statement.sql("duckdb")
    for untouched in (
        "SELECT SUM(value) FROM financials WHERE year IN (2018, 2019) GROUP BY line_item",
        "SELECT value FROM financials WHERE year IN (2018, 2019)",
        "SELECT SUM(value) FROM financials WHERE year = 2019",
    ):
        assert group_compared_values(parse_select(untouched)) == []
    bound = parse_select("SELECT SUM(total) FROM invoices WHERE customer_id IN ('C1', 'C2')")
    assert group_compared_values(bound, keep={"C1", "C2"}) == []


def test_values_summed_together_are_grouped_only_when_the_question_compares_them():
    from lakeplanner.execute.sql.rewrites import group_compared_values
    from lakeplanner.question import read_question

    sql = "SELECT SUM(total_amount) FROM invoices WHERE currency = 'EUR' AND status IN ('open', 'overdue')"
    one_total = "What is the total amount of EUR invoices that are not yet paid (status open or overdue)?"
    assert group_compared_values(parse_select(sql), read_question(one_total)) == []
    compared = parse_select(sql)
    assert group_compared_values(compared, read_question("What is the difference between open and overdue amounts?"))
    assert "GROUP BY status" in compared.sql("duckdb")


def test_a_row_the_question_names_but_the_step_lost_is_found():
    from lakeplanner.execute.sql.values import lost_values

    held = {
        "financials.section": ["Cost of revenue", "Includes stock-based compensation of"],
        "financials.line_item": ["Total cost of revenue", "Services", "Maintenance", "Total"],
        "financials.column_label": ["2019 Amount", "2018 Amount"],
    }
    asked = "What is the average total cost of revenue for 2018 and 2019?"
    lost = lost_values(
        held, QuestionFrame(text="average of the value column for 2018 and 2019"), QuestionFrame(text=asked)
    )
    assert lost == {"financials.line_item": ["Total cost of revenue"]}  # not the broader section
    assert (
        lost_values(held, QuestionFrame(text="total cost of revenue in 2018 and 2019"), QuestionFrame(text=asked)) == {}
    )
    assert (
        lost_values(
            held,
            QuestionFrame(text="the value of Services in 2019"),
            QuestionFrame(text="What was Services worth in 2019?"),
        )
        == {}
    )


def test_a_date_string_against_a_zoned_timestamp_is_filtered_by_duckdb_not_pushed_down(tmp_path):
    """pyiceberg cannot bind '2024-01-01' to a timestamp-with-zone column; that part of the filter is
    left to DuckDB instead of failing the scan."""
    from lakeplanner import Lake

    source = tmp_path / "src"
    source.mkdir()
    rows = ["id,sent_at,status"] + [
        f"S{i},2024-0{1 + i % 3}-0{1 + i % 7}T08:15:00+01:00,{'late' if i % 2 else 'ok'}" for i in range(9)
    ]
    rows += ["S9,2023-12-31T23:30:00Z,late"]
    (source / "shipments.csv").write_text("\n".join(rows) + "\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(source)
    counted = lake.sql("SELECT count(*) AS n FROM shipments WHERE sent_at >= '2024-01-01' AND status = 'late'")
    assert counted.column("n").to_pylist() == [4]
    lake.close()


def test_the_per_year_example_uses_the_lakes_own_period_column():
    from lakeplanner.contract.models import Contract, FieldEntry, FieldType
    from lakeplanner.execute.sql.prompt import period_example

    def field(source, column, ftype, examples):
        return FieldEntry(
            id=f"{source}.{column}", source=source, path=column, column=column, type=ftype,
            null_rate=0.0, cardinality=3, examples=examples,
        )  # fmt: skip

    contract = Contract(
        fields=[
            field("invoices", "total", FieldType.number, ["10.5"]),
            field("invoices", "issued_on", FieldType.date, ["2024-03-01", "2025-01-02"]),
            field("report", "year", FieldType.integer, ["2019", "2018"]),
            field("carriers", "code", FieldType.string, ["NRTH"]),
        ]
    )
    assert period_example(contract, ["invoices"]) == (
        "`SELECT YEAR(issued_on) AS year, ... WHERE YEAR(issued_on) IN (2024, 2025) GROUP BY year`"
    )
    assert period_example(contract, ["report"]) == "`WHERE year IN (2018, 2019)`"
    assert "year" not in period_example(contract, ["carriers"])


def test_a_column_of_a_table_the_statement_may_join_is_joined_along_its_foreign_key(logistics):
    from lakeplanner.execute.sql.rewrites import with_missing_joins
    from lakeplanner.plan.lake_schema import LakeSchema

    schema = LakeSchema.from_contract(logistics.contract)
    allowed = schema.sql_tables("shipments")
    rail = parse_select("SELECT sum(freight_cost) FROM shipments WHERE mode = 'rail'")
    assert with_missing_joins(rail, schema.tables, allowed, logistics.contract) == [
        "joined carriers for its column mode"
    ]
    assert rail.sql("duckdb") == (
        "SELECT SUM(shipments.freight_cost) FROM shipments JOIN carriers ON shipments.carrier = carriers.carrier_code "
        "WHERE mode = 'rail'"
    )
    assert logistics.sql(checked(rail, schema.tables, allowed).sql("duckdb")).num_rows == 1
    several = parse_select("SELECT name FROM shipments")  # carriers, warehouses and staff name rows: unclear
    assert with_missing_joins(several, schema.tables, allowed, logistics.contract) == []


def test_a_name_a_search_read_is_matched_against_the_column_the_step_names(logistics):
    """The step says "carriers.name in $var_1.answer"; a statement comparing the key column with it
    compares the name column, joined along the foreign key."""
    from lakeplanner.execute.sql.rewrites import with_missing_joins
    from lakeplanner.plan.lake_schema import LakeSchema
    from lakeplanner.plan.model import PlanNode

    node = PlanNode(
        label="$var_2",
        tool="sql",
        source="shipments",
        question="number of shipments of the carrier with carriers.name in $var_1.answer",
    )
    assert node.matched_columns() == {"$var_1.answer": ("carriers", "name")}
    schema = LakeSchema.from_contract(logistics.contract)
    allowed = schema.sql_tables("shipments")
    name = logistics.sql("SELECT name FROM carriers ORDER BY name LIMIT 1").column(0)[0].as_py()
    statement = bind(
        "SELECT COUNT(*) FROM shipments WHERE carrier IN ($var_1.answer)",
        {"$var_1": {"answer": [name]}},
        node.matched_columns(),
    )
    assert with_missing_joins(statement, schema.tables, allowed, logistics.contract) == [
        "joined carriers for its column name"
    ]
    assert "carriers.name IN (" in statement.sql("duckdb")
    assert logistics.sql(checked(statement, schema.tables, allowed).sql("duckdb")).column(0)[0].as_py() > 0
    already = bind(
        "SELECT COUNT(*) FROM shipments AS s JOIN carriers AS c ON s.carrier = c.carrier_code "
        "WHERE c.name IN ($var_1.answer)",
        {"$var_1": {"answer": [name]}},
        node.matched_columns(),
    )
    assert "c.name IN (" in already.sql("duckdb")


def test_a_reference_compared_between_two_bound_values_names_no_table():
    node = PlanNode(label="$var_3", tool="sql", source="t", question="rows with $var_2.x in $var_1.y")
    assert node.matched_columns() == {}


@pytest.mark.parametrize(
    ("sql", "grouped"),
    [
        (
            "SELECT warehouse_id FROM shipments ORDER BY SUM(weight_kg) DESC LIMIT 1",
            "SELECT warehouse_id FROM shipments GROUP BY warehouse_id ORDER BY SUM(weight_kg) DESC LIMIT 1",
        ),
        (
            "SELECT s.carrier AS c, mode, COUNT(*) FROM shipments AS s GROUP BY s.carrier",
            "SELECT s.carrier AS c, mode, COUNT(*) FROM shipments AS s GROUP BY s.carrier, mode",
        ),
        ("SELECT carrier, COUNT(*) FROM shipments GROUP BY carrier", None),  # already grouped
        ("SELECT carrier, SUM(weight_kg) OVER () FROM shipments", None),  # a window needs no group
        ("SELECT carrier FROM shipments WHERE weight_kg > (SELECT AVG(weight_kg) FROM shipments)", None),
    ],
)
def test_a_statement_aggregating_beside_plain_columns_is_grouped_by_them(sql, grouped):
    from lakeplanner.execute.sql.rewrites import group_bare_columns

    statement = parse_select(sql)
    edits = group_bare_columns(statement)
    assert (statement.sql("duckdb") if edits else None) == grouped


def test_a_column_named_without_its_table_is_the_steps_own():
    cited = PlanNode(
        label="$var_2",
        tool="sql",
        source="shipments",
        question="weight of the shipment (shipment_id in $var_1.linked_keys)",
    )
    assert cited.matched_columns() == {"$var_1.linked_keys": ("shipments", "shipment_id")}
    statement = bind(
        "SELECT t1.weight_kg FROM shipments AS t1 JOIN orders AS t2 ON t1.order_ref = t2.order_id "
        "WHERE t2.order_id IN ($var_1.linked_keys)",
        {"$var_1": {"linked_keys": ["SHP-20074", "TRK-101", "ORD-50044"]}},
        cited.matched_columns(),
    )
    assert "t1.shipment_id IN ('SHP-20074', 'TRK-101', 'ORD-50044')" in statement.sql("duckdb")


def test_a_key_compared_with_a_word_its_target_table_holds_reads_the_rows_that_hold_it(logistics):
    """`shipments.carrier = 'rail'`: no carrier code is 'rail'; the carriers' mode column holds it."""
    from lakeplanner.execute.sql.rewrites import fix_key_literals
    from lakeplanner.execute.sql.values import category_values
    from lakeplanner.plan.lake_schema import LakeSchema

    schema = LakeSchema.from_contract(logistics.contract)
    allowed = schema.sql_tables("shipments")
    categories = category_values(
        logistics, logistics.contract, allowed, QuestionFrame(text="total freight cost of rail shipments")
    )
    statement = parse_select(
        "SELECT SUM(freight_cost) FROM shipments AS s WHERE s.carrier = 'Rail' AND year(dispatched_at) = 2024"
    )
    edits = fix_key_literals(statement, categories, logistics.contract, schema.tables)
    assert edits == ["carrier = 'Rail' -> the carriers whose mode is 'rail'"]
    assert "s.carrier IN (SELECT carrier_code FROM carriers WHERE mode = 'rail')" in statement.sql("duckdb")
    total = logistics.sql(checked(statement, schema.tables, allowed).sql("duckdb")).column(0)[0].as_py()
    assert round(total, 2) == 19583.83
    coded = parse_select("SELECT COUNT(*) FROM shipments WHERE carrier = 'ALPR'")  # a key value stays
    assert fix_key_literals(coded, categories, logistics.contract, schema.tables) == []
    kept = parse_select("SELECT COUNT(*) FROM shipments WHERE carrier = 'rail'")  # bound from an earlier step
    assert fix_key_literals(kept, categories, logistics.contract, schema.tables, keep={"rail"}) == []


def test_a_like_on_a_date_or_timestamp_column_matches_its_text():
    from lakeplanner.execute.sql.rewrites import match_dates_as_text

    tables = {
        "trips": {"trip_id": FieldType.string, "left_at": FieldType.timestamp, "due": FieldType.date},
    }
    statement = checked(
        parse_select(
            "SELECT COUNT(*) FROM trips WHERE left_at LIKE '2024%' AND NOT due ILIKE '%-03-%' AND trip_id LIKE 'T%'"
        ),
        tables,
        ["trips"],
    )
    edits = match_dates_as_text(statement, tables)
    sql = statement.sql("duckdb").replace('"', "")
    assert "CAST(trips.left_at AS TEXT) LIKE '2024%'" in sql
    assert "CAST(trips.due AS TEXT) ILIKE '%-03-%'" in sql
    assert "trips.trip_id LIKE 'T%'" in sql  # a text column is left as written
    assert len(edits) == 2


def test_a_value_compared_with_itself_is_dropped_or_replaced_by_the_value():
    from lakeplanner.execute.sql.rewrites import drop_self_cancelling

    statement = parse_select("SELECT total, (total - total) AS change, total / total AS ratio FROM invoices")
    assert len(drop_self_cancelling(statement)) == 2 and statement.named_selects == ["total"]
    alone = parse_select("SELECT sum(total) - sum(total) AS change FROM invoices")
    assert drop_self_cancelling(alone) and alone.named_selects == ["sum_total"]
    for untouched in ("SELECT total - 1 FROM invoices", "SELECT a.total - b.total FROM invoices a, invoices b"):
        assert drop_self_cancelling(parse_select(untouched)) == []


def test_rows_of_compared_values_are_labelled_by_the_compared_column():
    from lakeplanner.execute.sql.rewrites import label_compared_rows
    from lakeplanner.question import read_question

    compares = read_question("What is the difference between the totals of customers C1 and C2?")
    sql = "SELECT total AS c1_total, total AS c2_total FROM invoices WHERE customer_id IN ('C1', 'C2')"
    statement = parse_select(sql)
    assert len(label_compared_rows(statement, compares)) == 2
    assert statement.sql("duckdb") == "SELECT total, customer_id FROM invoices WHERE customer_id IN ('C1', 'C2')"
    lists = read_question("Which invoices do customers C1 and C2 have?")
    assert label_compared_rows(parse_select(sql), lists) == []  # no comparison asked
    assert label_compared_rows(parse_select(sql), compares, keep={"C1", "C2"}) == []  # bound by an earlier step
    grouped = "SELECT SUM(total) FROM invoices WHERE customer_id IN ('C1', 'C2') GROUP BY customer_id"
    assert label_compared_rows(parse_select(grouped), compares) == []


def test_a_sql_pass_changes_a_copy_and_leaves_the_statement_it_was_handed():
    from lakeplanner.contract.models import Contract
    from lakeplanner.execute.sql.passes import REPAIR_PASSES, SHAPE_PASSES, StepContext, apply_passes

    step = StepContext(
        columns_of={"loans": {"loan_id": FieldType.string, "fee": FieldType.number}},
        allowed=("loans",),
        contract=Contract(),
        frame=QuestionFrame(text="fees of loans"),
        step=QuestionFrame(text="fees of loans"),
    )
    written = parse_select("SELECT fee, (fee - fee) AS change FROM loans LIMIT 5")
    before = written.sql()
    repaired, edits = apply_passes(written, step, (*SHAPE_PASSES, *REPAIR_PASSES))
    assert written.sql() == before and repaired.named_selects == ["fee"] and edits
    probes = [p.name for p in REPAIR_PASSES if p.probes_engine]
    assert probes == ["bound values compared where held", "unasked key filters dropped"]
    assert all(not p.applies(step) for p in REPAIR_PASSES if p.probes_engine)  # nothing bound, no question asked
