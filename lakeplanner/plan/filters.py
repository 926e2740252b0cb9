"""A vector node's metadata filter: written as a SQL condition over the collection's fields, parsed
by sqlglot, and translated to a Milvus boolean expression with each `$var_n.column` replaced by the
values bound to it. Anything Milvus cannot express is refused with the construct named."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from lakeplanner.errors import LakeplannerError, UnsafeSqlError
from lakeplanner.ingest.vectors import ChunkRecord, _string_literal
from lakeplanner.plan.model import REFERENCE
from lakeplanner.policy.readonly import MAX_DEPTH, check_depth

COLLECTION_FIELDS = tuple(ChunkRecord.model_fields)
ARRAY_FIELDS = {"linked_keys"}
_PLACEHOLDER = "lp_ref_"
_COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "==",
    exp.NEQ: "!=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}
FLIPPED = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE, exp.EQ: exp.EQ, exp.NEQ: exp.NEQ}
HINT = "write the filter as =, <, >, IN, LIKE or BETWEEN on collection fields, joined by AND, OR, NOT"

# (field, reference) -> the values to compare with: the executor's bound values, resolved for document_id
Values = Callable[[str, str], Sequence[str]]


class FilterError(LakeplannerError):
    """A vector filter that does not parse or that Milvus cannot express."""


def parse_filter(text: str) -> tuple[exp.Expression, dict[str, str]]:
    """The condition, with each reference as a placeholder column; placeholder name -> reference."""
    references: dict[str, str] = {}

    def placeholder(match) -> str:
        name = f"{_PLACEHOLDER}{len(references)}"
        references[name] = match.group(0)
        return f"({name})"

    try:
        condition = sqlglot.parse_one(REFERENCE.sub(placeholder, text), read="duckdb")
        check_depth(condition)  # the translation recurses once per level
    except (ParseError, TokenError) as e:
        raise FilterError(f"the filter {text!r} does not parse: {str(e).splitlines()[0]}", hint=HINT) from e
    except (RecursionError, UnsafeSqlError) as e:
        raise FilterError(f"the filter is nested more than {MAX_DEPTH} deep", hint=HINT) from e
    return condition, references


def fields_of(condition: exp.Expression) -> list[str]:
    """The collection fields a parsed filter names (placeholders excluded)."""
    return [c.name for c in condition.find_all(exp.Column) if not c.name.startswith(_PLACEHOLDER)]


def milvus_expression(text: str, values: Values) -> str:
    condition, references = parse_filter(text)
    return _Translator(references, values).translate(condition)


def _literal(node: exp.Expression) -> str:
    if isinstance(node, exp.Literal):
        return _string_literal(node.this) if node.is_string else node.this
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return f"-{node.this.this}"
    raise FilterError(f"the filter compares with {node.sql()!r}, which is not a value", hint=HINT)


class _Translator:
    def __init__(self, references: dict[str, str], values: Values) -> None:
        self.references = references
        self.values = values

    def translate(self, node: exp.Expression) -> str:
        node = node.unnest()
        if isinstance(node, exp.And):
            return f"({self.translate(node.this)}) and ({self.translate(node.expression)})"
        if isinstance(node, exp.Or):
            return f"({self.translate(node.this)}) or ({self.translate(node.expression)})"
        if isinstance(node, exp.Not):
            return f"not ({self.translate(node.this)})"
        if type(node) in _COMPARISONS:
            return self.comparison(node)
        if isinstance(node, exp.In):
            return self.membership(node)
        if isinstance(node, exp.Like):
            return f"{self.field(node.this, array=False)} like {_literal(node.expression.unnest())}"
        if isinstance(node, exp.Between):
            field = self.field(node.this, array=False)
            return f"({field} >= {_literal(node.args['low'])}) and ({field} <= {_literal(node.args['high'])})"
        raise FilterError(f"Milvus filters cannot express {self.shown(node)!r}", hint=HINT)

    def field(self, node: exp.Expression, *, array: bool | None = None) -> str:
        node = node.unnest()
        if not self.is_field(node):
            raise FilterError(f"{self.shown(node)!r} is not a collection field", hint=HINT)
        if node.name not in COLLECTION_FIELDS:
            raise FilterError(f"collections have no metadata field {node.name!r}", hint=HINT)
        if array is False and node.name in ARRAY_FIELDS:
            raise FilterError(f"{node.name} holds a list: compare it with = or IN", hint=HINT)
        return node.name

    def reference(self, node: exp.Expression) -> str | None:
        node = node.unnest()
        return self.references.get(node.name) if isinstance(node, exp.Column) else None

    def in_list(self, field: str, items: list[str], negated: bool = False) -> str:
        listed = f"[{', '.join(items)}]"
        if field in ARRAY_FIELDS:
            expression = f"array_contains_any({field}, {listed})"
            return f"not ({expression})" if negated else expression
        return f"{field} {'not in' if negated else 'in'} {listed}"

    def shown(self, node: exp.Expression) -> str:
        """The construct as the plan wrote it (references, not placeholders)."""
        text = node.sql()
        for name, reference in self.references.items():
            text = text.replace(f"({name})", reference).replace(name, reference)
        return text

    def is_field(self, node: exp.Expression) -> bool:
        return isinstance(node, exp.Column) and not node.name.startswith(_PLACEHOLDER)

    def comparison(self, node: exp.Expression) -> str:
        kind, left, right = type(node), node.this.unnest(), node.expression.unnest()
        if not self.is_field(left):
            kind, left, right = FLIPPED[kind], right, left
        if not self.is_field(left):
            raise FilterError(f"{self.shown(node)!r} compares no collection field with a value", hint=HINT)
        field = self.field(left, array=kind in (exp.EQ, exp.NEQ))
        reference = self.reference(right)
        if reference is not None:
            if kind not in (exp.EQ, exp.NEQ):
                raise FilterError(f"{self.shown(node)!r}: compare a bound variable with = or IN", hint=HINT)
            return self.in_list(field, [_string_literal(v) for v in self.values(field, reference)], kind is exp.NEQ)
        value = _literal(right)
        if field in ARRAY_FIELDS:
            return self.in_list(field, [value], kind is exp.NEQ)
        return f"{field} {_COMPARISONS[kind]} {value}"

    def membership(self, node: exp.In) -> str:
        if node.args.get("query") or node.args.get("field") or node.args.get("unnest"):
            raise FilterError(f"Milvus filters cannot express {self.shown(node)!r}", hint=HINT)
        field = self.field(node.this, array=True)
        items: list[str] = []
        for item in node.expressions:
            reference = self.reference(item)
            if reference is not None:
                items += [_string_literal(v) for v in self.values(field, reference)]
            else:
                items.append(_literal(item.unnest()))
        return self.in_list(field, items)
