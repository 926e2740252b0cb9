"""The words of a plan step's text. A step asks a sub-question in words and names the values of
earlier steps as references (`$var_2.member_id`); this module is where that text is read: its
references, the columns it matches them against, the identifiers it names, and the clauses that
only say which documents to read."""

from __future__ import annotations

import re

LABEL = re.compile(r"^\$var_[1-9][0-9]*$")
REFERENCE = re.compile(r"\$var_([0-9]+)(?:\.([A-Za-z_][A-Za-z0-9_]*))?")
# "members.name in $var_1.answer", "exhibit_id in $var_1.linked_keys": the column (of a table, else
# of the node's own) a bound value is matched against
MATCHED = re.compile(r"(?<![$\w.])(?:([A-Za-z_]\w*)\.)?([A-Za-z_]\w*)\s+(?:in|=|is)\s+(\$var_[0-9]+\.[A-Za-z_]\w*)")
IDENTIFIER = re.compile(r"\b[a-z][a-z0-9_]*\b")
# "... in documents with document_id in $var_1.x": which documents to read, which a filter says
REFERENCE_CLAUSE = re.compile(
    r"\s*(?:(?:of|in|from|for)\s+)?(?:the\s+)?(?:documents?\s+)?"
    r"(?:(?:with|whose|where)\s+\w+\s+(?:in|=|is)\s+)?\$var_\d+(?:\.\w+)?",
    re.I,
)
COLUMN_LEAD = re.compile(r"^\w+_\w+\s+of\s+(?=\S)")  # "loan_id of the loan that ..."


def matched_columns_in(text: str) -> list[tuple[str, str, str]]:
    """(table or '', column, reference) for each reference the text matches against a column."""
    return MATCHED.findall(text)


def referenced_labels(text: str) -> set[str]:
    """The labels of the steps the text reads from ('$var_1')."""
    return {f"$var_{m.group(1)}" for m in REFERENCE.finditer(text)}


def without_references(text: str, instead: str = " ") -> str:
    return REFERENCE.sub(instead, text)


def without_reference_clauses(text: str) -> str:
    """The text without the clauses that only say which documents to read, spaces collapsed."""
    return " ".join(REFERENCE_CLAUSE.sub("", text).split())


def without_column_lead(text: str) -> str:
    """The text without a leading column name ("loan_id of the loan that was written off ...")."""
    return COLUMN_LEAD.sub("", text)


def identifiers_in(text: str, references: bool = True) -> set[str]:
    """The lower-case identifiers it names (column-like words); `references=False` leaves the
    columns of references out."""
    return set(IDENTIFIER.findall(text if references else without_references(text, "")))


def with_matched_column(text: str, column: str, reference: str, new_column: str, new_reference: str) -> str:
    """The text with "column in reference" read as "new_column in new_reference", and every other
    mention of the reference renamed."""
    compared = re.compile(rf"\b{re.escape(column)}(\s+(?:in|=|is)\s+){re.escape(reference)}\b")
    return compared.sub(rf"{new_column}\g<1>{new_reference}", text).replace(reference, new_reference)


def renamed_reference(text: str, reference: str, new_reference: str) -> str:
    return text.replace(reference, new_reference)


def normal_question(text: str) -> str:
    """Spaces collapsed, the closing mark dropped, case folded: for comparing a step with a question."""
    return " ".join(text.split()).rstrip(" ?.").casefold()


def is_clause_of(sub: str, asked: str) -> bool:
    """Whether the step's question is written inside the question it serves."""
    return normal_question(sub) in " ".join(asked.split()).casefold()


def same_wording(text: str) -> str:
    """Lower case, spaces collapsed: two steps asking this alike ask the same."""
    return " ".join(text.lower().split())
