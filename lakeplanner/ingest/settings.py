"""Where a lake keeps its data: environment variables (LAKEPLANNER_LAKE_*) over lakeplanner.toml's [lake].

By default everything sits in the lake directory (an SQLite Iceberg catalog, a local folder of table
files, a Milvus Lite file); on a cluster the same lake points at a shared catalog, object storage and a Milvus
server, and the lake directory keeps only the contract, the plan cache and the traces."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from lakeplanner.llm.settings import TableSettings


class LakeSettings(TableSettings):
    """Every field can be set as LAKEPLANNER_LAKE_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="LAKEPLANNER_LAKE_", extra="forbid")
    toml_table = "lake"

    catalog_uri: str | None = Field(
        None,
        description="Iceberg catalog: a SQLAlchemy URI (postgresql+psycopg://..., sqlite:///...) for a SQL catalog, "
        "or http(s)://... for a REST catalog (default: catalog.db in the lake directory)",
    )
    warehouse: str | None = Field(
        None, description="where table data goes: a path or s3://bucket/prefix (default: warehouse/ in the lake)"
    )
    milvus_uri: str | None = Field(
        None, description="Milvus: http(s)://host:19530 for a server (default: milvus.db in the lake, Milvus Lite)"
    )
    milvus_token: str | None = Field(None, description="Milvus server token (user:password or an API key)")

    def milvus_target(self, lake_dir: Path) -> str:
        return self.milvus_uri or str((lake_dir / "milvus.db").resolve())
