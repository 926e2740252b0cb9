"""The planner prompt's examples: for a lake with tables, a hop from rows to linked documents and
back; for a lake of documents only, the examples of the packs its contract switches on (reference
entries: bridge and comparison questions), else two of the same shapes over made-up things.

Examples written with the lake's own tables and keys were measured and dropped: the 1.5B model then
copied the example plans onto questions over the same tables (the logistics golden questions went
from 33 to 22 right, the first sample lake's from 9 to 8).
"""

from __future__ import annotations

from lakeplanner.contract.models import Contract, SourceKind
from lakeplanner.question.lexicon import load_pack, packs_for

COLLECTION = "{collection}"  # where a pack's examples name the collection they search

# the planner's examples when the lake holds tables: a hop from rows to linked documents, and back
MIXED_EXAMPLES = """Examples, for tables orders(order_id, customer_id, total), customers(customer_id, name, \
policy_document_id) and a collection policies linked by customers.policy_document_id:
Q: What refund window applies to order O-17?
[{"tool": "sql", "source": "customers", "question": "policy_document_id of the customer of order O-17", \
"returns": ["policy_document_id"]}, {"tool": "vector", "source": "policies", "question": "refund window in \
documents with document_id in $var_1.policy_document_id", "should_expose_answer": true, \
"answer_description": "the refund window"}]
Q: Which customer's policy allows refunds after 90 days, and how many orders did they place?
[{"tool": "vector", "source": "policies", "question": "which policy allows refunds after 90 days", \
"returns": ["document_id"]}, {"tool": "sql", "source": "customers", "question": "number of orders of the \
customer whose policy_document_id is in $var_1.document_id", "should_expose_answer": true, \
"answer_description": "the customer and its order count"}]"""

DOCUMENT_EXAMPLES = f"""Examples, for a collection {COLLECTION}:
Q: In which city is the firm that built the Ashford Bridge based?
[{{"tool": "vector", "source": "{COLLECTION}", "question": "which firm built the Ashford Bridge", "returns": \
["answer"]}}, {{"tool": "vector", "source": "{COLLECTION}", "question": "city where $var_1.answer is based", \
"should_expose_answer": true, "answer_description": "a city"}}]
Q: Are the Kestrel Tunnel and the Marlow Tunnel both longer than 5 km?
[{{"tool": "vector", "source": "{COLLECTION}", "question": "length of the Kestrel Tunnel", "should_expose_answer": \
true, "answer_description": "a length"}}, {{"tool": "vector", "source": "{COLLECTION}", "question": "length of the \
Marlow Tunnel", "should_expose_answer": true, "answer_description": "a length"}}]"""


def document_examples(contract: Contract) -> str:
    """The examples of the first pack the lake switches on that has some, else the made-up ones."""
    packed = [load_pack(name).get("document_plan_examples") for name in packs_for(contract)]
    examples = next((text for text in packed if text), DOCUMENT_EXAMPLES)
    collections = [s.name for s in contract.sources if s.kind is SourceKind.documents]
    return examples.replace(COLLECTION, collections[0] if collections else "documents")


def plan_examples(contract: Contract) -> str:
    """The examples every planner prompt of the lake shows (whatever tables a question's prompt lists,
    so that they stay in the prefix the lake prepares)."""
    if any(s.kind is SourceKind.table for s in contract.sources):
        return MIXED_EXAMPLES
    return document_examples(contract)
