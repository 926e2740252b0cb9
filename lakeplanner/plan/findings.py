"""The findings of plan validation: a code per rule (S structural, M semantic, P policy) and the
finding a rule yields, with the offending name for the Fixer."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Code(StrEnum):
    missing_field = "S001"
    unknown_tool = "S002"
    bad_label = "S003"
    duplicate_label = "S004"
    no_exposed_node = "S005"
    missing_answer_description = "S006"
    dangling_reference = "S007"
    forward_reference = "S008"
    unknown_reference_column = "S009"
    cycle = "S010"
    empty_plan = "S011"
    graph_without_input = "S012"
    duplicate_node = "S013"
    unused_node = "S014"
    comparison_step = "S015"
    unknown_source = "M001"
    tool_source_mismatch = "M002"
    sql_parse_error = "M003"
    sql_not_select = "M004"
    unknown_table = "M005"
    unknown_column = "M006"
    join_type_mismatch = "M007"
    aggregate_type_mismatch = "M008"
    unknown_filter_field = "M009"
    graph_without_link = "M010"
    unknown_return_column = "M011"
    unlinked_reference = "M013"
    prose_from_table = "M014"
    unsupported_filter = "M015"
    table_column_in_search = "M016"
    column_of_joined_table = "M017"
    sql_unsafe = "M018"
    denied_source = "P001"


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: Code
    node: str | None
    message: str
    subject: str | None = None  # the offending name (column, table, label), for the Fixer
