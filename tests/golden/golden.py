"""One question asked and pinned: its plan, the SQL each step ran (DuckDB, and as sent to Trino), the answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sqlglot

from lakeplanner import Lake, sample_lake_path
from lakeplanner.execute.engines import TrinoEngine
from lakeplanner.execute.results import Answer, NodeResult
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm.base import LLM, Backend
from lakeplanner.llm.settings import LLMSettings
from lakeplanner.plan.model import PlanNode
from lakeplanner.plan.planner import PlanResult

HERE = Path(__file__).resolve().parent
LAKES = ("sales", "logistics")


def lake_dir(lake: str) -> Path:
    return HERE / lake


def cassette_path(lake: str) -> Path:
    return lake_dir(lake) / "cassette.json"


def golden_path(lake: str, index: int) -> Path:
    return lake_dir(lake) / f"q{index:02d}.json"


def questions(lake: str) -> list[str]:
    items = json.loads((sample_lake_path(lake) / "questions.json").read_text())
    return [item["question"] for item in items]


def recorded(lake: str) -> list[Path]:
    return sorted(lake_dir(lake).glob("q*.json"))


def read_golden(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def write_golden(path: Path, golden: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(readable(golden) + "\n")


def readable(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def ask_pinned(lake: Lake, question: str, backend: Backend, settings: LLMSettings) -> dict[str, Any]:
    """Ask `question` in process, in order, without the plan cache; the golden record of what happened."""
    plans: list[PlanResult] = []
    answer = lake.ask(
        question,
        llm=LLM(backend, settings),
        settings=ExecSettings(mode="serial"),
        use_cache=False,
        on_plan=plans.append,
    )
    return golden_of(question, plans[-1] if plans else None, answer)


def golden_of(question: str, planned: PlanResult | None, answer: Answer) -> dict[str, Any]:
    return {
        "question": question,
        "plan": plan_record(planned),
        "ran": [node_run(result) for result in answer.nodes],
        "answer": {"value": answer.value, "abstained": answer.abstained},
    }


def plan_record(planned: PlanResult | None) -> dict[str, Any] | None:
    if planned is None:
        return None
    return {
        "valid": planned.ok,
        "replans": planned.replans,
        "edits": list(planned.edits),
        "nodes": [node_record(node) for node in planned.plan.nodes],
    }


def node_record(node: PlanNode) -> dict[str, Any]:
    return {
        "label": node.label,
        "tool": node.tool,
        "source": node.source,
        "question": node.question,
        "sql": node.sql,
        "filter": node.filter,
        "returns": list(node.returns),
        "exposed": node.should_expose_answer,
    }


def node_run(result: NodeResult) -> dict[str, Any]:
    """What a step ran: its statements as DuckDB ran them and as lakeplanner's Trino engine would send
    them (snapshot pins left out: snapshot ids differ between ingestions), and the rows each returned."""
    return {
        "label": result.label,
        "tool": result.tool,
        "source": result.source,
        "sql": [{"duckdb": run.sql, "trino": trino_sql(run.sql), "rows": run.rows} for run in result.sql],
        "error": result.error,
    }


def trino_sql(duckdb_sql: str) -> str:
    """`duckdb_sql` as TrinoEngine transpiles it (the engine keeps no state its transpiling reads)."""
    statement = sqlglot.parse_one(duckdb_sql, read="duckdb")
    return TrinoEngine.transpile(object.__new__(TrinoEngine), statement, {})
