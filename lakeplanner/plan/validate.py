"""Plan validation (seed 000 §3.3, App. C): structural then semantic checks, as typed findings.

Each rule is a small function `(plan, lake schema) -> findings`; `validate` runs them in order.
SQL text is parsed with sqlglot; `$var_n.column` bindings are replaced by a placeholder first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath

import sqlglot
from pydantic import BaseModel, ConfigDict
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from lakeplanner.contract.models import Contract, FieldType, SourceKind
from lakeplanner.errors import UnsafeSqlError
from lakeplanner.ingest.tables import KEY_COLUMN
from lakeplanner.plan.filters import COLLECTION_FIELDS, FilterError, fields_of, milvus_expression, parse_filter
from lakeplanner.plan.model import LABEL, REFERENCE, Plan, PlanNode, Tool
from lakeplanner.policy.readonly import MAX_SQL_CHARS, read_only_select
from lakeplanner.question.lexicon import names_computed_value

NUMERIC = {FieldType.integer, FieldType.number}

NAMED_FILES = 200  # file names that describe a collection; a corpus of thousands adds nothing
VECTOR_ANSWER = "answer"  # a vector node's result also carries the value it read in the evidence
SEARCH_COLUMNS = frozenset({"document_id", "title", "linked_table", "linked_keys", "linked_key"})


class Code(StrEnum):
    missing_field = "S001"
    unknown_tool = "S002"
    bad_label = "S003"
    duplicate_label = "S004"
    no_exposed_node = "S005"
    missing_answer_description = "S006"
    dangling_reference = "S007"
    forward_reference = "S008"
    unknown_reference_column = "S009"
    cycle = "S010"
    empty_plan = "S011"
    graph_without_input = "S012"
    duplicate_node = "S013"
    unused_node = "S014"
    comparison_step = "S015"
    unknown_source = "M001"
    tool_source_mismatch = "M002"
    sql_parse_error = "M003"
    sql_not_select = "M004"
    unknown_table = "M005"
    unknown_column = "M006"
    join_type_mismatch = "M007"
    aggregate_type_mismatch = "M008"
    unknown_filter_field = "M009"
    graph_without_link = "M010"
    unknown_return_column = "M011"
    intent_drift = "M012"
    unlinked_reference = "M013"
    prose_from_table = "M014"
    unsupported_filter = "M015"
    table_column_in_search = "M016"
    column_of_joined_table = "M017"
    sql_unsafe = "M018"
    denied_source = "P001"


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: Code
    node: str | None
    message: str
    subject: str | None = None  # the offending name (column, table, label), for the Fixer


@dataclass(frozen=True)
class LakeSchema:
    """What plans may reference, derived from the contract: tables -> column types, collections."""

    tables: dict[str, dict[str, FieldType]]
    collections: set[str]
    linked: set[str] = field(default_factory=set)
    joins: dict[str, set[str]] = field(default_factory=dict)  # table -> tables one foreign key away
    document_links: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (table, collection) -> link columns
    identifiers: dict[str, tuple[str, ...]] = field(default_factory=dict)  # table -> its key columns, in order
    collection_names: dict[str, set[str]] = field(default_factory=dict)  # collection -> its name and file stems
    citations: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (table, collection) -> keys cited
    labels: dict[str, str] = field(default_factory=dict)  # table -> the column that names its rows
    denied: frozenset[str] = frozenset()  # sources of the lake the asking role may not read
    references: dict[tuple[str, str], str] = field(default_factory=dict)  # (table, foreign key column) -> its target

    @classmethod
    def from_contract(cls, contract: Contract, denied: frozenset[str] = frozenset()) -> LakeSchema:
        tables: dict[str, dict[str, FieldType]] = {}
        for source in contract.sources:
            if source.kind is SourceKind.table:
                tables[source.name] = {f.column: f.type for f in contract.fields_of(source.name) if f.column}
        collections = {s.name for s in contract.sources if s.kind is SourceKind.documents}
        linked = {fk.source for fk in contract.foreign_keys} | {fk.target for fk in contract.foreign_keys}
        linked |= {lk.source for lk in contract.links} | {lk.collection for lk in contract.links}
        joins: dict[str, set[str]] = {}
        for fk in contract.foreign_keys:
            joins.setdefault(fk.source, set()).add(fk.target)
            joins.setdefault(fk.target, set()).add(fk.source)
        identifiers = {k.source: tuple(k.columns) for k in contract.identity_keys if k.identifier}
        document_links: dict[tuple[str, str], set[str]] = {}
        citations: dict[tuple[str, str], set[str]] = {}
        for lk in contract.links:
            held = citations if lk.match == "cited" else document_links
            held.setdefault((lk.source, lk.collection), set()).add(lk.column)
        collection_names = {
            s.name: {s.name, *(PurePosixPath(f).stem for f in s.files[:NAMED_FILES])}
            for s in contract.sources
            if s.kind is SourceKind.documents
        }
        labels = {s.name: s.label for s in contract.sources if s.kind is SourceKind.table and s.label}
        references = {(fk.source, fk.column): fk.target for fk in contract.foreign_keys}
        return cls(
            tables,
            collections,
            linked,
            joins,
            document_links,
            identifiers,
            collection_names,
            citations,
            labels,
            denied,
            references,
        )

    def columns(self, source: str) -> dict[str, FieldType]:
        if source in self.tables:
            return self.tables[source]
        if source in self.collections:
            return dict.fromkeys(COLLECTION_FIELDS, FieldType.string)
        return {}

    def link_columns(self, table: str, collection: str) -> set[str]:
        """Columns of `table` or its join partners whose values name documents of `collection`."""
        tables = {table, *self.joins.get(table, ())}
        return {c for t in tables for c in self.document_links.get((t, collection), ())}

    def columns_naming_documents(self, table: str, collection: str) -> set[str]:
        """The link columns, and the keys of linked rows (chunks carry them as linked_keys)."""
        tables = {table, *self.joins.get(table, ())}
        linked = self.document_links.keys() | self.citations.keys()
        keys = {c for t in tables if (t, collection) in linked for c in self.identifiers.get(t, ())}
        return self.link_columns(table, collection) | keys

    def collection_for(self, table: str) -> str | None:
        """The collection linked to `table`, else to its join partners, else the only collection."""
        linked = self.linked_collection(table)
        if linked is None and len(self.collections) == 1:
            return next(iter(self.collections))
        return linked

    def linked_collection(self, table: str) -> str | None:
        """The collection whose documents a column of `table` names, else of one of its join
        partners; else, in the same order, one whose documents cite their rows by key."""
        for links in (self.document_links, self.citations):
            for tables in ({table}, set(self.joins.get(table, ()))):
                linked = sorted({c for (t, c) in links if t in tables})
                if linked:
                    return linked[0]
        return None

    def sql_tables(self, table: str) -> list[str]:
        """A sql node's table, then the tables it may join to along foreign keys."""
        return [table, *sorted(self.joins.get(table, set()) - {table})]

    def row_key(self, table: str) -> list[str]:
        """The columns that identify a row of `table`: its Iceberg identifier, else the surrogate key."""
        if table in self.identifiers:
            return list(self.identifiers[table])
        return [KEY_COLUMN] if KEY_COLUMN in self.tables.get(table, {}) else []

    def reachable_columns(self, table: str) -> dict[str, FieldType]:
        """Columns a sql node on `table` can return: its own and those of tables it joins to."""
        out: dict[str, FieldType] = {}
        for name in sorted(self.joins.get(table, ())):
            out.update(self.tables.get(name, {}))
        return {**out, **self.tables.get(table, {})}


Rule = Callable[[Plan, LakeSchema], Iterable[Finding]]


# ---------------------------------------------------------------- structural rules (App. C phases 1-3)


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
        key = (node.tool, node.source, " ".join(node.question.lower().split()))
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
    whatever it declares: a table's column (customer_id) is no column of its result."""
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


# ---------------------------------------------------------------- semantic rules


def check_policy(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A step reads a table or collection the asking role's policy denies it."""
    for node in plan.nodes:
        read = {node.source} if node.source else set()
        if node.sql and node.tool in (Tool.sql, Tool.graph):
            with suppress(ParseError, TokenError, ValueError):
                read |= {t.name for t in parse_sql(node.sql).find_all(exp.Table)}
        for source in sorted(read & schema.denied):
            yield Finding(
                code=Code.denied_source,
                node=node.label,
                subject=source,
                message=f"the asking role may not read {source!r}",
            )


def check_sources(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    for node in plan.nodes:
        if not node.source or node.tool not in set(Tool):
            continue
        is_table, is_collection = node.source in schema.tables, node.source in schema.collections
        if node.source in schema.denied:
            continue  # check_policy names it
        if not (is_table or is_collection):
            yield Finding(
                code=Code.unknown_source,
                node=node.label,
                subject=node.source,
                message=f"no table or collection named {node.source!r}",
            )
        elif node.tool != Tool.graph and (node.tool == Tool.vector) != is_collection:
            yield Finding(
                code=Code.tool_source_mismatch,
                node=node.label,
                subject=node.source,
                message=f"tool {node.tool} cannot read {'collection' if is_collection else 'table'} {node.source}",
            )
        elif node.tool == Tool.graph and node.source not in schema.linked:
            yield Finding(
                code=Code.graph_without_link,
                node=node.label,
                subject=node.source,
                message=f"{node.source} has no foreign key or document link to traverse",
            )
        for column in node.returns:
            if is_table and column not in schema.reachable_columns(node.source) and not names_computed_value(column):
                yield Finding(
                    code=Code.unknown_return_column,
                    node=node.label,
                    subject=column,
                    message=f"{node.source} has no column {column!r}",
                )


def with_placeholders(sql: str) -> str:
    """Bound variables are values, not SQL: stand in a literal so sqlglot can parse the statement."""
    return REFERENCE.sub("(NULL)", sql)


def parse_sql(sql: str) -> exp.Expression:
    if len(sql) > MAX_SQL_CHARS:
        raise ValueError(f"the statement is {len(sql):,} characters long (at most {MAX_SQL_CHARS:,})")
    try:
        statements = sqlglot.parse(with_placeholders(sql), read="duckdb")
    except RecursionError as e:
        raise ValueError("the statement is nested too deeply to parse") from e
    if len(statements) != 1 or statements[0] is None:
        raise ValueError(f"expected one statement, got {len(statements)}")
    return statements[0]


def select_names(sql: str) -> set[str]:
    try:
        statement = parse_sql(sql)
    except (ParseError, TokenError, ValueError):
        return set()
    if not isinstance(statement, exp.Select):
        return set()
    return {"*" if isinstance(e, exp.Star) else e.alias_or_name for e in statement.expressions}


def check_sql(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    for node in plan.nodes:
        if node.sql is None or node.tool not in (Tool.sql, Tool.graph):
            continue
        try:
            statement = parse_sql(node.sql)
        except (ParseError, TokenError, ValueError) as e:
            yield Finding(code=Code.sql_parse_error, node=node.label, message=f"SQL does not parse: {e}")
            continue
        if not isinstance(statement, exp.Select | exp.Union):
            yield Finding(
                code=Code.sql_not_select,
                node=node.label,
                subject=statement.key,
                message=f"only SELECT is allowed, got {statement.key.upper()}",
            )
            continue
        try:
            for select in statement.find_all(exp.Select):
                read_only_select(select)
        except UnsafeSqlError as e:
            yield Finding(code=Code.sql_unsafe, node=node.label, message=e.message)
            continue
        yield from check_sql_names(node, statement, schema)


def table_aliases(statement: exp.Expression) -> dict[str, str]:
    aliases = {}
    for table in statement.find_all(exp.Table):
        aliases[table.alias_or_name] = table.name
        aliases[table.name] = table.name
    return aliases


def column_type(column: exp.Column, aliases: dict[str, str], schema: LakeSchema) -> FieldType | None:
    tables = [aliases[column.table]] if column.table in aliases else list(dict.fromkeys(aliases.values()))
    for table in tables:
        if column.name in schema.tables.get(table, {}):
            return schema.tables[table][column.name]
    return None


def check_sql_names(node: PlanNode, statement: exp.Expression, schema: LakeSchema) -> Iterable[Finding]:
    aliases = table_aliases(statement)
    unknown = [t for t in dict.fromkeys(aliases.values()) if t not in schema.tables and t not in schema.denied]
    for table in unknown:
        yield Finding(code=Code.unknown_table, node=node.label, subject=table, message=f"no table named {table!r}")
    if unknown or any(t in schema.denied for t in aliases.values()):
        return
    derived = {a.alias for a in statement.find_all(exp.Alias)}
    for column in statement.find_all(exp.Column):
        if column.name not in derived and column_type(column, aliases, schema) is None:
            where = aliases.get(column.table, " or ".join(sorted(set(aliases.values()))))
            yield Finding(
                code=Code.unknown_column,
                node=node.label,
                subject=column.name,
                message=f"{where} has no column {column.name!r}",
            )
    for join in statement.find_all(exp.Join):
        for eq in join.find_all(exp.EQ):
            left, right = eq.left, eq.right
            if isinstance(left, exp.Column) and isinstance(right, exp.Column):
                types = column_type(left, aliases, schema), column_type(right, aliases, schema)
                if None not in types and (types[0] in NUMERIC) != (types[1] in NUMERIC):
                    yield Finding(
                        code=Code.join_type_mismatch,
                        node=node.label,
                        subject=f"{left.sql()} = {right.sql()}",
                        message=f"join compares {types[0]} with {types[1]}: {eq.sql()}",
                    )
    for aggregate in statement.find_all(exp.Sum, exp.Avg):
        argument = aggregate.this
        if isinstance(argument, exp.Column):
            kind = column_type(argument, aliases, schema)
            if kind is not None and kind not in NUMERIC:
                yield Finding(
                    code=Code.aggregate_type_mismatch,
                    node=node.label,
                    subject=argument.name,
                    message=f"{aggregate.key.upper()} over {kind} column {argument.name!r}",
                )


def check_document_references(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A vector step can only be narrowed by values that name its documents: a link column (or the
    linked row's key) of the table an earlier sql step read, or document ids from another search."""
    for node in plan.nodes:
        if node.tool != Tool.vector or node.source not in schema.collections:
            continue
        for ref in node.references():
            producer = plan.node(ref.label)
            if producer is None or ref.column is None or producer.tool == Tool.vector:
                continue
            if producer.source not in schema.tables:
                continue
            usable = schema.columns_naming_documents(producer.source, node.source)
            if ref.column not in usable:
                hint = (
                    f"; use {' or '.join(sorted(usable))}"
                    if usable
                    else f"; no column of {producer.source} links to it"
                )
                yield Finding(
                    code=Code.unlinked_reference,
                    node=node.label,
                    subject=ref.column,
                    message=f"{ref.label}.{ref.column} does not name documents of {node.source}{hint}",
                )


IDENTIFIER = re.compile(r"\b[a-z][a-z0-9_]*\b")


def check_prose_questions(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A sql step asking why, how something is done, what something consists of, for a reason or a
    description, of a table with no column for it: such answers are written in documents. The subject
    is the collection to read instead."""
    for node in plan.nodes:
        frame = plan.step_frame(node)
        asked = frame.prose if frame is not None else None
        if node.tool != Tool.sql or node.sql or node.source not in schema.tables or asked is None:
            continue
        word = asked.text.lower()[:5]  # "how i..." names no column: a question of method is prose
        if any(word in column.lower() for column in schema.reachable_columns(node.source)):
            continue
        collection = schema.collection_for(node.source)
        if collection is not None:
            yield Finding(
                code=Code.prose_from_table,
                node=node.label,
                subject=collection,
                message=f"{node.source} has no column for '{asked.text}': read it in {collection}",
            )


def check_table_columns_in_searches(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A search whose question names a table's column ("the value of the line_item 'Other receivables'")
    asks for that table's rows. Only names with an underscore count: plain words ("value", "year") are
    also prose. The subject is the one table with that column."""
    read = plan.read_labels()
    for node in plan.nodes:
        if node.tool != Tool.vector or node.references() or node.label in read:
            continue
        named = {w for w in IDENTIFIER.findall(node.question or "") if "_" in w}
        tables = sorted({t for t, columns in schema.tables.items() for c in columns if c in named})
        if len(tables) == 1:
            yield Finding(
                code=Code.table_column_in_search,
                node=node.label,
                subject=tables[0],
                message=f"the search names a column of {tables[0]}: read that table with sql",
            )


def check_columns_of_joined_tables(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    """A sql step whose question names a column its table lacks and one joined table holds, with every
    other column it names ("total_amount of the invoice with invoice_id in $var_1.invoice_id" on
    line_items): that table answers it without a join. The subject is that table."""
    columns = {c for held in schema.tables.values() for c in held}
    for node in plan.nodes:
        if node.tool != Tool.sql or node.sql or node.source not in schema.tables:
            continue
        named = {w for w in IDENTIFIER.findall(REFERENCE.sub("", node.question or "")) if w in columns and "_" in w}
        missing = named - set(schema.tables[node.source])
        holders = [t for t in schema.sql_tables(node.source)[1:] if named <= set(schema.tables[t])]
        if missing and len(holders) == 1:
            yield Finding(
                code=Code.column_of_joined_table,
                node=node.label,
                subject=holders[0],
                message=f"{node.source} has no column {', '.join(sorted(missing))}: read {holders[0]}, which has it",
            )


def check_vector_filters(plan: Plan, schema: LakeSchema) -> Iterable[Finding]:
    for node in plan.nodes:
        if node.tool != Tool.vector or not node.filter:
            continue
        try:
            condition, _ = parse_filter(node.filter)
        except FilterError as e:
            yield Finding(code=Code.sql_parse_error, node=node.label, message=e.message)
            continue
        unknown = [name for name in fields_of(condition) if name not in COLLECTION_FIELDS]
        for name in unknown:
            yield Finding(
                code=Code.unknown_filter_field,
                node=node.label,
                subject=name,
                message=f"collections have no metadata field {name!r}",
            )
        if unknown:
            continue
        try:
            milvus_expression(node.filter, lambda field, reference: ["x"])
        except FilterError as e:
            yield Finding(code=Code.unsupported_filter, node=node.label, message=e.message)


STRUCTURAL: tuple[Rule, ...] = (
    check_completeness,
    check_tools_and_labels,
    check_exposure,
    check_references,
    check_acyclic,
    check_redundancy,
)
SEMANTIC: tuple[Rule, ...] = (
    check_policy,
    check_sources,
    check_sql,
    check_document_references,
    check_vector_filters,
    check_prose_questions,
    check_table_columns_in_searches,
    check_columns_of_joined_tables,
)


def validate(plan: Plan, schema: LakeSchema, rules: tuple[Rule, ...] = STRUCTURAL + SEMANTIC) -> list[Finding]:
    """Every finding of every rule; an empty list means the plan is executable under the schema."""
    return [finding for rule in rules for finding in rule(plan, schema)]
