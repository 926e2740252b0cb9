"""Service configuration: environment variables (LAKEPLANNER_SERVE_*) over lakeplanner.toml's [serve]."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from lakeplanner.llm.settings import TableSettings


class ServeSettings(TableSettings):
    """How `lakeplanner serve` runs. Every field can be set as LAKEPLANNER_SERVE_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="LAKEPLANNER_SERVE_", extra="forbid")
    toml_table = "serve"

    host: str = Field("127.0.0.1", description="address to listen on")
    port: int = Field(8321, description="port to listen on")
    queue: int = Field(8, description="questions that may wait while one runs; more get 429")
    retry_after_s: int = Field(30, description="the Retry-After a 429 suggests")
    max_question_chars: int = Field(4000, description="longest question accepted")
    policy: Path | None = Field(None, description="role policy YAML (default: <lake>/policy.yaml when present)")
    api_keys: Path | None = Field(None, description="API key file (YAML: name, sha256, roles, claims)")
    api_keys_json: str | None = Field(None, description="the same entries as a JSON list (for a secret in env)")
    jwt_issuer: str | None = Field(None, description="OIDC issuer whose bearer tokens are accepted")
    jwt_audience: str | None = Field(None, description="the audience tokens must name")
    jwks_url: str | None = Field(None, description="the issuer's JWKS URL")
    jwks_file: Path | None = Field(None, description="a JWKS file (instead of jwks_url)")
    roles_claim: str = Field("roles", description="the token claim that lists the principal's roles")
    anonymous_role: str | None = Field(
        None, description="role of requests without credentials (default: none when auth is configured)"
    )

    @property
    def auth_configured(self) -> bool:
        return bool(self.api_keys or self.api_keys_json or self.jwt_issuer)
