"""Structural rules (seed 000 App. C phases 1-3): the DAG's shape. Every step has its fields, a known
tool and a well-formed label bound once; an answer is exposed and described; references point to
earlier steps and to columns they return; no cycle; no step that cannot contribute."""

from __future__ import annotations

from collections.abc import Iterable

from lakeplanner.plan.findings import Code, Finding
from lakeplanner.plan.lake_schema import SEARCH_COLUMNS, VECTOR_ANSWER, LakeSchema
from lakeplanner.plan.model import LABEL, Plan, PlanNode, Tool
from lakeplanner.plan.source_checks import select_names
from lakeplanner.question.steps import same_wording


def check_completeness(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    if not plan.nodes:
        yield Finding(code=Code.empty_plan, node=None, message="the plan has no nodes")
    for node in plan.nodes:
        for name in ("question", "tool", "label"):
            if not str(getattr(node, name)).strip():
                yield Finding(
                    code=Code.missing_field, node=node.label or None, message=f"node has no {name}", subject=name
                )


def check_tools_and_labels(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    seen: set[str] = set()
    for node in plan.nodes:
        if node.tool and node.tool not in set(Tool):
            yield Finding(
                code=Code.unknown_tool,
                node=node.label,
                subject=node.tool,
                message=f"unknown tool {node.tool!r}; use one of {', '.join(Tool)}",
            )
        if node.label and not LABEL.match(node.label):
            yield Finding(
                code=Code.bad_label,
                node=node.label,
                subject=node.label,
                message=f"label {node.label!r} is not of the form $var_1, $var_2, ...",
            )
        if node.label in seen:
            yield Finding(
                code=Code.duplicate_label,
                node=node.label,
                subject=node.label,
                message=f"label {node.label} is bound twice",
            )
        seen.add(node.label)


def check_redundancy(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """Work that cannot contribute: a traversal with nothing to start from, a step asked twice, a step
    whose result nobody reads and nobody sees, a search that compares the answers of earlier searches
    (there is nothing to retrieve; the answer step compares)."""
    seen: dict[tuple[str, str, str], str] = {}
    read = plan.read_labels()
    exposes = any(n.should_expose_answer for n in plan.nodes)  # else the sinks get exposed instead
    for node in plan.nodes:
        key = (node.tool, node.source, same_wording(node.question))
        if key in seen:
            yield Finding(
                code=Code.duplicate_node,
                node=node.label,
                subject=seen[key],
                message=f"{node.label} repeats {seen[key]} (same tool, source and question)",
            )
            continue
        seen[key] = node.label
        if node.tool == Tool.graph and not node.references():
            yield Finding(
                code=Code.graph_without_input,
                node=node.label,
                message=f"graph step {node.label} references no earlier $var_n.column to traverse from",
            )
        elif node.tool == Tool.vector and len(compared := compared_answers(node)) > 1:
            yield Finding(
                code=Code.comparison_step,
                node=node.label,
                message=f"{node.label} only compares the answers of {', '.join(compared)}: leave that to the answer",
            )
        elif exposes and not node.should_expose_answer and node.label not in read and len(plan.nodes) > 1:
            yield Finding(
                code=Code.unused_node,
                node=node.label,
                message=f"{node.label} is neither exposed nor read by a later step",
            )


def compared_answers(node: PlanNode) -> list[str]:
    """The earlier steps whose answers (not their rows' columns) a step reads."""
    return list(dict.fromkeys(r.label for r in node.references() if r.column in (None, "", "answer")))


def check_exposure(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    if plan.nodes and not any(n.should_expose_answer for n in plan.nodes):
        yield Finding(code=Code.no_exposed_node, node=None, message="no node exposes an answer")
    for node in plan.nodes:
        if node.should_expose_answer and not (node.answer_description or "").strip():
            yield Finding(
                code=Code.missing_answer_description,
                node=node.label,
                message="an exposed node needs an answer_description",
            )


def check_references(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """References point to earlier nodes, and to columns those nodes return."""
    position = {n.label: i for i, n in enumerate(plan.nodes)}
    for index, node in enumerate(plan.nodes):
        for ref in node.references():
            if ref.label not in position:
                yield Finding(
                    code=Code.dangling_reference,
                    node=node.label,
                    subject=ref.label,
                    message=f"{ref.label} is not bound by any node",
                )
            elif position[ref.label] >= index:
                yield Finding(
                    code=Code.forward_reference,
                    node=node.label,
                    subject=ref.label,
                    message=f"{node.label} reads {ref.label}, which is not an earlier node",
                )
            elif ref.column and ref.column not in output_columns(plan.nodes[position[ref.label]], schema):
                yield Finding(
                    code=Code.unknown_reference_column,
                    node=node.label,
                    subject=ref.column,
                    message=f"{ref.label} returns no column {ref.column!r}",
                )


def output_columns(node: PlanNode, schema: LakeSchema) -> set[str]:
    """Columns a node's result carries: declared returns, else its SELECT list, else its source's columns.
    A search carries its collection's fields, the keys its documents cite and the answer it read,
    whatever it declares: a table's column (person_id) is no column of its result."""
    if node.tool == Tool.vector:
        return {*schema.columns(node.source), *SEARCH_COLUMNS, VECTOR_ANSWER}
    if node.returns:
        return set(node.returns)
    if node.sql:
        selected = select_names(node.sql)
        if selected and "*" not in selected:
            return selected
    return set(schema.columns(node.source))


def check_acyclic(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """The first cycle a depth-first search over derived dependencies meets, named."""
    cycle = first_cycle(plan.dependencies())
    if cycle:
        yield Finding(
            code=Code.cycle,
            node=cycle[0],
            subject=" -> ".join(cycle),
            message=f"dependency cycle {' -> '.join(cycle)}",
        )


def first_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """Labels from a cycle's first node round to it again. The search keeps its own stack: a plan
    thousands of steps deep (an LLM's runaway output) must not exhaust Python's."""
    done: set[str] = set()
    for root in graph:
        if root in done:
            continue
        path, on_path, pending = [root], {root}, [iter(graph[root])]
        while pending:
            target = next(pending[-1], None)
            if target is None:
                on_path.discard(path[-1])
                done.add(path.pop())
                pending.pop()
            elif target in on_path:
                return [*path[path.index(target) :], target]
            elif target in graph and target not in done:
                path.append(target)
                on_path.add(target)
                pending.append(iter(graph[target]))
    return None
