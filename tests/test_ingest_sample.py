"""The shipped sample lake through real pyiceberg, DuckDB and Milvus Lite."""

import json

import pyarrow.compute as pc
import pytest

from lakeplanner import sample_lake_path
from lakeplanner.ingest.readers import read_document
from lakeplanner.ingest.segments import SEGMENTS_TABLE, rebuild_document, rebuild_table


def test_every_source_is_ingested_and_excluded_files_are_not(sample_lake):
    lake, report = sample_lake
    assert report.bad_files == []
    assert {s.name for s in report.sources} == {
        "customers",
        "invoices",
        "line_items",
        "products",
        "documents",
        "documents_contracts",
        "documents_invoices",
    }
    assert "questions" not in lake.table_names()
    assert not any("README" in f for s in lake.contract.sources for f in s.files)
    assert lake.contract.exclusions.files == ["README.md", "questions.json"]


def test_identity_keys_become_iceberg_identifier_fields(sample_lake):
    lake, _ = sample_lake
    identifiers = {k.source: k.columns for k in lake.contract.identity_keys if k.identifier}
    assert identifiers == {
        "customers": ["customer_id"],
        "invoices": ["invoice_id"],
        "line_items": ["line_id"],
        "products": ["sku"],
    }
    schema = lake.table("invoices").schema()
    assert [schema.find_field(i).name for i in schema.identifier_field_ids] == ["invoice_id"]


def test_foreign_keys_and_cardinality(sample_lake):
    lake, _ = sample_lake
    fks = {(f.source, f.column, f.target, f.target_column, f.cardinality) for f in lake.contract.foreign_keys}
    assert fks == {
        ("invoices", "customer_id", "customers", "customer_id", "N:1"),
        ("line_items", "invoice_id", "invoices", "invoice_id", "N:1"),
        ("line_items", "sku", "products", "sku", "N:1"),
    }
    assert all(f.confidence == 0.95 and f.overlap == 1.0 for f in lake.contract.foreign_keys)
    parents = {(e.child, e.parent) for e in lake.contract.hierarchy}
    assert {("invoices", "customers"), ("line_items", "invoices")} <= parents


def test_rows_link_to_documents_by_document_id(sample_lake):
    lake, _ = sample_lake
    links = {(lk.source, lk.column, lk.collection, lk.match, lk.documents) for lk in lake.contract.links}
    assert links == {
        ("customers", "contract_document_id", "documents_contracts", "document_id", 37),
        ("invoices", "document_id", "documents_invoices", "document_id", 30),
        # documents that cite rows by key: the memo's invoices, the invoices' customers and products
        ("invoices", "invoice_id", "documents", "cited", 1),
        ("invoices", "invoice_id", "documents_invoices", "cited", 30),
        ("customers", "customer_id", "documents_contracts", "cited", 37),
        ("customers", "customer_id", "documents_invoices", "cited", 30),
        ("products", "sku", "documents_invoices", "cited", 26),
    }


def test_field_catalog_is_closed_world_with_stable_ids(sample_lake):
    lake, _ = sample_lake
    fields = {f.path: f for f in lake.contract.fields_of("invoices")}
    assert set(fields) >= {"invoice_id", "customer_id", "total_amount", "billing.contact", "billing.email"}
    assert fields["billing.email"].column == "billing_email" and "nested_object" in fields["billing.email"].tags
    assert fields["issue_date"].type == "date" and fields["total_amount"].type == "number"
    assert fields["document_id"].null_rate == pytest.approx(0.8)
    assert fields["invoice_id"].cardinality == 150 and len(fields["invoice_id"].examples) == 3
    assert len({f.id for f in lake.contract.fields}) == len(lake.contract.fields)


def test_duckdb_and_pyiceberg_read_the_tables_back(sample_lake):
    lake, _ = sample_lake
    arrow = lake.table("line_items").scan(selected_fields=("invoice_id", "quantity")).to_arrow()
    assert arrow.num_rows == 489
    [row] = lake.sql(
        "SELECT count(*) AS n, round(sum(i.total_amount), 2) AS total FROM invoices i "
        "JOIN customers c USING (customer_id) WHERE i.status IN ('open', 'overdue') AND i.currency = 'EUR'"
    ).to_pylist()
    assert row == {"n": 15, "total": 620176.77}


def test_every_row_carries_provenance(sample_lake):
    lake, _ = sample_lake
    rows = lake.table("invoices").scan(selected_fields=("_lp_file", "_lp_record", "_lp_hash")).to_arrow()
    assert set(rows.column("_lp_file").to_pylist()) == {"invoices.json"}
    assert rows.column("_lp_record")[5].as_py() == "invoices.json#5"
    assert pc.all(pc.equal(pc.utf8_length(rows.column("_lp_hash")), 32)).as_py()


def test_chunks_in_milvus_carry_document_ids_offsets_and_linked_rows(sample_lake):
    lake, _ = sample_lake
    info = {c.name: c.chunks for c in lake.info().collections}
    assert info == {"documents": 1, "documents_contracts": 37, "documents_invoices": 30}
    from lakeplanner.llm.embeddings import default_embedder

    query = "contract payment terms with an early payment discount"
    hits = lake.vectors.hybrid_search(
        "documents_contracts", query, default_embedder().embed_query(query), limit=3, filter='document_id == "CTR-C001"'
    )
    assert [h.chunk.document_id for h in hits] == ["CTR-C001"]
    chunk = hits[0].chunk
    assert chunk.linked_table == "customers" and chunk.linked_keys == ["C001"]
    original = (sample_lake_path() / chunk.source_file).read_text()
    assert original[chunk.start : chunk.end] == chunk.text


def test_segments_rebuild_documents_and_tables(sample_lake):
    lake, _ = sample_lake
    segments = lake.catalog.load_table(SEGMENTS_TABLE).scan().to_arrow()
    docs = segments.filter(pc.equal(segments.column("container"), "CTR-C005")).to_pylist()
    expected = read_document(sample_lake_path(), "documents/contracts/CTR-C005.md", lake.config.limits).text
    assert rebuild_document(docs) == expected
    rows = segments.filter(pc.equal(segments.column("source"), "customers")).to_pylist()
    header, records = rebuild_table(rows)
    stored = lake.table("customers").scan().to_arrow().select(header).to_pylist()
    assert [json.loads(json.dumps(r, default=str)) for r in stored] == records
    assert {s["level"] for s in segments.to_pylist()} == {
        "table",
        "row",
        "document",
        "paragraph",
        "sentence",
        "citation",
    }


def test_contract_validates_against_the_lake(sample_lake):
    lake, _ = sample_lake
    assert lake.validate() == []
