"""Execution configuration: environment variables (LAKEPLANNER_EXEC_*) over lakeplanner.toml's [execute]."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from lakeplanner.llm.settings import TableSettings


class ExecSettings(TableSettings):
    """How plans run. Every field can be set as LAKEPLANNER_EXEC_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="LAKEPLANNER_EXEC_", extra="forbid")
    toml_table = "execute"

    mode: Literal["auto", "ray", "serial"] = Field(
        "auto",
        description="auto: a Ray task graph for a plan whose steps can run at once, in process for a chain; "
        "ray: always a Ray task graph; serial: in process, in order",
    )
    ray_address: str | None = Field(None, description="Ray cluster address (default: start Ray locally)")
    ray_cpus: int | None = Field(None, description="CPUs for a local Ray (default: all cores)")
    node_timeout_s: float = Field(600.0, description="the longest one node may run")
    sql_engine: Literal["duckdb", "trino"] = Field("duckdb", description="where SQL nodes run")
    trino_host: str = "127.0.0.1"
    trino_port: int = 8080
    trino_scheme: Literal["http", "https"] = "http"
    trino_user: str = "lakeplanner"
    trino_catalog: str = "iceberg"
    trino_schema: str = "lake"
    row_cap: int = Field(200, description="rows a node keeps for its successors and the answer")
    binding_cap: int = Field(500, description="values of one bound column passed to a successor")
    sql_retries: int = Field(2, description="times a failing SQL statement is rewritten with its error")
    search_limit: int = Field(12, description="chunks hybrid search returns before reranking")
    window: int = Field(6, description="HSEQ: segments shown per iteration step")
    top_k: int = Field(3, description="HSEQ: segments the LLM may select per step")
    min_steps: int = Field(1, description="HSEQ: T_min, steps before a sufficiency flag may stop")
    max_steps: int = Field(3, description="HSEQ: T_max")
    evidence_tokens: int = Field(1200, description="HSEQ: token budget of the selected evidence")
    read_answers: bool = Field(
        True,
        description="answer a lookup that one document step (or the last hop of a chain of them) answered, with "
        "sufficiency, by the value its evidence selector read and the sentence stating it, without a synthesis call",
    )
    rank_whole_question: bool = Field(
        True,
        description="a document step that searches the question as it is answers from the reranker's best "
        "`window` passages in the answer's one call, without the evidence selector",
    )
    otlp_endpoint: str | None = Field(None, description="also export spans to this OTLP/HTTP endpoint")
    openlineage: str | None = Field(
        None,
        description="also emit an OpenLineage run event per answer and per batch run, to this JSON lines file or "
        "http(s):// endpoint (Marquez: http://HOST:5000/api/v1/lineage); needs lakeplanner[openlineage]",
    )
