"""Where a lake keeps its data (LAKEPLANNER_LAKE_*): a catalog, a warehouse and a Milvus store outside
the lake directory, as on a cluster; the lake directory then holds only the contract and its traces."""

import pytest

from lakeplanner import Lake
from lakeplanner.errors import EngineError
from lakeplanner.ingest.tables import without_password


@pytest.fixture
def small_source(tmp_path):
    source = tmp_path / "source"
    (source / "notes").mkdir(parents=True)
    (source / "stores.csv").write_text("store_id,city\nS1,Lyon\nS2,Porto\nS3,Graz\n")
    (source / "notes" / "opening.md").write_text("# Opening\n\nStore S2 in Porto opens at 08:00 on weekdays.\n")
    return source


def test_a_lake_can_keep_its_catalog_warehouse_and_chunks_elsewhere(tmp_path, small_source, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setenv("LAKEPLANNER_LAKE_CATALOG_URI", f"sqlite:///{shared / 'catalog.db'}")
    monkeypatch.setenv("LAKEPLANNER_LAKE_WAREHOUSE", (shared / "warehouse").as_uri())
    monkeypatch.setenv("LAKEPLANNER_LAKE_MILVUS_URI", str(shared / "chunks.db"))
    lake = Lake.create(tmp_path / "lake")
    report = lake.ingest(small_source)
    assert report.ingested == 2 and not report.bad_files
    assert lake.sql("SELECT city FROM stores WHERE store_id = 'S2'").to_pylist() == [{"city": "Porto"}]
    assert lake.vectors.count("notes") >= 1
    lake.close()
    assert (shared / "catalog.db").exists() and any((shared / "warehouse").rglob("*.parquet"))
    assert not (tmp_path / "lake" / "catalog.db").exists() and not (tmp_path / "lake" / "milvus.db").exists()
    reopened = Lake.open(tmp_path / "lake")
    assert reopened.validate() == [] and {t.name for t in reopened.info().tables} == {"stores"}
    reopened.close()


def test_an_unreachable_rest_catalog_is_named_with_its_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEPLANNER_LAKE_CATALOG_URI", "http://127.0.0.1:9/catalog")
    lake = Lake.create(tmp_path / "lake")
    with pytest.raises(EngineError) as raised:
        lake.catalog  # noqa: B018
    assert "127.0.0.1:9" in raised.value.message and "LAKEPLANNER_LAKE_CATALOG_URI" in raised.value.hint


def test_a_catalog_password_never_reaches_a_message():
    assert without_password("postgresql+psycopg://lake:s3cret@db:5432/iceberg") == (
        "postgresql+psycopg://lake:***@db:5432/iceberg"
    )
    assert without_password("sqlite:////data/lake/catalog.db") == "sqlite:////data/lake/catalog.db"
