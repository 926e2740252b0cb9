"""20 TAT-QA contexts (tests/data/tatqa): nested JSON -> tables, keys, hierarchy and text links."""


def test_questions_subtree_is_excluded_everywhere(tatqa_lake):
    lake, report = tatqa_lake
    assert report.bad_files == []
    assert not any("question" in f.path or "answer" in f.path for f in lake.contract.fields)
    assert set(lake.table_names()) == {"tatqa", "tatqa__paragraphs"}
    assert lake.contract.exclusions.fields == ["questions"]


def test_nested_paragraphs_become_a_child_table_under_the_context(tatqa_lake):
    lake, _ = tatqa_lake
    assert lake.table("tatqa").scan().to_arrow().num_rows == 20
    assert lake.table("tatqa__paragraphs").scan().to_arrow().num_rows == 89
    [edge] = lake.contract.hierarchy
    assert (edge.child, edge.parent, edge.child_column, edge.parent_column, edge.kind) == (
        "tatqa__paragraphs",
        "tatqa",
        "_lp_parent",
        "_lp_record",
        "nested",
    )
    paths = {s.name: s.json_paths for s in lake.contract.sources}
    assert paths["tatqa"] == ["paragraphs[*]", "table", "table.table[*]"]
    [[joined]] = [
        list(r.values())
        for r in lake.sql(
            "SELECT count(*) FROM tatqa__paragraphs p JOIN tatqa t ON p._lp_parent = t._lp_record"
        ).to_pylist()
    ]
    assert joined == 89


def test_identity_keys_are_the_uids(tatqa_lake):
    lake, _ = tatqa_lake
    keys = {(k.source, tuple(k.columns), k.identifier) for k in lake.contract.identity_keys}
    assert keys == {("tatqa", ("table_uid",), True), ("tatqa__paragraphs", ("uid",), True)}
    fields = {f.path: f for f in lake.contract.fields_of("tatqa")}
    assert "nested_array" in fields["table.table"].tags and fields["table.table"].type == "string"


def test_paragraph_text_is_searchable_and_linked_to_its_row(tatqa_lake):
    lake, _ = tatqa_lake
    [link] = lake.contract.links
    assert (link.source, link.column, link.collection, link.match, link.documents) == (
        "tatqa__paragraphs",
        "uid",
        "tatqa__paragraphs_text",
        "embedded_text",
        89,
    )
    from lakeplanner.llm.embeddings import default_embedder

    query = "fixed-price type contracts"
    [hit, *_] = lake.vectors.hybrid_search(link.collection, query, default_embedder().embed_query(query), limit=3)
    assert "fixed-price" in hit.chunk.text
    assert hit.chunk.linked_table == "tatqa__paragraphs" and hit.chunk.linked_keys == [hit.chunk.document_id]
