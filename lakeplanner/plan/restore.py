"""Restore passes: what the question asks that a valid draft dropped, put back. Each pass is a pure
`(plan, frame, known, schema) -> (plan, edits)`; `RESTORES` runs them in order over a valid plan."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lakeplanner.contract.models import FieldType
from lakeplanner.plan.dataops import LINKED_KEYS, asked_whole, relabel
from lakeplanner.plan.lake_schema import VECTOR_ANSWER, LakeSchema
from lakeplanner.plan.model import Plan, PlanNode, Tool
from lakeplanner.plan.validate import validate
from lakeplanner.question import Operation, QuestionFrame
from lakeplanner.question.coverage import spellings
from lakeplanner.question.known import GENERIC_PARTS, KnownValues
from lakeplanner.question.link import about, name_stems, names, names_tables, schema_words
from lakeplanner.question.read import read_step
from lakeplanner.question.steps import identifiers_in
from lakeplanner.question.words import (
    hyphenated_tokens,
    identifier_words,
    mention_pattern,
    singular,
    stem,
    tokens,
    word_set,
)

Restore = Callable[[Plan, QuestionFrame, KnownValues, LakeSchema], tuple[Plan, list[str]]]


def plan_from_question(frame: QuestionFrame, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]] | None:
    """The plan the question alone determines, when it validates: a document named by id and a column
    of the rows it cites is that document's search and a read of those rows by key, whatever a draft
    would say (a draft is then only a chance to get it wrong, at the cost of a planning call)."""
    plan, edits = restore_cited_rows(Plan(question=frame.text, frame=frame), frame, known, schema)
    return (plan, edits) if edits and not validate(plan, schema) else None


def restore_named_anchor(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """Searches of which none names any of the things the question names ("Who was the writer of These
    Boots Are Made for Walkin' and who died in 2007?" planned as "who died in 2007") search for
    something else: the question is searched as it is instead, in the collection the last step read.
    Numbers are left out of the names compared (a step that kept only the years kept nothing)."""
    named = {n for n in names(plan.question) if not any(c.isdigit() for c in n)}
    if not named or not plan.nodes or any(n.tool != Tool.vector for n in plan.nodes):
        return plan, []
    kept = set().union(*(names(f"- {n.question}") for n in plan.nodes))
    if named & kept or plan.nodes[-1].source not in schema.collections:
        return plan, []
    source = plan.nodes[-1].source
    return asked_whole(plan, Tool.vector, source), [
        f"$var_1: the question searched as it is in {source} (no step named any of {', '.join(sorted(named))})"
    ]


def restore_last_hop(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """A question that finds what it asks through a thing it describes ("Which prize was
    won by the architect who designed the Halden Museum ...?", "The hall where ... sang can seat how many
    people?"), whose one shown step is a search naming none of the words of what is asked, answers
    something else. A first search answered the bridge (the architect, the hall): the lost hop is put
    back, the question itself searched with the bridge's answer, shown in its place. A hop from
    earlier answers asked another relation ("when $var_1.answer opened" for "stands in what
    city"): it asks the question itself with those answers."""
    read = plan.read_labels()
    shown = [n for n in plan.nodes if n.should_expose_answer and n.label not in read]
    if frame.asks is None or len(shown) != 1:
        return plan, []
    [step] = shown
    asked_late = not frame.opens_with_question_word  # "... is based in what city?"
    if step.tool != Tool.vector or step.filter or step.source not in schema.collections:
        return plan, []
    ignored = word_set("stopwords") | word_set("filler")
    asked = {stem(w) for w in tokens(frame.asks.text) if w not in ignored and not w.isdigit()}
    if not asked or asked & QuestionFrame(text=step.question).stems:
        return plan, []
    searches = {n.label for n in plan.nodes if n.tool == Tool.vector}
    references = list(dict.fromkeys(f"{r.label}.{r.column}" for r in step.references()))
    from_answers = all(r.column == VECTOR_ANSWER and r.label in searches for r in step.references())
    if not references and frame.relative is not None:
        reference = f"{step.label}.{VECTOR_ANSWER}"
        hop = PlanNode(
            label=plan.fresh_label(),
            tool=Tool.vector.value,
            source=step.source,
            question=f"{plan.question} ({reference})",
            should_expose_answer=True,
            answer_description=frame.asks.text,
        )
        restored = plan.replace(step.label, should_expose_answer=False)
        restored = restored.model_copy(update={"nodes": (*restored.nodes, hop)})
        edit = f"{hop.label}: the question searched with {reference} (the one step shown finds what the question "
        edit += f"describes, not the {frame.asks.text} it asks)"
    elif references and from_answers and (frame.relative is not None or asked_late):
        asked_with = f"{plan.question} ({', '.join(references)})"
        restored = plan.replace(step.label, question=asked_with, answer_description=frame.asks.text)
        edit = f"{step.label}: asks the question with {', '.join(references)} ('{step.question}' asks "
        edit += f"another relation than the {frame.asks.text} the question asks)"
    else:
        return plan, []
    return (plan, []) if validate(restored, schema) else (restored, [edit])


def restore_asked_entity(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """The entity a "which X" question asks, read only by an unshown step the shown ones read, is
    shown too: "which member ..., and how many loans ..." (the search that found the member,
    beside the count), or "which brewery bottled the largest total volume" (the step ranking
    breweries, beside the total read from it). Without a second ask, only when no shown step reads
    the entity's table and the unshown one does."""
    if frame.entity is None:
        return plan, []
    shown = [n for n in plan.nodes if n.should_expose_answer]
    read = {r.label for n in shown for r in n.references()}
    wanted = name_stems(frame.entity)
    readers = [
        n for n in plan.nodes if not n.should_expose_answer and n.label in read and wanted & name_stems(n.question)
    ]
    if frame.second_ask is None:
        if any(wanted & name_stems(n.source) for n in shown):
            return plan, []
        readers = [n for n in readers if wanted & name_stems(n.source)]
    if not shown or len(readers) != 1:
        return plan, []
    label = readers[0].label
    return plan.replace(label, should_expose_answer=True), [
        f"{label}: shown too, it reads the {frame.entity} the question asks for"
    ]


def restore_swapped_values(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """A step that names one value of a column where the question names another of the same column
    ("status 'cancelled'" for "the number of missed appointments") asks about other rows: it names the
    question's value instead. Only when each names exactly one value of that column."""
    asked = values_by_column(plan.question, known)
    edits = []
    for node in plan.nodes:
        for column, said in values_by_column(node.question, known).items():
            wanted = asked.get(column, set())
            if len(said) != 1 or len(wanted) != 1 or said == wanted:
                continue
            (old,), (new,) = said, wanted
            if frame.says(old):
                continue
            pattern = mention_pattern(old)
            update = {k: pattern.sub(new, v) for k, v in (("question", node.question), ("sql", node.sql)) if v}
            plan = plan.replace(node.label, **update)
            edits.append(f"{node.label}: {column} '{old}' -> '{new}', the value the question names")
    return plan, edits


def values_by_column(text: str, known: KnownValues) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for start, end, column in known.find(text):
        out.setdefault(column, set()).add(text[start:end])
    return out


def restore_linked_search(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """The question names a kind of document linked to a table ("the charter of the school that
    opened earliest"), yet no step searches documents: the rows it asks for only pick the
    document. The sql step on a table holding the link (or joining one) returns the link column, the
    collection named by its own name or the link column's ("charter"), and a search of
    the linked collection, filtered to those documents, answers; steps nobody then reads are dropped."""
    if frame.names_document is None or frame.operation is not Operation.lookup or frame.attribute is None:
        return plan, []
    if any(n.tool != Tool.sql for n in plan.nodes):
        return plan, []
    wanted = name_stems(frame.names_document.text)
    for node in (n for n in plan.nodes if not n.references()):
        if asked_column(frame.attribute.text, schema.reachable_columns(node.source)) is not None:
            continue  # a column holds what is asked: the documents only name the row
        for collection in sorted(schema.collections):
            columns = sorted(schema.link_columns(node.source, collection))
            named_by = (*schema.collection_names.get(collection, {collection}), *columns)
            names = {w for n in named_by for w in name_stems(n)}
            if len(columns) == 1 and wanted & names:
                return searched_through(plan, node, collection, columns[0])
    return plan, []


def searched_through(plan: Plan, node: PlanNode, collection: str, column: str) -> tuple[Plan, list[str]]:
    picker = node.model_copy(
        update={"returns": tuple(dict.fromkeys((*node.returns, column))), "should_expose_answer": False}
    )
    search = PlanNode(
        question=plan.question,
        tool=Tool.vector,
        label="$var_0",
        source=collection,
        filter=f"document_id IN {node.label}.{column}",
        should_expose_answer=True,
        answer_description=plan.question,
    )
    nodes = relabel((picker, search))
    return plan.model_copy(update={"nodes": nodes}), [
        f"{nodes[1].label}: searches {collection} through the {column} of the rows {node.label} picks "
        f"(the question names its documents); its other steps dropped"
    ]


def restore_document_fact(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """The question names a kind of document ("under the driving hours policy") and no table, row or
    column of the lake, yet every step reads a table: what it asks is a fact of those documents. One
    search of the collection the question names asks it."""
    if frame.names_document is None or any(n.tool != Tool.sql for n in plan.nodes):
        return plan, []
    if known.find(frame.without(frame.names_document.text)):
        return plan, []
    if names_tables(plan.question, schema):
        return plan, []
    wanted = name_stems(plan.question) - {"document"}
    scores = {
        c: len(wanted & {w for n in schema.collection_names.get(c, {c}) for w in name_stems(n)})
        for c in sorted(schema.collections)
    }
    collection = max(scores, key=scores.__getitem__, default=None)
    if collection is None or not scores[collection]:
        return plan, []
    return asked_whole(plan, Tool.vector, collection), [
        f"$var_1: searches {collection}: the question asks a fact of the documents it names, not of a table"
    ]


def restore_cited_rows(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """The question names one document by id and asks a column of a row it cites ("which ward admitted
    the patient described in visit note VN-007"): that document is searched, and the table it
    cites (the one the question names) is read by the keys it cites. Only when no step reads them and
    the question asks the table something besides the document (a column of it or of a joined table)."""
    documents = [
        (value, where.split(".", 1)[0])
        for value, where in known.named_in(plan.question)
        if where.endswith(".document_id") and where.split(".", 1)[0] in schema.collections
    ]
    if len(documents) != 1 or any(ref.column in LINKED_KEYS for n in plan.nodes for ref in n.references()):
        return plan, []
    [(document, collection)] = documents
    asked = about(frame.without(document))
    cited = [
        t
        for (t, c) in sorted(schema.citations)
        if c == collection and len(schema.identifiers.get(t, ())) == 1 and name_stems(t) & asked
    ]
    if len(cited) != 1:
        return plan, []
    table = cited[0]
    columns = {stem(p) for c in schema.reachable_columns(table) for p in c.split("_") if p not in GENERIC_PARTS}
    if not (asked - name_stems(table) - name_stems(collection)) & columns:
        return plan, []
    key = schema.identifiers[table][0]
    search = PlanNode(
        question=plan.question,
        tool=Tool.vector,
        label="$var_1",
        source=collection,
        filter=f"document_id = '{document}'",
        returns=("linked_keys",),
    )
    reader = PlanNode(
        question=f"{plan.question} ({key} in $var_1.linked_keys)",
        tool=Tool.sql,
        label="$var_2",
        source=table,
        should_expose_answer=True,
        answer_description=plan.question,
    )
    plan = plan.model_copy(update={"nodes": (search, reader)})
    return plan, [f"$var_1, $var_2: read the {table} rows {document} cites, by {key}"]


def restore_asked_column(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """A lookup whose one answering sql step does not return the column the question asks for ("the
    emergency contact" for "the emergency contact's e-mail address"): that step returns it too."""
    if frame.operation is not Operation.lookup or frame.asked_attribute is None:
        return plan, []
    exposed = [n for n in plan.nodes if n.should_expose_answer]
    if len(exposed) != 1 or exposed[0].tool != Tool.sql or exposed[0].sql:
        return plan, []
    node = exposed[0]
    column = asked_column(frame.attribute.text, schema.reachable_columns(node.source))
    if column is None or column in node.returns or column in identifiers_in(node.question):
        return plan, []
    return plan.replace(node.label, returns=(*node.returns, column)), [
        f"{node.label}: also returns {column}, the attribute the question asks for"
    ]


def restore_elapsed_moments(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """A time asked in a unit ("how many hours did batch X take from mashing to bottling") whose
    one answering sql step reads one row: it returns the two date or timestamp columns the question
    names (mashed_at, bottled_at), between which the answer computes the time."""
    exposed = [n for n in plan.nodes if n.should_expose_answer]
    if frame.seconds_per_unit is None or len(exposed) != 1 or exposed[0].tool != Tool.sql or exposed[0].sql:
        return plan, []
    node = exposed[0]
    words = frame.word_tokens
    moments = tuple(
        column
        for column, kind in schema.reachable_columns(node.source).items()
        if kind in (FieldType.date, FieldType.timestamp)
        and any(shares_root(p, w) for p in column.split("_") for w in words)
    )
    if len(moments) != 2 or set(moments) <= set(node.returns):
        return plan, []
    return plan.replace(node.label, returns=moments), [
        f"{node.label}: returns {' and '.join(moments)}, the moments the time asked is between"
    ]


def shares_root(a: str, b: str, least: int = 5) -> bool:
    """Two words of one root by their common start ("dispatch" and "dispatched", "delivery" and
    "delivered"): at least `least` letters, or all of the shorter when it is 4 letters or more."""
    a, b = a.lower(), b.lower()
    shorter = min(len(a), len(b))
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), shorter)
    return shorter >= 4 and common >= min(least, shorter)


def asked_column(attribute: str, columns: Iterable[str]) -> str | None:
    """The column whose name holds the word nearest the attribute's head (its last word), then the
    most of its words: emergency_email for "the emergency contact's e-mail address". None on a tie."""
    words = [spellings(w) for w in hyphenated_tokens(attribute.lower().replace("'s", ""))]
    scores: dict[str, tuple[int, int]] = {}
    for column in columns:
        parts = set(map(singular, identifier_words(column)))
        matched = [i for i, forms in enumerate(words) if forms & parts]
        if matched:
            scores[column] = (max(matched), len(matched))
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def restore_table_arithmetic(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """A change, average, ratio or share of a row the question names ("the change in visits for
    the north wing", a labelled row of one table) is arithmetic over that table's numbers; a plan that only
    searches documents would leave it to a passage that happens to state it. Its exposed search steps
    that read no earlier step read the table with sql. Not when it asks why, or what a memo says."""
    asked = plan.question
    if not frame.computed or frame.documents_tell or any(n.tool != Tool.vector for n in plan.nodes):
        return plan, []
    tables = {where.split(".", 1)[0] for _, _, where in known.find(asked)} & set(schema.tables)
    if len(tables) != 1:
        return plan, []
    table = tables.pop()
    edits = []
    for node in plan.nodes:
        if node.should_expose_answer and not node.references():
            plan = plan.replace(node.label, tool=Tool.sql, source=table, filter=None, sql=None)
            edits.append(f"{node.label}: the arithmetic is over a row of {table}; read it with sql")
    return plan, edits


def restore_count(plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """The question asks how many rows of a table ("how many loans has that member taken out")
    and no step counts: the last exposed sql step that reads or joins that table asks it too."""
    asked = frame.counted
    if asked is None or any(counts(frame, n) for n in plan.nodes):
        return plan, []
    counted = next((t for t in schema.tables if name_stems(t) == {stem(frame.counted_noun)}), None)
    readers = [
        n
        for n in plan.nodes
        if n.tool == Tool.sql and n.should_expose_answer and counted in schema.sql_tables(n.source)
    ]
    if counted is None or not readers:
        return plan, []
    node = next((n for n in readers if n.source == counted), readers[-1])
    clause = frame.rest_of_clause(asked)
    return plan.replace(node.label, question=f"{node.question}, and {clause}"), [
        f"{node.label}: also asks '{clause}', which no step counted"
    ]


def counts(frame: QuestionFrame, node: PlanNode) -> bool:
    return read_step(frame, node.question).operation is Operation.count or "count(" in (node.sql or "").lower()


def document_clause(frame: QuestionFrame) -> str | None:
    """The sentence or clause of the question that says documents tell a part of it ("According to
    the enrolment memo, which student ...", "One loan was written off because ...", "The Q4 memo
    puts one supplier on notice. How many ..."), asked as a question when it states that one thing
    is meant ("The Q4 memo puts which supplier on notice?"): the search must name it."""
    told = frame.document or frame.reason or frame.names_document
    if told is None:
        return None
    if told is frame.names_document and len(frame.clauses) == 1:
        return None  # a kind of document named in the one clause asked: a fact of it (restore_document_fact)
    return frame.asked(frame.clause_of(told))


def document_collection(clause: str, table: str, schema: LakeSchema) -> str | None:
    """The collection the clause names by its name or its files' names ("enrolment memo" for
    memo-enrolment-2024Q3.txt, "loan" for documents_loans), else one linked to `table` or its
    joins; None when neither: a lake whose documents are not about its rows has nothing to search."""
    wanted = name_stems(clause) - {"document"}
    scores = {
        c: len(wanted & {w for n in schema.collection_names.get(c, {c}) for w in name_stems(n)})
        for c in sorted(schema.collections)
    }
    best = max(scores, key=scores.__getitem__, default=None)
    if best is not None and scores[best]:
        return best
    return schema.linked_collection(table)


def restore_document_start(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """The question says documents tell a part of it (a memo, a dispute, a reason), yet the step about
    that part reads a table from nothing and would guess it ("patient_id of the patient who agreed to
    a care plan"). That part is searched first, with the question's own clause, and the step reads
    the search: the documents it found through their link column, else the name it read in its label
    column."""
    clause = document_clause(frame)
    if clause is None:
        return plan, []
    told = about(clause) - schema_words(schema)
    roots = [n for n in plan.nodes if not n.references()]
    guessing = next((n for n in roots if n.tool == Tool.sql and not n.sql and about(n.question) & told), None)
    if guessing is None:
        return plan, []
    collection = document_collection(clause, guessing.source, schema)
    if collection is None:
        return plan, []
    found = next(
        (n for n in roots if n.tool == Tool.vector and n.source == collection and about(n.question) & told), None
    )
    start = found.label if found is not None else "$var_0"  # relabel numbers it $var_1, its readers too
    search = PlanNode(question=clause, tool=Tool.vector.value, label=start, source=collection)
    if found is not None:
        search = found.model_copy(update={"question": clause})
    holders = sorted(t for t in schema.sql_tables(guessing.source) if (t, collection) in schema.document_links)
    if holders:
        column = sorted(schema.document_links[(holders[0], collection)])[0]
        binding = f"{holders[0]}.{column} in {start}.document_id"
        search = search.model_copy(update={"returns": tuple(dict.fromkeys((*search.returns, "document_id")))})
    else:
        binding = f"{label_column(guessing.source, schema) or 'named'} in {start}.answer"
    reader = guessing.model_copy(update={"question": f"{guessing.question} ({binding})"})
    nodes = (search, *(reader if n is guessing else n for n in plan.nodes if n is not found))
    restored = plan.model_copy(update={"nodes": relabel(nodes)})
    if validate(restored, schema):
        return plan, []
    return restored, [
        f"$var_1: searches {collection} for '{clause}' first (only documents tell it); "
        f"the step that guessed it reads that search"
    ]


def label_column(table: str, schema: LakeSchema) -> str | None:
    """The column that names a row of `table` in words (the contract's label): what a document calls
    the row by."""
    return schema.labels.get(table)


def restore_ranking(plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """A ranking question whose sql steps lost the ranking: one step that dropped it ("total volume of
    all batches" for "which beer sold the largest total volume"), or independent steps that
    split it (the totals in one, "the beer with the highest total" in another, neither reading the
    other), answers another question. One step on a table that joins all theirs asks the question.
    Not when documents tell part of it (the earliest tenant's lease: the ranking picks a row only)."""
    if not frame.superlative or frame.documents_tell:
        return plan, []
    if any(n.tool != Tool.sql or n.references() or n.sql for n in plan.nodes):
        return plan, []
    if len(plan.nodes) == 1 and read_step(frame, plan.nodes[0].question).superlative:
        return plan, []
    sources = {n.source for n in plan.nodes}
    node = next((n for n in plan.nodes if sources <= set(schema.sql_tables(n.source))), None)
    if node is None:
        return plan, []
    merged = node.model_copy(update={"question": plan.question, "should_expose_answer": True})
    merged = merged.model_copy(update={"answer_description": node.answer_description or plan.question})
    dropped = [n.label for n in plan.nodes if n is not node]
    plan = plan.model_copy(update={"nodes": (merged,)})
    return plan, [
        f"{node.label}: asks the question, its ranking was lost"
        + (f" (split over {', '.join(dropped)})" if dropped else "")
    ]


def restore_periods(plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema) -> tuple[Plan, list[str]]:
    """A change or percentage change between two named years ("how did total tuition fees change
    between 2023 and 2024") whose sql steps name neither year has lost its periods: the steps answer
    another question. One step on a table that joins all theirs asks the question; the SQL node then
    reads the measure per year (`sql.period_aggregate_statement`) and the change is computed."""
    if frame.operation not in (Operation.change, Operation.percent_change) or len(frame.years) != 2:
        return plan, []
    if any(n.tool != Tool.sql or n.references() for n in plan.nodes):
        return plan, []
    if any(str(year) in f"{n.question} {n.sql or ''}" for n in plan.nodes for year in frame.years):
        return plan, []
    sources = {n.source for n in plan.nodes}
    node = next((n for n in plan.nodes if sources <= set(schema.sql_tables(n.source))), None)
    if node is None:
        return plan, []
    return asked_whole(plan, Tool.sql, node.source), [
        f"$var_1: asks the question on {node.source}, no step read the years it compares"
    ]


def restore_named_ids(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """An identifier the question names (LN-1078) that no step names was lost by the planner ("the
    policy of the member" for "the policy of loan LN-1078's member"), and the SQL would
    guess the row. It is added to the first sql step that reads its table, else to the first that
    joins to it. Only values of a one-column key count: a category ('open', 'Total') or a label
    ('December 31, 2019') may rightly be reworded by a step."""
    keyed = {columns[0]: table for table, columns in schema.identifiers.items() if len(columns) == 1}
    edits: list[str] = []
    for value, where in known.named_in(plan.question):
        column = where.split(".", 1)[1]
        table = keyed.get(column)  # the table the value identifies a row of (loans for loan_id)
        written = " ".join(t for n in plan.nodes for t in (n.question, n.sql, n.filter) if t).casefold()
        if table is None or value.casefold() in written:
            continue
        readers = [n for n in plan.nodes if n.tool == Tool.sql and table in schema.sql_tables(n.source)]
        node = next((n for n in readers if n.source == table), readers[0] if readers else None)
        if node is None:
            continue
        plan = plan.replace(node.label, question=f"{node.question} ({column} {value})")
        edits.append(f"{node.label}: names {column} {value}, which the question names and no step did")
    return plan, edits


RESTORES: tuple[Restore, ...] = (
    restore_named_ids,
    restore_swapped_values,
    restore_ranking,
    restore_periods,
    restore_document_start,
    restore_count,
    restore_table_arithmetic,
    restore_asked_column,
    restore_elapsed_moments,
    restore_document_fact,
    restore_linked_search,
    restore_asked_entity,
    restore_named_anchor,
    restore_last_hop,
)


def restore_lost_parts(
    plan: Plan, frame: QuestionFrame, known: KnownValues, schema: LakeSchema
) -> tuple[Plan, list[str]]:
    """What the question asks that the planner's steps dropped, put back: the ids it names, the
    ranking of a one-step plan, a part only documents tell (searched first), a count, ... (`RESTORES`)."""
    plan, edits = plan.framed(frame), []  # its validations read step frames
    for restore in RESTORES:
        plan, restored = restore(plan, frame, known, schema)
        edits += restored
    return plan.framed(frame), edits
