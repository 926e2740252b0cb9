"""Role policies: loading, claims, the contract a role sees, the SQL guard, the validator's P001, and
enforcement on the real engines (DuckDB over Iceberg, Milvus Lite) with a scripted LLM."""

import pytest
import sqlglot
from restores import framed

from lakeplanner.errors import AccessDeniedError, PolicyError
from lakeplanner.execute.engine import Executor
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.cache import context_of
from lakeplanner.plan.findings import Code
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.plan.planner import Planner
from lakeplanner.plan.validate import validate
from lakeplanner.policy import OPEN, Policy, RolePolicy, denied_sources, guard, scoped_contract

SERIAL = ExecSettings(mode="serial")
POLICY = Policy(
    roles={
        "emea": RolePolicy(
            tables=["customers", "invoices"],
            collections=["documents_contracts"],
            masks={"customers": {"name": "hash", "city": "null"}},
            row_filters={"customers": "country = :claims.country"},
        ),
        "auditor": RolePolicy(replay=True, audit=True),
    }
)
COLUMNS = {"customers": ["customer_id", "name", "city", "country"], "invoices": ["invoice_id", "customer_id"]}


def emea(country="Germany"):
    return POLICY.grant("emea", "alice", {"country": country})


def sql_plan(source: str, sql: str) -> Plan:
    node = PlanNode(
        label="$var_1",
        tool="sql",
        source=source,
        question="q",
        sql=sql,
        should_expose_answer=True,
        answer_description="rows",
    )
    return framed(Plan(question="q", nodes=(node,)))


def test_a_policy_file_is_validated_with_messages_that_name_the_field(tmp_path):
    bad = tmp_path / "policy.yaml"
    bad.write_text("roles:\n  analyst:\n    tables: [customers]\n    masks: {customers: {name: blur}}\n")
    with pytest.raises(PolicyError, match=r"roles\.analyst\.masks\.customers\.name"):
        Policy.load(bad)
    bad.write_text("roles:\n  analyst:\n    row_filters: {customers: 'SELECT 1'}\n")
    with pytest.raises(PolicyError, match="predicate, not a statement"):
        Policy.load(bad)
    bad.write_text("roles: [\n")
    with pytest.raises(PolicyError, match="not YAML"):
        Policy.load(bad)
    good = tmp_path / "good.yaml"
    good.write_text("roles:\n  analyst:\n    tables: [customers]\n    row_filters: {customers: \"country = 'DE'\"}\n")
    assert Policy.load(good).roles["analyst"].tables == ["customers"]


def test_claims_are_bound_as_literals_and_a_missing_claim_is_denied():
    assert emea("Germany").row_filters == {"customers": "country = 'Germany'"}
    numeric = Policy(roles={"r": RolePolicy(row_filters={"t": "department_id = :claims.department"})})
    assert numeric.grant("r", "bob", {"department": 3}).row_filters == {"t": "department_id = 3"}
    with pytest.raises(AccessDeniedError, match="no claim 'department'"):
        numeric.grant("r", "bob", {})
    with pytest.raises(AccessDeniedError, match="no role 'ghost'"):
        POLICY.grant("ghost")


def test_the_policy_version_changes_with_its_content_and_keys_the_plan_cache():
    other = Policy(roles={**POLICY.roles, "auditor": RolePolicy(replay=False, audit=True)})
    assert POLICY.version != other.version
    assert context_of(emea()).key() != context_of(other.grant("emea", "a", {"country": "x"})).key()
    assert context_of(emea()).key() != context_of(POLICY.grant("auditor")).key()


def test_the_guard_filters_rows_masks_columns_and_denies_tables():
    statement = sqlglot.parse_one(
        "SELECT c.name, COUNT(*) AS n FROM customers AS c JOIN invoices AS i ON i.customer_id = c.customer_id "
        "GROUP BY c.name",
        read="duckdb",
    )
    ran, decisions = guard(statement, emea(), COLUMNS.__getitem__)
    text = ran.sql("duckdb")
    assert "WHERE country = 'Germany'" in text and 'SHA256(CAST("name" AS TEXT)) AS "name"' in text
    assert 'NULL AS "city"' in text and ") AS c JOIN invoices AS i" in text
    assert "masked customers.name (hash)" in decisions and "filtered customers: country = 'Germany'" in decisions
    with pytest.raises(AccessDeniedError, match="may not read products"):
        guard(sqlglot.parse_one("SELECT * FROM products"), emea(), COLUMNS.__getitem__)
    with_cte = sqlglot.parse_one("WITH x AS (SELECT * FROM customers) SELECT * FROM x", read="duckdb")
    assert "FROM x" in guard(with_cte, emea(), COLUMNS.__getitem__)[0].sql("duckdb")
    assert guard(statement, OPEN, COLUMNS.__getitem__) == (statement, [])


def test_a_role_sees_a_contract_without_its_denied_sources_and_masked_columns(sample_lake):
    lake, _ = sample_lake
    whole = lake.contract
    contract = scoped_contract(whole, emea())
    names = {s.name for s in contract.sources}
    assert "products" not in names and "customers" in names
    columns = {f.column: f for f in contract.fields_of("customers")}
    assert "city" not in columns and columns["name"].examples == [] and "masked" in columns["name"].tags
    assert all("products" not in (k.source, k.target) for k in contract.foreign_keys)
    assert {"products", "line_items"} <= denied_sources(lake.contract, emea())
    assert scoped_contract(whole, OPEN) is whole


def test_the_validator_names_a_denied_source(sample_lake):
    lake, _ = sample_lake
    schema = LakeSchema.from_contract(scoped_contract(lake.contract, emea()), denied_sources(lake.contract, emea()))
    findings = validate(sql_plan("products", "SELECT name FROM products"), schema)
    assert [f.code for f in findings] == [Code.denied_source]
    joined = sql_plan("customers", "SELECT c.country FROM customers c JOIN products p ON p.name = c.name")
    assert Code.denied_source in {f.code for f in validate(joined, schema)}


def test_the_planner_shows_a_role_only_what_it_may_read(sample_lake):
    lake, _ = sample_lake
    planner = Planner(lake, LLM(FakeBackend(["{}"])), access=emea(), use_cache=False)
    assert set(planner.schema.tables) == {"customers", "invoices"}
    assert "city" not in planner.schema.tables["customers"] and "name" in planner.schema.tables["customers"]
    assert planner.context == context_of(emea())


def test_execution_reads_only_the_rows_and_columns_the_role_may(sample_lake):
    lake, _ = sample_lake
    llm = LLM(FakeBackend(["{}"]))
    plan = sql_plan("customers", "SELECT * FROM customers")
    [everything] = Executor(lake, llm, SERIAL).run(plan)
    [governed] = Executor(lake, llm, SERIAL).run(plan, emea())
    assert governed.ok, governed.error
    assert {r["country"] for r in governed.rows} == {"Germany"}
    assert 0 < governed.rows_total < everything.rows_total
    names = {r["name"] for r in everything.rows}
    assert all(r.get("city") is None and len(r["name"]) == 64 and r["name"] not in names for r in governed.rows)
    [run] = governed.sql
    assert "country = 'Germany'" in run.sql  # the statement as run, for replay and the audit
    steps = [s for s in governed.steps if s.name == "sql.execute"]
    assert "masked customers.name (hash)" in steps[0].attributes["lakeplanner.policy.decisions"]


def test_a_step_on_a_denied_source_fails_with_the_decision_recorded(sample_lake):
    lake, _ = sample_lake
    llm = LLM(FakeBackend(["{}"]))
    [result] = Executor(lake, llm, SERIAL).run(sql_plan("products", "SELECT name FROM products"), emea())
    assert result.error == "role 'emea' may not read products"
    [check] = [s for s in result.steps if s.name == "policy.check"]
    assert check.attributes["lakeplanner.policy.decision"] == "denied"
    search = PlanNode(
        label="$var_1",
        tool="vector",
        source="invoices_docs",
        question="q",
        should_expose_answer=True,
        answer_description="a",
    )
    documents = [s.name for s in lake.contract.sources if s.kind.value == "documents"]
    collections = [name for name in documents if name != "documents_contracts"]
    if collections:
        search = search.model_copy(update={"source": collections[0]})
        [denied] = Executor(lake, llm, SERIAL).run(framed(Plan(question="q", nodes=(search,))), emea())
        assert "may not read" in denied.error


def test_a_search_keeps_out_documents_tied_to_rows_the_role_may_not_see(sample_lake):
    from lakeplanner.execute.services import Governed, LocalServices

    lake, _ = sample_lake
    german = {
        r["customer_id"] for r in lake.sql("SELECT customer_id FROM customers WHERE country = 'Germany'").to_pylist()
    }
    services = LocalServices(lake, LLM(FakeBackend(["{}"])))
    everything = services.search("documents_contracts", "payment terms of the agreement", "", 40)
    governed = Governed(services, emea()).search("documents_contracts", "payment terms of the agreement", "", 40)
    assert {h.chunk.linked_table for h in everything} == {"customers"}
    assert any(not set(h.chunk.linked_keys) & german for h in everything)
    assert governed and all(set(h.chunk.linked_keys) <= german for h in governed)


def test_a_row_filter_may_follow_a_key_to_its_parent_table(sample_lake):
    lake, _ = sample_lake
    by_parent = Policy(
        roles={
            "emea": RolePolicy(
                row_filters={
                    "invoices": "customer_id IN (SELECT customer_id FROM customers WHERE country = :claims.country)"
                }
            )
        }
    ).grant("emea", "alice", {"country": "Germany"})
    german = {
        r["customer_id"] for r in lake.sql("SELECT customer_id FROM customers WHERE country = 'Germany'").to_pylist()
    }
    llm = LLM(FakeBackend(["{}"]))
    [everything] = Executor(lake, llm, SERIAL).run(sql_plan("invoices", "SELECT invoice_id, customer_id FROM invoices"))
    [governed] = Executor(lake, llm, SERIAL).run(
        sql_plan("invoices", "SELECT invoice_id, customer_id FROM invoices"), by_parent
    )
    assert governed.ok, governed.error
    shown = {r["customer_id"] for r in governed.rows}
    assert shown and shown <= german and governed.rows_total < everything.rows_total


def test_a_table_whose_hidden_keys_cannot_all_be_named_keeps_all_its_documents_out(sample_lake, monkeypatch):
    from lakeplanner.execute import services
    from lakeplanner.execute.services import Governed, LocalServices

    lake, _ = sample_lake
    monkeypatch.setattr(services, "MAX_HIDDEN_KEYS", 1)
    governed = Governed(LocalServices(lake, LLM(FakeBackend(["{}"]))), emea())
    assert governed.hidden_rows == 'not (linked_table == "customers")'
    assert governed.search("documents_contracts", "payment terms of the agreement", "", 40) == []
