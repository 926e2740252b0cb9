import json
from pathlib import Path

import pyarrow as pa
import pytest

from lakeplanner.config import LimitsConfig
from lakeplanner.contract.discover import format_of
from lakeplanner.contract.models import ExclusionManifest
from lakeplanner.errors import BadSourceError
from lakeplanner.ingest.readers import read_document, read_table_file

BAD = Path(__file__).parent / "data" / "bad"
EXPECTED = json.loads((BAD / "EXPECTED.json").read_text())
LIMITS = LimitsConfig()


NO_EXCLUSIONS = ExclusionManifest()


def read_any(root: Path, rel: str, manifest: ExclusionManifest = NO_EXCLUSIONS):
    fmt = format_of(Path(rel))
    if fmt in ("markdown", "text", "html"):
        return read_document(root, rel, LIMITS)
    return read_table_file(root, rel, fmt, "t", manifest, LIMITS)


@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if e["reason"] != "valid"))
def test_each_bad_file_is_rejected_with_a_reason_that_names_the_problem(name):
    with pytest.raises(BadSourceError) as caught:
        read_any(BAD, name)
    message = f"{caught.value.reason} {caught.value.hint or ''}".lower()
    assert caught.value.path == name
    assert EXPECTED[name]["keyword"] in message, message


def test_bad_corpus_is_large_enough():
    assert sum(1 for e in EXPECTED.values() if e["reason"] != "valid") >= 20


def test_nested_json_becomes_columns_child_tables_and_json_paths(tmp_path):
    (tmp_path / "orders.json").write_text(
        json.dumps(
            [
                {
                    "id": "O1",
                    "billing": {"email": "a@x"},
                    "tags": ["x"],
                    "items": [{"sku": "A", "qty": 1}],
                    "questions": [{"answer": 42}],
                },
                {
                    "id": "O2",
                    "billing": {"email": "b@x"},
                    "tags": [],
                    "items": [{"sku": "B", "qty": 2}, {"sku": "C", "qty": 3}],
                },
            ]
        )
    )
    root, items = read_any(tmp_path, "orders.json", ExclusionManifest(fields=["questions"]))
    assert root.name == "t" and items.name == "t__items" and items.parent == "t"
    assert root.paths["billing_email"] == "billing.email"
    assert items.paths["sku"] == "items[*].sku"
    assert items.table.column("_lp_parent").to_pylist() == ["orders.json#0", "orders.json#1", "orders.json#1"]
    assert "items[*]" in root.json_paths and "tags[*]" in root.json_paths
    assert not any("question" in c for c in root.table.column_names)


def test_json_types_are_inferred(tmp_path):
    (tmp_path / "r.jsonl").write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"n": 1, "x": 1.5, "d": "2024-01-02", "t": "2024-01-02T10:00:00", "b": True, "s": "a"},
                {"n": 2, "x": 2, "d": "2024-02-03", "t": "2024-01-02 11:00", "b": False, "s": 3},
            ]
        )
    )
    [data] = read_any(tmp_path, "r.jsonl")
    types = {f.name: f.type for f in data.table.schema}
    assert types["n"] == pa.int64() and types["x"] == pa.float64() and types["d"] == pa.date32()
    assert types["t"] == pa.timestamp("us") and types["b"] == pa.bool_() and types["s"] == pa.string()


def test_legacy_single_encoding_is_decoded(tmp_path):
    text = (
        "city,country,note\nMünchen,Deutschland,Großstadt mit schöner Altstadt\nSão Paulo,Brasil,cidade grande\n"
        "Zürich,Schweiz,Bahnhofstraße\nKöln,Deutschland,Dom\n"
    )
    (tmp_path / "cities.csv").write_bytes(text.encode("cp1252"))
    [data] = read_any(tmp_path, "cities.csv")
    assert data.table.column("city").to_pylist() == ["München", "São Paulo", "Zürich", "Köln"]


def test_html_document_keeps_headings_and_title(tmp_path):
    (tmp_path / "p.html").write_text(
        "<html><head><title>Terms</title><style>x{}</style></head>"
        "<body><h1>Terms</h1><p>Net  30.</p><h2>Fees</h2><p>1%</p></body></html>"
    )
    doc = read_any(tmp_path, "p.html")
    assert doc.title == "Terms" and doc.document_id == "p"
    assert doc.text == "# Terms\n\nNet 30.\n\n## Fees\n\n1%\n"
