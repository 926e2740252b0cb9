"""Vector filters: a SQL condition over collection fields -> a Milvus expression (golden cases)."""

import pytest

from lakeplanner.plan.filters import FilterError, milvus_expression

BOUND = {"$var_1.contract_document_id": ["CTR-C001", 'say "hi"'], "$var_2.customer_id": ["C001"]}


def values(field, reference):
    return BOUND.get(reference, [])


@pytest.mark.parametrize(
    ("written", "milvus"),
    [
        ("document_id IN $var_1.contract_document_id", 'document_id in ["CTR-C001", "say \\"hi\\""]'),
        ("document_id = $var_1.contract_document_id", 'document_id in ["CTR-C001", "say \\"hi\\""]'),
        ("document_id != $var_1.contract_document_id", 'document_id not in ["CTR-C001", "say \\"hi\\""]'),
        ("title LIKE 'Q3%' AND position >= 2", '(title like "Q3%") and (position >= 2)'),
        ("2 < position", "position > 2"),
        ("position BETWEEN 1 AND 3", "(position >= 1) and (position <= 3)"),
        ("source_file NOT IN ('a.md', 'b.md')", 'not (source_file in ["a.md", "b.md"])'),
        ("NOT (heading = 'Terms' OR heading = 'Fees')", 'not ((heading == "Terms") or (heading == "Fees"))'),
        ("linked_keys = 'C001'", 'array_contains_any(linked_keys, ["C001"])'),
        ("linked_keys IN ($var_2.customer_id, 'C002')", 'array_contains_any(linked_keys, ["C001", "C002"])'),
        ("start >= -1", "start >= -1"),
    ],
)
def test_a_filter_becomes_the_milvus_expression(written, milvus):
    assert milvus_expression(written, values) == milvus


@pytest.mark.parametrize(
    ("written", "named"),
    [
        ("title IS NULL", "cannot express 'title IS NULL'"),
        ("position > $var_1.contract_document_id", "compare a bound variable with = or IN"),
        ("title = heading", "'heading', which is not a value"),
        ("lower(title) = 'x'", "compares no collection field"),
        ("linked_keys LIKE 'C%'", "linked_keys holds a list"),
        ("customer = 'C001'", "no metadata field 'customer'"),
        ("title = ", "does not parse"),
        ("title = 'Terms (cut off", "does not parse"),
    ],
)
def test_what_milvus_cannot_express_is_refused_with_the_construct_named(written, named):
    with pytest.raises(FilterError, match=named) as raised:
        milvus_expression(written, values)
    assert "AND, OR, NOT" in raised.value.hint
