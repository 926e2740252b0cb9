import pyarrow as pa

from lakeplanner.config import StructureConfig
from lakeplanner.contract.keys import KeyedTable
from lakeplanner.contract.links import DocumentIndex, cross_links, link_target, linked_rows

DOCS = DocumentIndex.build(
    "wiki",
    [
        ("Great_Smoky_Mountains", "Great Smoky Mountains"),
        ("Gatlinburg", "Gatlinburg, Tennessee"),
        ("DOC-7", "Invoice 7"),
    ],
)


def test_link_target_forms():
    assert link_target("/wiki/Great_Smoky_Mountains") == "Great_Smoky_Mountains"
    assert link_target("https://x.org/docs/DOC-7.html") == "DOC-7"
    assert link_target("plain words") is None


def test_cells_resolve_by_id_title_and_link():
    assert DOCS.resolve("doc-7") == ("DOC-7", "document_id")
    assert DOCS.resolve("Gatlinburg, Tennessee") == ("Gatlinburg", "title")
    assert DOCS.resolve("/wiki/Great_Smoky_Mountains") == ("Great_Smoky_Mountains", "link")
    assert DOCS.resolve("/wiki/Gatlinburg,_Tennessee") == ("Gatlinburg", "link")


def test_hybridqa_style_wiki_cells_become_a_cross_link():
    table = pa.table(
        {
            "hometown": ["/wiki/Gatlinburg,_Tennessee", "/wiki/Great_Smoky_Mountains", None],
            "team_id": ["T1", "T2", "T3"],
        }
    )
    [link] = cross_links([KeyedTable("teens", table, [])], [DOCS], StructureConfig())
    assert (link.column, link.collection, link.match_rate) == ("hometown", "wiki", 1.0)
    assert linked_rows(table, link, DOCS, ["team_id"]) == {"Gatlinburg": ["T1"], "Great_Smoky_Mountains": ["T2"]}


def test_columns_that_rarely_name_documents_are_not_links():
    table = pa.table({"city": ["Gatlinburg", "Paris", "Rome", "Oslo"]})
    assert cross_links([KeyedTable("t", table, [])], [DOCS], StructureConfig()) == []
