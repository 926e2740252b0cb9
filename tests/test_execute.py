"""Execution with a scripted LLM over the real engines (Iceberg + DuckDB, Milvus Lite, ONNX models)."""

import json

import pytest
from restores import framed

from lakeplanner.execute.confidence import repaired
from lakeplanner.execute.engine import Executor, start_ray
from lakeplanner.execute.results import NodeResult
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.execute.sql.values import held_filters
from lakeplanner.llm import LLM
from lakeplanner.llm.embeddings import default_embedder
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.policy.readonly import parse_select
from lakeplanner.question import QuestionFrame

SERIAL = ExecSettings(mode="serial")


def scripted(**replies):
    """A fake LLM answering by the requested output schema: plan, sql, select, draft (lists pop in order)."""
    queues = {k: list(v) if isinstance(v, list) else [v] for k, v in replies.items()}
    names = {"GeneratedPlan": "plan", "SqlDraft": "sql", "Selection": "select", "Draft": "draft"}

    def reply(messages, schema):
        kind = names[schema["title"]]
        queue = queues[kind]
        value = queue.pop(0) if len(queue) > 1 else queue[0]
        return json.dumps(value(messages) if callable(value) else value)

    return LLM(FakeBackend(reply))


def node(label, tool, source, question, **kw):
    return PlanNode(label=label, tool=tool, source=source, question=question, **kw)


def test_sql_node_answers_with_cited_rows(sample_lake):
    lake, _ = sample_lake
    plan = Plan(
        question="How many customers are in the Enterprise segment?",
        nodes=(
            node(
                "$var_1",
                "sql",
                "customers",
                "count customers in segment Enterprise",
                should_expose_answer=True,
                answer_description="the count",
            ),
        ),
    )
    llm = scripted(sql={"sql": "SELECT count(*) AS n FROM customers WHERE segment = 'Enterprise'"})
    [result] = Executor(lake, llm, SERIAL).run(plan)
    assert result.ok, result.error
    assert result.rows == [{"n": 14}]
    assert len(result.row_keys["customers"]) == 14
    assert result.snapshots["customers"] is not None
    [run] = result.sql
    assert "LIMIT" in run.sql and run.engine == "duckdb" and run.rows == 1


TWO_HOP = "What payment terms apply to invoice INV-1078 under the customer's master services agreement?"
TWO_HOP_PLAN = {
    "nodes": [
        {
            "question": "contract_document_id of the customer of invoice INV-1078",
            "tool": "sql",
            "label": "$var_1",
            "source": "invoices",
            "returns": ["contract_document_id"],
        },
        {
            "question": "payment terms in documents with document_id in $var_1.contract_document_id",
            "tool": "vector",
            "label": "$var_2",
            "source": "documents_contracts",
            "should_expose_answer": True,
            "answer_description": "the payment terms",
        },
    ]
}
TWO_HOP_SQL = {
    "sql": "SELECT c.contract_document_id FROM invoices i JOIN customers c ON i.customer_id = c.customer_id "
    "WHERE i.invoice_id = 'INV-1078'"
}


def pick_payment_terms(messages):
    """Select the window passage that states the payment terms."""
    lines = messages[-1].content.splitlines()
    chosen = [line.split()[0] for line in lines if line.startswith("p") and "Net 45" in line]
    return {"selected": chosen[:1], "sufficient": bool(chosen), "answer": "1/15 Net 45" if chosen else ""}


def two_hop_llm():
    return scripted(
        plan=TWO_HOP_PLAN,
        sql=TWO_HOP_SQL,
        select=pick_payment_terms,
        draft={
            "answer": "1/15 Net 45",
            "sentence": "Invoice INV-1078 is payable 1/15 Net 45.",
            "sources": ["E1"],
            "abstain": False,
        },
    )


def test_two_hop_question_is_answered_with_a_cited_span(sample_lake):
    lake, _ = sample_lake
    streamed = []
    answer = lake.ask(TWO_HOP, llm=two_hop_llm(), settings=SERIAL, use_cache=False, on_result=streamed.append)
    assert not answer.abstained, answer.reason
    assert answer.value == "1/15 Net 45"
    [span] = [c for c in answer.citations if c.kind == "span"]
    assert span.document_id == "CTR-C001" and span.source == "documents_contracts"
    assert "Net 45" in span.snippet and span.end > span.start
    first, second = answer.nodes
    assert first.rows == [{"contract_document_id": "CTR-C001"}]
    assert second.bytes_in < 100 and second.rows_in == 1  # only the bound column flowed
    assert [r.label for r in streamed] == ["$var_2"]
    assert 0.5 < answer.confidence <= 1.0 and answer.trace_id


def test_ray_that_misses_its_start_up_wait_is_started_again(monkeypatch):
    ray = pytest.importorskip("ray")
    calls = []

    def init(**options):
        calls.append(options)
        if len(calls) == 1:
            raise Exception("The current node timed out during startup.")

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    start_ray(num_cpus=1)
    assert calls == [{"num_cpus": 1}, {"num_cpus": 1}]


def test_ray_that_never_starts_is_an_engine_error_that_says_what_to_do(monkeypatch):
    from lakeplanner.errors import EngineError

    ray = pytest.importorskip("ray")

    def init(**options):
        raise Exception("The current node timed out during startup.\nmore detail")

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    with pytest.raises(EngineError, match="Ray did not start: The current node timed out") as caught:
        start_ray()
    assert "LAKEPLANNER_EXEC_MODE=serial" in caught.value.hint


def test_the_same_question_on_a_ray_task_graph(sample_lake, ray_local):
    lake, _ = sample_lake
    try:
        answer = lake.ask(TWO_HOP, llm=two_hop_llm(), settings=ExecSettings(mode="ray"), use_cache=False)
    finally:
        lake.close_executor()
    assert not answer.abstained, answer.reason
    assert answer.value == "1/15 Net 45"
    assert {c.document_id for c in answer.citations if c.kind == "span"} == {"CTR-C001"}
    assert lake.vectors.count("documents_contracts") > 0  # the driver gets Milvus back after the actor


def test_trino_engine_through_a_loopback_protocol_double(sample_lake):
    """The real trino client and sqlglot's Trino SQL against a TEST DOUBLE of Trino's HTTP protocol
    (backed by DuckDB): no Trino server can be installed here."""
    from trino_double import TrinoDouble

    from lakeplanner.execute.engines import get_engine
    from lakeplanner.execute.sql import statement as sqlnode

    lake, _ = sample_lake
    statement = sqlnode.checked(
        sqlnode.bind(
            "SELECT i.invoice_id, c.name FROM invoices i JOIN customers c ON i.customer_id = c.customer_id "
            "WHERE c.customer_id IN ($var_1.customer_id) ORDER BY i.invoice_id",
            {"$var_1": {"customer_id": ["C003"]}},
        ),
        LakeSchema.from_contract(lake.contract).tables,
        ["invoices", "customers"],
    )
    statement = sqlnode.with_row_keys(statement, {"invoices": ["invoice_id"]})
    with TrinoDouble(lake) as double:
        engine = get_engine("trino", lake, ExecSettings(sql_engine="trino", trino_port=double.port))
        scan = engine.run(statement)
        duck = get_engine("duckdb", lake, ExecSettings()).run(statement)
    [sent] = double.statements
    assert "FOR VERSION AS OF" in sent and '"invoices"' in sent
    assert scan.table.to_pylist() == duck.table.to_pylist()
    assert scan.table.num_rows == 2 and scan.snapshots["invoices"] == duck.snapshots["invoices"]


def test_trino_that_is_down_is_an_engine_error_with_a_hint(sample_lake):
    from lakeplanner.errors import EngineError
    from lakeplanner.execute.engines import get_engine

    lake, _ = sample_lake
    engine = get_engine("trino", lake, ExecSettings(sql_engine="trino", trino_port=9, node_timeout_s=5))
    with pytest.raises(EngineError, match="unreachable") as caught:
        engine.run(parse_select("SELECT 1 AS x FROM customers LIMIT 1"))
    assert "LAKEPLANNER_EXEC_TRINO" in caught.value.hint


def test_a_subquery_that_finds_several_rows_is_named_with_what_to_do(sample_lake):
    from lakeplanner.execute.engines import get_engine
    from lakeplanner.execute.sql import statement as sqlnode

    lake, _ = sample_lake
    statement = parse_select("SELECT (SELECT name FROM customers) AS n FROM customers LIMIT 1")
    with pytest.raises(sqlnode.SqlRuntimeError, match="More than one row") as caught:
        get_engine("duckdb", lake, ExecSettings()).run(statement)
    assert "select the rows" in caught.value.hint


def test_a_failing_statement_is_rewritten_with_the_engine_error(sample_lake):
    lake, _ = sample_lake
    plan = framed(
        Plan(question="q", nodes=(node("$var_1", "sql", "customers", "count customers", should_expose_answer=True),))
    )
    bad = {"sql": "SELECT no_such_function(name) AS n FROM customers"}
    good = {"sql": "SELECT count(*) AS n FROM customers"}
    llm = scripted(sql=[bad, good])
    [result] = Executor(lake, llm, SERIAL).run(plan)
    assert result.ok and result.rows[0]["n"] > 0
    feedback = llm.backend.calls[1][0][-1].content
    assert "no_such_function" in feedback
    assert [s.name for s in result.steps].count("chat fake") == 2
    assert repaired(result.steps, replans=0)  # what the answer's confidence is discounted for


def test_a_misspelled_column_is_fixed_without_asking_again(sample_lake):
    lake, _ = sample_lake
    plan = framed(
        Plan(question="q", nodes=(node("$var_1", "sql", "customers", "segments", should_expose_answer=True),))
    )
    llm = scripted(sql={"sql": "SELECT DISTINCT segmnt FROM customers"})
    [result] = Executor(lake, llm, SERIAL).run(plan)
    assert result.ok and {r["segment"] for r in result.rows} >= {"Enterprise", "SMB"}
    assert len(llm.backend.calls) == 1
    [execute] = [s for s in result.steps if s.name == "sql.execute"]
    assert "segmnt -> segment" in execute.attributes["lakeplanner.dataops.edits"]


def test_milvus_down_gives_advice_and_keeps_partial_results(sample_lake, monkeypatch):
    from lakeplanner.errors import EngineError
    from lakeplanner.execute import services

    def down(*args, **kwargs):
        raise EngineError("Milvus hybrid search failed: connection refused", hint="is Milvus running?")

    lake, _ = sample_lake
    monkeypatch.setattr(services, "search_and_rerank", down)
    monkeypatch.setattr(lake.vectors, "hybrid_search", down)
    answer = lake.ask(TWO_HOP, llm=two_hop_llm(), settings=SERIAL, use_cache=False)
    first, second = answer.nodes  # no fallback search: the store it would read is down
    assert first.ok and first.rows == [{"contract_document_id": "CTR-C001"}]  # kept
    assert not second.ok and "connection refused" in second.error
    assert any("retry later" in a for a in answer.advice)
    assert answer.abstained and "connection refused" in answer.reason


def test_successors_of_a_failed_node_are_skipped(sample_lake):
    lake, _ = sample_lake
    llm = scripted(sql={"sql": "SELECT nonsense("}, select={"selected": ["p1"], "sufficient": False, "answer": ""})
    plan = Plan(
        question="q",
        nodes=(
            node("$var_1", "sql", "customers", "contract of C001", returns=("contract_document_id",)),
            node(
                "$var_2",
                "vector",
                "documents_contracts",
                "terms in $var_1.contract_document_id",
                should_expose_answer=True,
                answer_description="terms",
            ),
        ),
    )
    first, second = Executor(lake, llm, SERIAL).run(plan)
    # the second statement failed as the first did: a third would be written from the same prompt
    assert first.error.startswith("no runnable SQL after 2 attempts")
    assert sum(schema["title"] == "SqlDraft" for _, schema in llm.backend.calls) == 2
    assert second.error == f"skipped: its input $var_1 ({first.error}) failed"


def test_graph_node_follows_a_foreign_key_without_the_llm(sample_lake):
    lake, _ = sample_lake
    plan = Plan(
        question="Which invoices does customer C003 have?",
        nodes=(
            node("$var_1", "sql", "customers", "C003", returns=("customer_id",)),
            node(
                "$var_2",
                "graph",
                "invoices",
                "invoices of $var_1.customer_id",
                should_expose_answer=True,
                answer_description="invoices",
            ),
        ),
    )
    llm = scripted(sql={"sql": "SELECT customer_id FROM customers WHERE customer_id = 'C003'"})
    _, second = Executor(lake, llm, SERIAL).run(plan)
    assert second.ok and second.rows_total == 2
    assert sorted(second.row_keys["invoices"]) == sorted(r["invoice_id"] for r in second.rows)
    assert len(llm.backend.calls) == 1


def slow_sql(messages, schema):
    import time

    time.sleep(20)
    return json.dumps({"sql": "SELECT count(*) AS n FROM customers"})


def test_a_node_past_its_timeout_is_cancelled_on_ray(sample_lake, ray_local):
    lake, _ = sample_lake
    plan = framed(Plan(question="q", nodes=(node("$var_1", "sql", "customers", "count", should_expose_answer=True),)))
    executor = Executor(lake, LLM(FakeBackend(slow_sql)), ExecSettings(mode="ray", node_timeout_s=3))
    try:
        [result] = executor.run(plan)
    finally:
        executor.close()
    assert result.error == "timed out after 3 s"
    assert "NODE_TIMEOUT_S" in result.advice[0]


def slowish_sql(messages, schema):
    import time

    time.sleep(0.6)
    return json.dumps({"sql": "SELECT count(*) AS n FROM customers"})


def test_a_node_past_its_timeout_stops_in_serial_mode_and_its_successor_is_skipped(sample_lake):
    lake, _ = sample_lake
    plan = Plan(
        question="q",
        nodes=(
            node("$var_1", "sql", "customers", "count"),
            node("$var_2", "sql", "invoices", "invoices of $var_1.n", should_expose_answer=True),
        ),
    )
    first, second = Executor(lake, LLM(FakeBackend(slowish_sql)), ExecSettings(mode="serial", node_timeout_s=0.5)).run(
        plan
    )
    assert first.error == "timed out after 0.5 s" and not first.sql  # the statement never started
    assert "NODE_TIMEOUT_S" in first.advice[0]
    assert second.error == "skipped: its input $var_1 (timed out after 0.5 s) failed"


def test_a_statement_running_past_its_time_box_is_interrupted(sample_lake):
    import sqlglot

    from lakeplanner.errors import DeadlineError
    from lakeplanner.execute.engines import DuckDBEngine
    from lakeplanner.timebox import time_box

    lake, _ = sample_lake
    endless = sqlglot.parse_one(
        "SELECT count(*) AS n FROM line_items AS a, line_items AS b, line_items AS c, line_items AS d, line_items AS e"
    )
    with time_box(0.5, hint="raise it"), pytest.raises(DeadlineError, match=r"timed out after 0\.5 s"):
        DuckDBEngine(lake).run(endless)


def test_no_llm_call_starts_once_the_time_box_is_spent():
    from lakeplanner.errors import DeadlineError
    from lakeplanner.llm.base import user
    from lakeplanner.timebox import time_box

    llm = LLM(FakeBackend(["never read"]))
    with time_box(0, hint="raise it"), pytest.raises(DeadlineError):
        llm.complete([user("hello")])
    assert llm.backend.calls == []


def pick_first(messages):
    first = next(line.split()[0] for line in messages[-1].content.splitlines() if line.startswith("p"))
    return {"selected": [first], "sufficient": True, "answer": "x"}


def searched_filter(result) -> str:
    [search] = [s for s in result.steps if s.name.startswith("retrieval ")]
    return search.attributes["lakeplanner.filter"]


def test_a_written_filter_with_a_bound_variable_restricts_the_search(sample_lake):
    lake, _ = sample_lake
    plan = Plan(
        question=TWO_HOP,
        nodes=(
            PlanNode(**TWO_HOP_PLAN["nodes"][0]),
            node(
                "$var_2",
                "vector",
                "documents_contracts",
                "payment terms",
                filter="document_id IN $var_1.contract_document_id AND position >= 0",
                should_expose_answer=True,
            ),
        ),
    )
    _, search = Executor(lake, scripted(sql=TWO_HOP_SQL, select=pick_first), SERIAL).run(plan)
    assert search.ok, search.error
    assert searched_filter(search) == '(document_id in ["CTR-C001"]) and (position >= 0)'
    assert {e.meta["document_id"] for e in search.evidence} == {"CTR-C001"}


def test_a_written_literal_filter_is_applied_and_one_milvus_cannot_express_is_reported(sample_lake):
    lake, _ = sample_lake
    llm = scripted(select=pick_first)
    only = node("$var_1", "vector", "documents_contracts", "payment terms", filter="document_id = 'CTR-C002'")
    [found] = Executor(lake, llm, SERIAL).run(framed(Plan(question="q", nodes=(only,))))
    assert searched_filter(found) == 'document_id == "CTR-C002"'
    assert found.evidence and {e.meta["document_id"] for e in found.evidence} == {"CTR-C002"}
    unsupported = only.model_copy(update={"filter": "title IS NULL"})
    [refused] = Executor(lake, llm, SERIAL).run(framed(Plan(question="q", nodes=(unsupported,))))
    assert refused.error == "Milvus filters cannot express 'title IS NULL'"
    assert "AND, OR, NOT" in refused.advice[0]


def test_filters_quote_non_ascii_keys_as_milvus_reads_them(sample_lake):
    from lakeplanner.execute.vector import Bound, document_filter

    lake, _ = sample_lake
    expression = document_filter(
        "documents", [Bound("$var_1.billing_contact", "billing_contact", ("Javier López",))], lake.catalog
    )
    assert expression == 'array_contains_any(linked_keys, ["Javier López"])'
    assert (
        lake.vectors.hybrid_search("documents", "payment", default_embedder().embed_query("payment"), filter=expression)
        == []
    )


def test_only_referenced_columns_flow_and_a_bare_reference_takes_the_declared_returns():
    from lakeplanner.execute.results import NodeResult
    from lakeplanner.execute.variables import WHOLE, referenced_columns, slim

    plan = Plan(
        question="q",
        nodes=(
            node("$var_1", "sql", "customers", "c", returns=("customer_id",)),
            node("$var_2", "sql", "invoices", "invoices of $var_1", should_expose_answer=True, answer_description="x"),
        ),
    )
    assert referenced_columns(plan) == {"$var_1": {WHOLE}, "$var_2": set()}
    result = NodeResult(
        label="$var_1",
        tool="sql",
        source="customers",
        question="c",
        returns=["customer_id"],
        columns=["name", "customer_id"],
        rows=[{"name": f"n{i}", "customer_id": f"C{i % 3}"} for i in range(9)],
    )
    binding = slim(result, {WHOLE}, cap=2)
    assert binding.columns == {"customer_id": ["C0", "C1"]} and binding.truncated


def customers_sql_node(lake, question: str, *written: str):
    """One exposed SQL node over customers whose statements the LLM writes in turn: (result, llm)."""
    plan = framed(
        Plan(question=question, nodes=(node("$var_1", "sql", "customers", question, should_expose_answer=True),))
    )
    llm = scripted(sql=[{"sql": sql} for sql in written])
    [result] = Executor(lake, llm, SERIAL).run(plan)
    return result, llm


def test_a_statement_that_matches_nothing_is_rewritten_with_the_category_values(sample_lake):
    lake, _ = sample_lake
    miss = "SELECT count(*) AS n FROM customers WHERE name ILIKE 'enterprise%' HAVING count(*) > 0"
    hit = "SELECT count(*) AS n FROM customers WHERE segment = 'enterprise'"  # spelled as held next
    result, llm = customers_sql_node(lake, "customers of the enterprise segment", miss, hit)
    assert result.ok and result.rows[0]["n"] == 14
    [*_, executed] = [s for s in result.steps if s.name == "sql.execute"]
    assert "segment = 'enterprise' -> 'Enterprise'" in executed.attributes["lakeplanner.dataops.edits"]
    first_prompt = llm.backend.calls[0][0][0].content
    values = [line for line in first_prompt.splitlines() if line.startswith("customers.")]
    assert values == ["customers.segment: Enterprise"]  # only the value the sub-question names
    assert "matched nothing" in llm.backend.calls[1][0][-1].content
    told = [s.attributes.get("lakeplanner.llm.because") for s in result.steps if s.name.startswith("chat ")]
    assert told[0] is None and "matched nothing" in told[1]  # the trace says what the retry was told


def test_a_statement_whose_filtered_rows_exist_is_told_that_something_else_drops_them(sample_lake):
    """Every value it filters on is held, so listing the column's values would only invite a statement
    that enumerates them: the feedback names the held filters and blames the rest."""
    lake, _ = sample_lake
    miss = "SELECT name FROM customers WHERE segment = 'Enterprise' AND signup_date < DATE '1900-01-01'"
    hit = "SELECT name FROM customers WHERE segment = 'Enterprise'"
    result, llm = customers_sql_node(lake, "names of enterprise customers", miss, hit)
    assert result.ok and len(result.rows) == 14
    feedback = llm.backend.calls[1][0][-1].content
    assert "the rows it filters for exist (segment = 'Enterprise')" in feedback
    assert "SMB" not in feedback  # no other value of the column is listed


def test_a_lookup_of_held_values_that_matches_nothing_is_not_rewritten(sample_lake):
    """Both values are held but no customer pairs them: no such row is the answer, and asking the writer
    again would cost a call for the same statement."""
    lake, _ = sample_lake
    lookup = "SELECT name FROM customers WHERE segment = 'Public' AND country = 'Canada'"
    result, llm = customers_sql_node(lake, "names of public customers in Canada", lookup)
    assert result.ok and result.rows == [] and len(llm.backend.calls) == 1


def test_looks_up_held_values_only_for_equalities_on_one_table():
    from lakeplanner.execute.sql.values import looks_up_held_values

    categories = {"staff.full_name": ["Ann Lee", "Bo Chan"], "staff.role": ["driver", "clerk"]}

    def looks_up(sql: str) -> bool:
        return looks_up_held_values(parse_select(sql), categories)

    assert looks_up("SELECT staff_id FROM staff WHERE full_name = 'Ann Lee' AND role IN ('driver') AND grade = 3")
    assert looks_up("SELECT SUM(pay) FROM staff WHERE 'clerk' = role")
    assert not looks_up("SELECT staff_id FROM staff WHERE role = 'pilot'")  # not held: the values are told
    assert not looks_up("SELECT staff_id FROM staff WHERE grade = 3")  # no held string
    assert not looks_up("SELECT staff_id FROM staff WHERE role = 'driver' AND hired < DATE '1900-01-01'")
    assert not looks_up("SELECT staff_id FROM staff WHERE role = 'driver' OR role = 'clerk'")
    joined = "SELECT s.staff_id FROM staff AS s JOIN trips AS t ON t.staff_id = s.staff_id WHERE s.role = 'driver'"
    assert not looks_up(joined)
    assert not looks_up("SELECT staff_id FROM staff WHERE role = 'driver' AND pay > (SELECT AVG(pay) FROM staff)")


def test_held_filters_only_when_every_compared_string_is_held():
    categories = {"staff.full_name": ["Ann Lee", "Bo Chan"], "staff.role": ["driver", "clerk"]}
    held = parse_select("SELECT s.staff_id FROM staff AS s WHERE s.full_name = 'Ann Lee' AND s.role IN ('driver')")
    assert held_filters(held, categories) == ["full_name = 'Ann Lee'", "role = 'driver'"]
    one_not = parse_select("SELECT staff_id FROM staff WHERE full_name = 'Ann Lee' AND role = 'pilot'")
    unknown_column = parse_select("SELECT staff_id FROM staff WHERE base = 'WH-1'")
    numbers_only = parse_select("SELECT staff_id FROM staff WHERE grade = 3")
    assert held_filters(one_not, categories) == held_filters(unknown_column, categories) == []
    assert held_filters(numbers_only, categories) == []


def test_a_row_named_by_a_value_of_another_column_is_found_without_asking_again(sample_lake):
    """The SQL compared the id with the customer's name and matched nothing; the name column holds the
    value, so the filter moves there and the statement runs again with no second LLM call."""
    lake, _ = sample_lake
    wrong = "SELECT city FROM customers AS c WHERE c.customer_id = 'Brightwater Logistics GmbH'"
    result, llm = customers_sql_node(lake, "city of the customer Brightwater Logistics GmbH", wrong)
    assert result.ok and result.rows[0]["city"] == "Hamburg" and result.row_keys["customers"] == ["C001"]
    assert len(llm.backend.calls) == 1
    [*_, executed] = [s for s in result.steps if s.name == "sql.execute"]
    edits = executed.attributes["lakeplanner.dataops.edits"]
    assert "customer_id = 'Brightwater Logistics GmbH' -> name = 'Brightwater Logistics GmbH'" in edits
    assert '"c"."name" = \'Brightwater Logistics GmbH\'' in executed.attributes["db.query.text"]


def test_a_value_no_other_column_holds_is_left_for_the_llm(sample_lake):
    lake, _ = sample_lake
    from lakeplanner.execute.engines import DuckDBEngine
    from lakeplanner.execute.sql.probes import fix_misplaced_literals
    from lakeplanner.plan.lake_schema import LakeSchema

    columns = LakeSchema.from_contract(lake.contract).tables
    nowhere = parse_select("SELECT city FROM customers WHERE customer_id = 'Nobody Ltd'")
    assert fix_misplaced_literals(nowhere, DuckDBEngine(lake), columns) == []
    bound = parse_select("SELECT city FROM customers WHERE customer_id = 'Brightwater Logistics GmbH'")
    assert fix_misplaced_literals(bound, DuckDBEngine(lake), columns, keep={"Brightwater Logistics GmbH"}) == []
    shouted = parse_select("SELECT city FROM customers WHERE customer_id = 'BRIGHTWATER Logistics GmbH'")
    assert fix_misplaced_literals(shouted, DuckDBEngine(lake), columns) == [
        "customer_id = 'BRIGHTWATER Logistics GmbH' -> name = 'Brightwater Logistics GmbH' (the column that holds it)"
    ]
    lower = parse_select("SELECT city FROM customers WHERE customer_id = 'c001'")
    assert fix_misplaced_literals(lower, DuckDBEngine(lake), columns) == [
        "customer_id = 'c001' -> 'C001' (as the column holds it)"
    ]


def test_a_step_that_lost_the_row_the_question_names_is_told_it(sample_lake):
    lake, _ = sample_lake
    step = node("$var_1", "sql", "customers", "count the customers", should_expose_answer=True)
    plan = framed(Plan(question="How many customers are in the Enterprise segment?", nodes=(step,)))
    llm = scripted(sql=[{"sql": "SELECT count(*) AS n FROM customers WHERE segment = 'Enterprise'"}])
    [result] = Executor(lake, llm, SERIAL).run(plan)
    assert result.ok and result.rows[0]["n"] == 14
    prompt = llm.backend.calls[0][0][-1].content
    assert "The question names the rows: customers.segment = 'Enterprise'" in prompt


def test_after_a_miss_the_values_of_the_filtered_column_are_told_and_counted(sample_lake):
    lake, _ = sample_lake
    miss = "SELECT count(*) AS n FROM customers WHERE segment = 'Big accounts' HAVING count(*) > 0"
    hit = "SELECT count(*) AS n FROM customers WHERE segment = 'Enterprise'"
    result, llm = customers_sql_node(lake, "how many big accounts are there", miss, hit)
    assert result.ok and result.rows[0]["n"] == 14
    first, second = (call[0] for call in llm.backend.calls)
    assert "customers.segment:" not in first[0].content  # the sub-question names no segment
    told = next(line for line in second[-1].content.splitlines() if line.startswith("customers.segment: "))
    assert "Enterprise" in told.split(": ", 1)[1].split(" | ")
    shown = [s.attributes["lakeplanner.llm.data_chars"] for s in result.steps if s.name.startswith("chat ")]
    assert shown[1] - shown[0] == len(told.split(": ", 1)[1])


def test_an_earlier_searchs_answer_is_search_text_even_when_it_names_a_document(sample_lake):
    """HotpotQA 010: narrowed to the article on the University of Kansas, the search missed the
    article on its fight song."""
    from lakeplanner.execute.vector import Bound, document_filter, query_text, with_answers_spelled

    lake, _ = sample_lake
    told = Bound("$var_1.answer", "answer", ("late delivery",))
    assert not told.narrows and document_filter("documents", [told], lake.catalog) == ""
    titled = Bound("$var_1.answer", "answer", ("memo-collections-2024Q3",))
    assert document_filter("documents", [titled], lake.catalog) == ""
    named = Bound("$var_1.document_id", "document_id", ("memo-collections-2024Q3",))
    assert document_filter("documents", [named], lake.catalog) == 'document_id in ["memo-collections-2024Q3"]'
    hop = node("$var_2", "vector", "documents", "who complained about $var_1.answer")
    assert query_text(hop, [told]) == "who complained about late delivery"
    assert with_answers_spelled(hop, [told]).question == "who complained about late delivery"
    ids = Bound("$var_2.document_id", "document_id", ("DOC-INV-1010",))
    read = node("$var_3", "vector", "documents", "the reason for $var_1.answer in $var_2.document_id")
    assert with_answers_spelled(read, [told, ids]).question == "the reason for late delivery in $var_2.document_id"
    assert query_text(read, [told]) == "the reason for late delivery in"
    assert Bound("$var_1.contract_id", "contract_id", ("x",)).narrows


def test_a_search_narrowed_by_found_rows_that_finds_nothing_is_an_answer_not_a_miss():
    from lakeplanner.execute.ask import narrowed_to_nothing

    carrier = node("$var_1", "sql", "carriers", "carrier_code of the carrier operating truck TRK-111")
    agreement = node("$var_2", "vector", "documents_contracts", "liability cap in $var_1.carrier_code")
    plan = framed(Plan(question="q", nodes=(carrier, agreement)))
    vstl = NodeResult(label="$var_1", tool="sql", source="carriers", question="", rows=[{"carrier_code": "VSTL"}])
    empty = NodeResult(label="$var_2", tool="vector", source="documents_contracts", question="")
    assert narrowed_to_nothing(plan, [vstl, empty])
    nobody = vstl.model_copy(update={"rows": []})
    assert not narrowed_to_nothing(plan, [nobody, empty])  # the rows were missed: search around
    failed = empty.model_copy(update={"error": "milvus is down"})
    assert not narrowed_to_nothing(plan, [vstl, failed])


def test_a_plan_that_retrieves_nothing_falls_back_to_one_search_of_the_only_collection(tmp_path):
    from lakeplanner import Lake

    source = tmp_path / "source"
    source.mkdir()
    (source / "sales.csv").write_text("region,amount\nnorth,10\nsouth,20\n")
    (source / "notes.md").write_text("# Notes\n\nThe drop in the south was primarily due to a warehouse fire.\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(source)
    plan = {"nodes": [{"tool": "sql", "source": "sales", "question": "amount of the east region"}]}
    plan["nodes"][0] |= {"should_expose_answer": True, "answer_description": "an amount"}

    def pick_fire(messages):
        chosen = [line.split()[0] for line in messages[-1].content.splitlines() if "warehouse fire" in line]
        return {"selected": chosen[:1], "sufficient": True, "answer": "a warehouse fire"}

    llm = scripted(
        plan=plan,
        sql={"sql": "SELECT amount FROM sales WHERE region = 'east' LIMIT 10"},
        select=pick_fire,
        draft={"answer": "a warehouse fire", "sentence": "A warehouse fire.", "sources": ["E1"], "abstain": False},
    )
    question = "What was the drop in the south primarily due to?"
    try:
        answer = lake.ask(question, llm=llm, settings=SERIAL, use_cache=False)
    finally:
        lake.close()
    assert not answer.abstained, answer.reason
    assert answer.value == "a warehouse fire"
    sql, search = answer.nodes
    assert sql.rows == [] and (search.label, search.tool, search.question) == ("$var_2", "vector", question)
    assert any(c.kind == "span" and "warehouse fire" in c.snippet for c in answer.citations)


def claims_lake(tmp_path):
    """A sales table and two collections, one holding a claims window no column names."""
    from lakeplanner import Lake

    source = tmp_path / "source"
    source.mkdir()
    (source / "sales.csv").write_text("region,amount\nnorth,10\nsouth,20\n")
    for folder, text in (("policies", "A claim for damaged goods must be filed within 21 days."), ("notes", "Hi.")):
        (source / folder).mkdir()
        (source / folder / f"{folder}.md").write_text(f"# {folder}\n\n{text}\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(source)
    return lake


def pick_claim_window(messages):
    chosen = [line.split()[0] for line in messages[-1].content.splitlines() if "21 days" in line]
    return {"selected": chosen[:1], "sufficient": True, "answer": "21 days"}


def test_a_question_with_no_valid_plan_naming_nothing_of_the_tables_is_searched_as_it_is(tmp_path):
    from lakeplanner.execute.confidence import UNPLANNED

    lake = claims_lake(tmp_path)
    cycle = {"tool": "sql", "source": "sales", "label": "$var_1", "question": "amount in $var_1.amount"}

    llm = scripted(
        plan={"nodes": [cycle | {"should_expose_answer": True, "answer_description": "days"}]},
        select=pick_claim_window,
        draft={"answer": "21 days", "sentence": "Within 21 days.", "sources": ["E1"], "abstain": False},
    )
    try:
        answer = lake.ask("Within how many days must a claim be filed?", llm=llm, settings=SERIAL, use_cache=False)
        table = lake.ask("What is the amount of the east region?", llm=llm, settings=SERIAL, use_cache=False)
    finally:
        lake.close()
    assert not answer.abstained and answer.value == "21 days"
    assert answer.confidence <= UNPLANNED  # nothing checked that searching was the right step
    [search] = answer.nodes
    assert search.tool == "vector" and search.question == "Within how many days must a claim be filed?"
    assert table.abstained and "no valid plan" in table.reason  # it names the table's column: no guess from text


def test_a_question_naming_no_row_that_the_tables_could_not_answer_is_tried_in_the_documents(tmp_path):
    lake = claims_lake(tmp_path)
    step = {"tool": "sql", "source": "sales", "label": "$var_1", "question": "amount of every region"}

    llm = scripted(
        plan={"nodes": [step | {"should_expose_answer": True, "answer_description": "days"}]},
        sql={"sql": "SELECT amount FROM sales"},
        select=pick_claim_window,
        draft=[
            {"answer": "", "sentence": "", "sources": [], "abstain": True, "reason": "no amount says it"},
            {"answer": "21 days", "sentence": "Within 21 days.", "sources": ["E1"], "abstain": False},
        ],
    )
    try:
        answer = lake.ask("Within how many days must a claim be filed?", llm=llm, settings=SERIAL, use_cache=False)
    finally:
        lake.close()
    assert not answer.abstained and answer.value == "21 days"
    assert [n.tool for n in answer.nodes] == ["sql", "vector"]
    assert any(c.kind == "span" and "21 days" in c.snippet for c in answer.citations)


def test_the_end_of_a_long_paragraph_is_read_cited_and_replayed(tmp_path):
    from lakeplanner import Lake
    from lakeplanner.execute.replay import evidence_check

    source = tmp_path / "source"
    source.mkdir()
    filler = " ".join(f"Clause {i} sets out ordinary terms of supply and delivery for the buyer." for i in range(8))
    (source / "terms.md").write_text(f"# Terms\n\n{filler} Late payments accrue interest at 9.5 percent a year.\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(source)

    def pick_interest(messages):
        chosen = [line.split()[0] for line in messages[-1].content.splitlines() if "9.5 percent" in line]
        return {"selected": chosen[:1], "sufficient": bool(chosen), "answer": "9.5 percent" if chosen else ""}

    only = node("$var_1", "vector", "documents", "interest on late payments", should_expose_answer=True)
    try:
        [found] = Executor(lake, scripted(select=pick_interest), SERIAL).run(framed(Plan(question="q", nodes=(only,))))
        [evidence] = [e for e in found.evidence if "9.5 percent" in e.snippet]
        assert evidence.level == "passage" and found.answer == "9.5 percent"
        text = (source / "terms.md").read_text()
        assert text[evidence.offsets[0] : evidence.offsets[1]] == evidence.snippet
        assert evidence_check(lake, "$var_1", evidence, found.snapshots["lakeplanner.segments"]).matches
    finally:
        lake.close()


REPORT_GRID = [
    ["", "2019", "2018"],
    ["(in millions)", "", ""],
    ["Fixed Price", "$  1,452.4", "$  1,146.2"],
    ["Other", "(44.1)", "56.7"],
]


@pytest.fixture(scope="module")
def report_lake(tmp_path_factory):
    import csv

    from lakeplanner import Lake

    source = tmp_path_factory.mktemp("report") / "src"
    source.mkdir()
    with (source / "sales.report.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows(REPORT_GRID)
    lake = Lake.create(source.parent / "lake")
    lake.ingest(source)
    yield lake
    lake.close()


@pytest.mark.parametrize(
    "written",
    [
        # the same sum under two names, grouped by year: each row repeats its own year's value
        "SELECT sum(value) AS total_2018, sum(value) AS total_2019, year FROM sales "
        "WHERE line_item = 'Fixed Price' GROUP BY year",
        # the change computed in scalar subqueries, one row per table row
        "SELECT (SELECT value FROM sales WHERE line_item = 'Fixed Price' AND year = 2019) - "
        "(SELECT value FROM sales WHERE line_item = 'Fixed Price' AND year = 2018) AS change FROM sales",
        # one year's column picked by its label: the label names a year, so the lookup drops that filter
        "SELECT value, year FROM sales WHERE line_item = 'Fixed Price' AND column_label = '2019'",
        # a "percentage" per year (x / x * 100 = 100 each year): its own arithmetic, replaced by the values
        "SELECT sum(value) / sum(value) * 100 AS pct, year FROM sales WHERE line_item = 'Fixed Price' "
        "AND year IN (2018, 2019) GROUP BY year",
        # no item and no value: the row the question names is looked up
        "SELECT year FROM sales WHERE year IN (2018, 2019)",
        # every item averaged per year (the step lost the item): replaced by the named row's values
        "SELECT avg(value) AS v, year FROM sales WHERE year IN (2018, 2019) GROUP BY year",
    ],
)
def test_a_year_change_is_computed_from_one_value_per_named_year_whatever_sql_the_llm_wrote(report_lake, written):
    question = "What was the percentage change in Fixed Price from 2018 to 2019?"
    plan = {
        "nodes": [
            {
                "question": "percentage change in Fixed Price from 2018 to 2019",
                "tool": "sql",
                "source": "sales",
                "should_expose_answer": True,
                "answer_description": "the percentage change",
            }
        ]
    }
    draft = {"answer": "0", "sentence": "No change.", "sources": ["R1"], "abstain": False}
    llm = scripted(plan=plan, sql={"sql": written}, draft=draft)
    answer = report_lake.ask(question, llm=llm, settings=SERIAL, use_cache=False)
    [result] = answer.nodes
    assert {(r["year"], r["value"]) for r in result.rows if "value" in r} == {(2019, 1452.4), (2018, 1146.2)}
    assert "values per named year" not in result.sql[0].sql and len(result.sql) == 2
    assert answer.value == "26.71" and "(1452.4 - 1146.2) / 1146.2 * 100" in answer.text, (answer.reason, result.rows)
    assert len([c for c in answer.citations if c.kind == "row"]) >= 2


def test_a_year_change_is_read_from_the_named_row_when_no_written_statement_runs(report_lake):
    question = "What was the percentage change in Fixed Price from 2018 to 2019?"
    plan = {"nodes": [{"question": question, "tool": "sql", "source": "sales", "should_expose_answer": True}]}
    draft = {"answer": "5%", "sentence": "5%.", "sources": ["R1"], "abstain": False}
    llm = scripted(plan=plan, sql={"sql": "SELECT value FROM sales VALUES"}, draft=draft)
    answer = report_lake.ask(question, llm=llm, settings=SERIAL, use_cache=False)
    [result] = answer.nodes
    assert result.ok and any("values per named year were read instead" in a for a in result.advice)
    assert {(r["year"], r["value"]) for r in result.rows} == {(2019, 1452.4), (2018, 1146.2)}
    assert answer.value == "26.71" and result.snapshots["sales"] is not None, (answer.reason, answer.text)


def test_two_compared_rows_are_read_labelled_when_the_sql_subtracts_a_value_from_itself(report_lake):
    question = "What is the difference between Fixed Price and Other in 2019?"
    plan = {
        "nodes": [
            {
                "question": question,
                "tool": "sql",
                "source": "sales",
                "should_expose_answer": True,
                "answer_description": "the difference",
            }
        ]
    }
    written = (
        "SELECT value AS fixed_price, value AS other, (value - value) AS difference FROM sales "
        "WHERE line_item IN ('Fixed Price', 'Other') AND year = 2019"
    )
    draft = {"answer": "0.0", "sentence": "The difference is 0.0.", "sources": ["R1"], "abstain": False}
    llm = scripted(plan=plan, sql={"sql": written}, draft=draft)
    answer = report_lake.ask(question, llm=llm, settings=SERIAL, use_cache=False)
    [result] = answer.nodes
    assert sorted((r["line_item"], r["value"]) for r in result.rows) == [("Fixed Price", 1452.4), ("Other", -44.1)]
    assert answer.value == "1,496.50" and "1452.4 - -44.1" in answer.text, (
        answer.reason,
        answer.text,
    )


def test_which_year_reads_every_year_of_the_row_the_question_names(report_lake):
    question = "In which year was Fixed Price higher?"
    plan = {
        "nodes": [
            {
                "question": "the year with the highest value",
                "tool": "sql",
                "source": "sales",
                "should_expose_answer": True,
                "answer_description": "a year",
            }
        ]
    }
    draft = {"answer": "2018", "sentence": "2018.", "sources": ["R1"], "abstain": False}
    llm = scripted(plan=plan, sql={"sql": "SELECT year FROM sales"}, draft=draft)
    answer = report_lake.ask(question, llm=llm, settings=SERIAL, use_cache=False)
    [result] = answer.nodes
    assert {(r["year"], r["value"]) for r in result.rows} == {(2019, 1452.4), (2018, 1146.2)}
    assert answer.value == "2019", (answer.reason, answer.text)


def test_graph_node_from_a_column_of_its_own_table_reads_the_rows_holding_those_values(sample_lake):
    """A graph step on customers from $var_1.contract_document_id: no foreign key joins the column to
    itself, so the step reads the customers whose contract_document_id is bound."""
    lake, _ = sample_lake
    plan = Plan(
        question="Which customers share the contract of customer C003?",
        nodes=(
            node("$var_1", "sql", "customers", "C003", returns=("contract_document_id",)),
            node(
                "$var_2",
                "graph",
                "customers",
                "the contract of $var_1.contract_document_id",
                should_expose_answer=True,
                answer_description="customers",
            ),
        ),
    )
    llm = scripted(sql={"sql": "SELECT contract_document_id FROM customers WHERE customer_id = 'C003'"})
    _, second = Executor(lake, llm, SERIAL).run(plan)
    assert second.ok and [r["customer_id"] for r in second.rows] == ["C003"]


def test_an_unvalidated_plan_that_cannot_run_is_a_plan_error_naming_the_waits(sample_lake):
    from lakeplanner.errors import PlanError

    lake, _ = sample_lake
    plan = Plan(
        question="q",
        nodes=(
            node("$var_1", "sql", "customers", "customers of $var_2.customer_id"),
            node("$var_2", "sql", "invoices", "invoices of $var_1.customer_id and $var_7.x", should_expose_answer=True),
        ),
    )
    with pytest.raises(PlanError, match=r"\(\$var_1 on \$var_2; \$var_2 on \$var_1, \$var_7\)") as raised:
        Executor(lake, scripted(), SERIAL).run(plan)
    assert "validate the plan first" in raised.value.hint


def test_graph_node_from_a_search_reads_the_rows_its_documents_cite(sample_lake):
    """The collections memo names five invoices by id; a graph step on invoices from the search's
    linked_keys reads those invoices (a list cell binds each of its items)."""
    lake, _ = sample_lake
    plan = Plan(
        question="q",
        nodes=(
            node("$var_1", "vector", "documents", "payment plan", filter="document_id = 'memo-collections-2024Q3'"),
            node(
                "$var_2",
                "graph",
                "invoices",
                "the invoices in $var_1.linked_keys",
                should_expose_answer=True,
                answer_description="invoices",
            ),
        ),
    )
    search, invoices = Executor(lake, scripted(select=pick_first), SERIAL).run(plan)
    assert search.ok and invoices.ok, (search.error, invoices.error)
    cited = search.rows[0]["linked_keys"]
    assert len(cited) == 5 and all(key.startswith("INV-") for key in cited)
    assert sorted(r["invoice_id"] for r in invoices.rows) == sorted(cited)


def test_the_fallback_search_reads_the_collection_that_best_answers_the_question(sample_lake):
    """With several collections, a question that says documents tell it, when nothing was retrieved,
    falls back to the collection whose best passage the cross-encoder scores highest."""
    from lakeplanner.execute.ask import passage_scores
    from lakeplanner.plan.routing import best_collection, fallback_search

    lake, _ = sample_lake
    scores = passage_scores(lake)
    from lakeplanner.question import read_question

    question = "How many days' notice does termination for convenience require under the contract?"
    collections = ["documents", "documents_contracts", "documents_invoices"]
    assert best_collection(scores, question, collections) == "documents_contracts"
    plan = framed(Plan(question=question, nodes=(node("$var_1", "sql", "customers", "notice period"),)))
    [search] = fallback_search(plan, read_question(question), lake.contract, scores).nodes
    assert (search.label, search.tool, search.source) == ("$var_2", "vector", "documents_contracts")
    table_question = "Which customer signed up first?"  # its SQL failed: documents that name customers are no answer
    plan = framed(Plan(question=table_question, nodes=(node("$var_1", "sql", "customers", "first signup"),)))
    assert fallback_search(plan, read_question(table_question), lake.contract, scores) is None
    unnamed = "Within how many days must a late fee be disputed?"  # no table, column or value of the lake
    plan = framed(Plan(question=unnamed, nodes=(node("$var_2", "sql", "customers", "dispute window"),)))
    [search] = fallback_search(plan, read_question(unnamed), lake.contract, scores).nodes
    assert search.source in collections and search.label == "$var_3"  # a label no step has


EVENTS = [
    ["shipment_id", "dispatched_at", "delivered_at", "status", "weight_kg", "currency"],
    ["S1", "2023-03-01T08:00:00Z", "2023-03-02T08:00:00Z", "delayed", "100.5", "EUR"],
    ["S2", "2023-07-01T08:00:00Z", "2023-07-01T18:00:00Z", "delivered", "200", "EUR"],
    ["S3", "2023-12-31T20:00:00Z", "2024-01-02T08:00:00Z", "delayed", "50", "USD"],
    ["S4", "2024-02-01T08:00:00Z", "2024-02-03T08:00:00Z", "delayed", "300", "EUR"],
    ["S5", "2024-05-01T08:00:00Z", "2024-05-01T12:00:00Z", "delivered", "400", "EUR"],
    ["S6", "2024-06-01T08:00:00Z", "2024-06-04T12:00:00Z", "delayed", "25", "USD"],
    ["S7", "2024-09-01T08:00:00Z", "2024-09-04T12:00:00Z", "delayed", "75", "EUR"],
]


@pytest.fixture(scope="module")
def events_lake(tmp_path_factory):
    import csv

    from lakeplanner import Lake

    source = tmp_path_factory.mktemp("events") / "src"
    source.mkdir()
    with (source / "shipments.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows(EVENTS)
    lake = Lake.create(source.parent / "lake")
    lake.ingest(source)
    yield lake
    lake.close()


@pytest.mark.parametrize(
    ("question", "written", "expected"),
    [
        # a count per year of the events' date, with the category the question names
        ("How did the number of delayed shipments change from 2023 to 2024?", "SELECT * FROM shipments", "1"),
        # a total per year of the column the question names; the statement's filter is kept
        (
            "By how much did the total weight shipped change between 2023 and 2024?",
            "SELECT weight_kg, dispatched_at FROM shipments WHERE currency = 'EUR'",
            "474.50",
        ),
    ],
)
def test_a_change_between_years_of_an_event_table_is_its_measure_per_year_of_the_events_date(
    events_lake, question, written, expected
):
    plan = {
        "nodes": [
            {
                "question": question,
                "tool": "sql",
                "source": "shipments",
                "should_expose_answer": True,
                "answer_description": "the change",
            }
        ]
    }
    draft = {"answer": "0", "sentence": "No change.", "sources": ["R1"], "abstain": False}
    llm = scripted(plan=plan, sql={"sql": written}, draft=draft)
    answer = events_lake.ask(question, llm=llm, settings=SERIAL, use_cache=False)
    [result] = answer.nodes
    assert [r["year"] for r in result.rows] == [2023, 2024], result.rows
    assert answer.value == expected, (answer.reason, answer.text, result.rows)
    assert len([c for c in answer.citations if c.kind == "row"]) >= 2


def test_a_chain_runs_in_process_and_a_plan_with_branches_on_ray(sample_lake):
    from lakeplanner.execute.engine import has_branches

    lake, _ = sample_lake
    chain = Plan(
        question="q",
        nodes=(
            PlanNode(question="a", tool="sql", label="$var_1", source="customers"),
            PlanNode(question="b using $var_1.customer_id", tool="sql", label="$var_2", source="invoices"),
        ),
    )
    branches = chain.model_copy(
        update={"nodes": (*chain.nodes, PlanNode(question="c", tool="sql", label="$var_3", source="invoices"))}
    )
    assert not has_branches(chain) and has_branches(branches)
    auto = Executor(lake, LLM(FakeBackend()), ExecSettings())
    assert auto.mode_for(chain) == "serial" and auto.mode_for(branches) == "ray"
    assert Executor(lake, LLM(FakeBackend()), ExecSettings(mode="ray")).mode_for(chain) == "ray"
    auto._actor = object()  # once its actor holds Milvus Lite, every plan of this executor goes to it
    assert auto.mode_for(chain) == "ray"


def test_a_table_referring_to_itself_is_listed_with_the_aliases_its_join_needs():
    from lakeplanner.contract.models import ForeignKey
    from lakeplanner.execute.sql.prompt import join_line

    def key(source, column, target, target_column):
        return ForeignKey(
            source=source,
            column=column,
            target=target,
            target_column=target_column,
            overlap=1.0,
            confidence=0.9,
            cardinality="N:1",
        )

    assert join_line(key("orders", "placed_by", "staff", "staff_id")) == "orders.placed_by = staff.staff_id"
    assert join_line(key("staff", "supervisor", "staff", "staff_id")) == (
        "staff.supervisor = staff.staff_id (another staff row: "
        "FROM staff AS t JOIN staff AS supervisor ON t.supervisor = supervisor.staff_id)"
    )
    parse_select(
        "SELECT supervisor.full_name FROM staff AS t JOIN staff AS supervisor ON t.supervisor = supervisor.staff_id"
    )


def test_a_search_where_no_passage_is_relevant_is_also_run_where_one_is(sample_lake):
    from lakeplanner.execute.ask import passage_scores
    from lakeplanner.plan.routing import searched_where_passages_answer

    lake, _ = sample_lake
    scores = passage_scores(lake)
    asked = "How many days' notice does termination for convenience require?"
    misrouted = node("$var_1", "vector", "documents_invoices", asked, should_expose_answer=True)
    plan, edits = searched_where_passages_answer(
        framed(Plan(question=asked, nodes=(misrouted,))), lake.contract, scores
    )
    [_, sibling] = plan.nodes
    assert (sibling.label, sibling.source, sibling.question, sibling.should_expose_answer) == (
        "$var_2",
        "documents_contracts",
        asked,
        True,
    )
    assert edits[0].startswith("$var_1 also searched in documents_contracts as $var_2")
    routed = framed(Plan(question=asked, nodes=(misrouted.model_copy(update={"source": "documents_contracts"}),)))
    assert searched_where_passages_answer(routed, lake.contract, scores) == (routed, [])
    twice = Plan(
        question=asked, nodes=(misrouted, misrouted.model_copy(update={"label": "$var_2", "source": "documents"}))
    )
    assert [n.source for n in searched_where_passages_answer(twice, lake.contract, scores)[0].nodes][2:] == [
        "documents_contracts"
    ]
    narrowed = misrouted.model_copy(update={"question": "notice period in documents with document_id in $var_1.x"})
    first = node("$var_1", "sql", "customers", "x of the customer", returns=("x",))
    chained = framed(Plan(question=asked, nodes=(first, narrowed.model_copy(update={"label": "$var_2"}))))
    assert searched_where_passages_answer(chained, lake.contract, scores) == (chained, [])


def test_a_key_filter_the_question_never_asked_for_is_dropped(sample_lake):
    """The SQL writer copied a customer id from the prompt's example rows into a question that names no
    customer: the filter goes. A key the question names, itself or by its row's name, stays."""
    lake, _ = sample_lake
    from lakeplanner.execute.engines import DuckDBEngine
    from lakeplanner.execute.sql.probes import drop_unasked_key_filters

    columns, engine = LakeSchema.from_contract(lake.contract).tables, DuckDBEngine(lake)

    def dropped(sql: str, asked: str, keep: set[str] = frozenset()) -> tuple[list[str], str]:
        statement = parse_select(sql)
        edits = drop_unasked_key_filters(statement, engine, lake.contract, columns, QuestionFrame(text=asked), keep)
        return edits, statement.sql("duckdb")

    invented = "SELECT COUNT(*) FROM invoices WHERE customer_id = 'C002' AND status = 'paid'"
    edits, sql = dropped(invented, "How many invoices have been paid?")
    assert edits == ["customer_id = 'C002' dropped (the question names neither it nor its row)"]
    assert sql == "SELECT COUNT(*) FROM invoices WHERE status = 'paid'"
    assert dropped("SELECT city FROM customers WHERE customer_id = 'C002'", "Where are customers based?")[1] == (
        "SELECT city FROM customers"
    )
    for asked in ("How many invoices of C002 are paid?", "How many invoices of Nordlicht Energie are paid?"):
        assert dropped(invented, asked)[0] == []
    assert dropped(invented, "How many invoices have been paid?", keep={"C002"})[0] == []  # bound from a step
    assert dropped(invented.replace("C002", "C999"), "How many invoices have been paid?")[0] == []  # no such row
    category = "SELECT COUNT(*) FROM invoices WHERE status = 'overdue'"
    assert dropped(category, "How many invoices are there?")[0] == []  # not a key column
    chosen = (
        "SELECT COUNT(*) FROM invoices WHERE customer_id IN "
        "(SELECT customer_id FROM customers WHERE name = 'Nordlicht Energie AG')"
    )
    edits, sql = dropped(chosen, "How many invoices are there?")  # a row's label, in a subquery
    assert sql == "SELECT COUNT(*) FROM invoices WHERE customer_id IN (SELECT customer_id FROM customers)"
    named = "SELECT COUNT(*) FROM invoices WHERE customer_id = 'Nordlicht Energie AG' AND status = 'paid'"
    assert dropped(named, "How many invoices have been paid?")[0] == [  # a row's label in the key's place
        "customer_id = 'Nordlicht Energie AG' dropped (the question names neither it nor its row)"
    ]


def test_the_documents_of_the_one_row_a_question_names_are_found_through_its_link(sample_lake, logistics):
    """When tables could not answer a question about a row it names, the documents searched are that
    row's own (the table's link column, else that of the one table it joins holding one), filtered to it."""
    from lakeplanner.execute.engines import DuckDBEngine
    from lakeplanner.plan.cache import known_values
    from lakeplanner.plan.own_documents import own_documents_search
    from lakeplanner.question import read_question
    from lakeplanner.question.read import with_values

    def searched(lake, question: str) -> Plan | None:
        frame = with_values(read_question(question), known_values(lake).find(question))
        return own_documents_search(framed(Plan(question=question)), frame, lake.contract)

    sales, _ = sample_lake
    reader, search = searched(sales, "What notice period applies to customer C001?").nodes
    assert (reader.source, reader.returns, reader.should_expose_answer) == (
        "customers",
        ("contract_document_id",),
        False,
    )
    assert (search.tool, search.filter) == ("vector", "document_id IN $var_1.contract_document_id")
    assert search.should_expose_answer and search.question == "What notice period applies?"  # asked of the row
    [row] = DuckDBEngine(sales).run(parse_select(reader.sql)).table.to_pylist()
    assert row == {"contract_document_id": "CTR-C001"}

    reader, search = searched(logistics, "Which penalty applies to the carrier of shipment shp-20001?").nodes
    assert search.source == "documents_contracts" and search.filter == "document_id IN $var_1.agreement"
    [row] = DuckDBEngine(logistics).run(parse_select(reader.sql)).table.to_pylist()
    assert row == {"agreement": "CA-RHNL"}  # the shipment's carrier's agreement, through the join
    assert searched(sales, "What notice periods do contracts set?") is None  # no row named
    assert searched(sales, "Compare customers C001 and C002.") is None  # not one row
    assert searched(sales, "What notice period applies to Enterprise customers?") is None  # a category, not a row


def test_a_count_of_zero_over_a_value_no_row_holds_is_no_answer(sample_lake):
    """COUNT(*) = 0 because the statement filtered on a name the lake does not hold (made up) is
    retried with the held values, and is an error if it stays so; a value the question names may
    rightly count nothing."""
    lake, _ = sample_lake
    miss = "SELECT count(*) AS n FROM customers WHERE name ILIKE 'Acme Widgets%'"
    hit = "SELECT count(*) AS n FROM customers WHERE segment = 'Enterprise'"
    result, llm = customers_sql_node(lake, "number of customers in the biggest segment", miss, hit)
    assert result.ok and result.rows[0]["n"] == 14 and len(llm.backend.calls) == 2
    result, llm = customers_sql_node(lake, "number of customers called Acme Widgets", miss)
    assert result.ok and result.rows[0]["n"] == 0  # the question's own value
    result, _ = customers_sql_node(lake, "number of customers in the biggest segment", miss, miss, miss)
    assert not result.ok and "no row holds name 'Acme Widgets%'" in result.error


def test_unheld_filters_name_the_strings_no_category_value_matches():
    from lakeplanner.execute.sql.values import unheld_filters

    categories = {"carriers.name": ["Northway Haulage Ltd", "Baltix Freight SIA"], "carriers.mode": ["road", "rail"]}
    sql = (
        "SELECT count(*) FROM carriers WHERE name LIKE 'North%' AND mode IN ('rail', 'sea') "
        "AND name <> 'x' AND mode = 'ROAD' OR name ILIKE 'Probation%'"
    )
    assert sorted(unheld_filters(parse_select(sql), categories)) == ["mode 'sea'", "name 'Probation%'"]
    assert (
        unheld_filters(parse_select(sql), categories, keep={"sea"}, asked=QuestionFrame(text="probation carriers"))
        == []
    )


def test_a_word_of_a_column_name_does_not_name_a_row(logistics):
    """ "freight cost" names a column; a carrier called "... Freight ..." is not what it asks for."""
    from lakeplanner.execute.engines import DuckDBEngine
    from lakeplanner.execute.sql.probes import drop_unasked_key_filters

    columns = LakeSchema.from_contract(logistics.contract).tables
    statement = parse_select(
        "SELECT SUM(freight_cost) FROM shipments WHERE carrier IN "
        "(SELECT carrier_code FROM carriers WHERE name = 'Baltix Freight SIA')"
    )
    asked = "What freight cost did the shipments to Oslo incur?"
    edits = drop_unasked_key_filters(
        statement, DuckDBEngine(logistics), logistics.contract, columns, QuestionFrame(text=asked)
    )
    assert edits == ["name = 'Baltix Freight SIA' dropped (the question names neither it nor its row)"]
    assert "Baltix" not in statement.sql("duckdb")


def test_a_bound_value_is_compared_with_the_column_that_holds_it(logistics):
    """A search read the carrier's code in a memo; the SQL compared it with the carriers' names."""
    from lakeplanner.execute.engines import DuckDBEngine
    from lakeplanner.execute.sql.probes import compare_bound_values_where_held

    columns = LakeSchema.from_contract(logistics.contract).tables
    engine = DuckDBEngine(logistics)
    sql = "SELECT COUNT(*) FROM shipments WHERE carrier IN (SELECT carrier_code FROM carriers WHERE name ILIKE 'IBRF')"
    statement = parse_select(sql)
    assert compare_bound_values_where_held(statement, engine, columns, keep={"IBRF"}) == [
        "name compared with 'IBRF' -> carrier_code (the column that holds it)"
    ]
    assert "carrier_code ILIKE 'IBRF'" in statement.sql("duckdb")
    asked = parse_select("SELECT COUNT(*) FROM carriers WHERE name ILIKE 'IBRF'")
    assert compare_bound_values_where_held(asked, engine, columns, keep=set()) == []  # not bound: not ours
    named = parse_select("SELECT country FROM carriers WHERE name = 'Iberfreight Transportes S.A.'")
    assert compare_bound_values_where_held(named, engine, columns, keep={"Iberfreight Transportes S.A."}) == []


def test_filters_beside_a_bound_choice_that_the_question_never_asks_are_dropped(logistics):
    from lakeplanner.execute.sql.rewrites import drop_filters_beside_bound_choice

    columns = LakeSchema.from_contract(logistics.contract).tables
    sql = (
        "SELECT COUNT(*) FROM shipments WHERE YEAR(dispatched_at) = 2024 AND carrier IN (SELECT carrier_code "
        "FROM carriers WHERE carrier_code = 'IBRF' AND rating < 4.0 AND agreement LIKE 'CA-%' AND mode = 'road')"
    )
    statement = parse_select(sql)
    asked = "The memo puts one road carrier on probation. How many shipments did it handle in 2024?"
    edits = drop_filters_beside_bound_choice(statement, columns, {"IBRF"}, QuestionFrame(text=asked))
    assert len(edits) == 2 and all("dropped" in e for e in edits)
    kept = statement.sql("duckdb")
    assert "rating" not in kept and "agreement" not in kept
    assert "mode = 'road'" in kept and "= 2024" in kept  # the question names them
    rated = parse_select("SELECT name FROM carriers WHERE carrier_code = 'IBRF' AND rating < 4.0")
    assert (
        drop_filters_beside_bound_choice(rated, columns, {"IBRF"}, QuestionFrame(text="Is its rating below 4.0?")) == []
    )
    assert (
        drop_filters_beside_bound_choice(rated, columns, set(), QuestionFrame(text=asked)) == []
    )  # nothing bound chose the row


def test_a_step_asking_a_rows_reference_reads_it_not_the_rows_own_key(logistics):
    """ "supervisor of X" returning staff_id: the supervisor's id, which X's supervisor column holds."""
    from lakeplanner.execute.sql.rewrites import select_asked_reference

    own = (
        "SELECT t1.staff_id AS staff_id FROM staff AS t1 JOIN staff AS t2 ON t1.supervisor = t2.staff_id "
        "WHERE t1.full_name = 'X'"
    )
    statement = parse_select(own)
    edits = select_asked_reference(
        statement, QuestionFrame(text="supervisor of the staff named X"), ["staff_id"], logistics.contract
    )
    assert edits == ["staff_id read from supervisor (the step asks the supervisor, not the row's own staff_id)"]
    assert statement.sql("duckdb").startswith("SELECT t1.supervisor AS staff_id FROM")
    supervised = parse_select("SELECT staff_id FROM staff WHERE supervisor = 'E1045'")
    asked = "staff members whose supervisor is E1045"
    assert (
        select_asked_reference(supervised, QuestionFrame(text=asked), ["staff_id"], logistics.contract) == []
    )  # filtered on it
    unnamed = parse_select(own)
    assert (
        select_asked_reference(unnamed, QuestionFrame(text="the staff named X"), ["staff_id"], logistics.contract) == []
    )


def test_a_search_step_keeps_only_a_read_value_its_passages_state_and_its_question_does_not():
    """A hop that answers with the name it searched by found nothing new: later steps get no value."""
    from lakeplanner.execute.nodes import read_value
    from lakeplanner.execute.results import Evidence
    from lakeplanner.question import read_question

    text = "The driver known on the radio as Red Fox is Omar Haddad, who joined the Leeds depot in 2019."
    result = NodeResult(
        label="$var_1",
        tool="vector",
        source="profiles",
        question="Who is the driver known as Red Fox?",
        evidence=[Evidence.of("paragraph", "profiles/p1", (0, len(text)), text)],
    )
    frame = read_question("Who is the driver known as Red Fox?")
    assert read_value("Omar Haddad", result, frame) == "Omar Haddad"
    assert read_value("Red Fox", result, frame) is None
    assert read_value("Ann Lee", result, frame) is None  # no passage states it
