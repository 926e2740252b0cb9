"""Plan rules applied once a plan is made or has run: a search first for a fact a named document
states that no column holds, one search with the question when no plan was found or nothing was
retrieved, the documents to search when the tables could not answer, and a sibling
search where another collection's passages answer a shown search better. A rule that needs the
lake's passages is handed `scores` (collection -> the relevance of its best passage for a text;
execute/ask.py measures it with the cross-encoder)."""

from __future__ import annotations

from collections.abc import Callable

from lakeplanner.contract.models import Contract
from lakeplanner.plan.dataops import one_search
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan
from lakeplanner.plan.own_documents import own_documents_search
from lakeplanner.question import QuestionFrame
from lakeplanner.question.coverage import asked_concepts
from lakeplanner.question.link import name_stems, names_tables
from lakeplanner.question.steps import without_reference_clauses
from lakeplanner.question.words import stem

Scores = Callable[[str, list[str]], dict[str, float]]


def fallback_search(
    plan: Plan, frame: QuestionFrame, contract: Contract, scores: Scores, anywhere: bool = False
) -> Plan | None:
    """When no valid plan was found, or the plan ran but retrieved nothing (a text question routed to
    SQL, SQL the model could not write), one search with the question, under a fresh label: of the
    lake's only collection, or, when the question says documents tell it (it names a kind of
    document, a reason, 'according to') or names no table, column or value of the lake, of the collection
    whose best passage the cross-encoder scores highest for it (of every collection when `anywhere`).
    A question about rows it names whose SQL failed is not answered from documents that merely
    mention those rows."""
    if any(n.tool == "vector" and n.question == plan.question for n in plan.nodes):
        return None
    schema = LakeSchema.from_contract(contract)
    unnamed = not frame.values and not names_tables(plan.question, schema)
    anywhere = anywhere or frame.documents_tell or len(schema.collections) == 1 or unnamed
    collections = sorted(schema.collections) if anywhere else []
    collection = best_collection(scores, plan.question, collections)
    return one_search(plan, schema, label=plan.fresh_label(), collection=collection)


def best_collection(scores: Scores, question: str, collections: list[str]) -> str | None:
    if len(collections) <= 1:
        return collections[0] if collections else None
    found = scores(question, collections)
    return max(found, key=found.__getitem__) if found else None


def searched_where_passages_answer(plan: Plan, contract: Contract, scores: Scores) -> tuple[Plan, list[str]]:
    """Each shown search that no earlier step narrows, in a collection where no passage is relevant to
    its question (the cross-encoder scores its best below 0, i.e. judges it irrelevant) while another
    collection's best is relevant: that collection is searched too, by a sibling step asking the same.
    The planner chooses collections by their names and a title or two, and a small model sends "how
    long are scans kept" to the supplier contracts when a retention policy tells it."""
    collections = sorted(LakeSchema.from_contract(contract).collections)
    if len(collections) < 2:
        return plan, []
    added, edits = [], []
    searched = {n.source for n in plan.nodes if n.tool == "vector" and n.should_expose_answer and not n.references()}
    for node in plan.nodes:
        if node.tool != "vector" or not node.should_expose_answer or node.references():
            continue
        found = scores(without_reference_clauses(node.question), collections)
        other = max((c for c in found if c != node.source), key=found.__getitem__, default=None)
        if other is None or other in searched or found.get(node.source, 0.0) >= 0.0 or found[other] <= 0.0:
            continue  # (a collection with no hits at all is the fallback search's business)
        label = plan.fresh_label(after=len(added))
        searched.add(other)
        added.append(node.model_copy(update={"label": label, "source": other}))
        edits.append(
            f"{node.label} also searched in {other} as {label} (best passage {found[other]:.1f}; "
            f"in {node.source} {found[node.source]:.1f})"
        )
    return (plan.model_copy(update={"nodes": plan.nodes + tuple(added)}), edits) if added else (plan, [])


def attribute_words(frame: QuestionFrame, schema: LakeSchema) -> list[str]:
    """The words of what the question asks for that could name a column: the unit of a quantity
    ("how many hours"), else the asked attribute's concepts that name no table (those name its rows)."""
    if frame.unit is not None:
        return [frame.unit.text.lower()]
    tables = {w for t in schema.tables for w in name_stems(t)}
    return [c for c in asked_concepts(frame) if stem(c) not in tables]


def searched_first_for_stated_facts(
    plan: Plan, frame: QuestionFrame, contract: Contract, scores: Scores
) -> tuple[Plan, list[str]]:
    """A question that names a kind of document ("under the specimen policy") and asks for something no
    column of the lake is named for, planned on tables alone: the document states it, so the search of
    the collection that answers it best runs instead of SQL that can only find some other number."""
    schema = LakeSchema.from_contract(contract)
    if frame.names_document is None or not schema.collections or any(n.tool == "vector" for n in plan.nodes):
        return plan, []
    asked = attribute_words(frame, schema)
    columns = {w for cols in schema.tables.values() for c in cols for w in name_stems(c)}
    if not asked or any(stem(w) in columns for w in asked):
        return plan, []
    search = fallback_search(plan, frame, contract, scores, anywhere=True)
    if search is None:
        return plan, []
    said = f"the question names a {frame.names_document.text} and no column holds {', '.join(asked)}"
    return search, [f"searched first: {said}"]


def documents_after_tables(
    plan: Plan, frame: QuestionFrame, contract: Contract, scores: Scores
) -> tuple[Plan | None, str]:
    """Where to search when the tables could not answer: a question that names no row of the lake
    ("how long are telematics data kept?") searches the collection that answers it best; one that
    names a row searches the documents that row links to (see own_documents_search)."""
    if not frame.values:
        return fallback_search(plan, frame, contract, scores, anywhere=True), " (documents after the tables)"
    return own_documents_search(plan, frame, contract), " (the named row's documents)"
