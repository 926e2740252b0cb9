"""Two-pass LLM schema discovery on the fake backend: sampling, merge, lint, repair, contract merge."""

import json

from lakeplanner import Lake, sample_lake_path
from lakeplanner.contract.models import FieldEntry, FieldType
from lakeplanner.contract.semantic import (
    ProposedAttribute,
    ProposedEntity,
    ProposedRelationship,
    SourceDiscovery,
    discover_source,
    diverse_samples,
    field_validity,
    merge_passes,
    representative_samples,
    sample_score,
)
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend

FIELDS = [
    FieldEntry(
        id=f"f_{name}00000000"[:14],
        source="orders",
        path=name,
        column=name,
        type=FieldType.string,
        null_rate=0.0,
        cardinality=10,
    )
    for name in ("order_id", "customer_id", "amount")
]
IDS = [f.id for f in FIELDS]


def test_sample_score_follows_eq2():
    assert sample_score({"a": 1, "b": None}, 0, 10) == 10 - 30
    assert sample_score({"a": "x" * 1200}, 5, 10) == 10 + 50 + 10


def test_representative_sample_prefers_complete_records_and_diverse_covers_the_ends():
    records = [{"id": i, "note": None} for i in range(10)] + [{"id": 99, "note": "complete " * 20}]
    assert json.loads(representative_samples(records)[0])["id"] == 99
    picked = [json.loads(r)["id"] for r in diverse_samples(records)]
    assert picked[:3] == [0, 5, 99]


def test_merge_appends_entities_extends_attributes_and_dedupes_relationships():
    first = SourceDiscovery(
        entities=[ProposedEntity(name="Order", attributes=[ProposedAttribute(name="id", field_id=IDS[0])])],
        relationships=[ProposedRelationship(source="Order", target="Customer", type="placed by")],
    )
    second = SourceDiscovery(
        entities=[
            ProposedEntity(name="order", attributes=[ProposedAttribute(name="amount", field_id=IDS[2])]),
            ProposedEntity(name="Customer"),
        ],
        relationships=[ProposedRelationship(source="order", target="customer", type="PLACED_BY")],
    )
    merged = merge_passes(first, second)
    assert [e.name for e in merged.entities] == ["Order", "Customer"]
    assert [a.field_id for a in merged.entities[0].attributes] == [IDS[0], IDS[2]]
    assert len(merged.relationships) == 1


def test_the_merge_of_two_bounded_passes_may_exceed_the_bound():
    rels = [ProposedRelationship(source="A", target="B", type=f"R{i}") for i in range(6)]
    more = [ProposedRelationship(source="A", target="B", type=f"S{i}") for i in range(6)]
    merged = merge_passes(SourceDiscovery(relationships=rels), SourceDiscovery(relationships=more))
    assert len(merged.relationships) == 12


def test_invalid_references_are_repaired_or_dropped_and_validity_reaches_one():
    draft = {
        "entities": [
            {
                "name": "order",
                "key_field_id": "order_id",  # a path, not an id: repaired
                "attributes": [
                    {"name": "amount", "field_id": IDS[2][:-1] + "x"},  # near miss: repaired
                    {"name": "ghost", "field_id": "f_doesnotexist"},
                ],
            },  # dropped
            {"name": "Customer", "attributes": [{"name": "id", "field_id": IDS[1]}]},
        ],
        "relationships": [
            {"source": "Order", "target": "Customer", "type": "placedBy", "field_ids": [IDS[1]]},
            {"source": "Order", "target": "Planet", "type": "ORBITS"},
        ],
    }
    llm = LLM(FakeBackend([json.dumps(draft), '{"entities": [], "relationships": []}']))
    result = discover_source(llm, "orders", FIELDS, [{"order_id": "O1", "customer_id": "C1", "amount": "3"}])
    assert result.record.field_validity_before == round(2 / 5, 4)
    assert result.record.field_validity_after == 1.0
    assert (result.record.repaired, result.record.dropped, result.record.calls) == (2, 1, 2)
    order = result.entities[0]
    assert order.name == "Order" and order.key_field_id == IDS[0] and order.aliases == ["order"]
    assert [a.field_id for a in order.attributes] == [IDS[2]]
    [rel] = result.relationships
    assert (rel.source_entity, rel.target_entity, rel.type) == ("Order", "Customer", "PLACED_BY")
    assert field_validity([], set()) == 1.0


def test_ingest_with_discovery_merges_entities_into_the_contract(tmp_path):
    def reply(messages, schema):
        catalog = messages[0].content
        first_id = catalog.split("\n")[-1].split(" | ")[0]
        if "first pass found" in messages[-1].content:
            return '{"entities": [], "relationships": []}'
        return json.dumps(
            {"entities": [{"name": "Thing", "attributes": [{"name": "x", "field_id": first_id}]}], "relationships": []}
        )

    lake = Lake.create(tmp_path / "lake")
    report = lake.ingest(sample_lake_path() / "customers.csv", discover=True, llm=LLM(FakeBackend(reply)))
    assert report.warnings == []
    contract = lake.contract
    assert [(e.name, e.source) for e in contract.entities] == [("Thing", "customers")]
    assert contract.discovery[0].field_validity_after == 1.0
    lake.close()


def test_llm_garbage_never_fails_the_ingest(tmp_path):
    lake = Lake.create(tmp_path / "lake")
    report = lake.ingest(sample_lake_path() / "products.parquet", discover=True, llm=LLM(FakeBackend(["not json"] * 3)))
    assert report.ingested == 1 and "LLM discovery skipped for products" in report.warnings[0]
    assert lake.contract.entities == [] and lake.table("products").scan().to_arrow().num_rows == 25
    lake.close()


def test_a_missing_model_skips_discovery_with_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEPLANNER_LLM_BACKEND", "local")
    monkeypatch.setenv("LAKEPLANNER_LLM_MODEL", str(tmp_path / "missing.gguf"))
    lake = Lake.create(tmp_path / "lake")
    report = lake.ingest(sample_lake_path() / "products.parquet", discover=True)
    assert report.ingested == 1
    assert "LLM discovery skipped" in report.warnings[0] and "missing.gguf" in report.warnings[0]
    lake.close()
