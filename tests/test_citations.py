"""Documents that cite rows by key: exact, boundary-delimited matches with offsets; short, numeric,
self-naming and boilerplate keys are no citation."""

import json

import pyarrow as pa
import pyarrow.compute as pc

from lakeplanner import sample_lake_path
from lakeplanner.config import StructureConfig
from lakeplanner.contract.citations import citation_links, collection_citations, is_citable, key_automaton
from lakeplanner.contract.keys import KeyedTable, identity_keys
from lakeplanner.ingest.segments import SEGMENTS_TABLE

CONFIG = StructureConfig()


def keyed(name, table):
    return KeyedTable(name, table, identity_keys(name, table, CONFIG))


def automaton():
    shipments = keyed("shipments", pa.table({"shipment_id": [f"SHP-{20000 + i}" for i in range(10)]}))
    trucks = keyed("trucks", pa.table({"truck_id": [f"TRK-{100 + i}" for i in range(10)], "n": list(range(10))}))
    carriers = keyed("carriers", pa.table({"code": ["NRTH", "BLTX", "RHNL", "ALPR", "SKYW"]}))
    return key_automaton([shipments, trucks, carriers], CONFIG)


def test_keys_are_cited_between_word_boundaries_with_offsets():
    text = "Shipment SHP-20003 on TRK-101 (carrier NRTH) was late; SHP-200031 and XSHP-20004 are not keys."
    [cites] = collection_citations([("IR-1", text)], automaton()).values()
    assert [(c.table, c.key) for c in cites] == [
        ("shipments", "SHP-20003"),
        ("trucks", "TRK-101"),
        ("carriers", "NRTH"),
    ]
    assert all(text[c.start : c.end] == c.key for c in cites)


def test_short_numeric_and_lowercase_word_keys_are_not_citable():
    assert not is_citable("A1", CONFIG) and not is_citable("20931", CONFIG)
    assert not is_citable("Berlin", CONFIG) and not is_citable("New York", CONFIG)
    assert is_citable("NRTH", CONFIG) and is_citable("E1001", CONFIG)


def test_a_document_naming_itself_or_a_document_column_is_no_citation():
    docs = keyed("docs", pa.table({"doc_ref": [f"CA-{c}" for c in ("NRTH", "BLTX", "RHNL", "ALPR", "SKYW")]}))
    found = collection_citations([("CA-NRTH", "Document ID: CA-NRTH, about CA-BLTX")], key_automaton([docs], CONFIG))
    assert [c.key for c in found["CA-NRTH"]] == ["CA-BLTX"]
    naming = {("docs", "doc_ref")}
    assert collection_citations([("x", "see CA-BLTX")], key_automaton([docs], CONFIG), naming) == {}


def test_a_key_in_nearly_every_document_is_boilerplate():
    documents = [(f"D{i}", f"Issued by NRTH. Shipment SHP-2000{i}.") for i in range(8)]
    found = collection_citations(documents, automaton())
    assert all([c.key for c in cites] == [f"SHP-2000{i}"] for i, cites in enumerate(found.values()))
    [link] = citation_links("incidents", 8, found)
    assert (link.source, link.column, link.match, link.documents) == ("shipments", "shipment_id", "cited", 8)


def test_the_logistics_lake_gets_every_key_and_citation_its_generator_wrote(logistics):
    structure = json.loads((sample_lake_path("logistics") / "structure.json").read_text())
    expected = {(k["source"], k["column"], k["target"], k["target_column"]) for k in structure["foreign_keys"]}
    assert {(k.source, k.column, k.target, k.target_column) for k in logistics.contract.foreign_keys} == expected
    naming = {(c["table"], c["column"]) for c in structure["document_id_columns"]}
    written = {
        (link["document"].rsplit("/", 1)[-1].rsplit(".", 1)[0], link["value"], link["start"], link["end"])
        for link in structure["document_links"]
        if (link["table"], link["column"]) not in naming
    }
    segments = logistics.catalog.load_table(SEGMENTS_TABLE).scan().to_arrow()
    cites = segments.filter(pc.equal(segments.column("level"), "citation")).to_pylist()
    assert {(c["container"], c["content"], c["start"], c["end"]) for c in cites} == written


def test_timestamps_dates_and_formatted_numbers_of_the_logistics_lake_are_typed(logistics):
    types = {(f.source, f.column): f.type.value for f in logistics.contract.fields}
    assert types[("shipments", "dispatched_at")] == "timestamp" and types[("orders", "placed_at")] == "timestamp"
    assert types[("warehouses", "opened")] == "date" and types[("shipments", "freight_cost")] == "number"
    keys = {(k.source, tuple(k.columns)) for k in logistics.contract.identity_keys}
    assert ("staff", ("hire_date",)) not in keys and ("orders", ("placed_at",)) not in keys
