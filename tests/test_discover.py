import json

from lakeplanner.config import DiscoveryConfig
from lakeplanner.contract.discover import companion_links, detect_companions, discover_sources, sanitize_name
from lakeplanner.contract.models import ExclusionManifest, SourceKind


def write_records(folder, n, keys):
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"r{i:03}.json").write_text(json.dumps({k: i for k in keys}))


def test_folder_of_50_similar_json_files_is_one_corpus_source(tmp_path):
    write_records(tmp_path / "events", 50, ["id", "kind", "at"])
    sources = discover_sources(tmp_path, ExclusionManifest(), DiscoveryConfig())
    assert [(s.name, s.corpus, len(s.files)) for s in sources] == [("events", True, 50)]


def test_folder_of_49_files_stays_file_sources(tmp_path):
    write_records(tmp_path / "events", 49, ["id", "kind"])
    sources = discover_sources(tmp_path, ExclusionManifest(), DiscoveryConfig())
    assert len(sources) == 49 and not any(s.corpus for s in sources)


def test_dissimilar_files_are_not_a_corpus(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for i in range(60):
        (folder / f"r{i:03}.json").write_text(json.dumps({f"k{i}": 1, f"j{i}": 2}))
    sources = discover_sources(tmp_path, ExclusionManifest(), DiscoveryConfig())
    assert not any(s.corpus for s in sources)


def test_documents_group_by_folder_and_tables_by_file(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n")
    (tmp_path / "docs" / "b.html").write_text("<p>b</p>")
    (tmp_path / "orders.csv").write_text("id\n1\n")
    (tmp_path / "notes.yaml").write_text("ignored: true\n")
    sources = discover_sources(tmp_path, ExclusionManifest(), DiscoveryConfig())
    assert {(s.name, s.kind) for s in sources} == {("orders", SourceKind.table), ("docs", SourceKind.documents)}


def test_exclusion_manifest_hides_files_by_glob(tmp_path):
    (tmp_path / "orders.csv").write_text("id\n1\n")
    (tmp_path / "orders_dev.csv").write_text("id\n1\n")
    manifest = ExclusionManifest(files=["*_dev.csv"])
    assert [s.name for s in discover_sources(tmp_path, manifest, DiscoveryConfig())] == ["orders"]


def test_companion_files_are_linked_by_a_shared_column(tmp_path):
    (tmp_path / "queries.jsonl").write_text('{"qid": 1}\n')
    (tmp_path / "queries_metadata.jsonl").write_text('{"qid": 1, "lang": "en"}\n')
    sources = discover_sources(tmp_path, ExclusionManifest(), DiscoveryConfig())
    pairs = detect_companions(sources)
    assert pairs == [("queries", "queries_metadata")]
    links = companion_links(pairs, {"queries": ["qid"], "queries_metadata": ["qid", "lang"]})
    assert links[0].via == "qid"


def test_sanitize_name():
    assert sanitize_name("2024 Sales-Report") == "t_2024_sales_report"


def test_tables_of_the_same_name_in_two_folders_are_named_by_their_folders(tmp_path):
    for folder in ("crm", "billing/eu", "."):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "customers.csv").write_text("id,name\n1,a\n")
    (tmp_path / "crm" / "leads.csv").write_text("id,name\n1,a\n")
    names = sorted(s.name for s in discover_sources(tmp_path, ExclusionManifest(), DiscoveryConfig()))
    assert names == ["billing_eu_customers", "crm_customers", "customers", "leads"]
