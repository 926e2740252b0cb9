"""Plan cache: exact, template and semantic hits; near misses, roles and schema changes never reuse."""

import pytest

from lakeplanner.llm.embeddings import default_embedder
from lakeplanner.plan.cache import Context, PlanCache, cache_for
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.question import read_question
from lakeplanner.question.known import KnownValues
from lakeplanner.question.template import extract_slots, template_of


def total_plan(invoice: str) -> Plan:
    return Plan(
        question=f"What is the total of invoice {invoice}?",
        nodes=(
            PlanNode(
                question=f"Total amount of invoice {invoice}",
                tool="sql",
                label="$var_1",
                source="invoices",
                sql=f"SELECT total_amount FROM invoices WHERE invoice_id = '{invoice}'",
                should_expose_answer=True,
                answer_description=f"total of {invoice}",
            ),
        ),
    )


@pytest.fixture
def cache(sample_lake, tmp_path):
    lake, _ = sample_lake
    return cache_for(lake, tmp_path / "cache.jsonl", embed=lambda t: default_embedder().embed_query(t))


def test_slots_are_entity_values_numbers_dates_and_quotes(cache):
    template, slots = extract_slots(
        "Invoices of Enterprise customers issued after 2024-05-01 over 1000 in 'EUR'?", cache.known
    )
    assert template == "invoices of <customers.segment> customers issued after <date> over <number> in <string>"
    assert [s.value for s in slots] == ["Enterprise", "2024-05-01", "1000", "EUR"]


def test_exact_then_template_hit_with_new_slot_values(cache):
    cache.put(read_question("What is the total of invoice INV-1010?"), total_plan("INV-1010"))
    assert cache.get(read_question("what is the total of invoice INV-1010")).kind == "exact"
    hit = cache.get(read_question("What is the total of invoice INV-1042?"))
    assert hit.kind == "template"
    assert hit.plan == total_plan("INV-1042")


def test_paraphrases_hit_by_template_or_embedding(cache):
    cache.put(read_question("What is the total of invoice INV-1010?"), total_plan("INV-1010"))
    reworded = cache.get(read_question("Tell me the total for invoice INV-1077"))
    assert reworded.kind == "template" and reworded.plan == total_plan("INV-1077")
    rephrased = cache.get(read_question("total amount of invoice INV-1077?"))
    assert rephrased.kind == "semantic" and rephrased.plan == total_plan("INV-1077")


@pytest.mark.parametrize(
    "near_miss",
    [
        "What is the average of invoice INV-1042?",
        "What is the total of line item L00042?",
        "What is the total of invoices of customer C001?",
    ],
)
def test_near_misses_are_not_served(cache, near_miss):
    cache.put(read_question("What is the total of invoice INV-1010?"), total_plan("INV-1010"))
    assert cache.get(read_question(near_miss)) is None


def test_a_role_never_gets_another_roles_plan(cache):
    cache.put(read_question("What is the total of invoice INV-1010?"), total_plan("INV-1010"), Context(role="finance"))
    assert cache.get(read_question("What is the total of invoice INV-1010?"), Context(role="support")) is None
    assert cache.get(read_question("What is the total of invoice INV-1010?"), Context(role="finance")) is not None


def test_persisted_and_invalidated_when_the_schema_changes(cache, tmp_path):
    cache.put(read_question("What is the total of invoice INV-1010?"), total_plan("INV-1010"))
    same = PlanCache(cache.path, cache.signature, cache.known, cache.vocabulary)
    assert same.get(read_question("What is the total of invoice INV-1010?")).kind == "exact"
    changed = PlanCache(cache.path, "another-signature", cache.known, cache.vocabulary)
    assert changed.get(read_question("What is the total of invoice INV-1010?")) is None


def test_lru_bound(cache):
    small = PlanCache(None, cache.signature, cache.known, cache.vocabulary, capacity=2)
    for question in ("How many customers?", "How many invoices?", "How many products?"):
        small.put(read_question(question), total_plan("INV-9999"))  # an id the lake does not hold: no value to guard
    assert (
        small.get(read_question("How many customers?")) is None
        and small.get(read_question("How many products?")) is not None
    )


def test_document_ids_are_slots(cache):
    template, slots = extract_slots("What does memo-collections-2024Q3 say about payment plans?", cache.known)
    assert template == "what does <documents.document_id> say about payment plans"
    assert [s.value for s in slots] == ["memo-collections-2024Q3"]


def test_a_plan_naming_a_value_the_question_does_not_is_never_served(cache):
    """The cached question named a category ('Enterprise') its reworded twin does not: serving its plan
    would answer the first question."""
    asked = "How many customers are in the Enterprise segment?"
    plan = Plan(
        question=asked,
        nodes=(
            PlanNode(
                question="count of customers in the Enterprise segment",
                tool="sql",
                label="$var_1",
                source="customers",
                sql="SELECT count(*) FROM customers WHERE segment = 'Enterprise'",
                should_expose_answer=True,
                answer_description="count",
            ),
        ),
    )
    cache.put(read_question(asked), plan)
    assert cache.get(read_question("How many customers are in the SMB segment?")).plan.nodes[0].sql.endswith("'SMB'")
    assert cache.foreign_values(plan, read_question("How many customers are there?")) == ["Enterprise", "Enterprise"]


def test_a_damaged_cache_line_is_skipped_and_writers_never_share_a_temporary_file(tmp_path):
    from lakeplanner.plan.cache import PlanCache
    from lakeplanner.question.known import KnownValues

    path = tmp_path / "plan_cache.jsonl"
    path.write_text('{"question": "torn by another writ\n')
    cache = PlanCache(path, "s", KnownValues({}), {})
    assert cache.entries == {}
    cache.save()
    assert path.read_text() == "" and not list(tmp_path.glob("*.tmp"))


def test_two_processes_sharing_a_cache_file_keep_both_plans(cache):
    """Batch actors and service replicas each hold a PlanCache over the lake's one file: what one adds
    is read back in before the other replaces the file."""
    other = PlanCache(cache.path, cache.signature, cache.known, cache.vocabulary)
    cache.put(read_question("What is the total of invoice INV-1010?"), total_plan("INV-1010"))
    other.put(read_question("How many customers?"), total_plan("INV-9999"))
    again = PlanCache(cache.path, cache.signature, cache.known, cache.vocabulary)
    assert again.get(read_question("What is the total of invoice INV-1042?")).kind == "template"
    assert again.get(read_question("How many customers?")).kind == "exact"


def test_questions_that_differ_only_in_slot_values_share_a_template(cache):
    one = template_of("What is the total of invoice INV-1010?", cache.known)
    assert one == template_of("what is the total of invoice INV-1042", cache.known)
    assert one != template_of("What is the tax of invoice INV-1010?", cache.known)


def test_a_plan_another_release_cached_is_planned_again(sample_lake, tmp_path, monkeypatch):
    import lakeplanner

    lake, _ = sample_lake
    path = tmp_path / "cache.jsonl"
    cache_for(lake, path).put(read_question("What is the total of invoice INV-1010?"), total_plan("INV-1010"))
    assert cache_for(lake, path).get(read_question("What is the total of invoice INV-1010?")).kind == "exact"
    monkeypatch.setattr(lakeplanner, "__version__", "99.0.0")
    assert cache_for(lake, path).get(read_question("What is the total of invoice INV-1010?")) is None


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("How much did cash and cash equivalents change?", ["cash and cash equivalents"]),  # stems: plural
        ("Which shipments did Acme Freight carry in 2024?", ["Acme Freight"]),
        ("What did Acme Freight Ltd charge?", []),  # named in full: find's, not a mention
        ("What is the total amount?", []),  # generic words name nothing
        ("What did the freight cost?", []),  # one distinctive word is too little
    ],
)
def test_a_value_is_mentioned_by_a_run_of_two_distinctive_words_or_more(text, named):
    known = KnownValues(
        {
            "net increase (decrease) in cash and cash equivalents": "report.line_item",
            "acme freight ltd": "carriers.name",
            "total amount due": "invoices.label",
        }
    )
    assert [text[start:end] for start, end, _ in known.mentions(text)] == named


def test_a_run_several_columns_hold_is_bound_to_each():
    known = KnownValues({"north depot east": "warehouses.name", "north depot west": "regions.name"})
    assert known.mentions("What is stored at North Depot East?") == []  # named in full
    assert {c for *_, c in known.mentions("Who runs north depot today?")} == {"regions.name", "warehouses.name"}
