"""Re-ingesting a source upserts by identity key: new snapshot for changes, never duplicate rows."""

import shutil

from lakeplanner import Lake, sample_lake_path


def test_reingest_upserts_without_duplicates(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    shutil.copy(sample_lake_path() / "customers.csv", folder / "customers.csv")
    lake = Lake.create(tmp_path / "lake")
    first = lake.ingest(folder)
    table = lake.table("customers")
    rows, snapshot = table.scan().to_arrow().num_rows, table.current_snapshot().snapshot_id

    again = lake.ingest(folder)
    assert [s.status for s in again.sources] == ["unchanged"]
    assert lake.table("customers").scan().to_arrow().num_rows == rows

    text = (folder / "customers.csv").read_text().replace(",SMB,", ",Enterprise,", 1)
    (folder / "customers.csv").write_text(text + "C999,New Co,SMB,DE,Berlin,2025-01-01,\n")
    third = lake.ingest(folder)
    table = lake.table("customers")
    assert [(s.status, s.rows_written) for s in third.sources] == [("updated", 2)]
    assert table.current_snapshot().snapshot_id != snapshot
    assert table.scan().to_arrow().num_rows == rows + 1
    assert lake.contract.revision == first.contract_revision + 2
    lake.close()


def test_rows_without_a_key_are_deduplicated_by_content_hash(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "events.csv").write_text("kind,at\nclick,1\nclick,1\nview,2\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(folder)
    lake.ingest(folder)
    events = lake.table("events").scan().to_arrow()
    assert events.num_rows == 3  # the duplicate row in the file is kept once per occurrence
    assert lake.contract.identifier_of("events") is None
    lake.close()


def test_reingested_documents_replace_their_chunks(tmp_path):
    folder = tmp_path / "src"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "a.md").write_text("# A\n\nAlpha terms.\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(folder)
    lake.ingest(folder)
    assert lake.vectors.count("docs") == 1
    lake.close()


def test_sources_ingested_later_key_and_link_against_earlier_ones(tmp_path):
    docs, customers, invoices = tmp_path / "docs", tmp_path / "customers", tmp_path / "invoices"
    shutil.copytree(sample_lake_path() / "documents" / "contracts", docs / "contracts")
    customers.mkdir()
    invoices.mkdir()
    shutil.copy(sample_lake_path() / "customers.csv", customers / "customers.csv")
    shutil.copy(sample_lake_path() / "invoices.json", invoices / "invoices.json")
    lake = Lake.create(tmp_path / "lake")
    for folder in (docs, customers, invoices):
        lake.ingest(folder)
    fks = {(f.source, f.column, f.target) for f in lake.contract.foreign_keys}
    assert fks == {("invoices", "customer_id", "customers")}
    [link] = lake.contract.links
    assert (link.source, link.column, link.collection, link.documents) == (
        "customers",
        "contract_document_id",
        "contracts",
        37,
    )
    lake.close()
