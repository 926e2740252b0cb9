"""Planning configuration: environment variables (LAKEPLANNER_PLAN_*) over lakeplanner.toml's [plan]."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from lakeplanner.llm.settings import TableSettings


class PlanSettings(TableSettings):
    """How questions are planned. Every field can be set as LAKEPLANNER_PLAN_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="LAKEPLANNER_PLAN_", extra="forbid")
    toml_table = "plan"

    audit: bool = Field(
        False,
        description="after a drafted plan validates, one LLM call asks whether it answers the question asked "
        "(seed 000 §3.3); a plan it flags is drafted once more with the problems as feedback",
    )
