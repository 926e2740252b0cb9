"""HSEQ iteration with a scripted selector: windows, neighbours, stopping rules, evidence package."""

import json

from lakeplanner.execute.hseq import Budget, Segment, guidance_for, iterate, package
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.lineage.steps import Recorder
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.question import read_question


def paragraphs(n: int, doc: str = "D1") -> list[Segment]:
    return [
        Segment(
            id=f"{doc}/p{i}",
            level="paragraph",
            parent=doc,
            source="docs",
            container=doc,
            position=i,
            content=f"paragraph {i} " + "x" * 40,
            start=100 * i,
            end=100 * i + 50,
            hash=f"h{i}",
        )
        for i in range(n)
    ]


def selector(picks: list[list[str]], sufficient: list[bool]):
    """Reply per step: select window positions (p1..) and a sufficiency flag; record the windows."""
    windows = []

    def reply(messages, schema):
        lines = [line for line in messages[-1].content.splitlines() if line.startswith("p")]
        windows.append([line.split("] ", 1)[1].split()[1] for line in lines])
        step = len(windows) - 1
        return json.dumps({"selected": picks[step], "sufficient": sufficient[step], "answer": ""})

    return LLM(FakeBackend(reply)), windows


def test_windows_advance_and_stop_at_t_max():
    llm, windows = selector([["p1"], ["p2"], ["p1"]], [False, False, False])
    state = iterate("q", paragraphs(10), llm, Recorder(), budget=Budget(window=3, top_k=2, max_steps=3))
    assert windows == [["0", "1", "2"], ["3", "4", "5"], ["6", "7", "8"]]
    assert [s.id for s in state.selected] == ["D1/p0", "D1/p4", "D1/p6"]
    assert state.stop == "step cap" and state.steps == 3


def test_sufficiency_stops_only_after_t_min():
    llm, _ = selector([["p1"], ["p1"]], [True, True])
    state = iterate("q", paragraphs(10), llm, Recorder(), budget=Budget(window=2, min_steps=2, max_steps=5))
    assert state.steps == 2 and state.stop == "sufficient"


def test_selected_segments_pull_their_neighbours_forward():
    stream = paragraphs(10)
    llm, windows = selector([["p1"], ["p2"]], [False, True])
    iterate(
        "q",
        stream,
        llm,
        Recorder(),
        budget=Budget(window=2, max_steps=2),
        neighbours=lambda s: [stream[9]] if s.id == "D1/p0" else [],
    )
    assert windows[1][0] == "9"  # the neighbour of the pick comes before the rest of the stream


def test_token_budget_and_the_canonical_package():
    llm, _ = selector([["p1", "p2", "p3"]], [False])
    state = iterate("q", paragraphs(5), llm, Recorder(), budget=Budget(window=3, top_k=3, evidence_tokens=20))
    assert state.stop == "token budget"
    evidence = package(state.selected + state.selected[:1])
    assert len(evidence) == 3 and [e.offsets for e in evidence] == sorted(e.offsets for e in evidence)
    assert evidence[0].uri == "docs/D1" and evidence[0].meta["sha1"] == "h0" and len(evidence[0].id) == 16


def test_guidance_from_the_planner_or_a_template():
    assert (
        guidance_for(read_question("How many units were billed?")) == "a passage stating the number or amount asked for"
    )
    assert guidance_for(read_question("Why was it disputed?")) == "a passage stating the reason"
    assert guidance_for(read_question("When was the agreement signed?")) == "a passage stating the date or period"
    assert guidance_for(read_question("Which carrier was late?")) == "a passage naming the party"
    assert guidance_for(read_question("anything"), "the refund window") == "the refund window"


def test_the_selection_schema_requires_a_pick_and_a_flag():
    from lakeplanner.execute.hseq import selection_model

    schema = selection_model(["p1", "p2"], 2).model_json_schema()
    assert set(schema["required"]) == {"selected", "sufficient", "answer"}
    assert schema["properties"]["selected"]["minItems"] == 1


def test_evidence_is_sought_for_the_sub_question_and_the_users_question():
    from lakeplanner.execute.vector import focus, sub_question
    from lakeplanner.plan.model import PlanNode

    node = PlanNode(
        question="uptime of the document with document_id in $var_1.contract_document_id",
        tool="vector",
        label="$var_2",
        source="documents_contracts",
    )
    assert sub_question(node) == "uptime"
    assert focus(node, "What availability does it guarantee?") == (
        "uptime (the user asked: What availability does it guarantee?)"
    )


def test_a_step_that_is_a_clause_of_the_question_is_sought_alone():
    """The question's other clauses are what other steps ask: evidence for "which customer agreed to a
    plan" is not sought for "how many invoices" too."""
    from lakeplanner.execute.vector import focus
    from lakeplanner.plan.model import PlanNode

    asked = "Per the Q1 staffing note, which depot lost a forklift, and how many shifts has that depot run?"
    node = PlanNode(
        question="Per the Q1 staffing note, which depot lost a forklift",
        tool="vector",
        label="$var_1",
        source="documents",
    )
    assert focus(node, asked) == "Per the Q1 staffing note, which depot lost a forklift"


def test_the_neighbour_of_a_passage_is_the_next_passage_not_a_heading(sample_lake):
    from lakeplanner.execute.vector import SegmentReader, is_heading, neighbour_finder

    lake, _ = sample_lake
    reader = SegmentReader(lake.catalog)
    found = reader.paragraphs("documents_contracts", ["CTR-C028"])
    candidates = [p for p in found["CTR-C028"] if p.content.strip() and not is_heading(p)]
    neighbours = neighbour_finder(found, [], reader)
    assert neighbours(candidates[0]) == [candidates[1]]
    assert neighbours(candidates[-1]) == []


def test_passages_are_ranked_by_the_focus_without_a_leading_column_name():
    from lakeplanner.execute.vector import ranking_query
    from lakeplanner.plan.model import PlanNode

    node = PlanNode(
        question="invoice_id of the invoice that was disputed because of a late delivery",
        tool="vector",
        label="$var_1",
        source="documents_invoices",
    )
    assert ranking_query(node, "Which invoice?") == (
        "the invoice that was disputed because of a late delivery (the user asked: Which invoice?)"
    )
    plain = node.model_copy(update={"question": "the director of the film"})
    assert ranking_query(plain, "Who?") == "the director of the film (the user asked: Who?)"


def test_the_passage_that_answers_is_in_the_first_window_not_behind_the_id_lines(sample_lake):
    """Sample question 6 on the real search and reranker: ranked with its column name, six
    "Document ID: DOC-INV-..." lines filled the first window and the late-delivery note was 16th."""
    from lakeplanner.execute.services import LocalServices
    from lakeplanner.execute.vector import SegmentReader, ranking_query, segment_stream
    from lakeplanner.plan.model import PlanNode

    lake, _ = sample_lake
    node = PlanNode(
        question="invoice_id of the invoice that was disputed because of a late delivery",
        tool="vector",
        label="$var_1",
        source="documents_invoices",
    )
    services = LocalServices(lake, None)
    hits = services.search(node.source, node.question, "", 12)
    documents = list(dict.fromkeys(h.chunk.document_id for h in hits))
    paragraphs = SegmentReader(lake.catalog).paragraphs(node.source, documents)
    asked = "Which invoice was disputed because of a late delivery, and what is its total amount?"
    stream = segment_stream(hits, paragraphs, services.rerank, ranking_query(node, asked))
    first_window = stream[: ExecSettings().window]
    assert any(s.container == "DOC-INV-1010" and "late delivery" in s.content for s in first_window)
    assert not any(s.content.startswith("Document ID") for s in first_window)


def test_an_invalid_selection_falls_back_to_rank_order():
    llm = LLM(FakeBackend(lambda messages, schema: "not json"))
    state = iterate("q", paragraphs(6), llm, Recorder(), budget=Budget(window=3, top_k=2, max_steps=1))
    assert [s.id for s in state.selected] == ["D1/p0", "D1/p1"] and not state.sufficient
    assert "no valid selection" in state.trace[0]["fallback"]


def test_a_long_answer_is_clipped_not_refused():
    long = json.dumps({"selected": ["p1"], "sufficient": True, "answer": "word " * 100})
    state = iterate("q", paragraphs(3), LLM(FakeBackend(lambda m, s: long)), Recorder(), budget=Budget(window=3))
    assert len(state.answer) <= 200 and state.sufficient


def test_a_long_paragraph_becomes_passages_of_whole_sentences_that_fit_a_snippet():
    from lakeplanner.execute.hseq import SNIPPET_CHARS, passages

    sentences_text = [f"Sentence {i} " + "w" * 170 + "." for i in range(3)]
    text = " ".join(sentences_text)
    paragraph = Segment("D/p0", "paragraph", "D", "docs", "D", 1, text, start=1000, end=1000 + len(text))
    sentences = []
    for i, sentence in enumerate(sentences_text):
        at = 1000 + text.index(sentence)
        end = at + len(sentence)
        sentences.append(Segment(f"D/p0/s{i}", "sentence", "D/p0", "docs", "D", 2 + i, sentence, at, end))
    first, second = passages(paragraph, sentences)
    assert (first.level, first.parent, second.id) == ("passage", "D/p0", "D/p0/r1")
    assert first.content == " ".join(sentences_text[:2]) and second.content == sentences_text[2]
    assert all(len(p.content) <= SNIPPET_CHARS for p in (first, second))
    assert text[first.start - 1000 : first.end - 1000] == first.content and first.hash != paragraph.hash
    short = Segment("D/p1", "paragraph", "D", "docs", "D", 5, "Short.", start=0, end=6)
    assert passages(short, []) == [short]


def test_passages_carry_their_section_and_headings_alone_are_not_candidates(sample_lake):
    from lakeplanner.execute.vector import SegmentReader, segment_stream
    from lakeplanner.ingest.vectors import ChunkRecord, SearchHit

    lake, _ = sample_lake
    found = SegmentReader(lake.catalog).paragraphs("documents_contracts", ["CTR-C028"])["CTR-C028"]
    service = next(p for p in found if "99.5%" in p.content)
    assert service.heading == "Service levels"  # the LLM sees "[CTR-C028 / Service levels] ..."
    text = "x" * (max(p.end or 0 for p in found) + 1)
    chunk = ChunkRecord(
        chunk_id="c",
        document_id="CTR-C028",
        source="documents_contracts",
        source_file="f",
        position=0,
        start=0,
        end=len(text),
        title="t",
        heading="",
        text=text,
        content_hash="h",
    )
    by_section = lambda query, texts: [float(t.startswith("Service levels")) for t in texts]  # noqa: E731
    stream = segment_stream([SearchHit(chunk=chunk, score=1.0)], {"CTR-C028": found}, by_section, "uptime")
    assert stream[0] == service
    assert not any(s.content.strip().startswith("##") for s in stream)


def test_a_step_asking_the_whole_question_reads_the_best_ranked_passages_without_a_selector(sample_lake):
    """The answer's one call reads the first window of the ranked stream; no selection call is made."""
    from lakeplanner.execute.services import LocalServices
    from lakeplanner.execute.vector import Bound, SegmentReader, asks_the_whole_question, run_iteration
    from lakeplanner.plan.model import PlanNode

    lake, _ = sample_lake
    asked = "Which invoice was disputed because of a late delivery?"
    node = PlanNode(question=asked.lower().rstrip("?"), tool="vector", label="$var_1", source="documents_invoices")
    assert asks_the_whole_question(node, [], asked)
    assert not asks_the_whole_question(node, [Bound("$var_0.answer", "answer", ("x",))], asked)
    assert not asks_the_whole_question(node.model_copy(update={"question": "a late delivery"}), [], asked)
    services = LocalServices(lake, None)
    hits = services.search(node.source, node.question, "", 12)
    backend = FakeBackend([])
    budget = Budget(window=ExecSettings().window)
    reader = SegmentReader(lake.catalog)
    state = run_iteration(node, hits, reader, LLM(backend), Recorder(), budget, services.rerank, asked, ranked=True)
    assert backend.calls == [] and state.sufficient and state.stop == "ranked" and not state.answer
    assert len(state.selected) == budget.window
    assert any(s.container == "DOC-INV-1010" and "late delivery" in s.content for s in state.selected)
