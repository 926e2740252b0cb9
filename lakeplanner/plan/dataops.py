"""DataOps (seed 000 §3.4): diagnose findings, fix what a local edit can fix, replan the rest, and
recommend what no edit can fix. Every step is a pure function of the plan and the findings."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from sqlglot import exp

from lakeplanner.contract.models import FieldType
from lakeplanner.plan.cache import GENERIC_PARTS, KnownValues
from lakeplanner.plan.extension import spellings
from lakeplanner.plan.filters import COLLECTION_FIELDS
from lakeplanner.plan.model import REFERENCE, Plan, PlanNode, Tool
from lakeplanner.plan.validate import (
    VECTOR_ANSWER,
    Code,
    Finding,
    LakeSchema,
    output_columns,
    parse_sql,
    table_aliases,
    validate,
)
from lakeplanner.question import Operation, read_question
from lakeplanner.question.words import stem, tokens, word_set

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
NAME = re.compile(r"\b(?:[A-Z][\w'-]*|\w*\d\w*)")
LINKED_KEYS = frozenset({"linked_key", "linked_keys"})  # a search's rows: the keys its documents cite
MAX_FIX_ROUNDS = 3
LABEL_IN_TEXT = re.compile(r"\$var_[0-9]+")


class Cause(StrEnum):
    schema_drift = "schema_drift"  # a renamed or misspelled table, column or field
    plan_shape = "plan_shape"  # labels, references, cycles, exposure
    tool_choice = "tool_choice"  # tool and source disagree
    sql_logic = "sql_logic"  # the SQL is wrong beyond names
    engine_down = "engine_down"  # nothing in the plan can fix it


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
CAUSES = {
    Code.unknown_column: Cause.schema_drift,
    Code.unknown_table: Cause.schema_drift,
    Code.unknown_reference_column: Cause.schema_drift,
    Code.unknown_filter_field: Cause.schema_drift,
    Code.unknown_return_column: Cause.schema_drift,
    Code.unknown_source: Cause.schema_drift,
    Code.unlinked_reference: Cause.schema_drift,
    Code.prose_from_table: Cause.tool_choice,
    Code.table_column_in_search: Cause.tool_choice,
    Code.column_of_joined_table: Cause.schema_drift,
    Code.unknown_tool: Cause.tool_choice,
    Code.graph_without_input: Cause.plan_shape,
    Code.duplicate_node: Cause.plan_shape,
    Code.unused_node: Cause.plan_shape,
    Code.comparison_step: Cause.plan_shape,
    Code.tool_source_mismatch: Cause.tool_choice,
    Code.graph_without_link: Cause.tool_choice,
    Code.sql_parse_error: Cause.sql_logic,
    Code.unsupported_filter: Cause.sql_logic,
    Code.sql_not_select: Cause.sql_logic,
    Code.sql_unsafe: Cause.sql_logic,
    Code.join_type_mismatch: Cause.sql_logic,
    Code.aggregate_type_mismatch: Cause.sql_logic,
}


@dataclass(frozen=True)
class Diagnosis:
    cause: Cause
    finding: Finding
    fixable: bool


def diagnose(findings: list[Finding]) -> list[Diagnosis]:
    return [Diagnosis(CAUSES.get(f.code, Cause.plan_shape), f, f.code in FIXABLE) for f in findings]


def closest(name: str, candidates: list[str], prefixes: tuple[str, ...] = ()) -> str | None:
    """The catalog name a misspelled or renamed one most likely means (customer_name -> name)."""
    if name in candidates:
        return name
    for prefix in prefixes:
        stripped = name.removeprefix(prefix)
        if stripped != name and stripped in candidates:
            return stripped
    matches = difflib.get_close_matches(name, candidates, n=3, cutoff=SIMILARITY)
    return next((match for match in matches if spelled_alike(name, match)), None)


def spelled_alike(name: str, candidate: str) -> bool:
    """Every word of the candidate is a word of the name, misspelt at most: custmer_name is customer_name,
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
            one table of the statement that does (`T1.contract_document_id` where T1 is invoices)."""
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
                compared = re.compile(rf"\b{re.escape(ref.column)}(\s+(?:in|=|is)\s+){re.escape(old)}\b")
                question = compared.sub(rf"{column}\g<1>{new}", node.question).replace(old, new)
                changes = {"question": question}
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
        """table.label for a key column a search cannot return ("customer_id" of the customer a memo
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
                question=node.question.replace(old, new),
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
        names one table ("number of invoices of $var_1.customer_id" on contracts) reads that table."""
        if node is None:
            return plan
        named = tables_named(REFERENCE.sub(" ", node.question), self.schema)  # a bound column is matched, not read
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
        ("Were A and B of the same nationality?" needs A's step too); drop any other."""
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


def names(text: str) -> set[str]:
    """Capitalised words or words with digits after the first word: the named things a text is about."""
    return {w.lower() for w in NAME.findall(text.split(" ", 1)[1] if " " in text else "")}


def names_tables(text: str, schema: LakeSchema) -> bool:
    """The text names a table or a column of the lake (by the stems of their names' words)."""
    return bool(about(text) & schema_words(schema))


def schema_words(schema: LakeSchema) -> set[str]:
    """The stems of the words of the lake's table and column names."""
    return {w for table, columns in schema.tables.items() for n in (table, *columns) for w in name_stems(n)}


def about(text: str) -> set[str]:
    """What a text is about: its named things and the stems of its other words but stop words."""
    return names(text) | {stem(w) for w in tokens(text) if w not in word_set("filler") and not w.isdigit()}


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


def restore_lost_parts(plan: Plan, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """What the question asks that the planner's steps dropped, put back: the ids it names, the
    ranking of a one-step plan, a part only documents tell (searched first), and a count."""
    plan, named = restore_named_ids(plan, known, schema)
    plan, swapped = restore_swapped_values(plan, known)
    plan, ranked = restore_ranking(plan, schema)
    plan, periods = restore_periods(plan, schema)
    plan, searched = restore_document_start(plan, schema)
    plan, counted = restore_count(plan, schema)
    plan, tabled = restore_table_arithmetic(plan, known, schema)
    plan, returned = restore_asked_column(plan, schema)
    plan, timed = restore_elapsed_moments(plan, schema)
    plan, policy = restore_document_fact(plan, known, schema)
    plan, linked = restore_linked_search(plan, schema)
    plan, shown = restore_asked_entity(plan)
    plan, anchored = restore_named_anchor(plan, schema)
    plan, hopped = restore_last_hop(plan, schema)
    lost = named + swapped + ranked + periods + searched + counted + tabled + returned + timed + policy + linked
    return plan, lost + shown + anchored + hopped


def plan_from_question(question: str, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]] | None:
    """The plan the question alone determines, when it validates: a document named by id and a column
    of the rows it cites is that document's search and a read of those rows by key, whatever a draft
    would say (a draft is then only a chance to get it wrong, at the cost of a planning call)."""
    plan, edits = restore_cited_rows(Plan(question=question), known, schema)
    return (plan, edits) if edits and not validate(plan, schema) else None


def restore_named_anchor(plan: Plan, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """Searches of which none names any of the things the question names ("Who was the writer of These
    Boots Are Made for Walkin' and who died in 2007?" planned as "who died in 2007") search for
    something else: the question is searched as it is instead, in the collection the last step read.
    Numbers are left out of the names compared (a step that kept only the years kept nothing)."""
    named = {n for n in names(plan.question) if not any(c.isdigit() for c in n)}
    if not named or not plan.nodes or any(n.tool != Tool.vector for n in plan.nodes):
        return plan, []
    kept = set().union(*(names(f"- {n.question}") for n in plan.nodes))
    if named & kept or plan.nodes[-1].source not in schema.collections:
        return plan, []
    source = plan.nodes[-1].source
    return asked_whole(plan, Tool.vector, source), [
        f"$var_1: the question searched as it is in {source} (no step named any of {', '.join(sorted(named))})"
    ]


def restore_last_hop(plan: Plan, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """A question that finds what it asks through a thing it describes ("What government position was
    held by the woman who portrayed Corliss Archer ...?", "The arena where ... played can seat how many
    people?"), whose one shown step is a search naming none of the words of what is asked, answers
    something else. A first search answered the bridge (the woman, the arena): the lost hop is put
    back, the question itself searched with the bridge's answer, shown in its place. A hop from
    earlier answers asked another relation ("where $var_1.answer was born" for "is based in what
    city"): it asks the question itself with those answers."""
    frame = read_question(plan.question)
    read = plan.read_labels()
    shown = [n for n in plan.nodes if n.should_expose_answer and n.label not in read]
    if frame.asks is None or len(shown) != 1:
        return plan, []
    [step] = shown
    asked_late = tokens(plan.question)[0] not in word_set("question_words")  # "... is based in what city?"
    if step.tool != Tool.vector or step.filter or step.source not in schema.collections:
        return plan, []
    ignored = word_set("stopwords") | word_set("filler")
    asked = {stem(w) for w in tokens(frame.asks.text) if w not in ignored and not w.isdigit()}
    if not asked or asked & {stem(w) for w in tokens(step.question)}:
        return plan, []
    searches = {n.label for n in plan.nodes if n.tool == Tool.vector}
    references = list(dict.fromkeys(f"{r.label}.{r.column}" for r in step.references()))
    from_answers = all(r.column == VECTOR_ANSWER and r.label in searches for r in step.references())
    if not references and frame.relative is not None:
        reference = f"{step.label}.{VECTOR_ANSWER}"
        hop = PlanNode(
            label=plan.fresh_label(),
            tool=Tool.vector.value,
            source=step.source,
            question=f"{plan.question} ({reference})",
            should_expose_answer=True,
            answer_description=frame.asks.text,
        )
        restored = plan.replace(step.label, should_expose_answer=False)
        restored = restored.model_copy(update={"nodes": (*restored.nodes, hop)})
        edit = f"{hop.label}: the question searched with {reference} (the one step shown finds what the question "
        edit += f"describes, not the {frame.asks.text} it asks)"
    elif references and from_answers and (frame.relative is not None or asked_late):
        asked_with = f"{plan.question} ({', '.join(references)})"
        restored = plan.replace(step.label, question=asked_with, answer_description=frame.asks.text)
        edit = f"{step.label}: asks the question with {', '.join(references)} ('{step.question}' asks "
        edit += f"another relation than the {frame.asks.text} the question asks)"
    else:
        return plan, []
    return (plan, []) if validate(restored, schema) else (restored, [edit])


def restore_asked_entity(plan: Plan) -> tuple[Plan, list[str]]:
    """The entity a "which X" question asks, read only by an unshown step the shown ones read, is
    shown too: "which customer ..., and how many invoices ..." (the search that found the customer,
    beside the count), or "which warehouse dispatched the largest total weight" (the step ranking
    warehouses, beside the total read from it). Without a second ask, only when no shown step reads
    the entity's table and the unshown one does."""
    frame = read_question(plan.question)
    if frame.entity is None:
        return plan, []
    shown = [n for n in plan.nodes if n.should_expose_answer]
    read = {r.label for n in shown for r in n.references()}
    wanted = name_stems(frame.entity)
    readers = [
        n for n in plan.nodes if not n.should_expose_answer and n.label in read and wanted & name_stems(n.question)
    ]
    if frame.second_ask is None:
        if any(wanted & name_stems(n.source) for n in shown):
            return plan, []
        readers = [n for n in readers if wanted & name_stems(n.source)]
    if not shown or len(readers) != 1:
        return plan, []
    label = readers[0].label
    return plan.replace(label, should_expose_answer=True), [
        f"{label}: shown too, it reads the {frame.entity} the question asks for"
    ]


def restore_swapped_values(plan: Plan, known: KnownValues) -> tuple[Plan, list[str]]:
    """A step that names one value of a column where the question names another of the same column
    ("status 'lost'" for "the number of delayed shipments") asks about other rows: it names the
    question's value instead. Only when each names exactly one value of that column."""
    asked = values_by_column(plan.question, known)
    edits = []
    for node in plan.nodes:
        for column, said in values_by_column(node.question, known).items():
            wanted = asked.get(column, set())
            if len(said) != 1 or len(wanted) != 1 or said == wanted:
                continue
            (old,), (new,) = said, wanted
            if old.casefold() in plan.question.casefold():
                continue
            pattern = re.compile(rf"(?<![\w-]){re.escape(old)}(?![\w-])", re.I)
            update = {k: pattern.sub(new, v) for k, v in (("question", node.question), ("sql", node.sql)) if v}
            plan = plan.replace(node.label, **update)
            edits.append(f"{node.label}: {column} '{old}' -> '{new}', the value the question names")
    return plan, edits


def values_by_column(text: str, known: KnownValues) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for start, end, column in known.find(text):
        out.setdefault(column, set()).add(text[start:end])
    return out


def restore_linked_search(plan: Plan, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """The question names a kind of document linked to a table ("the contract of the customer that
    signed up earliest"), yet no step searches documents: the rows it asks for only pick the
    document. The sql step on a table holding the link (or joining one) returns the link column, the
    collection named by its own name or the link column's ("agreement"), and a search of
    the linked collection, filtered to those documents, answers; steps nobody then reads are dropped."""
    frame = read_question(plan.question)
    if frame.names_document is None or frame.operation is not Operation.lookup or frame.attribute is None:
        return plan, []
    if any(n.tool != Tool.sql for n in plan.nodes):
        return plan, []
    wanted = name_stems(frame.names_document.text)
    for node in (n for n in plan.nodes if not n.references()):
        if asked_column(frame.attribute.text, schema.reachable_columns(node.source)) is not None:
            continue  # a column holds what is asked: the documents only name the row
        for collection in sorted(schema.collections):
            columns = sorted(schema.link_columns(node.source, collection))
            named_by = (*schema.collection_names.get(collection, {collection}), *columns)
            names = {w for n in named_by for w in name_stems(n)}
            if len(columns) == 1 and wanted & names:
                return searched_through(plan, node, collection, columns[0])
    return plan, []


def searched_through(plan: Plan, node: PlanNode, collection: str, column: str) -> tuple[Plan, list[str]]:
    picker = node.model_copy(
        update={"returns": tuple(dict.fromkeys((*node.returns, column))), "should_expose_answer": False}
    )
    search = PlanNode(
        question=plan.question,
        tool=Tool.vector,
        label="$var_0",
        source=collection,
        filter=f"document_id IN {node.label}.{column}",
        should_expose_answer=True,
        answer_description=plan.question,
    )
    nodes = relabel((picker, search))
    return plan.model_copy(update={"nodes": nodes}), [
        f"{nodes[1].label}: searches {collection} through the {column} of the rows {node.label} picks "
        f"(the question names its documents); its other steps dropped"
    ]


def restore_document_fact(plan: Plan, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """The question names a kind of document ("under the driving hours policy") and no table, row or
    column of the lake, yet every step reads a table: what it asks is a fact of those documents. One
    search of the collection the question names asks it."""
    frame = read_question(plan.question)
    if frame.names_document is None or any(n.tool != Tool.sql for n in plan.nodes):
        return plan, []
    if known.find(plan.question.replace(frame.names_document.text, " ")):
        return plan, []
    if names_tables(plan.question, schema):
        return plan, []
    wanted = name_stems(plan.question) - {"document"}
    scores = {
        c: len(wanted & {w for n in schema.collection_names.get(c, {c}) for w in name_stems(n)})
        for c in sorted(schema.collections)
    }
    collection = max(scores, key=scores.__getitem__, default=None)
    if collection is None or not scores[collection]:
        return plan, []
    return asked_whole(plan, Tool.vector, collection), [
        f"$var_1: searches {collection}: the question asks a fact of the documents it names, not of a table"
    ]


def restore_cited_rows(plan: Plan, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """The question names one document by id and asks a column of a row it cites ("which carrier moved
    the shipment described in incident report IR-007"): that document is searched, and the table it
    cites (the one the question names) is read by the keys it cites. Only when no step reads them and
    the question asks the table something besides the document (a column of it or of a joined table)."""
    documents = [
        (plan.question[start:end], where.split(".", 1)[0])
        for start, end, where in known.find(plan.question)
        if where.endswith(".document_id") and where.split(".", 1)[0] in schema.collections
    ]
    if len(documents) != 1 or any(ref.column in LINKED_KEYS for n in plan.nodes for ref in n.references()):
        return plan, []
    [(document, collection)] = documents
    asked = about(plan.question.replace(document, " "))
    cited = [
        t
        for (t, c) in sorted(schema.citations)
        if c == collection and len(schema.identifiers.get(t, ())) == 1 and name_stems(t) & asked
    ]
    if len(cited) != 1:
        return plan, []
    table = cited[0]
    columns = {stem(p) for c in schema.reachable_columns(table) for p in c.split("_") if p not in GENERIC_PARTS}
    if not (asked - name_stems(table) - name_stems(collection)) & columns:
        return plan, []
    key = schema.identifiers[table][0]
    search = PlanNode(
        question=plan.question,
        tool=Tool.vector,
        label="$var_1",
        source=collection,
        filter=f"document_id = '{document}'",
        returns=("linked_keys",),
    )
    reader = PlanNode(
        question=f"{plan.question} ({key} in $var_1.linked_keys)",
        tool=Tool.sql,
        label="$var_2",
        source=table,
        should_expose_answer=True,
        answer_description=plan.question,
    )
    plan = plan.model_copy(update={"nodes": (search, reader)})
    return plan, [f"$var_1, $var_2: read the {table} rows {document} cites, by {key}"]


def restore_asked_column(plan: Plan, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """A lookup whose one answering sql step does not return the column the question asks for ("the
    billing contact" for "the billing contact's e-mail address"): that step returns it too."""
    frame = read_question(plan.question)
    if frame.operation is not Operation.lookup or frame.asked_attribute is None:
        return plan, []
    exposed = [n for n in plan.nodes if n.should_expose_answer]
    if len(exposed) != 1 or exposed[0].tool != Tool.sql or exposed[0].sql:
        return plan, []
    node = exposed[0]
    column = asked_column(frame.attribute.text, schema.reachable_columns(node.source))
    if column is None or column in node.returns or column in node.question:
        return plan, []
    return plan.replace(node.label, returns=(*node.returns, column)), [
        f"{node.label}: also returns {column}, the attribute the question asks for"
    ]


def restore_elapsed_moments(plan: Plan, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """A time asked in a unit ("how many hours did shipment X take from dispatch to delivery") whose
    one answering sql step reads one row: it returns the two date or timestamp columns the question
    names (dispatched_at, delivered_at), between which the answer computes the time."""
    frame = read_question(plan.question)
    exposed = [n for n in plan.nodes if n.should_expose_answer]
    if frame.seconds_per_unit is None or len(exposed) != 1 or exposed[0].tool != Tool.sql or exposed[0].sql:
        return plan, []
    node = exposed[0]
    words = tokens(plan.question)
    moments = tuple(
        column
        for column, kind in schema.reachable_columns(node.source).items()
        if kind in (FieldType.date, FieldType.timestamp)
        and any(shares_root(p, w) for p in column.split("_") for w in words)
    )
    if len(moments) != 2 or set(moments) <= set(node.returns):
        return plan, []
    return plan.replace(node.label, returns=moments), [
        f"{node.label}: returns {' and '.join(moments)}, the moments the time asked is between"
    ]


def shares_root(a: str, b: str, least: int = 5) -> bool:
    """Two words of one root by their common start ("dispatch" and "dispatched", "delivery" and
    "delivered"): at least `least` letters, or all of the shorter when it is 4 letters or more."""
    a, b = a.lower(), b.lower()
    shorter = min(len(a), len(b))
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), shorter)
    return shorter >= 4 and common >= min(least, shorter)


def asked_column(attribute: str, columns: Iterable[str]) -> str | None:
    """The column whose name holds the word nearest the attribute's head (its last word), then the
    most of its words: billing_email for "the billing contact's e-mail address". None on a tie."""
    words = [spellings(w) for w in re.findall(r"[\w-]+", attribute.lower().replace("'s", ""))]
    scores: dict[str, tuple[int, int]] = {}
    for column in columns:
        parts = {p.rstrip("s") for p in column.lower().split("_") if p}
        matched = [i for i, forms in enumerate(words) if forms & parts]
        if matched:
            scores[column] = (max(matched), len(matched))
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def restore_table_arithmetic(plan: Plan, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """A change, average, ratio or share of a row the question names ("the change in the amount for
    Ireland", a line item of one table) is arithmetic over that table's numbers; a plan that only
    searches documents would leave it to a passage that happens to state it. Its exposed search steps
    that read no earlier step read the table with sql. Not when it asks why, or what a memo says."""
    asked = plan.question
    frame = read_question(asked)
    if not frame.computed or frame.documents_tell or any(n.tool != Tool.vector for n in plan.nodes):
        return plan, []
    tables = {where.split(".", 1)[0] for _, _, where in known.find(asked)} & set(schema.tables)
    if len(tables) != 1:
        return plan, []
    table = tables.pop()
    edits = []
    for node in plan.nodes:
        if node.should_expose_answer and not node.references():
            plan = plan.replace(node.label, tool=Tool.sql, source=table, filter=None, sql=None)
            edits.append(f"{node.label}: the arithmetic is over a row of {table}; read it with sql")
    return plan, edits


def restore_count(plan: Plan, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """The question asks how many rows of a table ("how many invoices has that customer been issued")
    and no step counts: the last exposed sql step that reads or joins that table asks it too."""
    frame = read_question(plan.question)
    asked = frame.counted
    if asked is None or any(counts(n) for n in plan.nodes):
        return plan, []
    counted = next((t for t in schema.tables if name_stems(t) == {stem(asked.text.split()[-1].lower())}), None)
    readers = [
        n
        for n in plan.nodes
        if n.tool == Tool.sql and n.should_expose_answer and counted in schema.sql_tables(n.source)
    ]
    if counted is None or not readers:
        return plan, []
    node = next((n for n in readers if n.source == counted), readers[-1])
    clause = plan.question[asked.start : frame.clause_of(asked).end]
    return plan.replace(node.label, question=f"{node.question}, and {clause}"), [
        f"{node.label}: also asks '{clause}', which no step counted"
    ]


def counts(node: PlanNode) -> bool:
    return read_question(node.question).operation is Operation.count or "count(" in (node.sql or "").lower()


def document_clause(question: str) -> str | None:
    """The sentence or clause of the question that says documents tell a part of it ("According to
    the collections memo, which customer ...", "One invoice was disputed because ...", "The Q4 memo
    puts one carrier on probation. How many ..."), asked as a question when it states that one thing
    is meant ("The Q4 memo puts which carrier on probation?"): the search must name it."""
    frame = read_question(question)
    told = frame.document or frame.reason or frame.names_document
    if told is None:
        return None
    if told is frame.names_document and len(frame.clauses) == 1:
        return None  # a kind of document named in the one clause asked: a fact of it (restore_document_fact)
    return frame.asked(frame.clause_of(told))


def tables_named(text: str, schema: LakeSchema) -> list[str]:
    """The tables whose names the text says, in the order it says them ("number of invoices issued by
    the customer": invoices, then customers)."""
    words = [stem(w) for w in tokens(text)]
    first = {t: min((i for i, w in enumerate(words) if w in name_stems(t)), default=-1) for t in schema.tables}
    said = [t for t in schema.tables if name_stems(t) <= set(words)]
    return sorted(said, key=first.__getitem__)


def name_stems(name: str) -> set[str]:
    return {stem(w) for w in tokens(name)}


def document_collection(clause: str, table: str, schema: LakeSchema) -> str | None:
    """The collection the clause names by its name or its files' names ("collections memo" for
    memo-collections-2024Q3.txt, "invoice" for documents_invoices), else one linked to `table` or its
    joins; None when neither: a lake whose documents are not about its rows has nothing to search."""
    wanted = name_stems(clause) - {"document"}
    scores = {
        c: len(wanted & {w for n in schema.collection_names.get(c, {c}) for w in name_stems(n)})
        for c in sorted(schema.collections)
    }
    best = max(scores, key=scores.__getitem__, default=None)
    if best is not None and scores[best]:
        return best
    return schema.linked_collection(table)


def restore_document_start(plan: Plan, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """The question says documents tell a part of it (a memo, a dispute, a reason), yet the step about
    that part reads a table from nothing and would guess it ("customer_id of the customer who agreed to
    a payment plan"). That part is searched first, with the question's own clause, and the step reads
    the search: the documents it found through their link column, else the name it read in its label
    column."""
    clause = document_clause(plan.question)
    if clause is None:
        return plan, []
    told = about(clause) - schema_words(schema)
    roots = [n for n in plan.nodes if not n.references()]
    guessing = next((n for n in roots if n.tool == Tool.sql and not n.sql and about(n.question) & told), None)
    if guessing is None:
        return plan, []
    collection = document_collection(clause, guessing.source, schema)
    if collection is None:
        return plan, []
    found = next(
        (n for n in roots if n.tool == Tool.vector and n.source == collection and about(n.question) & told), None
    )
    start = found.label if found is not None else "$var_0"  # relabel numbers it $var_1, its readers too
    search = PlanNode(question=clause, tool=Tool.vector.value, label=start, source=collection)
    if found is not None:
        search = found.model_copy(update={"question": clause})
    holders = sorted(t for t in schema.sql_tables(guessing.source) if (t, collection) in schema.document_links)
    if holders:
        column = sorted(schema.document_links[(holders[0], collection)])[0]
        binding = f"{holders[0]}.{column} in {start}.document_id"
        search = search.model_copy(update={"returns": tuple(dict.fromkeys((*search.returns, "document_id")))})
    else:
        binding = f"{label_column(guessing.source, schema) or 'named'} in {start}.answer"
    reader = guessing.model_copy(update={"question": f"{guessing.question} ({binding})"})
    nodes = (search, *(reader if n is guessing else n for n in plan.nodes if n is not found))
    restored = plan.model_copy(update={"nodes": relabel(nodes)})
    if validate(restored, schema):
        return plan, []
    return restored, [
        f"$var_1: searches {collection} for '{clause}' first (only documents tell it); "
        f"the step that guessed it reads that search"
    ]


def label_column(table: str, schema: LakeSchema) -> str | None:
    """The column that names a row of `table` in words (the contract's label): what a document calls
    the row by."""
    return schema.labels.get(table)


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


def restore_ranking(plan: Plan, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """A ranking question whose sql steps lost the ranking: one step that dropped it ("total quantity of
    all line items" for "which product sold the largest total quantity"), or independent steps that
    split it (the totals in one, "the product with the highest total" in another, neither reading the
    other), answers another question. One step on a table that joins all theirs asks the question.
    Not when documents tell part of it (the earliest customer's contract: the ranking picks a row only)."""
    frame = read_question(plan.question)
    if not frame.superlative or frame.documents_tell:
        return plan, []
    if any(n.tool != Tool.sql or n.references() or n.sql for n in plan.nodes):
        return plan, []
    if len(plan.nodes) == 1 and read_question(plan.nodes[0].question).superlative:
        return plan, []
    sources = {n.source for n in plan.nodes}
    node = next((n for n in plan.nodes if sources <= set(schema.sql_tables(n.source))), None)
    if node is None:
        return plan, []
    merged = node.model_copy(update={"question": plan.question, "should_expose_answer": True})
    merged = merged.model_copy(update={"answer_description": node.answer_description or plan.question})
    dropped = [n.label for n in plan.nodes if n is not node]
    plan = plan.model_copy(update={"nodes": (merged,)})
    return plan, [
        f"{node.label}: asks the question, its ranking was lost"
        + (f" (split over {', '.join(dropped)})" if dropped else "")
    ]


def restore_periods(plan: Plan, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """A change or percentage change between two named years ("how did total freight cost change
    between 2023 and 2024") whose sql steps name neither year has lost its periods: the steps answer
    another question. One step on a table that joins all theirs asks the question; the SQL node then
    reads the measure per year (`sql.period_aggregate_statement`) and the change is computed."""
    frame = read_question(plan.question)
    if frame.operation not in (Operation.change, Operation.percent_change) or len(frame.years) != 2:
        return plan, []
    if any(n.tool != Tool.sql or n.references() for n in plan.nodes):
        return plan, []
    if any(str(year) in f"{n.question} {n.sql or ''}" for n in plan.nodes for year in frame.years):
        return plan, []
    sources = {n.source for n in plan.nodes}
    node = next((n for n in plan.nodes if sources <= set(schema.sql_tables(n.source))), None)
    if node is None:
        return plan, []
    return asked_whole(plan, Tool.sql, node.source), [
        f"$var_1: asks the question on {node.source}, no step read the years it compares"
    ]


def restore_named_ids(plan: Plan, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """An identifier the question names (INV-1078) that no step names was lost by the planner ("the
    contract of the customer" for "the contract of invoice INV-1078's customer"), and the SQL would
    guess the row. It is added to the first sql step that reads its table, else to the first that
    joins to it. Only values of a one-column key count: a category ('open', 'Total') or a label
    ('December 31, 2019') may rightly be reworded by a step."""
    keyed = {columns[0]: table for table, columns in schema.identifiers.items() if len(columns) == 1}
    edits: list[str] = []
    for start, end, where in known.find(plan.question):
        value = plan.question[start:end]
        column = where.split(".", 1)[1]
        table = keyed.get(column)  # the table the value identifies a row of (invoices for invoice_id)
        written = " ".join(t for n in plan.nodes for t in (n.question, n.sql, n.filter) if t).casefold()
        if table is None or value.casefold() in written:
            continue
        readers = [n for n in plan.nodes if n.tool == Tool.sql and table in schema.sql_tables(n.source)]
        node = next((n for n in readers if n.source == table), readers[0] if readers else None)
        if node is None:
            continue
        plan = plan.replace(node.label, question=f"{node.question} ({column} {value})")
        edits.append(f"{node.label}: names {column} {value}, which the question names and no step did")
    return plan, edits


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
        if fix_rounds < MAX_FIX_ROUNDS and any(d.fixable for d in diagnose(findings)):
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
