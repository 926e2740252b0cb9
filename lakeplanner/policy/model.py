"""Role policies (what a role may read, which columns it sees masked, which rows it sees) and the
Access one request runs under: a role's policy with the principal's claims bound into its row filters."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from pathlib import Path

import sqlglot
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from lakeplanner.errors import AccessDeniedError, PolicyError

EVERYTHING = "*"
CLAIMS = "claims"  # a row filter names a claim of the principal as :claims.<name>


class Mask(StrEnum):
    null = "null"  # the column reads as NULL
    hash = "hash"  # the column reads as the hex SHA-256 of its text: equal values stay equal


class RolePolicy(BaseModel):
    """What one role may do. Tables and collections are lists of names, or ["*"] for all of them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tables: list[str] = Field([EVERYTHING], description="tables the role may read")
    collections: list[str] = Field([EVERYTHING], description="document collections the role may search")
    masks: dict[str, dict[str, Mask]] = Field({}, description="table -> column -> null or hash")
    row_filters: dict[str, str] = Field(
        {}, description="table -> SQL predicate its rows must meet; :claims.NAME reads a claim of the principal"
    )
    replay: bool = Field(False, description="may re-run recorded answers")
    audit: bool = Field(False, description="may read every principal's traces and the audit dashboard")
    extend_schema: bool = Field(False, description="may add terms to the schema contract for good")

    @field_validator("row_filters")
    @classmethod
    def _predicates_parse(cls, filters: dict[str, str]) -> dict[str, str]:
        for table, predicate in filters.items():
            parse_predicate(predicate, f"the row filter of {table}")
        return filters


class Policy(BaseModel):
    """A policy file: roles by name. Its version is the hash of its content, so the plan cache keyed
    by it never serves a plan made under an older policy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roles: dict[str, RolePolicy]

    @property
    def version(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:12]

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except OSError as e:
            raise PolicyError(f"cannot read the policy file {path}: {e.strerror}", hint="check --policy") from e
        except yaml.YAMLError as e:
            raise PolicyError(f"the policy file {path} is not YAML: {e}", hint="fix its syntax") from e
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            problems = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors())
            raise PolicyError(
                f"the policy file {path} is not valid: {problems}",
                hint="see the README's 'Policies' section for its fields",
            ) from e

    def grant(self, role: str, principal: str = "anonymous", claims: dict | None = None) -> Access:
        """The Access of `principal` acting as `role`; claims are bound into the row filters."""
        if role not in self.roles:
            raise AccessDeniedError(
                f"the policy has no role {role!r}", hint=f"ask as one of: {', '.join(sorted(self.roles))}"
            )
        rule = self.roles[role]
        filters = {t: bind_claims(p, claims or {}, principal, t) for t, p in rule.row_filters.items()}
        return Access(
            role=role,
            principal=principal,
            policy_version=self.version,
            tables=None if EVERYTHING in rule.tables else frozenset(rule.tables),
            collections=None if EVERYTHING in rule.collections else frozenset(rule.collections),
            masks={t: dict(cols) for t, cols in rule.masks.items()},
            row_filters=filters,
            replay=rule.replay,
            audit=rule.audit,
            extend_schema=rule.extend_schema,
        )


class Access(BaseModel):
    """What one request may read. The default is the embedded, single-user lake: everything."""

    model_config = ConfigDict(frozen=True)

    role: str = "default"
    principal: str = "anonymous"
    policy_version: str = ""
    tables: frozenset[str] | None = None  # None: every table
    collections: frozenset[str] | None = None  # None: every collection
    masks: dict[str, dict[str, Mask]] = {}
    row_filters: dict[str, str] = {}  # table -> predicate, claims already bound
    replay: bool = True
    audit: bool = True
    extend_schema: bool = True

    @property
    def restricted(self) -> bool:
        return self.tables is not None or self.collections is not None or bool(self.masks or self.row_filters)

    def reads_table(self, name: str) -> bool:
        return self.tables is None or name in self.tables

    def reads_collection(self, name: str) -> bool:
        return self.collections is None or name in self.collections

    def mask_of(self, table: str, column: str) -> Mask | None:
        return self.masks.get(table, {}).get(column)

    def decisions(self) -> dict[str, str]:
        """The policy as span attributes (every span of a request under it carries them)."""
        return {
            "enduser.id": self.principal,
            "lakeplanner.role": self.role,
            "lakeplanner.policy.version": self.policy_version,
        }


POLICY_FILE = "policy.yaml"


def lake_policy(lake_path: str | Path, path: str | Path | None = None) -> Policy | None:
    """The policy at `path`, else the lake's policy.yaml, else none (every role reads everything)."""
    if path is None and not (Path(lake_path) / POLICY_FILE).exists():
        return None
    return Policy.load(path or Path(lake_path) / POLICY_FILE)


OPEN = Access()


def parse_predicate(predicate: str, what: str) -> exp.Expression:
    """A row filter: a condition on the table's columns, which may test them against a subquery
    (`patient_id IN (SELECT patient_id FROM patients WHERE country = :claims.country)`): the
    administrator's subquery reads its tables as they are."""
    try:
        parsed = sqlglot.parse_one(predicate, read="duckdb")
    except (ParseError, TokenError) as e:
        raise PolicyError(f"{what} is not SQL: {predicate!r} ({e})", hint="write a predicate like region = 'EU'") from e
    if isinstance(parsed, exp.Query | exp.Command) or not isinstance(parsed, exp.Condition):
        raise PolicyError(f"{what} must be a predicate, not a statement: {predicate!r}", hint="e.g. region = 'EU'")
    return parsed


def claim_name(node: exp.Expression) -> str | None:
    """`:claims.department` parses as Dot(Placeholder(claims), department)."""
    if isinstance(node, exp.Dot) and isinstance(node.this, exp.Placeholder) and node.this.name == CLAIMS:
        return node.expression.name
    return None


def bind_claims(predicate: str, claims: dict, principal: str, table: str) -> str:
    """The predicate with each :claims.NAME replaced by the principal's claim, as a literal."""
    parsed = parse_predicate(predicate, f"the row filter of {table}")

    def bound(node: exp.Expression) -> exp.Expression:
        name = claim_name(node)
        if name is None:
            if isinstance(node, exp.Placeholder):
                raise PolicyError(
                    f"the row filter of {table} has a placeholder {node.sql()!r}", hint="write :claims.NAME"
                )
            return node
        if name not in claims:
            raise AccessDeniedError(
                f"{principal} has no claim {name!r}, which the row filter of {table} needs",
                hint=f"issue the principal's token (or API key entry) with a {name!r} claim",
            )
        value = claims[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            return exp.Literal.string(str(value))
        return exp.Literal.number(value)

    return parsed.transform(bound).sql("duckdb")
