"""An answer that is a key is shown as the entity it identifies: 'HLDN' -> 'Halden Lending Library (HLDN)'."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from lakeplanner.contract.models import Contract, SourceKind
from lakeplanner.execute.results import Answer, NodeResult

RunSql = Callable[[str], pa.Table]


def labelled(answer: Answer, results: list[NodeResult], contract: Contract, run_sql: RunSql) -> Answer:
    """The answer with each item that is a key of a labelled table (or a foreign key to one) written as
    'label (key)', the label read from the table by its key."""
    if answer.abstained or not answer.items:
        return answer
    items = [label_of(item, results, contract, run_sql) or item for item in answer.items]
    if items == answer.items:
        return answer
    return answer.model_copy(update={"items": items, "value": "; ".join(items)})


def label_of(item: str, results: list[NodeResult], contract: Contract, run_sql: RunSql) -> str | None:
    target = keyed_table(item, results, contract)
    if target is None:
        return None
    table, key, label = target
    statement = exp.select(exp.column(label)).from_(table).where(exp.column(key).eq(exp.Literal.string(item)))
    names = {v for v in run_sql(statement.sql("duckdb")).column(0).to_pylist() if v}
    if len(names) != 1:
        return None
    name = str(names.pop())
    return None if name.casefold() == item.casefold() else f"{name} ({item})"


def keyed_table(item: str, results: list[NodeResult], contract: Contract) -> tuple[str, str, str] | None:
    """(table, key column, label column) of the entity `item` identifies: a result column holding it
    that is a labelled table's one-column key, or a foreign key to one."""
    labels = {s.name: s.label for s in contract.sources if s.kind is SourceKind.table and s.label}
    keys = {k.source: k.columns[0] for k in contract.identity_keys if k.identifier and len(k.columns) == 1}
    for result in results:
        if not result.ok or result.tool == "vector":
            continue
        columns = {c for row in result.rows for c, v in row.items() if str(v) == item}
        for column in sorted(columns):
            for table in (result.source, *sorted(labels)):
                if keys.get(table) == column and table in labels and labels[table] != column:
                    return table, column, labels[table]
            for fk in contract.foreign_keys:
                if fk.column == column and fk.target in labels and keys.get(fk.target) == fk.target_column:
                    return fk.target, fk.target_column, labels[fk.target]
    return None
