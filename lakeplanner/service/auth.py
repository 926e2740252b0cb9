"""Who is asking: API keys (stored as SHA-256 hashes) and OIDC/JWT bearer tokens (verified with
PyJWT against the issuer's keys). Each becomes a Principal with roles and claims."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from pathlib import Path
from typing import Any

import jwt
import yaml
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from lakeplanner.errors import LakeplannerError, PolicyError
from lakeplanner.service.settings import ServeSettings

KEY_PREFIX = "lpk_"
COOKIE = "lakeplanner_token"  # the audit dashboard's sign-in
ALGORITHMS = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA"]


class AuthError(LakeplannerError):
    """No usable credentials (401)."""


class Principal(BaseModel):
    name: str
    roles: list[str]
    claims: dict[str, Any] = Field(default_factory=dict)
    via: str = "none"  # api_key, jwt, anonymous, none


class ApiKey(BaseModel):
    name: str
    sha256: str = Field(description="hex SHA-256 of the key; the key itself is never stored")
    roles: list[str]
    claims: dict[str, Any] = Field(default_factory=dict)


EMBEDDED = Principal(name="local", roles=["default"], via="none")


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def load_keys(settings: ServeSettings) -> list[ApiKey]:
    adapter = TypeAdapter(list[ApiKey])
    entries: list[ApiKey] = []
    try:
        if settings.api_keys:
            data = yaml.safe_load(Path(settings.api_keys).read_text()) or {}
            entries += adapter.validate_python(data.get("keys", []) if isinstance(data, dict) else data)
        if settings.api_keys_json:
            entries += adapter.validate_python(json.loads(settings.api_keys_json))
    except (OSError, yaml.YAMLError, json.JSONDecodeError, ValidationError) as e:
        raise PolicyError(
            f"the API key entries cannot be read: {e}",
            hint="a YAML file `keys: [{name, sha256, roles, claims}]`; `lakeplanner keys new NAME --role R` writes one",
        ) from e
    return entries


def credentials(headers, cookies) -> tuple[str | None, str | None]:
    """(Authorization, X-API-Key) of a request; the dashboard's sign-in cookie counts as a bearer token."""
    token = cookies.get(COOKIE)
    authorization = headers.get("authorization") or (f"Bearer {token}" if token else None)
    return authorization, headers.get("x-api-key")


class Authenticator:
    """Turns a request's Authorization (or X-API-Key) header into a Principal."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.keys = load_keys(settings)
        self.jwks = self._jwks() if settings.jwt_issuer else None

    def _jwks(self):
        if self.settings.jwks_file:
            return jwt.PyJWKSet.from_json(Path(self.settings.jwks_file).read_text())
        if self.settings.jwks_url:
            return jwt.PyJWKClient(self.settings.jwks_url, cache_keys=True)
        raise PolicyError("jwt_issuer is set without its keys", hint="set jwks_url or jwks_file too")

    @property
    def required(self) -> bool:
        return self.settings.auth_configured

    def principal(self, authorization: str | None, api_key: str | None) -> Principal:
        scheme, _, credential = (authorization or "").partition(" ")
        if api_key or scheme.lower() == "apikey":
            return self.by_key(api_key or credential)
        if scheme.lower() == "bearer" and credential:
            if credential.startswith(KEY_PREFIX):
                return self.by_key(credential)
            return self.by_token(credential)
        if not self.required:
            return EMBEDDED
        if self.settings.anonymous_role:
            return Principal(name="anonymous", roles=[self.settings.anonymous_role], via="anonymous")
        raise AuthError(
            "this service needs credentials",
            hint="send `Authorization: Bearer <API key or OIDC token>` (ask your platform team for a key)",
        )

    def by_key(self, key: str) -> Principal:
        digest = key_hash(key)
        for entry in self.keys:
            if hmac.compare_digest(entry.sha256, digest):
                return Principal(name=entry.name, roles=entry.roles, claims=entry.claims, via="api_key")
        raise AuthError("the API key is not known", hint="check the key, or ask for a new one")

    def by_token(self, token: str) -> Principal:
        if self.jwks is None:
            raise AuthError("this service accepts no bearer tokens", hint="use an API key")
        try:
            header = jwt.get_unverified_header(token)
            if isinstance(self.jwks, jwt.PyJWKClient):
                key = self.jwks.get_signing_key_from_jwt(token).key
            else:
                key = next((k.key for k in self.jwks.keys if k.key_id == header.get("kid")), None)
                if key is None:
                    raise AuthError("the token's key id is not the issuer's", hint="get a fresh token")
            claims = jwt.decode(
                token,
                key,
                algorithms=ALGORITHMS,
                issuer=self.settings.jwt_issuer,
                audience=self.settings.jwt_audience,
                options={"require": ["exp", "iss", "sub"], "verify_aud": self.settings.jwt_audience is not None},
            )
        except jwt.PyJWTError as e:
            raise AuthError(f"the bearer token is not valid: {e}", hint="get a fresh token from your issuer") from e
        roles = claims.get(self.settings.roles_claim, [])
        roles = [roles] if isinstance(roles, str) else list(roles)
        return Principal(name=str(claims["sub"]), roles=roles, claims=claims, via="jwt")
