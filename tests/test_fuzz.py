"""Property-based fuzzing of the parsers and validators that read hostile input: plans and filters an
LLM writes, SQL an LLM writes, source files a user drops in the lake, and questions anyone types.

Each property returns a result or raises the typed error of its boundary (pydantic's ValidationError
for raw plan JSON, a LakeplannerError subclass everywhere else); anything else is a crash. The budget
is fixed and seeded (LAKEPLANNER_FUZZ_EXAMPLES per property); with LAKEPLANNER_FUZZ_REPORT set, the
examples run and the crashes per target are written there as JSON at the end of the session."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from fuzz_strategies import (
    ALLOWED_TABLES,
    DANGEROUS_FUNCTIONS,
    DOCUMENT_SEEDS,
    KNOWN,
    SAMPLE_SCHEMA,
    SQL_TABLES,
    VALID_PLANS,
    any_text,
    bound_values,
    csv_bytes,
    damaged,
    filters,
    hostile_sql,
    json_bytes,
    jsonl_bytes,
    one_sql_step,
    parquet_bytes,
    raw_plans,
    records,
    reversed_chain,
    spliced,
)
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from restores import restore_lost_parts
from sqlglot import exp

from lakeplanner.config import LimitsConfig
from lakeplanner.contract.models import ExclusionManifest, FieldType
from lakeplanner.errors import BadSourceError, LakeplannerError, SqlError
from lakeplanner.execute.sql.statement import checked
from lakeplanner.ingest.readers import Document, TableData, read_document, read_table_file
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.dataops import Repair, repair
from lakeplanner.plan.filters import COLLECTION_FIELDS, FilterError, milvus_expression
from lakeplanner.plan.findings import Finding
from lakeplanner.plan.model import Plan
from lakeplanner.plan.validate import validate
from lakeplanner.policy.readonly import ANONYMOUS_ALLOWED, DENIED_FUNCTIONS, locked_duckdb, parse_select
from lakeplanner.question import QuestionFrame, Span, read_question
from lakeplanner.question.fill import fill_frame
from lakeplanner.question.known import KnownValues
from lakeplanner.question.template import extract_slots, template_of

EXAMPLES = int(os.environ.get("LAKEPLANNER_FUZZ_EXAMPLES", "100"))
REPORT = os.environ.get("LAKEPLANNER_FUZZ_REPORT")
FUZZ = settings(
    max_examples=EXAMPLES,
    # a report counts failures: shrinking would count one failure once per smaller input it tries
    phases=[Phase.explicit, Phase.reuse, Phase.generate] if REPORT else list(Phase),
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
LIMITS = LimitsConfig()
NO_EXCLUSIONS = ExclusionManifest()
KNOWN_VALUES = KnownValues(KNOWN)
ROW_LIMIT = 20
ROWS = 10 * ROW_LIMIT
EXAMPLES_RUN: Counter[str] = Counter()
CRASHES: defaultdict[str, set[str]] = defaultdict(set)  # target -> its distinct failures


@contextlib.contextmanager
def fuzzing(target: str) -> Iterator[None]:
    """Count one example of `target`, and its failure when the body raises (the exception goes on).
    A failure is counted once however often hypothesis replays it."""
    EXAMPLES_RUN[target] += 1
    try:
        yield
    except Exception as e:
        CRASHES[target].add(f"{type(e).__name__}: {e}"[:500])
        raise


@pytest.fixture(scope="session", autouse=True)
def fuzz_report() -> Iterator[None]:
    yield
    if REPORT:
        targets = {name: {"examples": n, "crashes": len(CRASHES[name])} for name, n in sorted(EXAMPLES_RUN.items())}
        summary = {
            "fuzz_examples": sum(EXAMPLES_RUN.values()),
            "fuzz_crashes": sum(t["crashes"] for t in targets.values()),
            "targets": targets,
        }
        Path(REPORT).write_text(json.dumps(summary, indent=2) + "\n")


# ---------------------------------------------------------------- 1. plans


def test_the_fuzzed_schema_is_the_sample_lakes():
    """SAMPLE_SCHEMA stands in for the ingested sample lake: its valid plans validate clean under it."""
    assert all(validate(Plan.model_validate(plan), SAMPLE_SCHEMA) == [] for plan in VALID_PLANS)


def parsed_plan(raw: object) -> Plan | None:
    """The plan, or None where pydantic refuses the raw value (a typed error at the boundary)."""
    try:
        return Plan.model_validate(raw)
    except ValidationError:
        return None


@FUZZ
@given(raw_plans, st.one_of(raw_plans.map(json.dumps), spliced(raw_plans.map(json.dumps)), any_text()))
@example({"nodes": [{"question": "q", "tool": "sql", "label": "$var_1"}]}, '{"nodes": [{"question": "q"')
def test_plan_json_parses_or_is_refused_by_pydantic(raw, text):
    with fuzzing("plan_parse"):
        for parse, value in ((Plan.model_validate, raw), (Plan.model_validate_json, text)):
            with contextlib.suppress(ValidationError):
                assert isinstance(parse(value), Plan)


DEEP_SQL = "SELECT " + "(" * 3000 + "1" + ")" * 3000 + " FROM customers"


@FUZZ
@given(raw_plans)
@example(reversed_chain(1100))  # RecursionError: check_acyclic recursed once per step
@example(one_sql_step(DEEP_SQL))  # RecursionError: check_policy parsed the SQL unguarded
def test_a_fuzzed_plan_validates_to_findings(raw):
    with fuzzing("plan_validate"):
        plan = parsed_plan(raw)
        if plan is not None:
            findings = validate(plan, SAMPLE_SCHEMA)
            assert all(isinstance(f, Finding) for f in findings)


@FUZZ
@given(raw_plans)
@example(reversed_chain(1100))
@example(one_sql_step(DEEP_SQL))
def test_a_fuzzed_plan_is_repaired_or_left_with_its_findings(raw):
    with fuzzing("plan_repair"):
        plan = parsed_plan(raw)
        if plan is None:
            return
        try:
            result = repair(plan, SAMPLE_SCHEMA, replan=lambda draft, findings: draft)
            restored, _ = restore_lost_parts(plan, KNOWN_VALUES, SAMPLE_SCHEMA)
        except LakeplannerError:
            return
        assert isinstance(result, Repair) and isinstance(restored, Plan)
        assert result.findings == validate(result.plan, SAMPLE_SCHEMA)  # what it reports is of the plan it returns


# ---------------------------------------------------------------- 2. vector filters

MILVUS_WORDS = {"and", "or", "not", "in", "like", "true", "false", "array_contains_any"}


def milvus_identifiers(expression: str) -> set[str]:
    """The names an expression uses outside its string literals (which escape " and \\)."""
    code = re.sub(r'"(?:[^"\\]|\\.)*"', " ", expression)
    assert '"' not in code, f"unbalanced string literal in {expression!r}"
    return set(re.findall(r"(?<![\w.])[A-Za-z_]\w*", code))


@FUZZ
@given(filters, bound_values)
@example("document_id IN $var_1.contract_document_id", ['"] or true or ["', "\\"])
@example("(" * 3000 + "title = 'x'" + ")" * 3000, [])  # RecursionError in sqlglot's parser
@example(" AND ".join(["title = 'x'"] * 3000), [])  # RecursionError in the translation
@example("NOT " * 3000 + "title = 'x'", [])
def test_a_filter_becomes_a_milvus_expression_over_collection_fields(text, values):
    with fuzzing("filter"):
        try:
            expression = milvus_expression(text, lambda field, reference: values)
        except FilterError:
            return
        assert milvus_identifiers(expression) <= MILVUS_WORDS | set(COLLECTION_FIELDS), expression


# ---------------------------------------------------------------- 3. SQL

CANARY = "CANARY_7f3a"


def called_names(function: exp.Func) -> set[str]:
    rendered = function.sql(dialect="duckdb")
    return {function.sql_name().lower(), rendered.split("(", 1)[0].strip().lower()}


def assert_read_only(statement: exp.Expression, allowed: set[str] | None) -> None:
    """One SELECT reading plain table names (only `allowed` ones, or its own CTEs) and calling only
    allowed functions and none of DuckDB's that reach outside the query."""
    assert isinstance(statement, exp.Select)
    own = {cte.alias_or_name for cte in statement.find_all(exp.CTE)}
    for table in statement.find_all(exp.Table):
        assert isinstance(table.this, exp.Identifier), table.sql()
        assert not table.args.get("db") and not table.args.get("catalog"), table.sql()
        assert allowed is None or table.name in allowed | own, table.sql()
    for function in statement.find_all(exp.Func):
        assert not isinstance(function, DENIED_FUNCTIONS), function.sql()
        assert not isinstance(function, exp.Anonymous) or function.name.lower() in ANONYMOUS_ALLOWED, function.sql()
        assert not called_names(function) & set(DANGEROUS_FUNCTIONS), function.sql()
    assert not list(statement.find_all(exp.DDL, exp.DML, exp.Command, exp.Pragma, exp.Set))


def filled_table(columns: dict) -> pa.Table:
    """ROW_LIMIT ten times over, so that a statement reading past its LIMIT shows."""
    values = {
        FieldType.number: [i * 1.5 for i in range(ROWS)],
        FieldType.date: [datetime.date(2024, 1, 1) + datetime.timedelta(days=i) for i in range(ROWS)],
    }
    return pa.table({c: values.get(k, [f"C{i:03}" for i in range(ROWS)]) for c, k in columns.items()})


@pytest.fixture(scope="module")
def canaries(tmp_path_factory) -> Path:
    """A working directory holding files a statement must never read: each holds the canary."""
    folder = tmp_path_factory.mktemp("canaries")
    (folder / "canary.csv").write_text(f"secret\n{CANARY}\n")
    (folder / "canary.json").write_text(json.dumps([{"secret": CANARY}]))
    (folder / "canary.parquet").write_bytes(parquet_bytes([{"secret": CANARY}]))
    return folder


def listing(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*")}


def run_locked(statement: exp.Select, tables: list[str], folder: Path, cap: int | None = None) -> None:
    """Run on a locked DuckDB in `folder`: it may fail, but reads and writes no file, and returns at
    most `cap` rows."""
    before = listing(folder)
    connection = locked_duckdb()
    for name in tables:
        connection.register(name, filled_table(SQL_TABLES[name]))
    try:
        with contextlib.chdir(folder):
            rows = connection.execute(statement.sql(dialect="duckdb")).fetchall()
    except duckdb.Error:
        rows = []
    finally:
        connection.close()
    assert CANARY not in repr(rows), statement.sql()
    assert listing(folder) == before, statement.sql()
    assert cap is None or len(rows) <= cap, statement.sql()


@FUZZ
@given(hostile_sql())
@example("SELECT * FROM 'canary.csv'")
@example("SELECT * FROM customers; DROP TABLE customers")
@example("SELECT " + "(" * 5000 + "1" + ")" * 5000)
def test_sql_parses_to_a_read_only_select_or_is_refused(canaries, sql):
    with fuzzing("sql_parse"):
        try:
            statement = parse_select(sql)
        except SqlError:
            return
        assert_read_only(statement, None)
        run_locked(statement, list(SQL_TABLES), canaries)


def assert_checked(sql: str, allowed: set[str], folder: Path) -> None:
    """checked() refuses `sql` with a SqlError, or returns a read-only SELECT of the allowed tables
    under a LIMIT of at most ROW_LIMIT rows."""
    try:
        statement = checked(parse_select(sql), SQL_TABLES, allowed, limit=ROW_LIMIT)
    except SqlError:
        return
    assert_read_only(statement, allowed)
    limit = statement.args.get("limit")
    assert isinstance(limit, exp.Limit) and isinstance(limit.expression, exp.Literal), statement.sql()
    assert int(limit.expression.this) <= ROW_LIMIT, statement.sql()
    assert not limit.find(exp.LimitOptions) or not limit.find(exp.LimitOptions).args.get("percent"), statement.sql()
    run_locked(statement, sorted(allowed), folder, cap=ROW_LIMIT)


@FUZZ
@given(hostile_sql(), st.sampled_from([set(ALLOWED_TABLES), {"customers"}]))
def test_checked_sql_reads_allowed_tables_under_a_limit(canaries, sql, allowed):
    with fuzzing("sql_checked"):
        assert_checked(sql, allowed, canaries)


# Holes the fuzzer found in execute/sql.checked (owned by its author; kept out of hostile_sql until fixed)
ODD_LIMITS = {  # each once let a statement past the row cap or raised a ValueError
    "SELECT name FROM customers LIMIT 1.5": "a fractional limit",
    "SELECT name FROM customers LIMIT 1e3": "a limit in exponent form",
    "SELECT name FROM customers LIMIT 20 PERCENT": "a percentage under the cap: 20% of any number of rows",
}


@pytest.mark.parametrize("sql", ODD_LIMITS, ids=list(ODD_LIMITS.values()))
def test_checked_caps_any_limit_clause(canaries, sql):
    with fuzzing("sql_checked"):
        assert_checked(sql, {"customers"}, canaries)


# ---------------------------------------------------------------- 4. source files

TABLE_FORMATS = ("csv", "tsv", "json", "jsonl", "parquet", "report.csv")
DOCUMENT_FORMATS = ("md", "txt", "html")


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sources")


def read_file(root: Path, suffix: str, data: bytes) -> list[TableData] | Document:
    """Write `data` as one file of the format and read it as the ingest does."""
    rel = f"fuzzed.{suffix}"
    (root / rel).write_bytes(data)
    if suffix in DOCUMENT_FORMATS:
        return read_document(root, rel, LIMITS)
    fmt = {"report.csv": "report"}.get(suffix, suffix)
    return read_table_file(root, rel, fmt, "fuzzed", NO_EXCLUSIONS, LIMITS)


def read_or_report(root: Path, suffix: str, data: bytes) -> list[TableData] | Document | None:
    """What the reader returns (tables with one column per name), or None for a bad-file report that
    names the file."""
    try:
        read = read_file(root, suffix, data)
    except BadSourceError as e:
        assert e.path == f"fuzzed.{suffix}" and e.reason
        return None
    for table in read if isinstance(read, list) else ():
        assert len(set(table.table.column_names)) == table.table.num_columns, table.table.column_names
    return read


def seed_file(suffix: str, rows: list[dict[str, object]], indent: int | None) -> bytes:
    writers = {
        "csv": csv_bytes,
        "tsv": lambda r: csv_bytes(r).replace(b",", b"\t"),
        "json": lambda r: json_bytes(r, indent),
        "jsonl": jsonl_bytes,
        "parquet": parquet_bytes,
    }
    return writers[suffix](rows) if suffix in writers else DOCUMENT_SEEDS[suffix]


@FUZZ
@given(
    st.sampled_from(TABLE_FORMATS + DOCUMENT_FORMATS), st.one_of(st.binary(max_size=600), any_text().map(str.encode))
)
@example("json", b"[" * 100_000)
@example("csv", b"a,b\n\xff\xfe,\x00\n")
@example("csv", b"$var_9" * 30_000)  # csv.Error: a header field over the csv module's 128 KB limit
@example("report.csv", b"x," + b"9" * 140_000 + b"\nRevenue,1\n")  # the same in a report grid
@example("csv", b"a,a_\n0,0\n")  # KeyError: both columns are sanitized to 'a'
@example("parquet", parquet_bytes([{"A": 1, "a": 2}]))  # the same, by case
@example("json", b'[{"a": {"b": 1}, "a_b": 2}]')  # the same, a flattened path and a key
@example("csv", b"_lp_file,x\n1,2\n")  # a second _lp_file column: a source column passing for provenance
@example("jsonl", b'{"_lp_record": "forged", "a": 1}\n')  # the record's provenance overwritten
def test_random_bytes_are_read_or_reported_bad(sources, suffix, data):
    with fuzzing("readers_random"):
        read_or_report(sources, suffix, data)


@FUZZ
@given(st.sampled_from(TABLE_FORMATS + DOCUMENT_FORMATS), records(), st.sampled_from([None, 2]), st.data())
def test_damaged_files_are_read_or_reported_bad(sources, suffix, rows, indent, data):
    with fuzzing("readers_damaged"):
        read_or_report(sources, suffix, data.draw(damaged(seed_file(suffix, rows, indent))))


def row_count(result: list[TableData] | None) -> int | None:
    return None if result is None else result[0].table.num_rows


@FUZZ
@given(st.sampled_from(["csv", "json", "jsonl", "parquet"]), records(), st.sampled_from([None, 2]), st.data())
def test_a_truncated_file_is_never_read_as_a_shorter_table_unnoticed(sources, suffix, rows, indent, data):
    """Parquet and JSON: a cut file is always reported (a strict prefix lacks the footer, or is not
    JSON), unless only trailing whitespace was cut. JSONL and CSV: a cut at a line end (before or after
    its newline) is a shorter valid file, read as exactly the whole lines kept; a cut inside a line is
    reported for JSONL, while for CSV a row cut inside its last field is still a well-formed row, so
    only the number of rows is asserted there (the lines begun, or a report)."""
    with fuzzing("readers_truncated"):
        whole = seed_file(suffix, rows, indent)
        cut = data.draw(st.integers(0, len(whole) - 1))
        kept = whole[:cut]
        count = row_count(read_or_report(sources, suffix, kept))
        if suffix in ("parquet", "json"):
            assert count is None or kept.strip() == whole.strip(), (cut, count)
            return
        lines = kept.count(b"\n") - (suffix == "csv")  # the CSV header is no row
        partial = kept.rpartition(b"\n")[2]
        if not partial or partial == whole[len(kept) - len(partial) :].split(b"\n", 1)[0]:  # at a line end
            lines += bool(partial)
            assert count == (lines if lines > 0 else None), (cut, count)
        elif suffix == "jsonl":
            assert count is None, (cut, count)
        else:
            assert count in (None, lines + 1), (cut, count)


BAD_FILES = {
    "cut.parquet": lambda rows: parquet_bytes(rows)[:-9],
    "cut.json": lambda rows: json_bytes(rows, 2)[:-5],
    "noise.parquet": lambda rows: random.Random(7).randbytes(400),
    "binary.csv": lambda rows: csv_bytes(rows)[:20] + b"\x00\x01" + csv_bytes(rows)[20:],
    "cut.jsonl": lambda rows: jsonl_bytes(rows)[:-4],
}


def test_damaged_files_are_reported_by_ingest_and_the_lake_stays_valid(tmp_path):
    from lakeplanner import Lake

    rows = [{"order_id": f"O{i}", "amount": i * 1.5, "note": "ok, fine"} for i in range(6)]
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "orders.csv").write_bytes(csv_bytes(rows))
    for name, make in BAD_FILES.items():
        (folder / name).write_bytes(make(rows))
    lake = Lake.create(tmp_path / "lake")
    try:
        with fuzzing("ingest"):
            report = lake.ingest(folder)
            assert {b.path for b in report.bad_files} == set(BAD_FILES)
            assert lake.table_names() == ["orders"] and lake.validate() == []
    finally:
        lake.close()
    EXAMPLES_RUN["ingest"] += len(BAD_FILES) - 1  # one ingest, one example per damaged file


# ---------------------------------------------------------------- 5. questions


def spans_of(value: object) -> Iterator[Span]:
    if isinstance(value, Span):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from spans_of(getattr(value, name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from spans_of(item)


def assert_spans_of(frame: QuestionFrame, text: str) -> None:
    """The frame is of `text`, and each span points at the words it holds."""
    assert frame.text == text
    for span in spans_of(frame):
        assert text[span.start : span.end] == span.text, span


@FUZZ
@given(any_text(300))
@example("\x00" * 30_000)
@example("how many " * 5000)
def test_any_text_reads_into_a_frame(text):
    with fuzzing("question"):
        assert_spans_of(read_question(text), text)
        template, _ = extract_slots(text, KNOWN_VALUES)
        assert isinstance(template_of(text, KNOWN_VALUES), str) and isinstance(template, str)


@FUZZ
@given(any_text(200), any_text(60))
def test_an_llm_proposal_fills_a_frame_only_with_words_of_the_question(text, proposal):
    with fuzzing("question_fill"):
        reply = json.dumps({"asked": proposal[:120]})
        frame = fill_frame(read_question(text), LLM(FakeBackend([reply])))
        assert_spans_of(frame, text)
