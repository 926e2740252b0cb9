"""Who may read what: role policies, the contract a role sees, and the SQL guard that enforces them."""

from lakeplanner.policy.guard import GuardedEngine, guard
from lakeplanner.policy.model import OPEN, Access, Mask, Policy, RolePolicy, lake_policy
from lakeplanner.policy.scope import denied_sources, readable, scoped_contract

__all__ = [
    "OPEN",
    "Access",
    "GuardedEngine",
    "Mask",
    "Policy",
    "RolePolicy",
    "denied_sources",
    "guard",
    "lake_policy",
    "readable",
    "scoped_contract",
]
