"""Who may read what: role policies, the contract a role sees, and the SQL guard that enforces them."""

from lakeplanner.policy.guard import GuardedEngine, guard
from lakeplanner.policy.model import OPEN, OPEN_POLICY, Access, Mask, Policy, RolePolicy
from lakeplanner.policy.scope import denied_sources, readable, scoped_contract

__all__ = [
    "OPEN",
    "OPEN_POLICY",
    "Access",
    "GuardedEngine",
    "Mask",
    "Policy",
    "RolePolicy",
    "denied_sources",
    "guard",
    "readable",
    "scoped_contract",
]
