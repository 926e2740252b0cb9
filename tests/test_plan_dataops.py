"""DataOps: the Fixer repairs schema drift without replanning; the Replanner gets the findings."""

import pytest
from restores import framed

from lakeplanner.plan.dataops import recommend, repair
from lakeplanner.plan.findings import Code
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.plan.validate import validate


@pytest.fixture(scope="module")
def schema(sample_lake):
    lake, _ = sample_lake
    return LakeSchema.from_contract(lake.contract)


def one_node(**fields) -> Plan:
    base = {
        "question": "q",
        "tool": "sql",
        "label": "$var_1",
        "source": "customers",
        "should_expose_answer": True,
        "answer_description": "a",
    }
    return framed(Plan(question="q", nodes=(PlanNode(**{**base, **fields}),)))


def test_renamed_column_is_fixed_without_replanning(schema):
    plan = one_node(sql="SELECT customer_name FROM customers WHERE segment = 'Enterprise'")

    def replan(plan, findings):
        raise AssertionError("the Fixer should have repaired this")

    result = repair(plan, schema, replan=replan)
    assert result.ok and result.replans == 0
    assert result.plan.nodes[0].sql == "SELECT name FROM customers WHERE segment = 'Enterprise'"
    assert result.edits == ["$var_1: column customer_name -> name"]


@pytest.mark.parametrize(
    ("name", "fixed"),
    [
        ("custmer_name", "customer_name"),
        ("weight_kg", "weight"),
        ("totalamount", "total_amount"),
        ("declared_at", None),  # close as a string to delivered_at, but another fact
        ("created_at", None),
    ],
)
def test_a_name_is_fixed_to_a_column_spelled_alike_not_to_another_fact(name, fixed):
    from lakeplanner.plan.dataops import closest

    columns = ["customer_name", "weight", "total_amount", "delivered_at", "updated_at"]
    assert closest(name, columns) == fixed


def test_misspelled_qualified_column_keeps_bindings(schema):
    plan = Plan(
        question="q",
        nodes=(
            PlanNode(question="disputed invoice", tool="vector", label="$var_1", source="documents_invoices"),
            PlanNode(
                question="total",
                tool="sql",
                label="$var_2",
                source="invoices",
                should_expose_answer=True,
                answer_description="a",
                sql="SELECT i.total_amout FROM invoices i WHERE i.document_id IN $var_1.document_id",
            ),
        ),
    )
    result = repair(plan, schema)
    assert result.ok
    assert (
        result.plan.nodes[1].sql == "SELECT i.total_amount FROM invoices AS i WHERE i.document_id IN $var_1.document_id"
    )


def test_reference_filter_tool_and_exposure_fixes(schema):
    plan = Plan(
        question="payment terms of C001's contract",
        nodes=(
            PlanNode(
                question="contract of C001",
                tool="iceberg",
                label="$var_1",
                source="customers",
                sql="SELECT contract_document_id FROM customers WHERE customer_id = 'C001'",
            ),
            PlanNode(
                question="terms in $var_1.contract_doc_id",
                tool="milvus",
                label="$var_2",
                source="documents_contracts",
                filter="documentid IN $var_1.contract_doc_id",
            ),
        ),
    )
    result = repair(plan, schema)
    assert result.ok, result.findings
    second = result.plan.nodes[1]
    assert second.tool == "vector" and second.filter == "document_id IN $var_1.contract_document_id"
    assert second.should_expose_answer and second.answer_description == "payment terms of C001's contract"


def test_structural_problems_go_to_the_replanner_with_the_findings(schema):
    broken = one_node(sql="SELECT sum(status) FROM invoices", source="invoices")
    seen = []

    def replan(plan, findings):
        seen.append([f.code for f in findings])
        return one_node(sql="SELECT sum(total_amount) FROM invoices", source="invoices")

    result = repair(broken, schema, replan=replan)
    assert result.ok and result.replans == 1 and seen == [[Code.aggregate_type_mismatch]]


def test_bounded_replans_then_advice(schema):
    broken = one_node(source="orders")
    drafts = iter([one_node(source="order_lines"), one_node(source="purchases")])
    result = repair(broken, schema, replan=lambda plan, findings: next(drafts), max_replans=2)
    assert not result.ok and result.replans == 2
    assert result.advice == ["purchases is not in the lake: ingest it, or ask about a source that exists"]


def test_the_same_findings_are_not_fed_back_twice(schema):
    """Greedy decoding from the same question and feedback writes the same draft: one replan, not two."""
    broken = one_node(source="orders")
    seen = []
    result = repair(broken, schema, replan=lambda plan, findings: seen.append(findings) or plan, max_replans=2)
    assert not result.ok and result.replans == 1 and len(seen) == 1


def test_engine_errors_become_recommendations():
    [advice] = recommend([], ConnectionError("milvus at 127.0.0.1:19530 refused"))
    assert "retry later" in advice and "milvus" in advice


def test_fixes_are_pure(schema):
    plan = one_node(sql="SELECT customer_name FROM customers")
    repair(plan, schema)
    assert validate(plan, schema)[0].code is Code.unknown_column  # the input plan is untouched


def test_redundant_steps_are_dropped_and_a_wrong_tool_is_switched(schema):
    plan = Plan(
        question="How many customers are in the Enterprise segment?",
        nodes=(
            PlanNode(
                question="count Enterprise customers",
                tool="vector",
                label="$var_1",
                source="customers",
                should_expose_answer=True,
                answer_description="the count",
            ),
            PlanNode(
                question="Enterprise customers",
                tool="graph",
                label="$var_2",
                source="customers",
                should_expose_answer=True,
                answer_description="customers",
            ),
            PlanNode(
                question="count enterprise customers",
                tool="vector",
                label="$var_3",
                source="customers",
                should_expose_answer=True,
                answer_description="the count",
            ),
            PlanNode(question="segments", tool="sql", label="$var_4", source="customers"),
        ),
    )
    result = repair(plan, schema)
    assert result.ok and result.replans == 0, result.findings
    [only] = result.plan.nodes
    assert (only.label, only.tool) == ("$var_1", "sql")
    assert any("$var_3: dropped, it repeats $var_1" in e for e in result.edits)
    assert any("$var_2: dropped" in e for e in result.edits) and any("$var_4: dropped" in e for e in result.edits)


def test_a_sql_step_on_a_collection_reads_the_table_it_names(schema):
    customer = PlanNode(question="customer of the payment plan", tool="vector", label="$var_1", source="documents")
    count = shown_sql(
        "$var_2", "documents_contracts", "number of invoices issued by the customer in $var_1.customer_id", "a count"
    )
    result = repair(Plan(question="How many invoices has it?", nodes=(customer, count)), schema)
    assert (result.plan.nodes[-1].tool, result.plan.nodes[-1].source) == ("sql", "invoices")
    assert "$var_2: sql on documents_contracts -> invoices (the table it names first)" in result.edits


def test_a_reference_is_pointed_at_the_link_column(schema):
    plan = Plan(
        question="payment terms of INV-1078",
        nodes=(
            PlanNode(
                question="the contract of the customer of INV-1078",
                tool="sql",
                label="$var_1",
                source="invoices",
                returns=("document_id",),
            ),
            PlanNode(
                question="payment terms in documents with document_id in $var_1.document_id",
                tool="vector",
                label="$var_2",
                source="documents_contracts",
                should_expose_answer=True,
                answer_description="terms",
            ),
        ),
    )
    assert [f.code for f in validate(plan, schema)] == [Code.unlinked_reference]
    result = repair(plan, schema)
    assert result.ok and result.replans == 0
    first, second = result.plan.nodes
    assert "$var_1.contract_document_id" in second.question and "contract_document_id" in first.returns


def test_a_search_nothing_can_narrow_is_dropped_after_replanning(schema):
    plan = Plan(
        question="e-mail of the billing contact of INV-1042",
        nodes=(
            PlanNode(
                question="billing contact of INV-1042",
                tool="sql",
                label="$var_1",
                source="invoices",
                returns=("billing_contact",),
            ),
            PlanNode(
                question="e-mail in documents of $var_1.billing_contact",
                tool="vector",
                label="$var_2",
                source="documents",
                should_expose_answer=True,
                answer_description="the e-mail",
            ),
        ),
    )
    replans = []
    result = repair(plan, schema, replan=lambda p, f: replans.append(f) or p)
    assert len(replans) == 1 and result.ok
    [only] = result.plan.nodes
    assert only.label == "$var_1" and only.should_expose_answer
    assert any("$var_2: dropped" in e for e in result.edits)


def test_a_graph_step_over_an_unlinked_collection_becomes_a_search(schema):
    plan = one_node(tool="graph", source="documents", question="related products")
    result = repair(plan, schema)
    assert result.ok and result.plan.nodes[0].tool == "vector"
    assert result.edits == ["$var_1: tool graph -> vector for documents"]


def test_a_reason_asked_of_a_table_is_read_in_its_linked_documents(schema):
    plan = one_node(question="why the customer C001 signed up", returns=["name"])
    result = repair(plan, schema)
    assert result.ok
    [read] = result.plan.nodes
    assert (read.tool, read.source, read.returns) == ("vector", "documents_contracts", ())
    assert result.edits == ["$var_1: sql on customers -> vector on documents_contracts (prose is in documents)"]


def search(label: str, question: str, **fields) -> PlanNode:
    return PlanNode(question=question, tool="vector", label=label, source="documents_contracts", **fields)


def test_a_step_about_a_named_part_of_the_question_is_exposed_not_dropped(schema):
    plan = Plan(
        question="Do the contracts of Acme GmbH and Borealis AG have the same notice period?",
        nodes=(
            search("$var_1", "notice period of Acme GmbH"),
            search("$var_2", "notice period of Borealis AG", should_expose_answer=True, answer_description="a period"),
            search("$var_3", "notice periods in general"),
        ),
    )
    result = repair(plan, schema)
    assert result.ok, result.findings
    assert [(n.label, n.should_expose_answer) for n in result.plan.nodes] == [("$var_1", True), ("$var_2", True)]
    assert any("$var_3: dropped" in e for e in result.edits)


def test_a_search_comparing_earlier_answers_is_left_to_the_answer_step(schema):
    plan = Plan(
        question="Do CTR-C001 and CTR-C002 have the same notice period?",
        nodes=(
            search("$var_1", "notice period in CTR-C001"),
            search("$var_2", "notice period in CTR-C002"),
            search("$var_3", "are $var_1.answer and $var_2.answer the same", should_expose_answer=True),
        ),
    )
    result = repair(plan, schema)
    assert result.ok, result.findings
    assert [(n.label, n.should_expose_answer) for n in result.plan.nodes] == [("$var_1", True), ("$var_2", True)]


def test_with_one_collection_a_plan_that_never_validates_becomes_one_search():
    documents_only = LakeSchema(tables={}, collections={"documents"})
    copied_example = Plan(
        question="Are Local H and For Against both from the United States?",
        nodes=(
            PlanNode(question="country of $var_1.answer", tool="vector", label="$var_1", source="documents"),
            PlanNode(question="country of $var_2.answer", tool="vector", label="$var_2", source="documents"),
        ),
    )
    result = repair(copied_example, documents_only, replan=lambda plan, findings: plan)
    assert result.ok and result.replans == 1
    [only] = result.plan.nodes
    assert (only.tool, only.source, only.question) == ("vector", "documents", copied_example.question)
    assert "no draft validated" in result.edits[-1]


def test_a_traversal_from_nowhere_about_a_named_part_of_the_question_becomes_a_search(schema):
    plan = Plan(
        question="Were Scott Derrickson and Ed Wood of the same nationality?",
        nodes=(
            search("$var_1", "nationality of Scott Derrickson").model_copy(update={"tool": "graph"}),
            search("$var_2", "nationality of Ed Wood", should_expose_answer=True, answer_description="a nationality"),
        ),
    )
    result = repair(plan, schema)
    assert result.ok, result.findings
    assert [(n.tool, n.should_expose_answer) for n in result.plan.nodes] == [("vector", True), ("vector", True)]


def test_an_answer_traversal_from_nowhere_searches_with_the_unread_earlier_answer(schema):
    """HotpotQA 010: the hop to the fight song was dropped, and the university was answered instead."""
    graph = {"tool": "graph", "source": "documents_contracts"}
    plan = Plan(
        question="What is the fight song of the university whose main campus is in Lawrence, Kansas?",
        nodes=(
            search("$var_1", "the university whose main campus is in Lawrence, Kansas").model_copy(update=graph),
            search("$var_2", "the fight song of the university", should_expose_answer=True).model_copy(update=graph),
        ),
    )
    result = repair(plan, schema)
    assert result.ok, result.findings
    start, hop = result.plan.nodes
    assert (start.tool, start.should_expose_answer) == ("vector", False)
    assert (hop.tool, hop.question) == ("vector", "the fight song of the university ($var_1.answer)")
    assert "$var_2: tool graph -> vector for documents_contracts, searching with $var_1.answer" in result.edits


def test_an_answer_traversal_with_nothing_before_it_reads_its_source(schema):
    graph = {"tool": "graph", "source": "documents_contracts"}
    plan = Plan(
        question="Which contract has the longest term?",
        nodes=(
            search("$var_1", "longest term").model_copy(
                update=graph | {"should_expose_answer": True, "answer_description": "a contract"}
            ),
        ),
    )
    result = repair(plan, schema)
    assert result.ok and [n.tool for n in result.plan.nodes] == ["vector"]


def test_a_step_about_the_item_an_exposed_step_lost_is_exposed(schema):
    def sql(label, question, exposed=False):
        return PlanNode(question=question, tool="sql", label=label, source="invoices", should_expose_answer=exposed)

    plan = Plan(
        question="What is the percentage change in the unpaid total from 2018 to 2019?",
        nodes=(
            sql("$var_1", "unpaid total in 2018"),
            sql("$var_2", "unpaid total in 2019"),
            sql("$var_3", "percentage change in the value from 2018 to 2019", exposed=True),
        ),
    )
    result = repair(plan, schema)
    assert [n.label for n in result.plan.nodes if n.should_expose_answer] == ["$var_1", "$var_2", "$var_3"]


def test_a_search_naming_a_tables_column_reads_the_table(schema):
    plan = Plan(
        question="Who is the billing contact of INV-1042?",
        nodes=(
            PlanNode(
                question="the billing_contact of INV-1042",
                tool="vector",
                label="$var_1",
                source="documents_contracts",
                should_expose_answer=True,
                answer_description="the contact",
            ),
        ),
    )
    result = repair(plan, schema)
    [node] = result.plan.nodes
    assert (node.tool, node.source) == ("sql", "invoices") and result.ok, result.edits


def test_an_id_the_question_names_but_no_step_does_is_given_to_the_step_that_reads_it(sample_lake, schema):
    from restores import restore_named_ids

    from lakeplanner.plan.cache import known_values

    lake, _ = sample_lake
    question = "What payment terms apply to invoice INV-1078 under the customer's master services agreement?"
    plan = Plan(
        question=question,
        nodes=(
            PlanNode(
                question="contract of the customer",
                tool="sql",
                label="$var_1",
                source="customers",
                returns=["contract_document_id"],
            ),
            PlanNode(
                question="payment terms in documents with document_id in $var_1.contract_document_id",
                tool="vector",
                label="$var_2",
                source="documents_contracts",
                should_expose_answer=True,
                answer_description="the payment terms",
            ),
        ),
    )
    known = known_values(lake)
    restored, edits = restore_named_ids(plan, known, schema)
    assert restored.nodes[0].question == "contract of the customer (invoice_id INV-1078)"
    assert restored.nodes[1] == plan.nodes[1] and len(edits) == 1
    assert restore_named_ids(restored, known, schema) == (restored, [])  # named once, kept
    worded = plan.model_copy(update={"question": "What payment terms apply to open invoices?"})
    assert restore_named_ids(worded, known, schema) == (worded, [])  # a category may be reworded


def late_delivery_plan(first: PlanNode, total_question: str) -> Plan:
    """A first step finding the disputed invoice, and a step on line_items asking for its total_amount."""
    total = PlanNode(
        question=total_question,
        tool="sql",
        label="$var_2",
        source="line_items",
        should_expose_answer=True,
        answer_description="the total amount",
    )
    question = "Which invoice was disputed because of a late delivery, and what is its total amount?"
    return framed(Plan(question=question, nodes=(first, total)))


def test_a_step_naming_a_joined_tables_column_reads_that_table(schema):
    search = PlanNode(
        question="disputed because of a late delivery",
        tool="vector",
        label="$var_1",
        source="documents_invoices",
        returns=["document_id"],
    )
    plan = late_delivery_plan(search, "total_amount of the invoice with document_id in $var_1.document_id")
    result = repair(plan, schema)
    assert result.ok and result.plan.nodes[1].source == "invoices"
    assert "$var_2: sql on line_items -> invoices (it holds the columns named)" in result.edits


def test_a_one_step_plan_that_lost_the_ranking_asks_the_question(schema):
    from restores import restore_ranking

    asked = "Which product was sold in the largest total quantity across all invoice line items?"
    plan = one_node(question="total quantity of all line items", source="line_items")
    plan = plan.model_copy(update={"question": asked})
    restored, edits = restore_ranking(plan, schema)
    assert restored.nodes[0].question == asked and edits == ["$var_1: asks the question, its ranking was lost"]
    kept = plan.replace("$var_1", question="the product with the largest total quantity")
    assert restore_ranking(kept, schema) == (kept, [])
    unranked = plan.model_copy(update={"question": "How many units were sold in total?"})
    assert restore_ranking(unranked, schema) == (unranked, [])


def test_a_ranking_split_over_steps_that_read_nothing_of_each_other_is_one_step(schema):
    from restores import restore_ranking

    asked = "Which product was sold in the largest total quantity across all invoice line items, and how many units?"
    nodes = (
        shown_sql("$var_1", "line_items", "total_quantity of all line items", "a total"),
        shown_sql("$var_2", "products", "product_name of the product with the highest total_quantity", "a name"),
        shown_sql("$var_3", "line_items", "number of units of the product with the highest total_quantity", "units"),
    )
    restored, edits = restore_ranking(Plan(question=asked, nodes=nodes), schema)
    [step] = restored.nodes
    assert (step.label, step.source, step.question) == ("$var_1", "line_items", asked)
    assert edits == ["$var_1: asks the question, its ranking was lost (split over $var_2, $var_3)"]
    chained = Plan(question=asked, nodes=(nodes[0], nodes[1].model_copy(update={"question": "name of $var_1.sku"})))
    assert restore_ranking(chained, schema) == (chained, [])  # a step reads another: the planner chained them
    contract = "What monthly availability does the contract of the customer that signed up earliest guarantee?"
    picked = Plan(question=contract, nodes=(shown_sql("$var_1", "customers", "the earliest signup", "a customer"),))
    assert restore_ranking(picked, schema) == (picked, [])  # the ranking picks a row; its contract tells the rest


def test_a_reason_asked_of_a_table_is_read_in_its_documents_and_the_row_found_by_their_link(schema):
    guess = PlanNode(
        question="invoice_id of the invoice that was disputed because of a late delivery",
        tool="sql",
        label="$var_1",
        source="invoices",
        returns=["invoice_id"],
    )
    result = repair(
        late_delivery_plan(guess, "total_amount of the invoice with invoice_id in $var_1.invoice_id"), schema
    )
    assert result.ok, result.findings
    search, rows = result.plan.nodes
    assert (search.tool, search.source) == ("vector", "documents_invoices")  # the table's own documents
    assert (rows.source, rows.question) == (
        "invoices",
        "total_amount of the invoice with document_id in $var_1.document_id",
    )


def test_a_column_qualified_with_the_wrong_table_is_read_from_the_table_that_has_it(schema):
    plan = one_node(
        sql="SELECT T1.contract_document_id FROM invoices AS T1 JOIN customers AS T2 "
        "ON T1.customer_id = T2.customer_id WHERE T1.invoice_id = 'INV-1078'"
    )
    result = repair(plan, schema)
    assert result.ok and result.edits == ["$var_1: column contract_document_id read from its table"]
    assert result.plan.nodes[0].sql.startswith("SELECT T2.contract_document_id FROM invoices AS T1")


def shown_sql(label: str, source: str, question: str, description: str) -> PlanNode:
    """An exposed sql step."""
    return PlanNode(
        question=question,
        tool="sql",
        label=label,
        source=source,
        should_expose_answer=True,
        answer_description=description,
    )


def test_a_part_only_documents_tell_is_searched_first_and_the_guessing_step_reads_its_documents(schema):
    from restores import restore_document_start

    asked = (
        "One invoice was disputed because fewer units were received than billed. What notice period for "
        "termination for convenience does that customer's contract specify?"
    )
    guess = PlanNode(
        question="contract_document_id of the customer who disputed the invoice",
        tool="sql",
        label="$var_1",
        source="customers",
        returns=["contract_document_id"],
    )
    contract = search(
        "$var_2",
        "notice period for termination for convenience in documents with document_id in $var_1.contract_document_id",
        should_expose_answer=True,
        answer_description="a notice period",
    )
    plan = Plan(question=asked, nodes=(guess, contract))
    restored, edits = restore_document_start(plan, schema)
    first, rows, read = restored.nodes
    assert (first.label, first.tool, first.source) == ("$var_1", "vector", "documents_invoices")
    assert first.question == "Which invoice was disputed because fewer units were received than billed?"
    assert rows.label == "$var_2" and rows.question.endswith("(invoices.document_id in $var_1.document_id)")
    assert read.question.endswith("$var_2.contract_document_id") and len(edits) == 1
    assert not validate(restored, schema)
    assert restore_document_start(restored, schema) == (restored, [])  # its guessing step now reads a search


def test_a_memo_the_question_cites_is_searched_before_the_step_that_would_guess_its_answer(schema):
    from restores import restore_document_start

    asked = (
        "According to the Q3 2024 collections memo, which customer agreed to a payment plan, and how many "
        "invoices has that customer been issued in total?"
    )
    guess = shown_sql("$var_1", "customers", "customer_id of the customer who agreed to a payment plan", "a customer")
    memo = PlanNode(
        question="customer who agreed to a payment plan",
        tool="vector",
        label="$var_2",
        source="documents",
        should_expose_answer=True,
        answer_description="a customer",
    )
    restored, _ = restore_document_start(Plan(question=asked, nodes=(guess, memo)), schema)
    first, rows = restored.nodes
    assert (first.label, first.source) == ("$var_1", "documents")  # the memo's own collection, moved first
    assert first.question == "According to the Q3 2024 collections memo, which customer agreed to a payment plan"
    assert rows.question == "customer_id of the customer who agreed to a payment plan (name in $var_1.answer)"
    unrelated = Plan(question="How many customers are in the Enterprise segment?", nodes=(guess,))
    assert restore_document_start(unrelated, schema) == (unrelated, [])


def test_a_count_the_steps_lost_is_asked_by_the_exposed_step_that_joins_the_counted_table(schema):
    from restores import restore_count

    asked = "Which customer agreed to a payment plan, and how many invoices has that customer been issued in total?"
    customer = shown_sql("$var_2", "customers", "customer_id of the customer named in $var_1.answer", "a customer")
    plan = Plan(question=asked, nodes=(search("$var_1", "who agreed to a payment plan"), customer))
    restored, edits = restore_count(plan, schema)
    assert restored.nodes[1].question == (
        "customer_id of the customer named in $var_1.answer, and how many invoices has that customer been "
        "issued in total"
    )
    assert edits == [
        "$var_2: also asks 'how many invoices has that customer been issued in total', which no step counted"
    ]
    assert restore_count(restored, schema) == (restored, [])  # now a step counts
    years = plan.model_copy(update={"question": "How many years did revenue exceed 5 million?"})
    assert restore_count(years, schema) == (years, [])  # no table of years


def test_a_search_moved_first_keeps_its_readers_and_an_unrelated_search_is_left_alone(schema):
    from restores import restore_document_start

    asked = "According to the collections memo, which customer agreed to a payment plan? What is its segment?"
    guess = shown_sql("$var_1", "customers", "name of the customer who agreed to a payment plan", "a customer")
    memo = PlanNode(question="who agreed to a payment plan", tool="vector", label="$var_2", source="documents")
    reader = shown_sql("$var_3", "customers", "segment of the customer named $var_2.answer", "a segment")
    restored, _ = restore_document_start(Plan(question=asked, nodes=(guess, memo, reader)), schema)
    assert [n.question for n in restored.nodes] == [
        "According to the collections memo, which customer agreed to a payment plan",
        "name of the customer who agreed to a payment plan (name in $var_1.answer)",
        "segment of the customer named $var_1.answer",  # still the memo's answer
    ]
    other = search("$var_2", "late fee interest policy", should_expose_answer=True, answer_description="a policy")
    other = other.model_copy(update={"source": "documents"})
    restored, _ = restore_document_start(Plan(question=asked, nodes=(guess, other)), schema)
    assert restored.nodes[0].question.startswith("According to") and restored.nodes[2] == other.model_copy(
        update={"label": "$var_3"}
    )


def test_a_lost_count_goes_to_the_step_reading_the_counted_table_and_a_counting_statement_is_left(schema):
    from restores import restore_count

    asked = "How many invoices did customer C001 receive and what is its segment?"
    invoices = shown_sql("$var_1", "invoices", "invoices of customer C001", "invoices")
    segment = shown_sql("$var_2", "customers", "segment of customer C001", "a segment")
    restored, _ = restore_count(Plan(question=asked, nodes=(invoices, segment)), schema)
    assert restored.nodes[0].question == "invoices of customer C001, and How many invoices did customer C001 receive"
    assert restored.nodes[1] == segment
    counting = invoices.model_copy(update={"sql": "SELECT count(*) AS n FROM invoices WHERE customer_id = 'C001'"})
    plan = Plan(question=asked, nodes=(counting, segment))
    assert restore_count(plan, schema) == (plan, [])


def test_arithmetic_over_a_row_the_question_names_reads_its_table_not_the_documents():
    from restores import restore_table_arithmetic

    from lakeplanner.contract.models import FieldType
    from lakeplanner.question.known import KnownValues

    schema = LakeSchema(
        tables={"financials": {"line_item": FieldType.string, "year": FieldType.integer, "value": FieldType.number}},
        collections={"documents"},
    )
    known = KnownValues({"ireland": "financials.line_item"})
    step = search("$var_1", "change for Ireland", should_expose_answer=True)
    plan = Plan(question="What was the change in the amount for Ireland?", nodes=(step,))
    restored, edits = restore_table_arithmetic(plan, known, schema)
    [node] = restored.nodes
    assert (node.tool, node.source, node.filter, node.question) == ("sql", "financials", None, "change for Ireland")
    assert len(edits) == 1
    for question in ("Why did the amount for Ireland change?", "What was the amount for Ireland?"):
        asked = plan.model_copy(update={"question": question})
        assert restore_table_arithmetic(asked, known, schema) == (asked, [])
    nowhere = plan.model_copy(update={"question": "What was the change in the amount for Spain?"})
    assert restore_table_arithmetic(nowhere, known, schema) == (nowhere, [])


def test_a_lookup_step_that_lost_the_asked_attribute_returns_it_too(schema):
    from restores import restore_asked_column

    from lakeplanner.plan.restore import asked_column

    asked = "What is the billing contact's e-mail address on invoice INV-1042?"
    contact = shown_sql("$var_1", "invoices", "billing_contact of invoice INV-1042", "a contact")
    contact = contact.model_copy(update={"returns": ("billing_contact",)})
    restored, edits = restore_asked_column(Plan(question=asked, nodes=(contact,)), schema)
    assert restored.nodes[0].returns == ("billing_contact", "billing_email")
    assert edits == ["$var_1: also returns billing_email, the attribute the question asks for"]
    assert restore_asked_column(restored, schema) == (restored, [])
    phone = Plan(question="What is the phone number of the billing contact for invoice INV-1001?", nodes=(contact,))
    assert restore_asked_column(phone, schema) == (phone, [])  # no column holds it
    assert asked_column("the amount", ["net_amount", "gross_amount"]) is None  # a tie: left to the step


def test_a_row_cited_by_a_named_document_is_read_by_the_keys_the_document_cites(logistics):
    from restores import restore_cited_rows

    from lakeplanner.plan.cache import known_values

    known, schema = known_values(logistics), LakeSchema.from_contract(logistics.contract)

    def searched(question: str) -> Plan:
        node = search("$var_1", question, should_expose_answer=True, answer_description="x")
        return Plan(question=question, nodes=(node.model_copy(update={"source": "documents_incidents"}),))

    asked = "Which carrier moved the shipment described in incident report IR-007?"
    restored, edits = restore_cited_rows(searched(asked), known, schema)
    document, rows = restored.nodes
    assert (document.source, document.filter, document.returns) == (
        "documents_incidents",
        "document_id = 'IR-007'",
        ("linked_keys",),
    )
    assert (rows.tool, rows.source, rows.question) == (
        "sql",
        "shipments",
        f"{asked} (shipment_id in $var_1.linked_keys)",
    )
    assert edits == ["$var_1, $var_2: read the shipments rows IR-007 cites, by shipment_id"]
    joined = "For which customer was the shipment in incident report IR-011 carried?"  # orders.customer, joined
    assert restore_cited_rows(searched(joined), known, schema)[0].nodes[1].source == "shipments"
    for prose in ("What happened to the shipment in incident report IR-003?", "What caused incident IR-004?"):
        assert restore_cited_rows(searched(prose), known, schema) == (searched(prose), [])  # the document tells it
    assert restore_cited_rows(restored, known, schema) == (restored, [])  # a step reads the cited keys


def test_a_fact_of_a_named_kind_of_document_is_searched_there_not_read_from_a_table(logistics):
    from restores import restore_document_fact

    from lakeplanner.plan.cache import known_values

    known, schema = known_values(logistics), LakeSchema.from_contract(logistics.contract)

    def guessed(question: str) -> Plan:
        return Plan(question=question, nodes=(shown_sql("$var_1", "staff", "max(weekly_hours) of staff", "hours"),))

    asked = "What is the maximum number of weekly driving hours under the driving hours policy?"
    restored, edits = restore_document_fact(guessed(asked), known, schema)
    [search] = restored.nodes
    assert (search.tool, search.source, search.question) == ("vector", "documents_policies", asked)
    assert edits == [
        "$var_1: searches documents_policies: the question asks a fact of the documents it names, not of a table"
    ]
    for table_part in (
        "Which staff members does the overtime policy apply to?",  # names a table
        "What liability cap does the agreement of the carrier that operates truck TRK-131 set?",  # a row
    ):
        assert restore_document_fact(guessed(table_part), known, schema) == (guessed(table_part), [])


def test_a_document_the_question_names_through_a_row_is_searched_through_the_rows_link(schema):
    from restores import restore_linked_search

    asked = "What monthly availability (uptime) does the contract of the customer that signed up earliest guarantee?"
    earliest = shown_sql("$var_1", "customers", "signup_date of the customer who signed up earliest", "a date")
    count = shown_sql("$var_2", "invoices", "number of invoices of the earliest customer", "a count")
    restored, edits = restore_linked_search(Plan(question=asked, nodes=(earliest, count)), schema)
    picker, search = restored.nodes
    assert (picker.returns, picker.should_expose_answer) == (("contract_document_id",), False)
    assert (search.tool, search.source, search.filter, search.question) == (
        "vector",
        "documents_contracts",
        "document_id IN $var_1.contract_document_id",
        asked,
    )
    assert validate(restored, schema) == [] and len(edits) == 1
    for table_answer in (
        "How many customers have a contract?",  # a count of rows
        "What is the signup date of the customer whose contract is CTR-C003?",  # a column holds it
    ):
        plan = Plan(question=table_answer, nodes=(earliest,))
        assert restore_linked_search(plan, schema) == (plan, [])


def test_a_key_a_search_cannot_return_is_matched_by_the_name_it_read(schema):
    memo = PlanNode(
        question="customer_id of the customer who agreed to a payment plan",
        tool="vector",
        label="$var_1",
        source="documents",
        returns=("customer_id",),
    )
    count = shown_sql(
        "$var_2", "invoices", "number of invoices of the customer with customer_id in $var_1.customer_id", "n"
    )
    assert any(f.code is Code.unknown_reference_column for f in validate(Plan(nodes=(memo, count)), schema))
    result = repair(Plan(question="q", nodes=(memo, count)), schema)
    assert result.ok, result.findings
    assert result.plan.nodes[1].question == "number of invoices of the customer with customers.name in $var_1.answer"


def test_a_step_naming_another_value_of_a_column_the_question_names_is_pointed_back(logistics):
    from restores import restore_swapped_values

    from lakeplanner.plan.cache import known_values

    known = known_values(logistics)
    asked = "How did the number of delayed shipments change from 2023 to 2024?"
    step = shown_sql("$var_1", "shipments", "number of shipments with status 'lost' from 2023 to 2024", "a change")
    restored, edits = restore_swapped_values(Plan(question=asked, nodes=(step,)), known)
    assert restored.nodes[0].question == "number of shipments with status 'delayed' from 2023 to 2024"
    assert edits == ["$var_1: shipments.status 'lost' -> 'delayed', the value the question names"]
    both = Plan(question="How many shipments were delayed or lost in 2024?", nodes=(step,))
    assert restore_swapped_values(both, known) == (both, [])  # the question names the step's value too


def test_a_step_counting_the_number_of_rows_counts_and_the_entity_asked_first_is_shown(schema):
    from restores import restore_asked_entity, restore_count

    asked = "Which customer agreed to a payment plan, and how many invoices has that customer been issued in total?"
    found = search("$var_1", "customer_id of the customer who agreed to a payment plan")
    counting = shown_sql("$var_2", "invoices", "number of invoices of customers.name in $var_1.answer", "a count")
    plan = Plan(question=asked, nodes=(found, counting))
    assert restore_count(plan, schema) == (plan, [])  # "number of" counts
    restored, edits = restore_asked_entity(plan)
    assert [n.should_expose_answer for n in restored.nodes] == [True, True]
    assert edits == ["$var_1: shown too, it reads the customer the question asks for"]
    one_ask = plan.model_copy(update={"question": "How many invoices has the customer on a payment plan been issued?"})
    assert restore_asked_entity(one_ask) == (one_ask, [])
    unrelated = plan.replace("$var_1", question="the payment plan's terms")
    assert restore_asked_entity(unrelated) == (unrelated, [])


def test_a_time_asked_in_a_unit_reads_the_two_moments_the_question_names(logistics):
    from restores import restore_elapsed_moments

    from lakeplanner.plan.restore import shares_root

    schema = LakeSchema.from_contract(logistics.contract)
    asked = "How many hours did shipment SHP-20054 take from dispatch to delivery?"
    step = shown_sql("$var_1", "shipments", "warehouse of shipment SHP-20054", "the time")
    restored, edits = restore_elapsed_moments(Plan(question=asked, nodes=(step,)), schema)
    assert restored.nodes[0].returns == ("dispatched_at", "delivered_at")
    assert edits == ["$var_1: returns dispatched_at and delivered_at, the moments the time asked is between"]
    assert restore_elapsed_moments(restored, schema) == (restored, [])
    weight = Plan(question="How many kilograms did shipment SHP-20054 weigh at dispatch?", nodes=(step,))
    assert restore_elapsed_moments(weight, schema) == (weight, [])  # no time unit
    assert shares_root("delivery", "delivered") and shares_root("dispatch", "dispatched")
    assert not shares_root("at", "attention") and not shares_root("deliver", "delete")


def test_a_change_between_years_whose_steps_name_neither_year_is_asked_by_one_step(schema):
    from restores import restore_periods

    asked = "How did the total amount invoiced in EUR change between 2023 and 2024?"
    paid = shown_sql("$var_1", "invoices", "total_amount of invoices with status 'paid'", "amounts")
    open_ = shown_sql("$var_2", "invoices", "total_amount of invoices with status 'open'", "amounts")
    restored, edits = restore_periods(Plan(question=asked, nodes=(paid, open_)), schema)
    [step] = restored.nodes
    assert (step.question, step.source, step.should_expose_answer) == (asked, "invoices", True)
    assert edits == ["$var_1: asks the question on invoices, no step read the years it compares"]
    by_year = Plan(question=asked, nodes=(shown_sql("$var_1", "invoices", "total_amount in 2023 and 2024", "x"),))
    assert restore_periods(by_year, schema) == (by_year, [])
    lookup = Plan(question="What is the total amount invoiced in EUR?", nodes=(paid,))
    assert restore_periods(lookup, schema) == (lookup, [])


def test_a_sentence_naming_a_memo_before_the_question_is_searched_first(schema):
    from restores import document_clause, restore_document_start

    asked = "The Q3 collections memo puts one customer on a payment plan. How many invoices has that customer got?"
    searched = "The Q3 collections memo puts which customer on a payment plan?"  # the search is asked which one
    assert document_clause(asked) == searched
    disputed = "One invoice was disputed because of a late delivery. What is its total?"
    assert document_clause(disputed) == "Which invoice was disputed because of a late delivery?"
    guess = shown_sql("$var_1", "invoices", "number of invoices of the customer on a payment plan", "a count")
    restored, edits = restore_document_start(Plan(question=asked, nodes=(guess,)), schema)
    assert [(n.tool, n.question.split(" (")[0]) for n in restored.nodes] == [
        ("vector", searched),
        ("sql", "number of invoices of the customer on a payment plan"),
    ]
    assert edits
    policy = "What is the maximum number of weekly driving hours under the driving hours policy?"
    assert document_clause(policy) is None  # one clause: a fact of the policy, not a part of the question


def test_the_ranked_entity_an_unshown_step_reads_is_shown_beside_the_figure_read_from_it(schema):
    from restores import restore_asked_entity

    asked = "Which customer was billed the largest total amount in 2024?"
    ranked = PlanNode(
        question="customer_id of the customer with the largest total amount",
        tool="sql",
        label="$var_1",
        source="customers",
        returns=("customer_id",),
    )
    total = shown_sql("$var_2", "invoices", "total amount of invoices of $var_1.customer_id in 2024", "a total")
    restored, edits = restore_asked_entity(Plan(question=asked, nodes=(ranked, total)))
    assert [n.should_expose_answer for n in restored.nodes] == [True, True]
    assert edits == ["$var_1: shown too, it reads the customer the question asks for"]
    on_customers = total.model_copy(update={"source": "customers"})
    plan = Plan(question=asked, nodes=(ranked, on_customers))
    assert restore_asked_entity(plan) == (plan, [])  # a shown step reads customers already


DOCUMENTS_ONLY = LakeSchema(tables={}, collections={"documents"})


def article_search(label: str, question: str, **fields) -> PlanNode:
    return PlanNode(question=question, tool="vector", label=label, source="documents", **fields)


@pytest.mark.parametrize(
    ("question", "bridge"),
    [
        (
            "What government post was held by the actress who played Nancy Drew in the film Hidden Staircase?",
            "who played Nancy Drew in the film Hidden Staircase",
        ),
        (
            "The stadium where the Harbor City Gulls played their home games can seat how many fans?",
            "where did the Harbor City Gulls play their home games",
        ),
        ("Blue Lake is in a county that has a population of how many inhabitants?", "county where Blue Lake lies"),
    ],
)
def test_a_plan_answering_only_the_thing_the_question_describes_gets_its_last_hop_back(question, bridge):
    from restores import restore_last_hop

    plan = Plan(question=question, nodes=(article_search("$var_1", bridge, should_expose_answer=True),))
    restored, edits = restore_last_hop(plan, DOCUMENTS_ONLY)
    first, hop = restored.nodes
    assert not first.should_expose_answer and hop.should_expose_answer and hop.source == "documents"
    assert hop.question == f"{question} ($var_1.answer)" and not validate(restored, DOCUMENTS_ONLY)
    assert edits and edits[0].startswith("$var_2: the question searched with $var_1.answer")


@pytest.mark.parametrize(
    ("question", "step"),
    [
        # the step asks what the question asks
        (
            "Blue Morning is the first album of a Danish girl group that was managed by who?",
            "who managed the Danish girl group that released Blue Morning",
        ),
        (
            "What is the name of the anthem of the college whose campus is in Riverton, Ohio?",
            "the anthem of the college whose campus is in Riverton",
        ),
        # no thing described on the way: the one search is the question's, whatever it names
        ("What year did the band perform a promo for the film?", "the year of the promo for the film"),
        ("What year did the band perform a promo for the film?", "the promo of the band"),
        # a person is asked: the words after "who" say how to find them
        ("Who was known by the ring name Tornado and later coached wrestlers?", "the ring name Tornado"),
    ],
)
def test_a_step_that_asks_what_the_question_asks_keeps_its_plan(question, step):
    from restores import restore_last_hop

    plan = Plan(question=question, nodes=(article_search("$var_1", step, should_expose_answer=True),))
    assert restore_last_hop(plan, DOCUMENTS_ONLY) == (plan, [])
    hopped = Plan(
        question="What government post was held by the actress who played Nancy Drew?",
        nodes=(
            article_search("$var_1", "who played Nancy Drew"),
            article_search("$var_2", "post held by $var_1.answer", should_expose_answer=True),
        ),
    )
    assert restore_last_hop(hopped, DOCUMENTS_ONLY) == (hopped, [])  # it reads an earlier answer


def test_a_hop_asking_another_relation_than_the_question_asks_the_question_with_the_bridge():
    from restores import restore_last_hop

    question = 'The producer of the stage musical "Silver Harbor" lives in what Irish town?'
    plan = Plan(
        question=question,
        nodes=(
            article_search("$var_1", "who produced the stage musical Silver Harbor"),
            article_search("$var_2", "where $var_1.answer was born", should_expose_answer=True),
        ),
    )
    restored, edits = restore_last_hop(plan, DOCUMENTS_ONLY)
    assert restored.nodes[1].question == f"{question} ($var_1.answer)" and len(edits) == 1
    asks_it = plan.replace("$var_2", question="the Irish town where $var_1.answer lives")
    assert restore_last_hop(asks_it, DOCUMENTS_ONLY) == (asks_it, [])


def test_searches_naming_none_of_the_questions_names_become_the_question_searched_as_it_is():
    from restores import restore_named_anchor

    question = "Who was the composer of Walking On Glass and who died in 1999?"
    lost = Plan(question=question, nodes=(article_search("$var_1", "who died in 1999", should_expose_answer=True),))
    restored, edits = restore_named_anchor(lost, DOCUMENTS_ONLY)
    [only] = restored.nodes
    assert (only.question, only.source, only.should_expose_answer) == (question, "documents", True)
    assert edits and "no step named any of" in edits[0]
    kept = lost.replace("$var_1", question="composer of Walking On Glass")
    assert restore_named_anchor(kept, DOCUMENTS_ONLY) == (kept, [])
    unnamed = Plan(question="who died in 1999?", nodes=lost.nodes)  # the question names nothing
    assert restore_named_anchor(unnamed, DOCUMENTS_ONLY) == (unnamed, [])
