"""What a process keeps of a lake between asks: the parsed contract per version of schema.yaml, and the
known values per state of the tables they are read from."""

from lakeplanner import Lake
from lakeplanner.contract.models import Contract, SourceKind, SourceSpec
from lakeplanner.contract.store import load_contract, save_contract
from lakeplanner.ingest.tables import catalog_state
from lakeplanner.plan.cache import known_values


def test_the_contract_is_parsed_once_per_version_of_its_file(tmp_path):
    first = Contract(sources=[SourceSpec(name="a", kind=SourceKind.table, format="csv", files=["a.csv"])])
    save_contract(tmp_path, first)
    assert load_contract(tmp_path) is load_contract(tmp_path)
    save_contract(tmp_path, first.model_copy(update={"revision": first.revision + 1}))
    assert load_contract(tmp_path).revision == first.revision + 1
    assert load_contract(tmp_path / "nowhere").sources == []


def test_known_values_are_read_again_when_a_table_they_come_from_changes(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "depots.csv").write_text("depot_id,city\nD-1,Leeds\nD-2,Derby\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(raw)
    kept = known_values(lake)
    assert known_values(lake) is kept and "d-1" in kept.values
    before = catalog_state(lake.catalog, {"lake.depots"})
    (raw / "depots.csv").write_text("depot_id,city\nD-1,Leeds\nD-2,Derby\nD-3,York\n")
    lake.ingest(raw)
    assert catalog_state(lake.catalog, {"lake.depots"}) != before
    assert "d-3" in known_values(lake).values
    lake.close()
