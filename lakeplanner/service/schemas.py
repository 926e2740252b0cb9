"""Request and response bodies of the HTTP API (the OpenAPI schema at /docs is built from them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lakeplanner.execute.results import Citation
from lakeplanner.lineage.steps import Usage
from lakeplanner.plan.extension import Extension, SchemaVersion, Term
from lakeplanner.plan.model import Plan


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AskRequest(_Request):
    question: str = Field(min_length=1, description="the question, in plain language")
    role: str | None = Field(None, description="one of the caller's roles (default: its first)")
    use_cache: bool = Field(True, description="serve an equivalent cached plan when there is one")


class PlanRequest(AskRequest):
    pass


class AskResponse(BaseModel):
    question: str
    value: str | None
    items: list[str]
    sentence: str
    citations: list[Citation]
    confidence: float
    abstained: bool
    reason: str | None
    trace_id: str | None
    plan: Plan | None
    plan_cache: str | None
    usage: Usage
    timings: dict[str, float]
    principal: str
    role: str


class PlanResponse(BaseModel):
    question: str
    ok: bool
    plan: Plan
    cache: str | None
    findings: list[dict[str, Any]]
    edits: list[str]
    advice: list[str]
    tables_shown: list[str]
    role: str


class TraceSummary(BaseModel):
    trace_id: str
    at: datetime
    principal: str
    role: str
    question: str
    value: str | None
    abstained: bool
    confidence: float
    input_tokens: int
    output_tokens: int
    seconds: float
    sources: list[str]


class TracePage(BaseModel):
    total: int
    offset: int
    limit: int
    items: list[TraceSummary]


class SchemaGaps(BaseModel):
    question: str
    sufficient: bool = Field(description="the contract names every term of the question")
    unresolved: list[str] = Field(description="the terms it names nothing for")
    proposed: Extension | None = Field(
        None, description="with `propose`: what the model would add for this question only (not saved)"
    )


class ExtensionRequest(Term):
    model_config = ConfigDict(extra="forbid")

    role: str | None = Field(None, description="one of the caller's roles (default: its first)")


class ExtensionResponse(BaseModel):
    changed: bool = Field(description="false when the contract already held the term")
    revision: int = Field(description="the contract's revision now")
    version: SchemaVersion | None = Field(None, description="the version-log entry the change made")


class SchemaVersions(BaseModel):
    revision: int
    items: list[SchemaVersion] = Field(description="oldest first")


class ErrorBody(BaseModel):
    error: str
    hint: str | None = None
