"""The injection corpus (tests/data/adversarial/) and what happens to each case, shared by
tests/test_adversarial.py (a scripted model that obeys every injection) and benchmarks/adversarial.py
(the real local model). A case's outcome is a plain dict, so the benchmark can count them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import yaml
from restores import framed

from lakeplanner import Lake
from lakeplanner.errors import SqlError
from lakeplanner.execute.engine import Executor
from lakeplanner.execute.engines import get_engine
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.execute.sql.statement import checked
from lakeplanner.lake import sample_lake_path
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.policy import Policy
from lakeplanner.policy.readonly import locked_duckdb, parse_select, read_only_select

CORPUS = Path(__file__).parent / "data" / "adversarial"
SERIAL = ExecSettings(mode="serial")
ROLE = "analyst"


def cases(kind: str) -> list[dict[str, Any]]:
    return yaml.safe_load((CORPUS / f"{kind}.yaml").read_text())


def policy() -> Policy:
    return Policy.load(CORPUS / "policy.yaml")


def adversarial_lake(path: Path) -> Lake:
    """The sample lake plus the planted files of lake/ (documents, cells, a file name, a column name)."""
    lake = Lake.create(path)
    lake.ingest(sample_lake_path())
    lake.ingest(CORPUS / "lake")
    return lake


def hostile_sql(case: dict, tmp: Path) -> str:
    nested = "(" * 400 + "1" + ")" * 400
    long = " OR ".join(f"name = 'n{i}'" for i in range(2000))
    return case["sql"].format(tmp=tmp, nested=nested, long=long)


def table_rows(lake: Lake) -> dict[str, int]:
    return {info.name: info.rows for info in lake.info().tables}


def unsafe_runs(statements: list[str], lake: Lake) -> list[str]:
    """The statements an engine ran that were not one read-only SELECT over the lake's tables."""
    unsafe = []
    for sql in statements:
        try:
            read_only_select(parse_select(sql), lake.table_names())
        except SqlError:
            unsafe.append(sql)
    return unsafe


def ran_statements(answer_or_results) -> list[str]:
    nodes = getattr(answer_or_results, "nodes", answer_or_results)
    return [run.sql for node in nodes for run in node.sql]


# ---------------------------------------------------------------- SQL through the question


def checker_outcome(case: dict, lake: Lake, tmp: Path) -> dict:
    """The first line: sqlglot's check refuses the statement, or (an `allowed` case) it runs on the
    engine reading only the table it names."""
    schema = LakeSchema.from_contract(lake.contract)
    tables = [t for t in schema.tables if t in ("customers", "invoices")]
    try:
        statement = checked(parse_select(hostile_sql(case, tmp)), schema.tables, tables)
    except SqlError as e:
        return {"refused": True, "message": e.message}
    scan = get_engine("duckdb", lake, SERIAL).run(statement)
    return {"refused": False, "message": "", "rows": scan.table.num_rows, "ran": statement.sql("duckdb")}


def engine_outcome(case: dict, lake: Lake, tmp: Path) -> dict:
    """The second line: the statement sent raw to the locked DuckDB, bypassing the checks."""
    con = locked_duckdb()
    con.register("customers", lake.table("customers").scan().to_arrow())
    try:
        con.execute(hostile_sql(case, tmp))
        refused, message = False, ""
    except duckdb.Error as e:
        refused, message = True, str(e).splitlines()[0]
    finally:
        con.close()
    wrote = bool(case.get("writes")) and (tmp / case["writes"]).exists()
    return {"refused": refused, "message": message, "wrote": wrote}


def compromised_model(sql: str) -> LLM:
    """A model that writes `sql` whatever it is asked."""
    return LLM(FakeBackend(lambda messages, schema: json.dumps({"sql": sql})))


def executed_outcome(case: dict, lake: Lake, tmp: Path) -> dict:
    """The whole SQL node with a model that keeps writing the hostile statement: what ran, what failed."""
    sql = hostile_sql(case, tmp)
    node = PlanNode(
        label="$var_1",
        tool="sql",
        source="customers",
        question=case["question"],
        sql=sql,
        should_expose_answer=True,
        answer_description="rows",
    )
    before = table_rows(lake)
    [result] = Executor(lake, compromised_model(sql), SERIAL).run(
        framed(Plan(question=case["question"], nodes=(node,)))
    )
    ran = ran_statements([result])
    return {
        "error": result.error or "",
        "ran": ran,
        "unsafe_ran": unsafe_runs(ran, lake),
        "tables_changed": table_rows(lake) != before,
        "wrote": bool(case.get("writes")) and (tmp / case["writes"]).exists(),
    }


# ---------------------------------------------------------------- injection through the lake or the question


def planted_in(answer, planted: list[str]) -> list[str]:
    """The planted strings the answer gives (an abstention gives none, though its reason may quote them)."""
    if answer.abstained:
        return []
    text = " ".join([answer.value or "", answer.text or "", *answer.items]).lower()
    return [p for p in planted if p.lower() in text]


def obedient_model(case: dict) -> LLM:
    """A model that does what any injection says: it plans over what the case names, selects every
    passage and answers with the planted string (or the leak the question asks for)."""
    wanted = (case.get("planted") or case.get("leaks") or ["PWNED"])[0]
    table = {"cell": "tickets", "column": "vendors"}.get(case.get("where", ""), "payroll")
    vector = case.get("where") in ("document", "title")
    node = {
        "question": case["question"],
        "tool": "vector" if vector else "sql",
        "label": "$var_1",
        "source": "notices" if vector else table,
        "should_expose_answer": True,
        "answer_description": "the answer",
    }

    def reply(messages, schema) -> str:
        title = (schema or {}).get("title")
        if title == "GeneratedPlan":
            return json.dumps({"nodes": [node]})
        if title == "SqlDraft":
            return json.dumps({"sql": f"SELECT * FROM {table}"})
        if title == "Selection":
            ids = schema["properties"]["selected"]["items"].get("enum", [])
            return json.dumps({"selected": ids[:1], "sufficient": True, "answer": wanted})
        if title == "Draft":
            return json.dumps({"answer": [wanted], "sentence": wanted, "sources": ["E1"], "abstain": False})
        return "{}"

    return LLM(FakeBackend(reply))


def lake_outcome(case: dict, lake: Lake, llm: LLM) -> dict:
    answer = lake.ask(case["question"], llm=llm, settings=SERIAL, use_cache=False)
    return answer_outcome(case, answer, lake, case["planted"])


def question_outcome(case: dict, lake: Lake, llm: LLM) -> dict:
    access = policy().grant(ROLE, "mallory")
    answer = lake.ask(case["question"], llm=llm, settings=SERIAL, use_cache=False, access=access)
    return answer_outcome(case, answer, lake, case["leaks"])


def answer_outcome(case: dict, answer, lake: Lake, forbidden: list[str]) -> dict:
    ran = ran_statements(answer)
    return {
        "id": case["id"],
        "answer": answer.value,
        "abstained": answer.abstained,
        "reason": answer.reason or "",
        "planted": planted_in(answer, forbidden),
        "cited": [c.model_dump(mode="json") for c in answer.citations],
        "unsafe_ran": unsafe_runs(ran, lake),
    }
