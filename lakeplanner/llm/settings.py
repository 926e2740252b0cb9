"""LLM configuration: environment variables (LAKEPLANNER_LLM_*) over lakeplanner.toml's [llm] table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource


def config_file() -> Path:
    """lakeplanner.toml in the working directory, or the file LAKEPLANNER_CONFIG names."""
    return Path(os.environ.get("LAKEPLANNER_CONFIG", "lakeplanner.toml"))


class TableSettings(BaseSettings):
    """Settings from environment variables over one table (`toml_table`) of lakeplanner.toml."""

    toml_table: ClassVar[str]

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, TomlTableSource(settings_cls, cls.toml_table)


class LLMSettings(TableSettings):
    """Which backend answers, and how it decodes. Every field can be set as LAKEPLANNER_LLM_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="LAKEPLANNER_LLM_", extra="forbid")
    toml_table = "llm"

    backend: Literal["local", "openai", "vllm", "fake"] = Field("local", description="which backend answers")
    model: str = Field(
        "default",
        description="local: 'default' (Qwen2.5-Coder-1.5B) or 'small' (0.5B) or a "
        "GGUF path; openai/vllm: the served model name or path",
    )
    routes: dict[str, str] = Field(
        {},
        description="calls of a purpose answered by another model, named as `model` is: "
        '{"hseq.select": "small"} sends evidence selection to the 0.5B (purposes: frame, plan, sql.write, '
        "hseq.select, synthesize, synthesize.repair)",
    )
    threads: int | None = Field(None, description="CPU threads for the local model (default: all cores)")
    context_tokens: int = Field(8192, description="context window of the local model")
    prefix_cache_mb: int = Field(
        512, description="local: memory (and disk) for KV states of fixed prompt prefixes kept across calls (0: off)"
    )
    prefix_states_on_disk: bool = Field(True, description="local: also keep them on disk for later processes")
    prefix_states_dir: Path | None = Field(
        None, description="local: where on disk (default: prefix-states/ in the model cache directory)"
    )
    max_tokens: int = Field(512, description="largest completion")
    seed: int = Field(0, description="sampling seed; decoding is greedy (temperature 0) anyway")
    timeout_s: float = Field(300.0, description="per-call limit: local generation and each endpoint request")
    repair_attempts: int = Field(2, description="re-asks with the validation error before giving up")
    endpoint_retries: int = Field(3, description="retries of an unreachable endpoint before giving up")
    base_url: str = Field("http://127.0.0.1:8000/v1", description="openai: the server's /v1 URL")
    api_key: str = Field("not-needed", description="openai: bearer token")
    cache_dir: Path | None = Field(
        None, description="where assembled GGUF files are kept (default: $XDG_CACHE_HOME/lakeplanner/models)"
    )
    num_gpus: float = Field(1.0, description="vllm: GPUs per Ray actor")
    ray_address: str | None = Field(None, description="vllm: Ray cluster address (default: local Ray)")


class TomlTableSource(TomlConfigSettingsSource):
    """Reads one table ([llm], [execute]) of lakeplanner.toml."""

    def __init__(self, settings_cls: type[BaseSettings], table: str) -> None:
        super().__init__(settings_cls, toml_file=config_file())
        self.table = table

    def __call__(self) -> dict:
        return dict(self.toml_data.get(self.table, {}))
