"""DataOps (seed 000 §3.4): fix what a local edit can fix, replan the rest, and recommend what no edit
can fix. Every step is a pure function of the plan and the findings."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from lakeplanner.plan.filters import COLLECTION_FIELDS
from lakeplanner.plan.findings import Code, Finding
from lakeplanner.plan.lake_schema import VECTOR_ANSWER, LakeSchema
from lakeplanner.plan.model import REFERENCE, Plan, PlanNode, Tool
from lakeplanner.plan.shape_checks import output_columns
from lakeplanner.plan.source_checks import parse_sql, table_aliases
from lakeplanner.plan.validate import validate
from lakeplanner.question.link import about, names, tables_named
from lakeplanner.question.steps import renamed_reference, with_matched_column, without_references

TOOL_SYNONYMS = {
    "iceberg": Tool.sql,
    "table": Tool.sql,
    "tables": Tool.sql,
    "trino": Tool.sql,
    "duckdb": Tool.sql,
    "milvus": Tool.vector,
    "rag": Tool.vector,
    "search": Tool.vector,
    "documents": Tool.vector,
    "graphtraverse": Tool.graph,
    "traverse": Tool.graph,
    "schemalookup": Tool.sql,
    "vectorrag": Tool.vector,
}
SIMILARITY = 0.75
WORD_SIMILARITY = 0.8
LINKED_KEYS = frozenset({"linked_key", "linked_keys"})  # a search's rows: the keys its documents cite
MAX_FIX_ROUNDS = 3
LABEL_IN_TEXT = re.compile(r"\$var_[0-9]+")


FIXABLE = {
    Code.unknown_column,
    Code.unknown_reference_column,
    Code.unknown_filter_field,
    Code.unknown_return_column,
    Code.unknown_tool,
    Code.missing_answer_description,
    Code.no_exposed_node,
    Code.tool_source_mismatch,
    Code.graph_without_input,
    Code.duplicate_node,
    Code.unused_node,
    Code.unlinked_reference,
    Code.graph_without_link,
    Code.prose_from_table,
    Code.table_column_in_search,
    Code.comparison_step,
    Code.column_of_joined_table,
}


def fixable(findings: list[Finding]) -> bool:
    """Some finding is one a local edit of the plan can fix (the rest need a replan or advice)."""
    return any(f.code in FIXABLE for f in findings)


def closest(name: str, candidates: list[str], prefixes: tuple[str, ...] = ()) -> str | None:
    """The catalog name a misspelled or renamed one most likely means (patient_name -> name)."""
    if name in candidates:
        return name
    for prefix in prefixes:
        stripped = name.removeprefix(prefix)
        if stripped != name and stripped in candidates:
            return stripped
    matches = difflib.get_close_matches(name, candidates, n=3, cutoff=SIMILARITY)
    return next((match for match in matches if spelled_alike(name, match)), None)


def spelled_alike(name: str, candidate: str) -> bool:
    """Every word of the candidate is a word of the name, misspelt at most: pateint_name is patient_name,
    weight_kg is weight, but declared_at is not delivered_at (close as strings, another fact)."""
    said = name.lower().split("_")
    joined = difflib.SequenceMatcher(None, "".join(said), candidate.lower().replace("_", "")).ratio()
    return joined >= 0.9 or all(
        any(difflib.SequenceMatcher(None, word, other).ratio() >= WORD_SIMILARITY for other in said)
        for word in candidate.lower().split("_")
    )


def singular_prefixes(tables: list[str]) -> tuple[str, ...]:
    out = []
    for table in tables:
        base = table.split("__")[-1]
        out += [f"{base}_", f"{base.removesuffix('s')}_", f"{base.removesuffix('es')}_"]
    return tuple(dict.fromkeys(out))


@dataclass
class Fixer:
    """Local, conservative edits that keep the DAG's shape; each edit is logged."""

    schema: LakeSchema
    edits: list[str] = field(default_factory=list)

    def fix(self, plan: Plan, findings: list[Finding]) -> Plan:
        for finding in findings:
            node = plan.node(finding.node) if finding.node else None
            handler = getattr(self, f"fix_{finding.code.name}", None)
            if handler is not None:
                plan = handler(plan, node, finding)
        return plan

    def fix_unknown_column(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        if node is None or node.sql is None:
            return plan
        statement = parse_sql(node.sql)
        tables = list(dict.fromkeys(t.name for t in statement.find_all(exp.Table)))
        columns = [c for t in tables for c in self.schema.tables.get(t, {})]
        target = closest(finding.subject or "", columns, singular_prefixes(tables))
        if target is None:
            return plan
        aliases = table_aliases(statement)
        holders = {t for t in aliases.values() if target in self.schema.tables.get(t, {})}

        def owner(qualifier: str) -> str:
            """The alias to qualify the column with: its own when that table has it, else that of the
            one table of the statement that does (`T1.policy_document_id` where T1 is loans)."""
            if not qualifier or aliases.get(qualifier) in holders or len(holders) != 1:
                return qualifier
            return next(t.alias_or_name for t in statement.find_all(exp.Table) if t.name in holders)

        def rename(expression: exp.Expression) -> exp.Expression:
            if isinstance(expression, exp.Column) and expression.name == finding.subject:
                return exp.column(target, table=owner(expression.table) or None)
            return expression

        fixed = restore_references(node.sql, statement.transform(rename).sql(dialect="duckdb"))
        if fixed == node.sql:
            return plan
        renamed = f"{finding.subject} -> {target}" if target != finding.subject else f"{target} read from its table"
        self.edits.append(f"{node.label}: column {renamed}")
        return plan.replace(node.label, sql=fixed)

    def fix_unknown_reference_column(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        if node is None:
            return plan
        changes = {}
        for ref in node.references():
            source = plan.node(ref.label)
            if ref.column != finding.subject or source is None:
                continue
            target = closest(
                ref.column, sorted(output_columns(source, self.schema)), singular_prefixes([source.source])
            )
            if target:
                old, new = f"{ref.label}.{ref.column}", f"{ref.label}.{target}"
                changes = {
                    k: v.replace(old, new)
                    for k, v in (("question", node.question), ("sql", node.sql), ("filter", node.filter))
                    if v
                }
                self.edits.append(f"{node.label}: reference {old} -> {new}")
            elif matched := self.search_match(node, source, ref.column):
                column, output, why = matched
                old, new = f"{ref.label}.{ref.column}", f"{ref.label}.{output}"
                changes = {"question": with_matched_column(node.question, ref.column, old, column, new)}
                self.edits.append(f"{node.label}: reference {old} -> {column} in {new} ({why})")
        return plan.replace(node.label, **changes) if changes else plan

    def search_match(self, node: PlanNode, producer: PlanNode, column: str) -> tuple[str, str, str] | None:
        """(the column a sql step matches, the search output it matches it with, why) for a column a
        search cannot return: the documents' link column with their ids, else the key's label
        column with the name the search read."""
        if link := self.document_link(node, producer):
            return link, "document_id", "the documents' link"
        if label := self.label_of_key(node, producer, column):
            return label, VECTOR_ANSWER, "the name the search read"
        return None

    def label_of_key(self, node: PlanNode, producer: PlanNode, column: str) -> str | None:
        """table.label for a key column a search cannot return ("member_id" of the member a memo
        names): the search read the row's name, which the step matches in the label column."""
        if node.tool != Tool.sql or producer.tool != Tool.vector or node.sql:
            return None
        for table in self.schema.sql_tables(node.source):
            if self.schema.identifiers.get(table) == (column,) and (label := self.schema.labels.get(table)):
                return f"{table}.{label}"
        return None

    def document_link(self, node: PlanNode, producer: PlanNode) -> str | None:
        """The one column of a sql step's table (or a joined one) that names the documents a search
        found: a search's rows carry document ids, not the ids of the rows the documents are about."""
        if node.tool != Tool.sql or producer.tool != Tool.vector or node.sql:
            return None
        links = sorted(self.schema.link_columns(node.source, producer.source))
        return links[0] if len(links) == 1 else None

    def fix_unknown_filter_field(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        target = closest(finding.subject or "", list(COLLECTION_FIELDS))
        if node is None or node.filter is None or target is None:
            return plan
        self.edits.append(f"{node.label}: filter field {finding.subject} -> {target}")
        return plan.replace(node.label, filter=node.filter.replace(finding.subject, target))

    def fix_unknown_return_column(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        if node is None:
            return plan
        target = closest(
            finding.subject or "",
            list(self.schema.reachable_columns(node.source)),
            singular_prefixes([node.source]),
        )
        returns = tuple(target if c == finding.subject else c for c in node.returns if target or c != finding.subject)
        self.edits.append(f"{node.label}: returned column {finding.subject} -> {target or 'dropped'}")
        return plan.replace(node.label, returns=returns)

    def fix_unknown_tool(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        tool = TOOL_SYNONYMS.get((finding.subject or "").lower().replace("_", ""))
        if node is None or tool is None:
            return plan
        self.edits.append(f"{node.label}: tool {finding.subject} -> {tool}")
        return plan.replace(node.label, tool=tool.value)

    def fix_missing_answer_description(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        if node is None:
            return plan
        self.edits.append(f"{node.label}: answer_description from its question")
        return plan.replace(node.label, answer_description=node.question)

    def fix_unlinked_reference(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """Point the reference at the one column that links the producer's rows to the collection."""
        if node is None:
            return plan
        for ref in node.references():
            producer = plan.node(ref.label)
            if ref.column != finding.subject or producer is None:
                continue
            links = sorted(self.schema.link_columns(producer.source, node.source))
            if len(links) != 1:
                return plan
            target = links[0]
            old, new = f"{ref.label}.{ref.column}", f"{ref.label}.{target}"
            self.edits.append(f"{node.label}: reference {old} -> {new} (the link to {node.source})")
            plan = plan.replace(
                node.label,
                question=renamed_reference(node.question, old, new),
                filter=node.filter and node.filter.replace(old, new),
            )
            if producer.returns and target not in producer.returns:
                plan = plan.replace(producer.label, returns=(*producer.returns, target))
            return plan
        return plan

    def drop_unlinkable_searches(self, plan: Plan, findings: list[Finding]) -> Plan:
        """Last resort, after replanning: a search that nothing it reads can narrow is dropped and the
        step it read is exposed instead, so the part of the plan that can run still runs."""
        for finding in findings:
            node = plan.node(finding.node) if finding.code is Code.unlinked_reference and finding.node else None
            if node is not None and node.label not in plan.read_labels() and len(plan.nodes) > 1:
                plan = self._drop_exposing_inputs(plan, node, finding.message)
        return plan

    def _drop_exposing_inputs(self, plan: Plan, node: PlanNode, why: str) -> Plan:
        producers = [plan.node(label) for label in plan.dependencies()[node.label] if label != node.label]
        self.edits.append(f"{node.label}: dropped, {why}")
        plan = drop(plan, node.label)
        for producer in producers:
            if producer is not None and not producer.should_expose_answer:
                self.edits.append(f"{producer.label}: exposed instead of {node.label}")
                plan = plan.replace(
                    producer.label,
                    should_expose_answer=True,
                    answer_description=producer.answer_description or producer.question,
                )
        return plan

    def fall_back_to_one_search(self, plan: Plan) -> Plan:
        """Last resort when no draft validates: one search with the user's question (see one_search)."""
        search = one_search(plan, self.schema)
        if search is None:
            return plan
        self.edits.append(f"no draft validated: one search of {search.nodes[0].source} with the question")
        return search

    def fix_tool_source_mismatch(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """A table is read with sql, a collection with vector search; a sql step on a collection that
        names one table ("number of loans of $var_1.member_id" on policies) reads that table."""
        if node is None:
            return plan
        named = tables_named(without_references(node.question), self.schema)  # a bound column is matched, not read
        if node.tool == Tool.sql and node.source in self.schema.collections and named:
            self.edits.append(f"{node.label}: sql on {node.source} -> {named[0]} (the table it names first)")
            return plan.replace(node.label, source=named[0])
        tool = Tool.sql if node.source in self.schema.tables else Tool.vector
        if node.tool == tool.value:  # an earlier finding on this step switched it
            return plan
        self.edits.append(f"{node.label}: tool {node.tool} -> {tool.value} for {node.source}")
        return plan.replace(node.label, tool=tool.value)

    def fix_graph_without_link(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """Nothing to traverse from this source: read it directly (sql for a table, else search)."""
        return self.fix_tool_source_mismatch(plan, node, finding)

    def fix_prose_from_table(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """Read the reason or description in the linked collection instead."""
        if node is None or finding.subject is None:
            return plan
        self.edits.append(f"{node.label}: sql on {node.source} -> vector on {finding.subject} (prose is in documents)")
        return plan.replace(node.label, tool=Tool.vector.value, source=finding.subject, returns=())

    def fix_table_column_in_search(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """Read the table whose column the search names."""
        if node is None or finding.subject is None:
            return plan
        self.edits.append(f"{node.label}: vector on {node.source} -> sql on {finding.subject} (it names its column)")
        return plan.replace(node.label, tool=Tool.sql.value, source=finding.subject, filter=None)

    def fix_column_of_joined_table(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """Read the joined table that holds the columns the step names."""
        if node is None or finding.subject is None:
            return plan
        self.edits.append(f"{node.label}: sql on {node.source} -> {finding.subject} (it holds the columns named)")
        return plan.replace(node.label, source=finding.subject)

    def fix_duplicate_node(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """Drop the repeat; its readers read the first one."""
        if node is None or finding.subject is None:
            return plan
        self.edits.append(f"{node.label}: dropped, it repeats {finding.subject}")
        exposed = node.should_expose_answer
        plan = drop(plan, node.label, rename_to=finding.subject)
        return plan.replace(finding.subject, should_expose_answer=True) if exposed else plan

    def fix_graph_without_input(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """A traversal with nothing to start from. When it is the only answer step over a collection, it
        searches with the answer of the earlier search no step reads: the hop the planner meant ("the
        fight song of the university" after "the university whose main campus is in Lawrence"). The only
        answer step, one about a part of the question no shown step covers, or one a later step reads,
        reads its source directly; any other is dropped."""
        if node is None or node.tool != Tool.graph.value:
            return plan
        answers = only_answer_step(plan, node)
        searched = answers and node.source in self.schema.collections
        start = unread_search_before(plan, node, self.schema) if searched else None
        if start is not None:
            reference = f"{start.label}.{VECTOR_ANSWER}"
            self.edits.append(f"{node.label}: tool graph -> vector for {node.source}, searching with {reference}")
            return plan.replace(node.label, tool=Tool.vector.value, question=f"{node.question} ({reference})")
        if answers or node.label in plan.read_labels() or names_new_part(plan, node):
            return self.fix_tool_source_mismatch(plan, node, finding)
        return self._drop_unread(plan, node, "a graph step needs an earlier result to traverse from")

    def fix_unused_node(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """Expose a step about someone or something the question names that no shown step covers
        ("Were A and B trained at the same school?" needs A's step too); drop any other."""
        if node is not None and names_new_part(plan, node):
            self.edits.append(f"{node.label}: exposed, it is about a part of the question no shown step covers")
            return plan.replace(
                node.label, should_expose_answer=True, answer_description=node.answer_description or node.question
            )
        return self._drop_unread(plan, node, "nothing reads or shows its result")

    def _drop_unread(self, plan: Plan, node: PlanNode | None, why: str) -> Plan:
        read = plan.read_labels()
        if node is None or node.label in read or len(plan.nodes) < 2:
            return plan
        self.edits.append(f"{node.label}: dropped ({why})")
        return drop(plan, node.label)

    def fix_comparison_step(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        if node is None or node.label in plan.read_labels():
            return plan
        return self._drop_exposing_inputs(plan, node, "the answer step compares what it read")

    def fix_no_exposed_node(self, plan: Plan, node: PlanNode | None, finding: Finding) -> Plan:
        """Expose the sinks: nodes no other node reads."""
        read = plan.read_labels()
        for sink in (n for n in plan.nodes if n.label not in read):
            self.edits.append(f"{sink.label}: exposed as an answer (a sink of the DAG)")
            plan = plan.replace(
                sink.label,
                should_expose_answer=True,
                answer_description=sink.answer_description or plan.question or sink.question,
            )
        return plan


def one_search(plan: Plan, schema: LakeSchema, label: str = "$var_1", collection: str | None = None) -> Plan | None:
    """The plan's question as one search of `collection`, else of the lake's only collection; None
    when neither is given. The evidence iteration and the grounding check still guard what it finds."""
    if collection is None and len(schema.collections) == 1:
        [collection] = schema.collections
    if collection is None or not plan.question:
        return None
    return asked_whole(plan, Tool.vector, collection, label)


def asked_whole(plan: Plan, tool: Tool, source: str, label: str = "$var_1") -> Plan:
    """The plan as one shown step on `source` that asks the question itself."""
    step = PlanNode(
        question=plan.question,
        tool=tool.value,
        label=label,
        source=source,
        should_expose_answer=True,
        answer_description=plan.question,
    )
    return plan.model_copy(update={"nodes": (step,)})


def only_answer_step(plan: Plan, node: PlanNode) -> bool:
    return node.should_expose_answer and not any(n.should_expose_answer for n in plan.nodes if n is not node)


def unread_search_before(plan: Plan, node: PlanNode, schema: LakeSchema) -> PlanNode | None:
    """The last step before `node` over a collection whose result no step reads or shows."""
    read = plan.read_labels()
    earlier = plan.nodes[: plan.nodes.index(node)]
    unread = [
        n for n in earlier if n.source in schema.collections and n.label not in read and not n.should_expose_answer
    ]
    return unread[-1] if unread else None


def names_new_part(plan: Plan, node: PlanNode) -> bool:
    """Whether a step names something of the question (a person, a place, a year) and is about a part of
    it that no exposed step covers on its own ("operating loss carryforward in 2018" beside a "percentage
    change of the value from 2018 to 2019" that lost the item)."""
    part = about(node.question) & about(plan.question)
    shown = (about(n.question) for n in plan.nodes if n.should_expose_answer and n is not node)
    return bool(names(node.question) & part) and not any(part <= covered for covered in shown)


def relabel(nodes: tuple[PlanNode, ...]) -> tuple[PlanNode, ...]:
    """Nodes labelled $var_1, $var_2, ... in their order, with every reference renamed to match."""
    new_label = {n.label: f"$var_{i}" for i, n in enumerate(nodes, 1)}
    return tuple(references_renamed(n, new_label).model_copy(update={"label": new_label[n.label]}) for n in nodes)


def references_renamed(node: PlanNode, names: dict[str, str]) -> PlanNode:
    """The node with each `$var_n` in its question, SQL and filter renamed by `names` (others kept)."""

    def renamed(text: str | None) -> str | None:
        return None if text is None else LABEL_IN_TEXT.sub(lambda m: names.get(m.group(0), m.group(0)), text)

    return node.model_copy(
        update={"question": renamed(node.question), "sql": renamed(node.sql), "filter": renamed(node.filter)}
    )


def drop(plan: Plan, label: str, rename_to: str | None = None) -> Plan:
    """The plan without one node; references to it are pointed at `rename_to` when given."""
    names = {label: rename_to} if rename_to is not None else {}
    nodes = tuple(references_renamed(n, names) for n in plan.nodes if n.label != label)
    return plan.model_copy(update={"nodes": nodes})


def restore_references(original: str, rewritten: str) -> str:
    """Put the `$var_n.column` bindings back where parse_sql placed `(NULL)`."""
    for reference in REFERENCE.finditer(original):
        rewritten = rewritten.replace("(NULL)", reference.group(0), 1)
    return rewritten


def recommend(findings: list[Finding], error: Exception | None = None) -> list[str]:
    """Advice for what no edit of the plan can fix."""
    advice = []
    if error is not None:
        advice.append(
            f"{type(error).__name__}: {error} — the engine is unavailable; retry later or check its "
            "endpoint (nothing in the plan can fix this)"
        )
    for finding in findings:
        if finding.code is Code.unknown_source:
            advice.append(f"{finding.subject} is not in the lake: ingest it, or ask about a source that exists")
        elif finding.code is Code.unknown_table:
            advice.append(f"table {finding.subject} does not exist: check `lakeplanner lake info`")
    return advice


Replanner = Callable[[Plan, list[Finding]], Plan]


@dataclass(frozen=True)
class Repair:
    plan: Plan
    findings: list[Finding]
    edits: list[str]
    replans: int
    advice: list[str]

    @property
    def ok(self) -> bool:
        return not self.findings


def repair(plan: Plan, schema: LakeSchema, *, replan: Replanner | None = None, max_replans: int = 2) -> Repair:
    """Validate; fix locally; replan with the findings as feedback (bounded); advise on the rest.

    The same findings are never fed back twice: the planner decodes greedily from the question and the
    feedback, so a second replan with the feedback of the first would write the draft the first wrote."""
    fixer = Fixer(schema)
    findings = validate(plan, schema)
    replans = fix_rounds = 0
    fed_back: set[tuple[Finding, ...]] = set()
    while findings:
        if fix_rounds < MAX_FIX_ROUNDS and fixable(findings):
            fixed = fixer.fix(plan, findings)
            fix_rounds += 1
            if fixed != plan:
                plan, findings = fixed, validate(fixed, schema)
                continue
        if replan is None or replans >= max_replans or tuple(findings) in fed_back:
            break
        fed_back.add(tuple(findings))
        plan, replans = replan(plan, findings), replans + 1
        findings, fix_rounds = validate(plan, schema), 0  # each new draft gets its own fix budget
    if findings and (last := fixer.drop_unlinkable_searches(plan, findings)) != plan:
        plan, findings = last, validate(last, schema)
    if findings and (last := fixer.fall_back_to_one_search(plan)) != plan:
        plan, findings = last, validate(last, schema)
    return Repair(plan, findings, fixer.edits, replans, recommend(findings))
