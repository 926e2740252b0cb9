"""The variable store (seed 000 §3.5): each label's result is slimmed to the columns its successors
reference, capped, before it flows on; what flowed (values, bytes) is recorded."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from lakeplanner.execute.results import NodeResult
from lakeplanner.plan.model import Plan


class Binding(BaseModel):
    """What one node passes to its successors: only the referenced columns' distinct values."""

    label: str
    columns: dict[str, list[Any]]
    truncated: bool = False
    error: str | None = None  # the producing node failed; successors are skipped

    @property
    def bytes(self) -> int:
        return len(json.dumps(self.columns, default=str).encode())

    @property
    def values(self) -> int:
        return sum(len(v) for v in self.columns.values())


WHOLE = "*"  # a bare $label reference: the node's declared returns, else its first column


def referenced_columns(plan: Plan) -> dict[str, set[str]]:
    """label -> the columns any successor references as $label.column (WHOLE for a bare $label)."""
    needed: dict[str, set[str]] = {n.label: set() for n in plan.nodes}
    for node in plan.nodes:
        for ref in node.references():
            if ref.label in needed:
                needed[ref.label].add(ref.column or WHOLE)
    return needed


def slim(result: NodeResult, columns: set[str], cap: int) -> Binding:
    if WHOLE in columns:
        present = [c for c in result.columns if not c.startswith("_")]
        declared = [c for c in present if c in set(result.returns)]
        columns = (columns - {WHOLE}) | set(declared or present[:1])
    out: dict[str, list[Any]] = {}
    truncated = False
    for column in sorted(columns):
        cells = (row.get(column) for row in result.rows)
        values = (v for cell in cells for v in (cell if isinstance(cell, list) else [cell]))  # a list gives its items
        distinct = list(dict.fromkeys(v for v in values if v is not None))
        truncated |= len(distinct) > cap
        out[column] = distinct[:cap]
    return Binding(label=result.label, columns=out, truncated=truncated)
