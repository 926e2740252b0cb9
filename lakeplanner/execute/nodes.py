"""Running one plan node: sql, vector or graph. A node gets its bound inputs and the services, and
returns a NodeResult; it never raises, so a failing node leaves the others' results intact."""

from __future__ import annotations

import re
import time
from typing import Any

import pyarrow as pa

from lakeplanner.contract.links import DocumentIndex
from lakeplanner.errors import EngineError, LakeplannerError, LLMUnavailableError
from lakeplanner.execute import sql as sqlnode
from lakeplanner.execute.arithmetic import asks_every_year, values_by_year, year_of, years_asked
from lakeplanner.execute.hseq import Budget, package
from lakeplanner.execute.results import NodeResult
from lakeplanner.execute.services import Governed
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.execute.synthesize import grounding, restates
from lakeplanner.execute.variables import Binding
from lakeplanner.execute.vector import (
    Bound,
    SegmentReader,
    all_of,
    asks_the_whole_question,
    document_filter,
    filter_references,
    query_text,
    run_iteration,
    with_answers_spelled,
    written_filter,
)
from lakeplanner.ingest.segments import SEGMENTS_TABLE, stored_documents
from lakeplanner.injection import name_addresses_the_model, withheld_value
from lakeplanner.lineage import semconv
from lakeplanner.lineage.steps import Recorder
from lakeplanner.plan.dataops import Fixer, recommend
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode, Tool
from lakeplanner.plan.source_checks import check_sql
from lakeplanner.plan.validate import validate
from lakeplanner.policy import OPEN, Access
from lakeplanner.question import QuestionFrame
from lakeplanner.question.read import read_step
from lakeplanner.question.words import stem

KEYS_CITED = 50
FLOAT_DIGITS = 10  # binary noise off computed cells: 1.2 - 1.6 is -0.40000000000000013


def bound_values(node: PlanNode, inputs: dict[str, Binding]) -> dict[str, dict[str, list[Any]]]:
    return {label: b.columns for label, b in inputs.items()}


def bounds_of(node: PlanNode, inputs: dict[str, Binding]) -> list[Bound]:
    out = []
    for ref in node.references():
        if ref.column and ref.label in inputs:
            values = tuple(str(v) for v in inputs[ref.label].columns.get(ref.column, []))
            out.append(Bound(f"{ref.label}.{ref.column}", ref.column, values))
    return out


def rows_and_keys(table: pa.Table, cap: int) -> tuple[list[dict], dict[str, list[str]], int]:
    """Rows without the key columns, and per table alias the keys of the rows cited."""
    keys: dict[str, list[str]] = {}
    rows = []
    for row in table.to_pylist():
        clean = {}
        for name, value in row.items():
            if name.startswith(sqlnode.KEY_PREFIX):
                alias = name[len(sqlnode.KEY_PREFIX) :]
                values = value if isinstance(value, list) else [value]
                keys.setdefault(alias, []).extend(str(v) for v in values if v is not None)
            elif not name_addresses_the_model(name):
                clean[name] = round(value, FLOAT_DIGITS) if isinstance(value, float) else withheld_value(value)
        rows.append(clean)
    keys = {alias: list(dict.fromkeys(v))[:KEYS_CITED] for alias, v in keys.items()}
    return rows[:cap], keys, table.num_rows


# how pyiceberg's reads through pyarrow fail when a table's data file is missing or damaged
TABLE_DATA_ERRORS = (FileNotFoundError, pa.ArrowException)


def unreadable_table_data(error: Exception) -> EngineError:
    return EngineError(
        f"a data file of the lake's tables cannot be read: {str(error).splitlines()[0]}",
        hint="a Parquet file under the lake's warehouse/ is missing or damaged: restore it from a backup, "
        "or re-ingest the sources into a new lake",
    )


def run_node(
    node: PlanNode,
    inputs: dict[str, Binding],
    services,
    settings: ExecSettings,
    frame: QuestionFrame | None = None,
    access: Access = OPEN,
) -> NodeResult:
    """`frame` is the user's question the plan serves, as read (vector nodes read evidence for it); the node
    reads only what `access` admits (a denied source is an error, governed tables are rewritten)."""
    recorder = Recorder()
    started = time.perf_counter()
    result = NodeResult.for_node(
        node,
        bytes_in=sum(b.bytes for b in inputs.values()),
        rows_in=sum(b.values for b in inputs.values()),
    )
    try:
        runner = {Tool.sql: run_sql, Tool.vector: run_vector, Tool.graph: run_graph}[Tool(node.tool)]
        governed = Governed(services, access)
        governed.check(node.source, recorder)
        result = runner(node, inputs, governed, settings, recorder, result, frame)
    except (EngineError, LLMUnavailableError) as e:
        result.error = e.message
        result.advice = recommend([], e)
    except LakeplannerError as e:
        result.error = e.message
        result.advice = [e.hint] if e.hint else []
    except TABLE_DATA_ERRORS as e:
        unreadable = unreadable_table_data(e)
        result.error, result.advice = unreadable.message, [unreadable.hint]
    result.steps = recorder.steps
    result.seconds = time.perf_counter() - started
    return result


def _fix_names(node: PlanNode, sql: str, schema: LakeSchema) -> tuple[str, list[str]]:
    """Issue 4's Fixer on a written statement: misspelled or renamed columns -> closest catalog names."""
    plan = Plan(nodes=(node.model_copy(update={"sql": sql}),))
    findings = validate(plan, schema, rules=(check_sql,))
    if not findings:
        return sql, []
    fixer = Fixer(schema)
    fixed = fixer.fix(plan, findings)
    return fixed.nodes[0].sql or sql, fixer.edits


def run_statement(engine, statement, recorder: Recorder, **attributes):
    started = {semconv.KIND: semconv.TOOL, "db.system": engine.name, "db.query.text": statement.sql("duckdb")}
    with recorder.step("sql.execute", **started) as step:
        scan = engine.run(statement)
        step.attributes.update(
            {
                "db.query.text": (scan.ran or statement).sql("duckdb"),
                "lakeplanner.policy.decisions": scan.decisions or None,
                "db.response.returned_rows": scan.table.num_rows,
                "lakeplanner.snapshots": str(scan.snapshots),
                "lakeplanner.bytes_scanned": scan.bytes_scanned,
                **attributes,
            }
        )
    return scan


def add_year_values(
    frame: QuestionFrame, written, result: NodeResult, engine, schema, keys, settings, recorder, named: dict[str, str]
) -> None:
    """A change, percentage change, average or ratio over two named years, a list of values for named
    years, or the year with the highest value, is answered by its template from one value per year
    (execute/arithmetic.py). When the statement the LLM wrote does not show them (it computed the change
    itself, summed both years into each row, or read no value), the engine is asked for them: the same
    filters (or, when it has none, the row the question names: `named`), the year column and the value
    column, for the named years or every year. Their rows join the node's, cited like them; they replace
    its rows when the statement computed its own arithmetic over the years (a percentage per year of
    x / x * 100), or filtered on no item while the question names one (an average over every item)."""
    years = years_asked(frame)
    if not years and not asks_every_year(frame):
        return
    # rows to replace: the statement's own arithmetic, or values of no item the question names
    replaced = sqlnode.computes_arithmetic(written) or bool(named and not sqlnode.item_filters(written))
    held = values_by_year([result]) or {}
    if not replaced and (all(y in held for y in years) if years else len(held) >= 2):
        return
    lookup = sqlnode.year_values_statement(written, schema.tables, years, named)
    if lookup is None and (lookup := sqlnode.period_aggregate_statement(written, schema.tables, years, frame, named)):
        replaced = True  # the statement's rows are events, not the per-year values the arithmetic needs
    if lookup is None:
        return
    table = lookup.find(sqlnode.exp.Table).name
    try:
        statement = sqlnode.with_row_keys(sqlnode.checked(lookup, schema.tables, [table], settings.row_cap), keys)
        scan = run_statement(engine, statement, recorder, **{"lakeplanner.sql.purpose": "values per named year"})
    except (sqlnode.SqlError, sqlnode.SqlRuntimeError):
        return
    rows, row_keys, _ = rows_and_keys(scan.table, settings.row_cap)
    found = [year_of(r) for r in rows]
    if not one_per_year(found, years):  # one value per year, or nothing is added
        return
    if replaced:
        result.rows, result.rows_total, result.columns, result.row_keys = [], 0, [], {}
    result.rows += rows
    result.rows_total += len(rows)
    result.columns += [c for c in rows[0] if c not in result.columns]
    found = [key for keys_of_alias in row_keys.values() for key in keys_of_alias]
    result.row_keys[table] = list(dict.fromkeys(result.row_keys.get(table, []) + found))
    result.snapshots = {**scan.snapshots, **result.snapshots}
    result.sql.append(sqlnode.run_record(scan.ran or statement, engine.name, scan))


def one_per_year(found: list[int | None], years: list[int]) -> bool:
    if years:
        return sorted(found, key=str) == sorted(years)
    return len(found) >= 2 and None not in found and len(set(found)) == len(found)


def run_sql(
    node, inputs, services, settings, recorder: Recorder, result: NodeResult, asked_frame: QuestionFrame | None = None
) -> NodeResult:
    lake = services.lake
    contract = services.contract
    schema = LakeSchema.from_contract(contract)
    tables = schema.sql_tables(node.source)
    bound = {
        f"{ref.label}.{ref.column}": len(inputs[ref.label].columns.get(ref.column, []))
        for ref in node.references()
        if ref.column and ref.label in inputs
    }
    engine = services.engine(settings)
    keys = {t: schema.row_key(t) for t in tables}
    feedback = None
    sql = node.sql
    asked = asked_frame.text if asked_frame is not None else ""
    frame = asked_frame or node.frame or QuestionFrame(text=node.question)
    categories = sqlnode.category_values(lake, contract, tables, node.question)
    lost = sqlnode.lost_values(categories, node.question, asked) if asked else {}
    named = sqlnode.named_values(categories, node.question)
    told = 0  # characters of held values the feedback shows
    bindings = bound_values(node, inputs)
    matched = {ref: (t, c) for ref, (t, c) in node.matched_columns().items() if c in schema.tables.get(t, {})}
    bound_literals = {str(v) for columns in bindings.values() for values in columns.values() for v in values}
    carried: list[str] = []  # repairs of the last attempt's statement, recorded with the next
    # the writer's prompt differs between attempts only by the feedback, and decoding is greedy: the
    # same feedback again would write the statement that just failed
    fed_back: set[str | None] = set()
    tries = 0
    for attempt in range(settings.sql_retries + 1):
        if sql is None or feedback is not None:
            if feedback in fed_back:
                break
            fed_back.add(feedback)
            messages = sqlnode.sql_messages(node, contract, tables, bound, feedback, named, lost)
            # bound values stay out of the prompt; example and category values are lake data shown
            shown = sqlnode.examples_chars(contract, tables) + told
            shown += sqlnode.values_chars(named) + sqlnode.values_chars(lost)
            sql = recorder.complete(
                services.llm,
                "sql.write",
                messages,
                sqlnode.SqlDraft,
                max_tokens=300,
                data_chars=shown,
                because=feedback or "",
            ).value.sql
        tries = attempt + 1
        sql, edits = _fix_names(node, sql, schema)
        edits, carried = carried + edits, []
        try:
            statement = sqlnode.bind(sql, bindings, matched)
            edits += sqlnode.with_missing_joins(statement, schema.tables, tables, contract)
            edits += sqlnode.group_bare_columns(statement)
            statement = sqlnode.checked(statement, schema.tables, tables, settings.row_cap)
            edits += sqlnode.match_dates_as_text(statement, schema.tables)
            edits += sqlnode.select_asked_reference(statement, node.question, node.returns, contract)
            if bound_literals:
                edits += sqlnode.compare_bound_values_where_held(statement, engine, schema.tables, bound_literals)
                edits += sqlnode.drop_filters_beside_bound_choice(
                    statement, schema.tables, bound_literals, asked or node.question
                )
            if asked:
                edits += sqlnode.drop_unasked_key_filters(
                    statement, engine, contract, schema.tables, asked, keep=bound_literals
                )
            edits += sqlnode.fix_key_literals(statement, categories, contract, schema.tables, keep=bound_literals)
            edits += sqlnode.fix_category_literals(statement, categories, keep=bound_literals)
            if bound_literals:
                edits += sqlnode.drop_unheld_category_filters(statement, categories, keep=bound_literals)
            edits += sqlnode.group_compared_values(statement, frame, keep=bound_literals)
            edits += sqlnode.drop_self_cancelling(statement)
            edits += sqlnode.label_compared_rows(statement, frame, keep=bound_literals)
            written = statement
            statement = sqlnode.with_row_keys(statement, keys)
            attempted = {"lakeplanner.sql.attempt": attempt + 1, "lakeplanner.dataops.edits": "; ".join(edits)}
            scan = run_statement(engine, statement, recorder, **attempted)
        except (sqlnode.SqlError, sqlnode.SqlRuntimeError) as e:
            feedback, told = f"{e.message} ({e.hint})" if e.hint else e.message, 0
            result.advice.append(f"attempt {attempt + 1}: {e.message}")
            continue
        zero = counted_zero(scan.table)
        unheld = sqlnode.unheld_filters(written, categories, bound_literals, asked or node.question) if zero else []
        if attempt < settings.sql_retries and (matches_nothing(scan.table) or unheld) and not node.references():
            moved = sqlnode.fix_misplaced_literals(written, engine, schema.tables, keep=bound_literals)
            if moved:  # rerun as repaired, without asking the LLM again
                sql, feedback, carried = written.sql("duckdb"), None, moved
                continue
            held, exist = sqlnode.filtered_values(written, categories), sqlnode.held_filters(written, categories)
            looked_up = sqlnode.looks_up_held_values(written, categories)  # no such row: its answer stands
            if not looked_up and (retry := sqlnode.nothing_matched(held, exist)) not in fed_back:
                feedback = retry
                told = sum(map(len, exist)) if exist else sqlnode.values_chars(held)
                result.advice.append(f"attempt {attempt + 1}: {feedback}")
                continue
        if unheld:  # a count of rows the lake does not hold is no answer
            feedback = f"it counted no rows: no row holds {', '.join(unheld)}"
            break
        rows, row_keys, total = rows_and_keys(scan.table, settings.row_cap)
        aliases = {t.alias_or_name: t.name for t in statement.find_all(sqlnode.exp.Table)}
        result.columns = [c for c in scan.table.column_names if not c.startswith(sqlnode.KEY_PREFIX)]
        result.rows, result.rows_total = rows, total
        result.row_keys = {aliases.get(a, a): k for a, k in row_keys.items()}
        result.snapshots = scan.snapshots
        result.sql.append(sqlnode.run_record(scan.ran or statement, engine.name, scan))
        result.advice = []
        if node.should_expose_answer:
            row = sqlnode.named_row(categories, asked or node.question)
            add_year_values(frame, written, result, engine, schema, keys, settings, recorder, row)
        return result
    result.error = f"no runnable SQL after {tries} attempt{'s' * (tries != 1)}: {feedback}"
    if node.should_expose_answer and node.source in schema.tables:
        # what the frame asks of named years needs no written statement: the row it names, per year
        row = sqlnode.named_row(categories, asked or node.question)
        stand_in = sqlnode.exp.select("*").from_(node.source)
        add_year_values(frame, stand_in, result, engine, schema, keys, settings, recorder, row)
        if result.rows:
            result.advice.append(f"{result.error}; the values per named year were read instead")
            result.error = None
    return result


def step_frame(node: PlanNode, asked_frame: QuestionFrame | None, text: str) -> QuestionFrame:
    """The frame of what a step asks once its inputs are spelled in (`text`), read under the packs of
    the frames it carries (a bare frame of the words where it carries none)."""
    reader = node.frame or asked_frame
    return read_step(reader, text) if reader is not None else QuestionFrame(text=text)


def read_value(answer: str, result: NodeResult, frame: QuestionFrame) -> str | None:
    """The value the step's selector read, kept for later steps and the answer when its passages state
    it and it is not words of the step's question ("Aladin" for "who was known by the stage name
    Aladin?" is the name searched by, not the person found)."""
    return answer if answer and stated(answer, result) and not restates(frame, answer) else None


def stated(answer: str, result: NodeResult) -> bool:
    """Whether the node's passages state the answer the selector wrote: an answer they do not state
    (made up, or planted by text withheld from them) is no value of the lake for later steps."""
    return grounding(answer, [result.model_copy(update={"rows": []})]) > 0.0


def counted_zero(table) -> bool:
    """One row whose every value is 0: a count (or sum) over rows the filters did not find."""
    data = [c for c in table.column_names if not c.startswith(sqlnode.KEY_PREFIX)]
    return table.num_rows == 1 and bool(data) and all(table.column(c)[0].as_py() == 0 for c in data)


def matches_nothing(table) -> bool:
    """No rows, or only NULL answers (an aggregate over no rows): the filters likely miss."""
    data = [c for c in table.column_names if not c.startswith(sqlnode.KEY_PREFIX)]
    return table.num_rows == 0 or all(table.column(c).null_count == table.num_rows for c in data)


def run_vector(
    node, inputs, services, settings, recorder: Recorder, result: NodeResult, asked_frame: QuestionFrame | None = None
) -> NodeResult:
    lake = services.lake
    asked = asked_frame.text if asked_frame is not None else ""
    bounds = bounds_of(node, inputs)
    in_filter = filter_references(node)
    named = [b for b in bounds if b.reference not in in_filter]  # the filter places its own references
    expression = document_filter(node.source, named, lake.catalog)
    if any(b.narrows for b in named) and not expression:
        result.error = f"the bound values of {', '.join(b.reference for b in named)} name no document of {node.source}"
        return result
    expression = all_of(expression, written_filter(node, bounds, lake.catalog))
    text = query_text(node, bounds)
    with recorder.step(
        f"retrieval {node.source}",
        **semconv.retrieval_attributes(node.source),
        **{"db.system": "milvus", "db.collection.name": node.source, "lakeplanner.filter": expression[:500]},
    ) as step:
        hits = services.search(node.source, text, expression, settings.search_limit)
        step.attributes["lakeplanner.hits"] = len(hits)
    if not hits:
        return result
    budget = Budget(**settings.model_dump(include=set(Budget.model_fields)))
    reader = SegmentReader(lake.catalog)
    told = with_answers_spelled(node, bounds)
    ranked = settings.rank_whole_question and asks_the_whole_question(node, bounds, asked)
    state = run_iteration(told, hits, reader, services.llm, recorder, budget, services.rerank, asked, ranked)
    result.evidence = package(state.selected)
    result.answer = read_value(state.answer, result, step_frame(node, asked_frame, told.question))
    if reader.snapshot_id:
        result.snapshots = {SEGMENTS_TABLE: reader.snapshot_id}
    linked = {h.chunk.document_id: h.chunk for h in hits}
    documents_used = list(dict.fromkeys(s.container for s in state.selected if s.level != "row"))
    result.columns = ["document_id", "title", "linked_table", "linked_keys", "answer"]
    result.rows = [
        {
            "document_id": d,
            "title": linked[d].title if d in linked else "",
            "linked_table": linked[d].linked_table if d in linked else "",
            "linked_keys": list(linked[d].linked_keys) if d in linked else [],
            "answer": result.answer,
        }
        for d in documents_used
    ] or (
        [{"document_id": None, "title": "", "linked_table": "", "linked_keys": [], "answer": result.answer}]
        if result.answer
        else []
    )
    for row in result.rows:  # the key of the row the document is linked to, for a successor's join
        row["linked_key"] = row["linked_keys"][0] if row["linked_keys"] else None
    result.rows = named_documents(result.rows, result.answer) or result.rows
    if asked_frame is not None:
        result.rows = the_one_asked(result.rows, asked_frame)
    result.rows_total = len(result.rows)
    if not state.sufficient:
        result.advice.append(f"evidence iteration stopped without sufficiency ({state.stop})")
    return result


def named_documents(rows: list[dict], answer: str | None) -> list[dict]:
    """The documents the step's answer names by id or by the key of their linked row ("Loan
    LN-1010" of two overdue loans read): only they flow on, else a successor reads both."""
    if not answer:
        return []

    def named(value: str) -> bool:
        return bool(value) and re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", answer, re.I) is not None

    return [r for r in rows if named(r["document_id"] or "") or any(map(named, r["linked_keys"]))]


def the_one_asked(rows: list[dict], frame: QuestionFrame) -> list[dict]:
    """ "Which loan was written off ...?": of the documents selected about rows of the kind asked for,
    only the first chosen flows on, else a successor reads the rows of every candidate as one answer."""
    if frame.one is None or len(rows) < 2:
        return rows
    if all(r["linked_table"] and stem(r["linked_table"]) == stem(frame.one) for r in rows):
        return rows[:1]
    return rows


LINKED_KEY_COLUMNS = frozenset({"linked_key", "linked_keys"})  # a search result's rows the documents cite


def run_graph(
    node, inputs, services, settings, recorder: Recorder, result: NodeResult, asked_frame: QuestionFrame | None = None
) -> NodeResult:
    """Follow foreign keys or row-document links from the bound values, without the LLM."""
    lake = services.lake
    contract = services.contract
    bounds = bounds_of(node, inputs)
    if node.source in {s.name for s in contract.sources if s.kind.value == "documents"}:
        index = DocumentIndex.build(node.source, stored_documents(lake.catalog, [node.source]).get(node.source, []))
        found = {r[0] for b in bounds for v in b.values if (r := index.resolve(v))}
        result.columns = ["document_id"]
        result.rows = [{"document_id": d} for d in sorted(found)]
        result.rows_total = len(result.rows)
        return result
    columns = []
    for b in bounds:
        for fk in contract.foreign_keys:
            if (fk.target == node.source and fk.target_column == b.column) or (
                fk.source == node.source and fk.column == b.column
            ):
                columns.append((fk.target_column if fk.target == node.source else fk.column, b))
    if not columns:  # no key joins them: the rows of the source that hold the bound values in that column
        held = {f.column for f in contract.fields_of(node.source)}
        columns = [(b.column, b) for b in bounds if b.column in held]
    if not columns:  # documents that cite rows: the source's rows whose key they cite
        key = LakeSchema.from_contract(contract).row_key(node.source)
        columns = [(key[0], b) for b in bounds if b.column in LINKED_KEY_COLUMNS and len(key) == 1]
    if not columns:
        result.error = (
            f"no foreign key of {node.source} matches {', '.join(b.reference for b in bounds) or 'the inputs'}"
        )
        return result
    where = " AND ".join(f"{c} IN ({b.reference})" for c, b in columns)
    traversal = node.model_copy(update={"sql": f"SELECT * FROM {node.source} WHERE {where}"})
    return run_sql(traversal, inputs, services, settings, recorder, result, asked_frame)
