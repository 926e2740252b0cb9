"""Hypothesis strategies for tests/test_fuzz.py: hostile plans, vector filters, SQL, source files and
questions, each mixing well-formed input with the pieces an LLM or a user could slip in."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from hypothesis import strategies as st

from lakeplanner.contract.models import FieldType
from lakeplanner.plan.filters import COLLECTION_FIELDS
from lakeplanner.plan.lake_schema import LakeSchema

PLANS = Path(__file__).parent / "data" / "plans"
VALID_PLANS = [c["plan"] for c in yaml.safe_load((PLANS / "valid.yaml").read_text())]
CASES = VALID_PLANS + [c["plan"] for c in yaml.safe_load((PLANS / "broken.yaml").read_text())]

S, N, D = FieldType.string, FieldType.number, FieldType.date
# The sample lake's schema as LakeSchema.from_contract reads it (test_fuzz checks the valid plans
# validate clean under it), written out so fuzzing needs no 20-second ingest.
SAMPLE_SCHEMA = LakeSchema(
    tables={
        "customers": {
            "customer_id": S,
            "name": S,
            "segment": S,
            "country": S,
            "city": S,
            "signup_date": D,
            "contract_document_id": S,
        },
        "invoices": {
            "invoice_id": S,
            "customer_id": S,
            "issue_date": D,
            "due_date": D,
            "status": S,
            "currency": S,
            "total_amount": N,
            "document_id": S,
            "billing_contact": S,
            "billing_email": S,
        },
        "line_items": {"line_id": S, "invoice_id": S, "sku": S, "quantity": FieldType.integer, "unit_price": N},
        "products": {"sku": S, "product_name": S, "category": S, "list_price": N},
    },
    collections={"documents", "documents_contracts", "documents_invoices"},
    linked={
        "customers",
        "invoices",
        "line_items",
        "products",
        "documents",
        "documents_contracts",
        "documents_invoices",
    },
    joins={
        "invoices": {"customers", "line_items"},
        "customers": {"invoices"},
        "line_items": {"invoices", "products"},
        "products": {"line_items"},
    },
    document_links={
        ("customers", "documents_contracts"): {"contract_document_id"},
        ("invoices", "documents_invoices"): {"document_id"},
    },
    identifiers={
        "customers": ("customer_id",),
        "invoices": ("invoice_id",),
        "line_items": ("line_id",),
        "products": ("sku",),
    },
    collection_names={
        "documents": {"documents", "memo-collections-2024Q3"},
        "documents_contracts": {"documents_contracts", "CTR-C001", "CTR-C002"},
        "documents_invoices": {"documents_invoices", "DOC-INV-1078", "DOC-INV-1010"},
    },
    citations={
        ("invoices", "documents"): {"invoice_id"},
        ("customers", "documents_contracts"): {"customer_id"},
        ("invoices", "documents_invoices"): {"invoice_id"},
    },
    labels={"customers": "name", "products": "product_name"},
)
KNOWN = {"inv-1078": "invoices.invoice_id", "c001": "customers.customer_id", "enterprise": "customers.segment"}

# ---------------------------------------------------------------- text

HOSTILE_TEXT = [
    "\x00",
    "\u202e",
    "\ufeff",
    "\ud7ff",
    "\U0001f600",
    "İ",
    "ﬁ",
    "\r\n",
    "'",
    '"',
    "\\",
    "`",
    "%",
    "$",
    "$var_",
    "$var_0",
    "$var_1",
    "$var_1.",
    "$var_2.customer_id",
    "$var_99.x",
    "$var_" + "9" * 40,
    "$var_1.answer",
    "(",
    ")",
    ";",
    "--",
    "/*",
    "*/",
    "{{s0}}",
    "{{sql0}}",
    "2024",
    "2019-2021",
    "from 2017 to 2019",
    "how many",
    "which",
    "top 999",
    "INV-1078",
    "C001",
    "?",
    ", and what",
]


def hostile_text(max_size: int = 80) -> st.SearchStrategy[str]:
    """Short text built from unicode, control characters and the tokens plans and questions use."""
    piece = st.one_of(st.text(max_size=12), st.sampled_from(HOSTILE_TEXT), st.from_regex(r"[A-Za-z_]\w{0,10}"))
    return st.lists(piece, max_size=12).map("".join).map(lambda t: t[:max_size])


def huge_text() -> st.SearchStrategy[str]:
    """A long run of one fragment: what a pasted document or a hostile client sends."""
    return st.tuples(
        st.sampled_from([*HOSTILE_TEXT, "a ", "how many ", "what was the 2019 total? "]), st.integers(1, 6000)
    ).map(lambda p: p[0] * p[1])


def any_text(max_size: int = 200) -> st.SearchStrategy[str]:
    return st.one_of(st.text(max_size=max_size), hostile_text(max_size), huge_text())


# ---------------------------------------------------------------- plans

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), hostile_text(30)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(hostile_text(10), inner, max_size=4)),
    max_leaves=12,
)
NODE_FIELDS = ["question", "tool", "label", "source", "sql", "filter", "returns", "should_expose_answer"]
NODE_FIELDS += ["answer_description"]
TEXT_FIELDS = ("question", "sql", "filter", "answer_description")
FIELD_VALUES = {
    "tool": st.sampled_from(
        ["sql", "vector", "graph", "iceberg", "milvus", "SQL", "", " ", "python", "graph_traverse"]
    ),
    "label": st.one_of(
        st.sampled_from(["$var_1", "$var_2", "$var_3", "$var_0", "", "var_1", "$var_01"]), hostile_text(20)
    ),
    "source": st.sampled_from(
        sorted(SAMPLE_SCHEMA.tables) + sorted(SAMPLE_SCHEMA.collections) + ["", "nope", "main.x"]
    ),
    "returns": st.lists(st.sampled_from(["customer_id", "document_id", "answer", "count", "", "x y"]), max_size=3),
    "should_expose_answer": st.booleans(),
}


def node_value(name: str) -> st.SearchStrategy[object]:
    typed = FIELD_VALUES.get(name, hostile_text(120))
    return st.one_of(typed, typed, json_values)


@st.composite
def mutated_plans(draw) -> object:
    """A plan of the corpus with a few random edits: fields replaced, dropped or spliced into, nodes
    duplicated, dropped or reordered, the top level replaced."""
    plan = copy.deepcopy(draw(st.sampled_from(CASES)))
    for _ in range(draw(st.integers(1, 4))):
        nodes = plan.get("nodes") if isinstance(plan, dict) else None
        edit = draw(st.sampled_from(["set", "drop", "splice", "duplicate", "remove", "reverse", "question", "top"]))
        if not isinstance(nodes, list) or not nodes or not all(isinstance(n, dict) for n in nodes):
            edit = "top" if edit != "question" else edit
        if edit == "top":
            plan = draw(st.one_of(json_values, st.fixed_dictionaries({"question": json_values, "nodes": json_values})))
            continue
        if edit == "question":
            if isinstance(plan, dict):
                plan["question"] = draw(any_text())
            continue
        node = draw(st.sampled_from(nodes))
        name = draw(st.sampled_from(NODE_FIELDS))
        if edit == "set":
            node[name] = draw(node_value(name))
        elif edit == "drop":
            node.pop(name, None)
        elif edit == "splice":
            field = draw(st.sampled_from(TEXT_FIELDS))
            text = node.get(field) if isinstance(node.get(field), str) else ""
            at = draw(st.integers(0, len(text)))
            node[field] = text[:at] + draw(hostile_text(40)) + text[at:]
        elif edit == "duplicate":
            nodes.append(copy.deepcopy(node))
        elif edit == "remove":
            nodes.remove(node)
        else:
            nodes.reverse()
    return plan


raw_plans = st.one_of(json_values, mutated_plans())


def reversed_chain(length: int) -> dict:
    """A plan whose steps each read the one before, listed last first: a depth-first search meets its
    whole depth at once."""
    nodes = [
        {"question": f"after $var_{i - 1}.answer", "tool": "vector", "label": f"$var_{i}", "source": "documents"}
        for i in range(length, 1, -1)
    ]
    return {"question": "q", "nodes": [*nodes, {"question": "start", "tool": "vector", "label": "$var_1"}]}


def one_sql_step(sql: str) -> dict:
    step = {"question": "q", "tool": "sql", "label": "$var_1", "source": "customers", "sql": sql}
    return {"question": "q", "nodes": [{**step, "should_expose_answer": True, "answer_description": "a"}]}


# ---------------------------------------------------------------- vector filters

FILTER_FIELDS = st.sampled_from([*COLLECTION_FIELDS, *COLLECTION_FIELDS, "documentid", "customer_id", "x"])
VALID_VALUES = ["'C001'", "'a''b'", "'\"quoted\\\\'", "'] or true or ['", "2", "-1", "1.5", "TRUE"]
VALID_VALUES += ["$var_1.document_id"]
HOSTILE_VALUES = ["NULL", "$var_2", "(1)", "lower(title)", "title", "'%'", "1e3", "0x10", "-'x'", "x'00'", "[1, 2]"]
FILTER_VALUES = st.one_of(st.sampled_from(VALID_VALUES), st.sampled_from(VALID_VALUES), st.sampled_from(HOSTILE_VALUES))


@st.composite
def conditions(draw, depth: int = 0) -> str:
    if depth < 3 and draw(st.booleans()):
        left, right = draw(conditions(depth + 1)), draw(conditions(depth + 1))
        joined = draw(st.sampled_from(["{} AND {}", "{} OR {}", "NOT ({}) AND {}", "({}) OR NOT {}"]))
        return joined.format(left, right)
    field = draw(FILTER_FIELDS)
    value = FILTER_VALUES
    shape = draw(st.integers(0, 12)) % 7
    if shape == 0:
        return f"{field} {draw(st.sampled_from(['=', '!=', '<>', '<', '<=', '>', '>=', '==']))} {draw(value)}"
    if shape == 1:
        return f"{draw(value)} {draw(st.sampled_from(['=', '<', '>=']))} {field}"
    if shape == 2:
        items = draw(st.lists(value, min_size=0, max_size=4))
        return f"{field} {draw(st.sampled_from(['IN', 'NOT IN']))} ({', '.join(items)})"
    if shape == 3:
        return f"{field} LIKE {draw(value)}"
    if shape == 4:
        return f"{field} BETWEEN {draw(value)} AND {draw(value)}"
    if shape == 5:
        return f"{field} IN $var_1.{draw(FILTER_FIELDS)}"
    return f"{field} IS NULL"


@st.composite
def spliced(draw, base: st.SearchStrategy[str]) -> str:
    text = draw(base)
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(hostile_text(20)) + text[at:]


filters = st.one_of(conditions(), conditions(), spliced(conditions()), any_text(120))
bound_values = st.lists(
    st.one_of(st.text(max_size=20), st.sampled_from(['"', "\\", '\\"', "\n", "] or true or [", "'"]))
)

# ---------------------------------------------------------------- SQL

SQL_TABLES = {
    "customers": {"customer_id": S, "name": S, "segment": S},
    "invoices": {"invoice_id": S, "customer_id": S, "total_amount": N, "issue_date": D},
    "secrets": {"secret": S},  # known to the engine, never allowed: a policy-denied table
}
ALLOWED_TABLES = ("customers", "invoices")
COLUMNS = ["customer_id", "name", "segment", "invoice_id", "total_amount", "issue_date", "secret", "nope", "*"]
SAFE_FUNCTIONS = ["count", "sum", "avg", "min", "max", "lower", "upper", "coalesce", "length", "abs", "round"]
SAFE_FUNCTIONS += ["printf", "hash", "strip_accents", "year", "concat", "substr", "list_sort"]
# DuckDB functions that read files, reach the network, the catalog or the settings, or make rows from nothing
DANGEROUS_FUNCTIONS = [
    "read_csv",
    "read_csv_auto",
    "read_json",
    "read_json_auto",
    "read_ndjson",
    "read_parquet",
    "parquet_scan",
    "parquet_metadata",
    "parquet_schema",
    "read_text",
    "read_blob",
    "glob",
    "sniff_csv",
    "getenv",
    "current_setting",
    "duckdb_settings",
    "duckdb_tables",
    "duckdb_extensions",
    "duckdb_secrets",
    "which_secret",
    "query",
    "query_table",
    "range",
    "generate_series",
    "iceberg_scan",
    "delta_scan",
    "current_user",
    "current_database",
    "pragma_version",
    "load_extension",
]
HOSTILE_SOURCES = [
    "information_schema.tables",
    "main.customers",
    "memory.main.customers",
    "system.main.duckdb_settings",
    "duckdb_settings()",
    "read_csv('canary.csv')",
    "read_csv_auto('canary.csv')",
    "read_parquet('*.parquet')",
    "glob('*')",
    "read_text('canary.csv')",
    "'canary.csv'",
    '"canary.csv"',
    "canary.csv",
    "query_table('customers')",
    "range(10)",
    "(VALUES (1), (2)) v(x)",
    "secrets",
    "pg_catalog.pg_tables",
    "sqlite_master",
]
STACKED = [
    "; DROP TABLE customers",
    "; COPY customers TO 'out.csv'",
    "; COPY (SELECT 1) TO 'out.parquet' (FORMAT parquet)",
    "; ATTACH 'evil.db' AS evil",
    "; INSTALL httpfs",
    "; LOAD httpfs",
    "; SET enable_external_access = true",
    "; PRAGMA database_list",
    "; EXPORT DATABASE 'dump'",
    "; CREATE TABLE x AS SELECT 1",
    "; INSERT INTO customers VALUES (1)",
    "; UPDATE customers SET name = 'x'",
    "; DELETE FROM customers",
    "; CALL pragma_version()",
    "; SELECT 1",
    ";",
    " -- ; DROP TABLE customers",
    " /* ; DROP TABLE customers */",
    " /* /* nested */ */",
]
LIMITS = ["1", "10", "100000", "-1", "NULL", "(SELECT 5)", "1 OFFSET 2", "99999999999999999999"]
LIMITS += ["ALL", "0x10", "5 * 100", "1.5", "1e3", "20 PERCENT"]
PREFIXES = ["", "", "", "EXPLAIN ", "EXPLAIN ANALYZE ", "COPY (", "CREATE VIEW v AS ", "SUMMARIZE ", "DESCRIBE "]
PREFIXES += ["PIVOT ", "FROM customers; ", "/*+ hint */ ", "-- comment\n", "WITH RECURSIVE r(n) AS (SELECT 1) "]


@st.composite
def expressions(draw, depth: int = 0) -> str:
    kind = draw(st.integers(0, 6 if depth < 3 else 2))
    if kind == 0:
        return draw(st.sampled_from(COLUMNS[:-1]))
    if kind == 1:
        return draw(st.sampled_from(["1", "'x'", "NULL", "2.5", "'canary.csv'", "TRUE", "DATE '2024-01-01'"]))
    if kind == 2:
        return f"t.{draw(st.sampled_from(COLUMNS[:-1]))}"
    if kind in (3, 4):
        name = draw(st.sampled_from(SAFE_FUNCTIONS + DANGEROUS_FUNCTIONS + ["foo_bar", "main.lower", "x.y.z"]))
        args = draw(st.lists(expressions(depth + 1), max_size=2))
        return f"{name}({', '.join(args)})"
    if kind == 5:
        return f"({draw(selects(depth + 1))})"
    op = draw(st.sampled_from(["+", "*", "=", "<", "AND", "OR", "||", "IN"]))
    return f"({draw(expressions(depth + 1))} {op} {draw(expressions(depth + 1))})"


@st.composite
def selects(draw, depth: int = 0) -> str:
    projection = ", ".join(draw(st.lists(expressions(depth + 1), min_size=1, max_size=3)))
    source = draw(st.sampled_from([*ALLOWED_TABLES, *ALLOWED_TABLES, *HOSTILE_SOURCES]))
    sql = f"SELECT {draw(st.sampled_from(['', 'DISTINCT ']))}{projection} FROM {source} AS t"
    if draw(st.booleans()):
        sql += (
            f" JOIN {draw(st.sampled_from([*ALLOWED_TABLES, *HOSTILE_SOURCES]))} AS u ON t.customer_id = u.customer_id"
        )
    if draw(st.booleans()):
        sql += f" WHERE {draw(expressions(depth + 1))}"
    if draw(st.booleans()):
        sql += " GROUP BY ALL" if draw(st.booleans()) else f" ORDER BY {draw(expressions(depth + 1))}"
    if draw(st.booleans()):
        sql += f" LIMIT {draw(st.sampled_from(LIMITS))}"
    return sql


@st.composite
def hostile_sql(draw) -> str:
    shape = draw(st.integers(0, 7))
    if shape <= 2:
        return draw(selects())
    if shape == 3:
        return draw(st.sampled_from(PREFIXES)) + draw(selects()) + draw(st.sampled_from(STACKED))
    if shape == 4:
        cte = draw(st.sampled_from(["c", "customers", "information_schema"]))
        return f"WITH {cte} AS ({draw(selects())}) SELECT * FROM {cte}"
    if shape == 5:
        depth = draw(st.integers(1, 3000))
        return "SELECT " + "(" * depth + draw(expressions()) + ")" * depth + " FROM customers"
    if shape == 6:
        return draw(selects()) + " " * draw(st.integers(0, 25_000))
    return draw(spliced(selects()) if draw(st.booleans()) else any_text(200))


# ---------------------------------------------------------------- source files

CELLS = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=12),
)


@st.composite
def records(draw) -> list[dict[str, object]]:
    columns = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=4, unique=True))
    kinds = {c: draw(st.sampled_from(["int", "float", "text"])) for c in columns}
    cell = {"int": st.integers(-(10**6), 10**6), "float": st.floats(-1e6, 1e6, width=32), "text": CELLS.map(str)}
    rows = draw(st.lists(st.fixed_dictionaries({c: cell[kinds[c]] for c in columns}), min_size=1, max_size=8))
    return rows


def csv_bytes(rows: list[dict[str, object]]) -> bytes:
    """One record per line: values never hold a newline (the CSV writer quotes commas and quotes)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: str(v).replace("\n", " ").replace("\r", " ") for k, v in row.items()} for row in rows)
    return out.getvalue().encode()


def json_bytes(rows: list[dict[str, object]], indent: int | None) -> bytes:
    return json.dumps(rows, indent=indent, ensure_ascii=False).encode()


def jsonl_bytes(rows: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def parquet_bytes(rows: list[dict[str, object]]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), out)
    return out.getvalue()


DOCUMENT_SEEDS = {
    "md": b"# Terms\n\nPayment is due in 30 days.\n\n## Fees\n\nLate fees apply.\n",
    "txt": b"Collections memo\n\nCustomer C001 agreed to a payment plan.\n",
    "html": b"<html><head><title>T</title><style>p{}</style></head>"
    b"<body><h1>Terms</h1><p>Due in 30 days</p></body></html>",
    "report.csv": b',2019,2018\nRevenue,"1,200","1,000"\nCost,(300),(250)\nTotal,900,750\n',
}


@st.composite
def damaged(draw, data: bytes) -> bytes:
    """`data` truncated and/or with a few bytes flipped, at offsets hypothesis chooses."""
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    flips = draw(st.lists(st.tuples(st.integers(0, max(len(data) - 1, 0)), st.integers(1, 255)), max_size=3))
    buffer = bytearray(data)
    for at, mask in flips:
        if buffer:
            buffer[at] ^= mask
    return bytes(buffer)
