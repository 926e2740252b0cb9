"""A SQL step: the LLM writes one SELECT for the step's tables, the passes repair it (passes.py), the
engine runs it with the row keys the answer cites; a statement matching nothing is retried with the
lake values it missed, and named years get their values per year (periods.py)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from sqlglot import exp

from lakeplanner.errors import SqlError
from lakeplanner.execute.arithmetic import asks_every_year, compares, values_by_year, year_of, years_asked
from lakeplanner.execute.results import NodeResult
from lakeplanner.execute.sql.passes import REPAIR_PASSES, SHAPE_PASSES, StepContext, apply_passes
from lakeplanner.execute.sql.periods import (
    computes_arithmetic,
    item_filters,
    period_aggregate_statement,
    year_values_statement,
)
from lakeplanner.execute.sql.probes import fix_misplaced_literals
from lakeplanner.execute.sql.prompt import SqlDraft, examples_chars, sql_messages, values_chars
from lakeplanner.execute.sql.ranges import per_range_statements
from lakeplanner.execute.sql.scope import widened_tables
from lakeplanner.execute.sql.statement import KEY_PREFIX, SqlRuntimeError, bind, checked, run_record, with_row_keys
from lakeplanner.execute.sql.values import (
    category_values,
    filtered_values,
    held_filters,
    looks_up_held_values,
    lost_values,
    named_row,
    named_values,
    nothing_matched,
    unheld_filters,
)
from lakeplanner.execute.variables import Binding
from lakeplanner.injection import name_addresses_the_model, withheld_value
from lakeplanner.lineage import semconv
from lakeplanner.lineage.steps import Recorder
from lakeplanner.plan.dataops import Fixer
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.plan.source_checks import check_sql
from lakeplanner.plan.validate import validate
from lakeplanner.question import QuestionFrame

KEYS_CITED = 50


FLOAT_DIGITS = 10  # binary noise off computed cells: 1.2 - 1.6 is -0.40000000000000013


def bound_values(node: PlanNode, inputs: dict[str, Binding]) -> dict[str, dict[str, list[Any]]]:
    return {label: b.columns for label, b in inputs.items()}


def rows_and_keys(table: pa.Table, cap: int) -> tuple[list[dict], dict[str, list[str]], int]:
    """Rows without the key columns, and per table alias the keys of the rows cited."""
    keys: dict[str, list[str]] = {}
    rows = []
    for row in table.to_pylist():
        clean = {}
        for name, value in row.items():
            if name.startswith(KEY_PREFIX):
                alias = name[len(KEY_PREFIX) :]
                values = value if isinstance(value, list) else [value]
                keys.setdefault(alias, []).extend(str(v) for v in values if v is not None)
            elif not name_addresses_the_model(name):
                clean[name] = round(value, FLOAT_DIGITS) if isinstance(value, float) else withheld_value(value)
        rows.append(clean)
    keys = {alias: list(dict.fromkeys(v))[:KEYS_CITED] for alias, v in keys.items()}
    return rows[:cap], keys, table.num_rows


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
    replaced = computes_arithmetic(written) or bool(named and not item_filters(written))
    held = values_by_year([result]) or {}
    if not replaced and (all(y in held for y in years) if years else len(held) >= 2):
        return
    lookup = year_values_statement(written, schema.tables, years, named)
    if lookup is None and (lookup := period_aggregate_statement(written, schema.tables, years, frame, named)):
        replaced = True  # the statement's rows are events, not the per-year values the arithmetic needs
    if lookup is None:
        return
    table = lookup.find(exp.Table).name
    try:
        statement = with_row_keys(checked(lookup, schema.tables, [table], settings.row_cap), keys)
        scan = run_statement(engine, statement, recorder, **{"lakeplanner.sql.purpose": "values per named year"})
    except (SqlError, SqlRuntimeError):
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
    result.sql.append(run_record(scan.ran or statement, engine.name, scan))


def add_range_values(
    frame: QuestionFrame, written, result: NodeResult, engine, schema, keys, settings, recorder
) -> None:
    """A change, difference or ratio between two named ranges ("H2 than H1 2024"): the statement's one
    figure once per range replaces its rows, each labelled with the range's words (sql/ranges.py)."""
    if not compares(frame):
        return
    rows, row_keys, snapshots, runs = [], {}, {}, []
    for lookup in per_range_statements(written, frame, schema.tables):
        tables = list(dict.fromkeys(t.name for t in lookup.find_all(exp.Table)))
        try:
            statement = with_row_keys(checked(lookup, schema.tables, tables, settings.row_cap), keys)
            scan = run_statement(engine, statement, recorder, **{"lakeplanner.sql.purpose": "value per named range"})
        except (SqlError, SqlRuntimeError):
            return
        found, cited, _ = rows_and_keys(scan.table, settings.row_cap)
        if len(found) != 1:
            return
        rows += found
        aliases = {t.alias_or_name: t.name for t in statement.find_all(exp.Table)}
        for alias, cited_keys in cited.items():
            table = aliases.get(alias, alias)
            row_keys[table] = list(dict.fromkeys(row_keys.get(table, []) + cited_keys))
        snapshots.update(scan.snapshots)
        runs.append(run_record(scan.ran or statement, engine.name, scan))
    if len(rows) != 2:
        return
    result.rows, result.rows_total, result.columns = rows, 2, list(rows[0])
    result.row_keys, result.snapshots = row_keys, {**result.snapshots, **snapshots}
    result.sql += runs


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
    asked = asked_frame if asked_frame is not None and asked_frame.text else None
    own = QuestionFrame(text=node.question)  # the step's words as written (its frame may spell references)
    frame = asked_frame or node.frame or own
    categories = category_values(lake, contract, tables, own)
    lost = lost_values(categories, own, asked) if asked else {}
    named = named_values(categories, own)
    told = 0  # characters of held values the feedback shows
    bindings = bound_values(node, inputs)
    matched = {ref: (t, c) for ref, (t, c) in node.matched_columns().items() if c in schema.tables.get(t, {})}
    bound_literals = {str(v) for columns in bindings.values() for values in columns.values() for v in values}
    step = StepContext(
        columns_of=schema.tables,
        allowed=tuple(tables),
        contract=contract,
        frame=frame,
        step=own,
        asked=asked,
        returns=tuple(node.returns),
        categories=categories,
        bound=frozenset(bound_literals),
        engine=engine,
    )
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
            messages = sql_messages(node, contract, tables, bound, feedback, named, lost)
            # bound values stay out of the prompt; example and category values are lake data shown
            shown = examples_chars(contract, tables) + told
            shown += values_chars(named) + values_chars(lost)
            sql = recorder.complete(
                services.llm,
                "sql.write",
                messages,
                SqlDraft,
                max_tokens=300,
                data_chars=shown,
                because=feedback or "",
            ).value.sql
        tries = attempt + 1
        sql, edits = _fix_names(node, sql, schema)
        edits, carried = carried + edits, []
        try:
            statement, shaped = apply_passes(bind(sql, bindings, matched), step, SHAPE_PASSES)
            if widened := widened_tables(statement, tables, schema):
                tables = [*tables, *widened]
                keys.update({t: schema.row_key(t) for t in widened})
                shaped.append(f"step widened to {', '.join(widened)}: foreign keys join them to {node.source}")
            statement = checked(statement, schema.tables, tables, settings.row_cap)
            statement, repaired = apply_passes(statement, step, REPAIR_PASSES)
            edits += shaped + repaired
            written = statement
            statement = with_row_keys(statement, keys)
            attempted = {"lakeplanner.sql.attempt": attempt + 1, "lakeplanner.dataops.edits": "; ".join(edits)}
            scan = run_statement(engine, statement, recorder, **attempted)
        except (SqlError, SqlRuntimeError) as e:
            feedback, told = f"{e.message} ({e.hint})" if e.hint else e.message, 0
            result.advice.append(f"attempt {attempt + 1}: {e.message}")
            continue
        zero = counted_zero(scan.table)
        unheld = unheld_filters(written, categories, bound_literals, asked or own) if zero else []
        if attempt < settings.sql_retries and (matches_nothing(scan.table) or unheld) and not node.references():
            moved = fix_misplaced_literals(written, engine, schema.tables, keep=bound_literals)
            if moved:  # rerun as repaired, without asking the LLM again
                sql, feedback, carried = written.sql("duckdb"), None, moved
                continue
            held, exist = filtered_values(written, categories), held_filters(written, categories)
            looked_up = looks_up_held_values(written, categories)  # no such row: its answer stands
            if not looked_up and (retry := nothing_matched(held, exist)) not in fed_back:
                feedback = retry
                told = sum(map(len, exist)) if exist else values_chars(held)
                result.advice.append(f"attempt {attempt + 1}: {feedback}")
                continue
        if unheld:  # a count of rows the lake does not hold is no answer
            feedback = f"it counted no rows: no row holds {', '.join(unheld)}"
            break
        rows, row_keys, total = rows_and_keys(scan.table, settings.row_cap)
        aliases = {t.alias_or_name: t.name for t in statement.find_all(exp.Table)}
        result.columns = [c for c in scan.table.column_names if not c.startswith(KEY_PREFIX)]
        result.rows, result.rows_total = rows, total
        result.row_keys = {aliases.get(a, a): k for a, k in row_keys.items()}
        result.snapshots = scan.snapshots
        result.sql.append(run_record(scan.ran or statement, engine.name, scan))
        result.advice = []
        if node.should_expose_answer:
            row = named_row(categories, asked or own)
            add_year_values(frame, written, result, engine, schema, keys, settings, recorder, row)
            add_range_values(frame, written, result, engine, schema, keys, settings, recorder)
        return result
    result.error = f"no runnable SQL after {tries} attempt{'s' * (tries != 1)}: {feedback}"
    if node.should_expose_answer and node.source in schema.tables:
        # what the frame asks of named years needs no written statement: the row it names, per year
        row = named_row(categories, asked or own)
        stand_in = exp.select("*").from_(node.source)
        add_year_values(frame, stand_in, result, engine, schema, keys, settings, recorder, row)
        if result.rows:
            result.advice.append(f"{result.error}; the values per named year were read instead")
            result.error = None
    return result


def counted_zero(table) -> bool:
    """One row whose every value is 0: a count (or sum) over rows the filters did not find."""
    data = [c for c in table.column_names if not c.startswith(KEY_PREFIX)]
    return table.num_rows == 1 and bool(data) and all(table.column(c)[0].as_py() == 0 for c in data)


def matches_nothing(table) -> bool:
    """No rows, or only NULL answers (an aggregate over no rows): the filters likely miss."""
    data = [c for c in table.column_names if not c.startswith(KEY_PREFIX)]
    return table.num_rows == 0 or all(table.column(c).null_count == table.num_rows for c in data)
