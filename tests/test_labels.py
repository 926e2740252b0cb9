"""Entity tables get a label column from their data; an answer that is a key is shown by its label."""

import pyarrow as pa

from lakeplanner.config import StructureConfig
from lakeplanner.contract.keys import identity_keys
from lakeplanner.contract.labels import label_column
from lakeplanner.execute.labels import labelled
from lakeplanner.execute.results import Answer, NodeResult


def test_a_unique_column_of_words_is_the_label_a_named_one_first():
    table = pa.table(
        {
            "staff_id": [f"E{i}" for i in range(6)],
            "city": ["Berlin", "Paris", "Lyon", "Rome", "Oslo", "Bern"],
            "full_name": ["Ana Ruiz", "Bo Li", "Cy Ames", "Di Fox", "Ed Kim", "Flo Ng"],
            "role": ["driver"] * 6,
        }
    )
    keys = identity_keys("staff", table, StructureConfig())
    assert label_column(table, keys) == "full_name"
    assert label_column(table.drop_columns(["full_name"]), keys) == "city"
    codes = pa.table({"code": [f"X{i}" for i in range(6)], "qty": list(range(6))})
    assert label_column(codes, identity_keys("codes", codes, StructureConfig())) is None


def test_the_sample_lakes_entity_tables_have_labels(sample_lake):
    lake, _ = sample_lake
    labels = {s.name: s.label for s in lake.contract.sources if s.label}
    assert labels == {"customers": "name", "products": "product_name"}


def test_an_answer_that_is_a_key_is_shown_as_its_entity(sample_lake):
    lake, _ = sample_lake
    read = NodeResult(label="$var_1", tool="sql", source="invoices", question="q", rows=[{"customer_id": "C003"}])
    answer = Answer(question="Which customer was issued INV-1003?", value="C003", items=["C003"])
    shown = labelled(answer, [read], lake.contract, lake.sql)
    assert shown.items == ["Kessler & Vogt Maschinenbau (C003)"] and shown.value == shown.items[0]
    other = Answer(question="q", value="paid", items=["paid"])
    assert labelled(other, [read], lake.contract, lake.sql) == other
