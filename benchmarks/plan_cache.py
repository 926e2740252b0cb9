"""Plan cache benchmark on a paraphrase suite over the sample lake.

20 templates; each is cached once (its first phrasing, first value), then asked in 10 other ways
(4 paraphrases x new slot values). Near-miss questions (another aggregate, table or attribute)
must not reuse any cached plan. Reference plans are written by hand so the figures measure the
cache alone, not the LLM that would write the plans.

    python benchmarks/plan_cache.py      # writes benchmarks/results/plan_cache.{md,json}
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from lakeplanner import Lake, sample_lake_path
from lakeplanner.llm.embeddings import default_embedder
from lakeplanner.plan.cache import cache_for
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.plan.validate import validate
from lakeplanner.question import read_question

ROOT = Path(__file__).resolve().parent.parent
INVOICES = ["INV-1010", "INV-1042", "INV-1078", "INV-1101", "INV-1033", "INV-1120"]
CUSTOMERS = ["C001", "C007", "C015", "C023", "C031", "C038"]
SKUS = ["SW-100", "SW-110", "SW-120", "SW-130", "SW-140", "SW-100"]


def sql_plan(question: str, table: str, sql: str, answer: str) -> Plan:
    return Plan(
        question=question,
        nodes=(
            PlanNode(
                question=question,
                tool="sql",
                label="$var_1",
                source=table,
                sql=sql,
                should_expose_answer=True,
                answer_description=answer,
            ),
        ),
    )


def two_hop(customer: str) -> Plan:
    return Plan(
        question=f"payment terms of customer {customer}",
        nodes=(
            PlanNode(
                question=f"contract document of customer {customer}",
                tool="sql",
                label="$var_1",
                source="customers",
                returns=("contract_document_id",),
                sql=f"SELECT contract_document_id FROM customers WHERE customer_id = '{customer}'",
            ),
            PlanNode(
                question="payment terms in the contract $var_1.contract_document_id",
                tool="vector",
                label="$var_2",
                source="documents_contracts",
                filter="document_id IN $var_1.contract_document_id",
                should_expose_answer=True,
                answer_description=f"payment terms of {customer}",
            ),
        ),
    )


# (template id, values, phrasings with {v}, plan builder)
TEMPLATES = [
    (
        "invoice_total",
        INVOICES,
        [
            "What is the total of invoice {v}?",
            "Tell me the total for invoice {v}",
            "total amount of invoice {v}?",
            "How much is invoice {v} in total?",
            "Give me invoice {v}'s total",
        ],
        lambda v: sql_plan(
            f"total of {v}", "invoices", f"SELECT total_amount FROM invoices WHERE invoice_id = '{v}'", f"total of {v}"
        ),
    ),
    (
        "invoice_due",
        INVOICES,
        [
            "When is invoice {v} due?",
            "When is {v} due?",
            "Tell me when invoice {v} is due",
            "when does invoice {v} fall due",
            "When is the invoice {v} due for payment?",
        ],
        lambda v: sql_plan(
            f"due date of {v}",
            "invoices",
            f"SELECT due_date FROM invoices WHERE invoice_id = '{v}'",
            f"due date of {v}",
        ),
    ),
    (
        "invoice_status",
        INVOICES,
        [
            "What is the status of invoice {v}?",
            "status of {v}?",
            "Tell me the status of invoice {v}",
            "Is invoice {v} paid? What status does it have?",
            "Show the invoice status for {v}",
        ],
        lambda v: sql_plan(
            f"status of {v}", "invoices", f"SELECT status FROM invoices WHERE invoice_id = '{v}'", f"status of {v}"
        ),
    ),
    (
        "invoice_customer",
        INVOICES,
        [
            "Which customer received invoice {v}?",
            "Who is the customer of invoice {v}?",
            "customer of invoice {v}?",
            "Tell me which customer got invoice {v}",
            "For invoice {v}, which customer is it?",
        ],
        lambda v: sql_plan(
            f"customer of {v}",
            "invoices",
            f"SELECT c.name FROM invoices AS i JOIN customers AS c ON i.customer_id = c.customer_id "
            f"WHERE i.invoice_id = '{v}'",
            f"customer of {v}",
        ),
    ),
    (
        "invoice_email",
        INVOICES,
        [
            "What is the billing email on invoice {v}?",
            "billing email of invoice {v}",
            "Tell me the billing email for {v}",
            "Which billing email does invoice {v} use?",
            "Give the billing email address of invoice {v}",
        ],
        lambda v: sql_plan(
            f"billing email of {v}",
            "invoices",
            f"SELECT billing_email FROM invoices WHERE invoice_id = '{v}'",
            f"billing email of {v}",
        ),
    ),
    (
        "invoice_lines",
        INVOICES,
        [
            "How many line items does invoice {v} have?",
            "count the line items of invoice {v}",
            "number of line items on invoice {v}",
            "How many line items are on {v}?",
            "Tell me how many line items invoice {v} has",
        ],
        lambda v: sql_plan(
            f"line items of {v}",
            "line_items",
            f"SELECT count(*) AS n FROM line_items WHERE invoice_id = '{v}'",
            f"line items of {v}",
        ),
    ),
    (
        "customer_invoice_count",
        CUSTOMERS,
        [
            "How many invoices does customer {v} have?",
            "number of invoices of customer {v}",
            "count invoices for customer {v}",
            "Tell me how many invoices customer {v} has",
            "How many invoices were sent to customer {v}?",
        ],
        lambda v: sql_plan(
            f"invoices of {v}",
            "invoices",
            f"SELECT count(*) AS n FROM invoices WHERE customer_id = '{v}'",
            f"invoices of {v}",
        ),
    ),
    (
        "customer_invoice_sum",
        CUSTOMERS,
        [
            "What is the total invoiced to customer {v}?",
            "sum of invoices of customer {v}",
            "total of all invoices for customer {v}",
            "Tell me the invoice total for customer {v}",
            "How much was invoiced in total to customer {v}?",
        ],
        lambda v: sql_plan(
            f"invoiced to {v}",
            "invoices",
            f"SELECT sum(total_amount) AS total FROM invoices WHERE customer_id = '{v}'",
            f"total invoiced to {v}",
        ),
    ),
    (
        "customer_terms",
        CUSTOMERS,
        [
            "What are the payment terms of customer {v}?",
            "payment terms in the contract of customer {v}",
            "Tell me customer {v}'s payment terms",
            "Which payment terms does customer {v} have?",
            "Show the payment terms agreed with customer {v}",
        ],
        two_hop,
    ),
    (
        "customer_city",
        CUSTOMERS,
        [
            "In which city is customer {v}?",
            "city of customer {v}",
            "Tell me the city of customer {v}",
            "Which city is customer {v} located in?",
            "customer {v}: what city?",
        ],
        lambda v: sql_plan(
            f"city of {v}", "customers", f"SELECT city FROM customers WHERE customer_id = '{v}'", f"city of {v}"
        ),
    ),
    (
        "country_customers",
        ["Germany", "France", "Spain", "Canada", "Ireland", "Netherlands"],
        [
            "How many customers are in {v}?",
            "number of customers in {v}",
            "count customers located in {v}",
            "Tell me how many customers we have in {v}",
            "How many customers does {v} have?",
        ],
        lambda v: sql_plan(
            f"customers in {v}",
            "customers",
            f"SELECT count(*) AS n FROM customers WHERE country = '{v}'",
            f"customers in {v}",
        ),
    ),
    (
        "segment_customers",
        ["Enterprise", "SMB", "Public", "Enterprise", "SMB", "Public"],
        [
            "List the customers in the {v} segment",
            "customers in segment {v}",
            "Show all {v} segment customers",
            "Which customers are in the {v} segment?",
            "Give me the {v} segment customers",
        ],
        lambda v: sql_plan(
            f"{v} customers", "customers", f"SELECT name FROM customers WHERE segment = '{v}'", f"customers in {v}"
        ),
    ),
    (
        "status_count",
        ["paid", "open", "overdue", "paid", "open", "overdue"],
        [
            "How many invoices are {v}?",
            "number of {v} invoices",
            "count the invoices with status {v}",
            "Tell me how many invoices have status {v}",
            "How many {v} invoices are there?",
        ],
        lambda v: sql_plan(
            f"{v} invoices", "invoices", f"SELECT count(*) AS n FROM invoices WHERE status = '{v}'", f"{v} invoices"
        ),
    ),
    (
        "currency_sum",
        ["EUR", "USD", "GBP", "EUR", "USD", "GBP"],
        [
            "What is the total of invoices in {v}?",
            "sum of invoices in {v}",
            "total invoiced in {v}",
            "Tell me the invoice total in {v}",
            "How much was invoiced in {v} in total?",
        ],
        lambda v: sql_plan(
            f"invoiced in {v}",
            "invoices",
            f"SELECT sum(total_amount) AS total FROM invoices WHERE currency = '{v}'",
            f"total in {v}",
        ),
    ),
    (
        "product_price",
        SKUS,
        [
            "What is the list price of product {v}?",
            "list price of {v}",
            "Tell me the list price for product {v}",
            "How much is the list price of {v}?",
            "product {v} list price?",
        ],
        lambda v: sql_plan(
            f"price of {v}", "products", f"SELECT list_price FROM products WHERE sku = '{v}'", f"list price of {v}"
        ),
    ),
    (
        "product_category",
        SKUS,
        [
            "What category is product {v} in?",
            "category of product {v}",
            "Tell me the category of {v}",
            "Which category does product {v} belong to?",
            "product {v}: which category?",
        ],
        lambda v: sql_plan(
            f"category of {v}", "products", f"SELECT category FROM products WHERE sku = '{v}'", f"category of {v}"
        ),
    ),
    (
        "category_products",
        ["Software", "Training", "Hardware", "Support", "Software", "Hardware"],
        [
            "How many products are in the {v} category?",
            "number of products in category {v}",
            "count products of category {v}",
            "Tell me how many {v} products there are",
            "How many {v} category products do we sell?",
        ],
        lambda v: sql_plan(
            f"{v} products",
            "products",
            f"SELECT count(*) AS n FROM products WHERE category = '{v}'",
            f"products in {v}",
        ),
    ),
    (
        "sku_quantity",
        SKUS,
        [
            "How many units of {v} were sold?",
            "total quantity sold of {v}",
            "Tell me the units sold of {v}",
            "units of {v} sold in total?",
            "What quantity of {v} has been sold?",
        ],
        lambda v: sql_plan(
            f"units of {v}",
            "line_items",
            f"SELECT sum(quantity) AS units FROM line_items WHERE sku = '{v}'",
            f"units of {v}",
        ),
    ),
    (
        "issued_after",
        ["2024-06-01", "2024-09-30", "2025-01-15", "2025-03-01", "2024-12-31", "2025-06-30"],
        [
            "How many invoices were issued after {v}?",
            "number of invoices issued after {v}",
            "count invoices issued after {v}",
            "Tell me how many invoices were issued after {v}",
            "How many invoices have been issued after {v}?",
        ],
        lambda v: sql_plan(
            f"issued after {v}",
            "invoices",
            f"SELECT count(*) AS n FROM invoices WHERE issue_date > '{v}'",
            f"invoices after {v}",
        ),
    ),
    (
        "total_over",
        ["10000", "25000", "50000", "75000", "100000", "5000"],
        [
            "How many invoices have a total over {v}?",
            "number of invoices with a total above {v}",
            "count invoices whose total exceeds {v}",
            "Tell me how many invoices total more than {v}",
            "How many invoices with total greater than {v}?",
        ],
        lambda v: sql_plan(
            f"over {v}",
            "invoices",
            f"SELECT count(*) AS n FROM invoices WHERE total_amount > {v}",
            f"invoices over {v}",
        ),
    ),
]

# Questions no cached template answers: another aggregate, another table or another attribute.
NEAR_MISSES = [
    "What is the average total of invoices of customer C007?",
    "What is the largest invoice of customer C015?",
    "How many line items does customer C023 have?",
    "What is the issue date of invoice INV-1042?",
    "Which products are in invoice INV-1078?",
    "What is the minimum total of invoices in EUR?",
    "What is the average of invoices in USD?",
    "How many products cost more than 1000?",
    "When did customer C001 sign up?",
    "What is the segment of customer C031?",
    "How many invoices were issued before 2024-06-01?",
    "What is the name of product SW-110?",
    "What is the country of customer C038?",
    "How many customers are in the Public segment and in Spain?",
    "What is the latest invoice of customer C007?",
    "Which customer has the most invoices?",
    "What is the total quantity of line items on invoice INV-1010?",
    "What is the billing contact of invoice INV-1101?",
    "How many customers signed up after 2024-06-01?",
    "What is the list price total of category Software?",
    "How many invoices in GBP are overdue?",
    "What is the highest list price in category Hardware?",
    "How many units of SW-100 were invoiced to customer C001?",
    "What are the termination terms of customer C015?",
    "Who is the billing contact for customer C023?",
    "What is the due date of the latest invoice of customer C001?",
    "How many invoices have a total under 10000?",
    "What is the currency of invoice INV-1033?",
    "How many customers in Germany are Enterprise?",
    "Which city has the most customers?",
]


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def main() -> int:
    embedder = default_embedder()
    embedder.embed_query("warm up")
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.create(Path(tmp) / "lake")
        lake.ingest(sample_lake_path())
        schema = LakeSchema.from_contract(lake.contract)
        cache = cache_for(lake, Path(tmp) / "cache.jsonl", embed=embedder.embed_query)
        for _, values, phrasings, build in TEMPLATES:
            plan = build(values[0])
            assert validate(plan, schema) == [], (phrasings[0], validate(plan, schema))
            cache.put(read_question(phrasings[0].format(v=values[0])), plan)
        asked, kinds = [], {"exact": 0, "template": 0, "semantic": 0}
        hits_ms, misses_ms, hits, false_reuse, examples = [], [], 0, 0, []
        for tid, values, phrasings, build in TEMPLATES:
            for i in range(10):
                phrasing, value = phrasings[i % 5], values[1 + i % 5]
                asked.append((tid, phrasing.format(v=value), build(value)))
        asked += [(None, q, None) for q in NEAR_MISSES]
        for tid, question, expected in asked:
            started = time.perf_counter()
            hit = cache.get(read_question(question))
            elapsed = (time.perf_counter() - started) * 1000
            if hit is None:
                misses_ms.append(elapsed)
                if tid is not None and len(examples) < 40:
                    examples.append(f"miss: {question}")
                continue
            hits_ms.append(elapsed)
            kinds[hit.kind] += 1
            if expected is not None and hit.plan == expected:
                hits += 1
            else:
                false_reuse += 1
                examples.append(f"FALSE REUSE: {question} <- {hit.source_question}")
        lake.close()
    in_template = sum(1 for tid, _, _ in asked if tid is not None)
    result = {
        "templates": len(TEMPLATES),
        "questions": len(asked),
        "in_template_questions": in_template,
        "near_misses": len(NEAR_MISSES),
        "hit_rate": hits / in_template,
        "false_reuse": false_reuse,
        "hit_p50_ms": p50(hits_ms),
        "miss_p50_ms": p50(misses_ms),
        "hits_by_kind": kinds,
        "examples": examples,
        "command": "python benchmarks/plan_cache.py",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "plan_cache.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "plan_cache.md").write_text(markdown(result))
    print(markdown(result))
    return 0


def markdown(r: dict) -> str:
    def verdict(ok: bool) -> str:
        return "PASS" if ok else "FAIL"

    lines = [
        "# Plan cache benchmark",
        "",
        f"{r['templates']} templates over the sample lake, each cached once; {r['in_template_questions']} "
        f"paraphrased questions with new slot values, and {r['near_misses']} near misses that no cached "
        "plan answers. Reference plans are hand-written and validated, so this measures the cache alone.",
        "",
        "| figure | value | target |",
        "|---|---:|---|",
        f"| hit_rate (correct reuse / in-template questions) | {r['hit_rate']:.3f} | >= 0.9 "
        f"{verdict(r['hit_rate'] >= 0.9)} |",
        f"| false_reuse (a served plan that answers another question) | {r['false_reuse']} | == 0 "
        f"{verdict(r['false_reuse'] == 0)} |",
        f"| hit_p50_ms (lookup + instantiation) | {r['hit_p50_ms']:.2f} | <= 10 {verdict(r['hit_p50_ms'] <= 10)} |",
        f"| miss_p50_ms (lookup that finds nothing; the LLM then writes the plan) | {r['miss_p50_ms']:.2f} | |",
        "",
        f"Hits by kind: {r['hits_by_kind']}",
        "",
        "Examples:",
        "",
    ]
    lines += [f"- {e}" for e in r["examples"]] or ["- (none)"]
    lines += ["", "## Command", "", f"```\n{r['command']}\n```", "", f"Date: {r['date']}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
