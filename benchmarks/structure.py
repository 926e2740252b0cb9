"""Code structure of the `lakeplanner/` package, measured on its syntax trees (issue 50, "How to measure").

    python benchmarks/structure.py              # writes results/structure.md and .json, prints a summary
    python benchmarks/structure.py -v           # also prints every item behind every figure
    python benchmarks/structure.py --root DIR   # another checkout (DIR holds lakeplanner/)

Standard library only; a second or two. Code constructs are found with `ast`, never with a regex
over code; regexes are applied only to the contents of string literals (metric 6) and to regex pattern
strings (metric 3). The working tree is measured, as it is (uncommitted edits included).

1. question_text_readers_outside_question (target <= 3): functions outside lakeplanner/question/ that READ
   question or step text other than to quote it, each named path:Class.func (nested: path:outer.inner;
   code outside functions: path:<module> or path:Class).
   Question text is: a name in QUESTION_NAMES (a parameter, local or loop variable: question, asked,
   step_question, ...); any attribute `.question` (plan.question, node.question, told.question);
   `frame.text` or `<anything>.frame.text`; `.text` of a name in QUESTION_NAMES (asked.text); `x or y` when
   either side is question text; and a local name assigned directly from question text (`q = plan.question`,
   `q = node.question or ""`, walrus included; names of an enclosing function are seen by nested ones).
   A READ is question text that is:
     - the object of a string method in STRING_METHODS (`question.lower()`, `(q or "").split()`);
     - an argument of a regex function (`re.search(p, question)`) or of a compiled pattern's method
       (`WORD.findall(question)`, where WORD is a name assigned from `re.compile`, at module level, in the
       function, or imported from another lakeplanner module);
     - an argument of a word-reading helper in WORD_READERS (`tokens(question)`, `stem(...)`);
     - the container on the right of `in` / `not in` (`"total" in question`);
     - subscripted or sliced (`question[:5]`).
   Anything else is QUOTING and not counted: f-strings, `%`, `.format`, `+`, passing it as-is to any other
   call (read_question and read_frame included: metric 2 counts those), returning, assigning, storing,
   comparing with `==`. Every such function is listed with its read sites; a read through a pattern that
   metric 3 excludes as naming plan variables (`REFERENCE.sub("", node.question)`) is marked [$var pattern].
   An extra, untargeted list, question_text_handed_to_helpers, names call sites that pass question text
   as-is to a function defined in lakeplanner outside lakeplanner/question/ (a reader may hide there).
2. read_question_calls_outside_question (target <= 1): calls of `read_question` / `read_frame` (by name or
   as an attribute) outside lakeplanner/question/, each named path:line:function.
3. word_regexes_outside_question (target 0): regex patterns given to `re.compile` or a regex function
   (`re.search`, `re.sub`, ...) outside lakeplanner/question/ that match words of natural-language text.
   The pattern is evaluated from literals: string constants, f-strings, `+`, module-level string
   constants, `sep.join(<tuple/list of constants>)`, `re.escape(<constant>)`; any other part is unknown
   and shown as {?}. A pattern with no known part at all is listed as unjudged. Over the parsed pattern
   (the stdlib's own regex parser) and its text, a pattern matches words when any of:
     (a) letter class repeated: `\\w`, `[a-z]`, `[A-Za-z]` (any non-negated class holding a letter range or
         `\\w`) under a quantifier allowing 2 or more;
     (b) literal word: a run of 3+ ASCII letters in the pattern text, escapes, classes and group names
         left out (`\\bfrom\\b`, `(?:vs|versus)`);
     (c) word boundary: `\\b`, or a lookaround over a class holding `\\w`, in a pattern that also matches a
         letter or holds an unknown part (`(?<![\\w-]){?}(?![\\w-])`).
   Excluded, as patterns of code or identifiers: a pattern naming a plan variable (`$var` in its text, or
   a class holding both `$` and `\\w`, as `(?<![\\w$.])` does), a markdown code fence, or holding an
   identifier-segment anchor such as `(^|_)` / `(?:_|$)` (column names). Every pattern found is printed
   with path:line, its function, the text and the rule. Also excluded, each named with what it reads in
   LAKE_DATA_PATTERNS: patterns that run over lake data (cells, document sentences), not question text.
4. modules_over_600_lines (no target in the issue): modules of lakeplanner/ with more than 600 lines.
5. import_cycles (target 0): the import graph among lakeplanner modules from `import` and `from ... import`
   (relative imports resolved; `from lakeplanner.x import name` is an edge to lakeplanner.x.name when that
   is a module, else to lakeplanner.x; a package's `__init__.py` is the package's module). Each edge is
   marked module-level, function-level (inside a def) or type-checking (under
   `if TYPE_CHECKING:`, left out of cycles: it never runs). A package's `__init__` importing its own
   submodules (re-exporting them) is not an edge of the cycle graph by itself; instead an import of the
   package by a module X outside it is also an edge from X to each submodule the package re-exports
   (marked `via` the package), so a cycle through a re-export is still found. From inside the package
   (`pkg.a` importing `pkg`, or any module doing `import lakeplanner`) the package's `__init__` has
   already run before the importer, so that import is an edge to the package module only.
   The implicit import of parent packages is not an edge. Strongly connected components of more than one
   module (Tarjan) are the cycles: each is listed with its modules, its edges, one shortest cycle through
   it, and whether any edge is function-level. package_cycles does the same over packages
   (lakeplanner.execute, lakeplanner.plan, lakeplanner.lake, ...: a module's first two name parts).
6. benchmark_words_outside_packs (target 0): whole-word, case-insensitive occurrences of BENCHMARK_WORDS
   (TAT-QA/finance words, HotpotQA-shaped words, both sample lakes' table names and nouns) inside string
   literals and docstrings of lakeplanner/**/*.py, lakeplanner/question/packs/ and the sample lake folders
   left out; identifiers are not read. A word matches with a plural -s/-es; a space in a listed phrase
   matches spaces, `_` or `-` (line item, line_items); letters and digits bound a word, so `customer_id`
   holds `customer`. Each occurrence is path:line:word; docstring_benchmark_citations is the subset in
   docstrings. AMBIGUOUS_WORDS are counted apart, untargeted: "contract" (the sample lakes' documents, and
   lakeplanner's own data contract), "actor" (HotpotQA's, and Ray's actors), "warehouse" (the logistics
   lake's, and Iceberg's folder of table files) and "line item" (TAT-QA's, and the report-grid ingest's
   row-label column).
"""

from __future__ import annotations

import argparse
import ast
import functools
import html
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

try:
    from re import _parser as regex_parser  # Python 3.11+
except ImportError:  # pragma: no cover - Python 3.10 and older
    import sre_parse as regex_parser  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "lakeplanner"
QUESTION_DIR = "lakeplanner/question/"
WORDS_SKIPPED_DIRS = ("lakeplanner/question/packs/", "lakeplanner/sample_lake/", "lakeplanner/sample_lake_logistics/")
MAX_MODULE_LINES = 600

# --- metric 1: what question text is, and what reads it -------------------------------------------------
QUESTION_NAMES = frozenset(
    {"question", "asked", "step_question", "question_text", "text_of_question", "asked_text", "step_text"}
)
STRING_METHODS = frozenset(
    {
        "lower", "upper", "casefold", "title", "capitalize", "swapcase",
        "split", "rsplit", "splitlines", "partition", "rpartition",
        "find", "rfind", "index", "rindex", "count", "startswith", "endswith",
        "replace", "translate", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix",
        "isupper", "islower", "istitle", "isalpha", "isalnum", "isdigit", "isdecimal", "isnumeric", "isspace",
    }
)  # fmt: skip
REGEX_FUNCTIONS = frozenset({"search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"})
WORD_READERS = frozenset(
    {"tokens", "content_words", "content_sequence", "stem", "word_set", "unit_stem", "words_of", "words"}
)
QUESTION_READERS = frozenset({"read_question", "read_frame"})

# --- metric 3: patterns of code, not of words --------------------------------------------------------------
IDENTIFIER_ANCHORS = ("(^|_)", "(?:^|_)", "(_|$)", "(?:_|$)", "($|_)", "(?:$|_)", "(_|^)", "(?:_|^)")
UNKNOWN = "\x00"  # stands for a part of a pattern that is not a literal
PLAN_VARIABLE = "plan variable"
PLAN_VARIABLE_READ = " [$var pattern]"  # marks a read through a pattern of plan variables
LAKE_DATA_PATTERNS = {
    # Patterns run over lake data, never over a question, so the question stage cannot own them; each is
    # listed with what it reads. (path, function) as metric 3 prints them.
    ("lakeplanner/ingest/typed.py", "number_pattern"): "lake data: a cell's number with its currency code (USD 12.50)",
    ("lakeplanner/ingest/dialect.py", "<module>"): "lake data: a CSV cell's number with its currency code, sniffed",
    ("lakeplanner/injection.py", "instructions_pattern"): (
        "lake data: document sentences, cells and titles that address the model; phrases in injection.yaml"
    ),
}

# --- metric 6: words of the benchmarks and of the sample lakes ---------------------------------------------
BENCHMARK_WORDS: dict[str, tuple[str, ...]] = {
    "tatqa_finance": (
        "fiscal", "financial", "company", "companies", "group's", "respective", "respectively",
        "constitution", "composition", "revenue", "earnings", "profit", "dividend", "shareholder",
        "net income", "balance sheet", "cash flow", "income statement", "ebitda", "per share",
    ),
    "hotpotqa": (
        "film", "director", "actress", "album", "band", "born", "nationality", "singer",
        "songwriter", "movie", "novel", "genre",
    ),
    "sample_lake_sales": (
        "customers.csv", "invoices.json", "line_items.jsonl", "products.parquet",
        "invoice", "customer", "product", "sku", "agreement", "master services",
        "billing", "payment terms", "late fee", "uptime", "credit note", "purchase order",
        "collections memo", "enterprise segment",
    ),
    "sample_lake_logistics": (
        "carriers.csv", "warehouses.json", "staff.csv", "trucks.csv", "orders.jsonl", "shipments.csv",
        "carrier", "shipment", "truck", "staff", "dispatcher", "freight", "pallet",
        "incident report", "licence plate", "hire date", "fleet", "ops memo", "operations memo",
    ),
}  # fmt: skip
AMBIGUOUS_WORDS: dict[str, tuple[str, ...]] = {
    # Listed words that lakeplanner also uses in its own sense: the sample lakes' contracts
    # (documents/contracts/) and lakeplanner's data contract (lakeplanner.contract); HotpotQA's actors and
    # Ray's actors (lakeplanner.batch, execute.services, llm.vllm); the logistics lake's warehouses and
    # Iceberg's warehouse, the folder of table files; TAT-QA's line items and the report-grid ingest's
    # row-label column, line_item, the name financial statements give a row.
    "contract": ("contract",),
    "actor": ("actor",),
    "warehouse": ("warehouse",),
    "line item": ("line item",),
}


# ============================================================================================== the modules
@dataclass
class Module:
    path: str  # "lakeplanner/plan/dataops.py"
    name: str  # "lakeplanner.plan.dataops"
    source: str
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.path.endswith("/__init__.py")

    @property
    def in_question_package(self) -> bool:
        return self.path.startswith(QUESTION_DIR)

    @functools.cached_property
    def scopes(self) -> list[Scope]:
        return list(walk_scopes(self.tree))

    @functools.cached_property
    def regex(self) -> RegexNames:
        return regex_names(self.tree)

    @functools.cached_property
    def constants(self) -> dict[str, ast.expr]:
        return module_constants(self)

    @functools.cached_property
    def lines(self) -> list[str]:
        """Its lines as ast numbers them (str.splitlines would also split at form feeds)."""
        return self.source.replace("\r\n", "\n").replace("\r", "\n").split("\n")

    @functools.cached_property
    def nodes(self) -> list[ast.AST]:
        return list(ast.walk(self.tree))


def module_name(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def load_modules(root: Path) -> list[Module]:
    modules = []
    for file in sorted((root / PACKAGE).rglob("*.py")):
        path = file.relative_to(root).as_posix()
        if "__pycache__" in path:
            continue
        source = file.read_text(encoding="utf-8")
        modules.append(Module(path, module_name(path), source, ast.parse(source, filename=path)))
    return modules


def outside_question(modules: Iterable[Module]) -> list[Module]:
    return [m for m in modules if not m.in_question_package]


# ================================================================================================ the scopes
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class Scope:
    name: str  # "<module>", "Class", "Class.method", "outer.inner"
    kind: str  # "module" | "class" | "function"
    own: list[ast.AST]  # its nodes, nested definitions left out
    parent: str | None


def split_scope(node: ast.AST) -> tuple[list[ast.AST], list[ast.AST]]:
    """The nodes of a module, class or function body, and the definitions nested in it."""
    own: list[ast.AST] = []
    nested: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if isinstance(child, DEFINITIONS):
            nested.append(child)
            continue
        own.append(child)
        stack.extend(ast.iter_child_nodes(child))
    return own, sorted(nested, key=lambda n: n.lineno)


def walk_scopes(tree: ast.Module) -> Iterator[Scope]:
    """Every scope, a parent before its children."""

    def visit(node: ast.AST, name: str, kind: str, parent: str | None) -> Iterator[Scope]:
        own, nested = split_scope(node)
        yield Scope(name, kind, own, parent)
        for child in nested:
            child_name = child.name if kind == "module" else f"{name}.{child.name}"
            child_kind = "class" if isinstance(child, ast.ClassDef) else "function"
            yield from visit(child, child_name, child_kind, name)

    yield from visit(tree, "<module>", "module", None)


def snippet(module: Module, node: ast.AST, width: int = 110) -> str:
    """The node's source on one line, cut to `width` (column offsets are UTF-8 byte offsets)."""
    lines = module.lines[node.lineno - 1 : node.end_lineno]
    if len(lines) == 1:
        text = lines[0].encode()[node.col_offset : node.end_col_offset].decode(errors="replace")
    else:
        first = lines[0].encode()[node.col_offset :].decode(errors="replace")
        last = lines[-1].encode()[: node.end_col_offset].decode(errors="replace")
        text = " ".join([first, *lines[1:-1], last])
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


# ===================================================================================== the re module's names
@dataclass
class RegexNames:
    modules: set[str] = field(default_factory=set)  # names bound to the re module
    functions: dict[str, str] = field(default_factory=dict)  # local name -> re function, `from re import x`


def regex_names(tree: ast.Module) -> RegexNames:
    names = RegexNames()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.modules |= {a.asname or a.name for a in node.names if a.name == "re"}
        elif isinstance(node, ast.ImportFrom) and node.module == "re" and not node.level:
            names.functions |= {a.asname or a.name: a.name for a in node.names}
    return names


def regex_function(call: ast.Call, names: RegexNames) -> str | None:
    """'search' for re.search(...) (or search(...) after `from re import search`), else None."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in names.modules:
        return func.attr
    if isinstance(func, ast.Name):
        return names.functions.get(func.id)
    return None


def is_compile(node: ast.AST, names: RegexNames) -> bool:
    return isinstance(node, ast.Call) and regex_function(node, names) == "compile"


def assigned_names(nodes: Iterable[ast.AST]) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) of every `name = value`, `name: T = value` and `(name := value)` among the nodes."""
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.value
        elif (
            isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name)
        ) or isinstance(node, ast.NamedExpr):
            yield node.target.id, node.value


def compiled_in(module: Module, nodes: Iterable[ast.AST]) -> dict[str, bool]:
    """The names bound to `re.compile(...)` among the nodes, each with whether its pattern names plan
    variables (see code_marker)."""
    constants = module.constants
    found = {}
    for name, value in assigned_names(nodes):
        if is_compile(value, module.regex) and isinstance(value, ast.Call) and value.args:
            marker = code_marker(string_of(value.args[0], constants), regex_flags(value, module.regex))
            found[name] = bool(marker and marker.startswith(PLAN_VARIABLE))
    return found


# ============================================================================================= the imports
def import_base(module: Module, node: ast.ImportFrom) -> str | None:
    """The absolute module name `from <base> import ...` names, relative imports resolved."""
    if not node.level:
        return node.module
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    kept = package[: len(package) - (node.level - 1)] if node.level > 1 else package
    return ".".join(kept + ([node.module] if node.module else [])) or None


def imported_from(module: Module) -> Iterator[tuple[str, str, str]]:
    """(local name, base module, imported name) of every `from base import name as local`."""
    for node in module.nodes:
        if isinstance(node, ast.ImportFrom) and (base := import_base(module, node)):
            for alias in node.names:
                yield alias.asname or alias.name, base, alias.name


def compiled_patterns(modules: list[Module]) -> dict[str, dict[str, bool]]:
    """Per module path, the names bound to a compiled pattern at module level, imported ones included."""
    own = {m.name: compiled_in(m, m.tree.body) for m in modules}
    patterns = {}
    for module in modules:
        imported = {local: own[base][name] for local, base, name in imported_from(module) if name in own.get(base, {})}
        patterns[module.path] = own[module.name] | imported
    return patterns


# ============================================================ metric 1: functions reading the question text
@dataclass
class Read:
    line: int
    how: str
    code: str


@dataclass
class Reader:
    function: str  # "lakeplanner/plan/dataops.py:restore_count"
    reads: list[Read]


def is_frame(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "frame") or (
        isinstance(node, ast.Attribute) and node.attr == "frame"
    )


def is_question_text(node: ast.AST, names: frozenset[str]) -> bool:
    match node:
        case ast.Name(id=name):
            return name in names
        case ast.Attribute(attr="question"):
            return True
        case ast.Attribute(attr="text", value=value):
            return is_frame(value) or (isinstance(value, ast.Name) and value.id in names)
        case ast.BoolOp(op=ast.Or(), values=values):
            return any(is_question_text(v, names) for v in values)
        case ast.NamedExpr(value=value):
            return is_question_text(value, names)
    return False


def question_names(own: list[ast.AST], inherited: frozenset[str]) -> frozenset[str]:
    """QUESTION_NAMES, the enclosing function's, and the locals assigned directly from question text."""
    names = set(QUESTION_NAMES | inherited)
    assignments = list(assigned_names(own))
    changed = True
    while changed:
        changed = False
        for name, value in assignments:
            if name not in names and is_question_text(value, frozenset(names)):
                names.add(name)
                changed = True
    return frozenset(names)


def call_arguments(call: ast.Call) -> list[ast.expr]:
    values = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    return values + [k.value for k in call.keywords]


def callee_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


@dataclass
class ReadContext:
    regex: RegexNames
    patterns: dict[str, bool]  # names bound to compiled patterns in this scope: whether of plan variables
    names: frozenset[str]  # names holding question text, in this scope


def call_read(call: ast.Call, context: ReadContext) -> str | None:
    """How a call reads question text ('.lower()', 're.search()', 'WORD.findall()', 'tokens()'), or None."""
    func = call.func
    text_argument = any(is_question_text(a, context.names) for a in call_arguments(call))
    if isinstance(func, ast.Attribute) and func.attr in STRING_METHODS and is_question_text(func.value, context.names):
        return f".{func.attr}()"
    if text_argument and regex_function(call, context.regex) in REGEX_FUNCTIONS:
        return f"re.{regex_function(call, context.regex)}()"
    if text_argument and isinstance(func, ast.Attribute) and func.attr in REGEX_FUNCTIONS:
        pattern = func.value
        if isinstance(pattern, ast.Name) and pattern.id in context.patterns:
            return f"{pattern.id}.{func.attr}()" + (PLAN_VARIABLE_READ if context.patterns[pattern.id] else "")
        if is_compile(pattern, context.regex):
            return f"re.compile(...).{func.attr}()"
    if text_argument and callee_name(call) in WORD_READERS:
        return f"{callee_name(call)}()"
    return None


def node_read(node: ast.AST, context: ReadContext) -> str | None:
    if isinstance(node, ast.Call):
        return call_read(node, context)
    if isinstance(node, ast.Compare):
        containers = [c for op, c in zip(node.ops, node.comparators, strict=True) if isinstance(op, ast.In | ast.NotIn)]
        return "in" if any(is_question_text(c, context.names) for c in containers) else None
    if isinstance(node, ast.Subscript) and is_question_text(node.value, context.names):
        return "[...]"
    return None


def scope_reads(module: Module, scope: Scope, context: ReadContext) -> list[Read]:
    reads = [Read(node.lineno, how, snippet(module, node)) for node in scope.own if (how := node_read(node, context))]
    return sorted(reads, key=lambda r: (r.line, r.how))


def question_names_by_scope(module: Module) -> dict[str, frozenset[str]]:
    """Per scope, the names holding question text (a nested function sees its enclosing function's)."""
    names_of: dict[str, frozenset[str]] = {}
    kinds: dict[str, str] = {}
    for scope in module.scopes:
        inherited = names_of.get(scope.parent, frozenset()) if kinds.get(scope.parent) == "function" else frozenset()
        names_of[scope.name] = question_names(scope.own, inherited)
        kinds[scope.name] = scope.kind
    return names_of


def question_readers_in(module: Module, patterns: dict[str, bool]) -> list[Reader]:
    names_of = question_names_by_scope(module)
    readers = []
    for scope in module.scopes:
        context = ReadContext(module.regex, patterns | compiled_in(module, scope.own), names_of[scope.name])
        if reads := scope_reads(module, scope, context):
            readers.append(Reader(f"{module.path}:{scope.name}", reads))
    return readers


def question_text_readers(modules: list[Module]) -> list[Reader]:
    patterns = compiled_patterns(modules)
    return [r for m in outside_question(modules) for r in question_readers_in(m, patterns[m.path])]


# ----------------------------------------------- question text handed as-is to lakeplanner's own functions
def package_functions(modules: list[Module]) -> dict[str, set[str]]:
    """Per module name, its top-level function names."""
    return {
        m.name: {n.name for n in m.tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)} for m in modules
    }


def helpers_of(module: Module, functions: dict[str, set[str]], question_modules: set[str]) -> set[str]:
    """Names callable in the module that are functions of lakeplanner outside lakeplanner/question/."""
    helpers = set(functions[module.name])
    for local, base, name in imported_from(module):
        if base not in question_modules and name in functions.get(base, set()):
            helpers.add(local)
    return helpers


def question_text_handed_to_helpers(modules: list[Module]) -> list[str]:
    functions = package_functions(modules)
    question_modules = {m.name for m in modules if m.in_question_package}
    found = []
    for module in outside_question(modules):
        helpers = helpers_of(module, functions, question_modules)
        names_of = question_names_by_scope(module)
        for scope in module.scopes:
            names = names_of[scope.name]
            for node in scope.own:
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id in helpers
                    and any(is_question_text(a, names) for a in call_arguments(node))
                ):
                    found.append(f"{module.path}:{node.lineno}:{scope.name} -> {node.func.id}")
    return sorted(set(found), key=location_key)


# ======================================================================== metric 2: read_question call sites
def question_reader_calls(modules: list[Module]) -> list[str]:
    found = []
    for module in outside_question(modules):
        for scope in module.scopes:
            for node in scope.own:
                if isinstance(node, ast.Call) and callee_name(node) in QUESTION_READERS:
                    found.append(f"{module.path}:{node.lineno}:{scope.name}")
    return sorted(found, key=location_key)


def location_key(item: str) -> tuple[str, int, str]:
    path, _, rest = item.partition(":")
    line, _, tail = rest.partition(":")
    return (path, int(line) if line.isdigit() else 0, tail)


# ============================================================================= metric 3: regexes over words
def string_of(node: ast.AST, constants: dict[str, ast.expr], depth: int = 0) -> str:
    """The string an expression makes, from literals; UNKNOWN for each part that is not one."""
    if depth > 8:
        return UNKNOWN
    match node:
        case ast.Constant(value=str() as text):
            return text
        case ast.JoinedStr(values=values):
            parts = (v.value if isinstance(v, ast.FormattedValue) else v for v in values)
            return "".join(string_of(p, constants, depth + 1) for p in parts)
        case ast.BinOp(op=ast.Add(), left=left, right=right):
            return string_of(left, constants, depth + 1) + string_of(right, constants, depth + 1)
        case ast.Name(id=name) if name in constants:
            return string_of(constants[name], constants, depth + 1)
        case ast.Call(func=ast.Attribute(attr="join", value=separator), args=[items]):
            parts = strings_of(items, constants, depth + 1)
            return UNKNOWN if parts is None else string_of(separator, constants, depth + 1).join(parts)
        case ast.Call(func=ast.Attribute(attr="escape"), args=[argument]):
            return re.escape(string_of(argument, constants, depth + 1))  # re.escape leaves UNKNOWN as it is
    return UNKNOWN


def strings_of(node: ast.AST, constants: dict[str, ast.expr], depth: int) -> list[str] | None:
    """The strings a tuple, list or set of literals holds (through a name, sorted(), map(re.escape, ...))."""
    match node:
        case ast.Tuple(elts=items) | ast.List(elts=items) | ast.Set(elts=items):
            return [string_of(i, constants, depth + 1) for i in items]
        case ast.Name(id=name) if name in constants and depth <= 8:
            return strings_of(constants[name], constants, depth + 1)
        case ast.Call(func=ast.Name(id="map"), args=[ast.Attribute(attr="escape"), items]):
            found = strings_of(items, constants, depth + 1)
            return None if found is None else [re.escape(s) for s in found]
        case ast.Call(func=ast.Name(id="sorted" | "list" | "tuple" | "set" | "frozenset"), args=[items, *_]):
            return strings_of(items, constants, depth + 1)
    return None


def module_constants(module: Module) -> dict[str, ast.expr]:
    """Module-level names assigned exactly once."""
    assigned = list(assigned_names(module.tree.body))
    counts = Counter(name for name, _ in assigned)
    return {name: value for name, value in assigned if counts[name] == 1}


def regex_flags(call: ast.Call, names: RegexNames) -> int:
    flags = 0
    for argument in call_arguments(call)[1:]:
        for node in ast.walk(argument):
            if isinstance(node, ast.Attribute) and node.attr in re.RegexFlag.__members__:
                flags |= re.RegexFlag[node.attr]
            elif isinstance(node, ast.Name) and names.functions.get(node.id) in re.RegexFlag.__members__:
                flags |= re.RegexFlag[names.functions[node.id]]
    return flags


@dataclass
class PatternShape:
    letter_repeat: bool = False
    boundary: bool = False
    letters: bool = False
    unknown: bool = False
    dollar_in_word: bool = False  # a class holding both `$` and `\\w`: `$var_1` read as one word


def is_letter(code: int) -> bool:
    return chr(code).isalpha()


def class_has_letters(items: list) -> bool:
    """A non-negated class (`[a-z]`, `\\w`, `[A-Za-z0-9-]`) that matches letters."""
    if items and items[0][0].name == "NEGATE":
        return False
    for op, value in items:
        if op.name == "CATEGORY" and value.name == "CATEGORY_WORD":
            return True
        if op.name == "RANGE" and (is_letter(value[0]) or is_letter(value[1]) or value[0] <= 65 <= value[1]):
            return True
        if op.name == "LITERAL" and is_letter(value):
            return True
    return False


def class_has_word(items: list) -> bool:
    return any(op.name == "CATEGORY" and value.name == "CATEGORY_WORD" for op, value in items)


def matches_letters(sub: Iterable) -> bool:
    """A parsed (sub)pattern that can match a letter at its top level."""
    for op, value in sub:
        if op.name == "IN" and class_has_letters(value):
            return True
        if op.name == "LITERAL" and is_letter(value):
            return True
        if op.name == "SUBPATTERN" and matches_letters(value[-1]):
            return True
        if op.name == "BRANCH" and any(matches_letters(b) for b in value[1]):
            return True
    return False


def inspect_pattern(sub: Iterable, shape: PatternShape, in_lookaround: bool = False) -> None:
    """Fill in the shape; what a lookaround's body matches is no letter of the match itself."""
    for op, value in sub:
        name = op.name
        if name == "LITERAL":
            shape.letters |= is_letter(value) and not in_lookaround
            shape.unknown |= value == ord(UNKNOWN)
        elif name == "IN":
            shape.letters |= class_has_letters(value) and not in_lookaround
            dollar = any(o.name == "LITERAL" and v == ord("$") for o, v in value)
            shape.dollar_in_word |= dollar and class_has_word(value)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _, high, body = value
            shape.letter_repeat |= high >= 2 and matches_letters(body)
            inspect_pattern(body, shape, in_lookaround)
        elif name == "AT":
            shape.boundary |= value.name == "AT_BOUNDARY"
        elif name in ("ASSERT", "ASSERT_NOT"):
            body = value[1]
            shape.boundary |= any(o.name == "IN" and class_has_word(v) for o, v in body)
            inspect_pattern(body, shape, in_lookaround=True)
        elif name == "SUBPATTERN":
            inspect_pattern(value[-1], shape, in_lookaround)
        elif name == "ATOMIC_GROUP":
            inspect_pattern(value, shape, in_lookaround)
        elif name == "BRANCH":
            for branch in value[1]:
                inspect_pattern(branch, shape, in_lookaround)
        elif name == "GROUPREF_EXISTS":
            for branch in value[1:]:
                if branch is not None:
                    inspect_pattern(branch, shape, in_lookaround)


PATTERN_ESCAPE = re.compile(r"\\(?:N\{[^}]*\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
PATTERN_GROUP_SYNTAX = re.compile(r"\(\?P?<(?![=!])\w+>|\(\?P=\w+\)|\(\?\(\w+\)|\(\?[aiLmsux-]+[:)]")
PATTERN_CLASS = re.compile(r"\[\^?\]?[^\]]*\]")
PATTERN_WORD = re.compile(r"[A-Za-z]{3,}")


def literal_words(text: str) -> list[str]:
    """Runs of 3+ letters in a pattern's text, escapes, classes and group syntax left out."""
    plain = PATTERN_CLASS.sub(" ", PATTERN_GROUP_SYNTAX.sub(" ", PATTERN_ESCAPE.sub(" ", text)))
    return PATTERN_WORD.findall(plain)


def word_rules(text: str, flags: int) -> list[str] | None:
    """Why a pattern matches words of text (empty when it does not); None when it does not parse."""
    try:
        parsed = regex_parser.parse(text, flags & ~re.DEBUG)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
    shape = PatternShape()
    inspect_pattern(parsed, shape)
    rules = []
    if shape.letter_repeat:
        rules.append("letter class repeated")
    if words := literal_words(text):
        rules.append("literal word " + "/".join(dict.fromkeys(words)))
    if shape.boundary and (shape.letters or shape.unknown):
        rules.append("word boundary")
    return rules


def code_marker(text: str, flags: int) -> str | None:
    """Why a pattern is about code or identifiers, or None."""
    try:
        parsed = regex_parser.parse(text, flags & ~re.DEBUG)
    except (re.error, OverflowError, RecursionError, ValueError):
        parsed = None
    shape = PatternShape()
    if parsed is not None:
        inspect_pattern(parsed, shape)
    if shape.dollar_in_word or "$var" in text.replace("\\", ""):
        return f"{PLAN_VARIABLE} ($var, or '$' as part of a word)"
    if "```" in text:
        return "code fence"
    return next((f"identifier anchor {a}" for a in IDENTIFIER_ANCHORS if a in text), None)


@dataclass
class Pattern:
    where: str  # "lakeplanner/ingest/report_tables.py:23"
    function: str
    call: str  # "re.compile"
    pattern: str  # its text, {?} for unknown parts
    rules: list[str]
    excluded: str | None = None  # why it is a pattern of code
    source: str = ""


def display(text: str) -> str:
    return re.sub(f"{UNKNOWN}+", "{?}", text)


def patterns_in(module: Module) -> list[Pattern]:
    regex = module.regex
    constants = module.constants
    found = []
    for scope in module.scopes:
        for node in scope.own:
            if not isinstance(node, ast.Call):
                continue
            function = regex_function(node, regex)
            if function not in REGEX_FUNCTIONS | {"compile"}:
                continue
            argument = next((k.value for k in node.keywords if k.arg == "pattern"), node.args[0] if node.args else None)
            if argument is None or (isinstance(argument, ast.Constant) and isinstance(argument.value, bytes)):
                continue
            text = string_of(argument, constants)
            flags = regex_flags(node, regex)
            known = text.replace(UNKNOWN, "") != ""
            rules = word_rules(text, flags) if known else None
            found.append(
                Pattern(
                    where=f"{module.path}:{node.lineno}",
                    function=scope.name,
                    call=f"re.{function}",
                    pattern=display(text),
                    rules=rules if rules is not None else ["unjudged"],
                    excluded=LAKE_DATA_PATTERNS.get((module.path, scope.name))
                    or (code_marker(text, flags) if known else None),
                    source=snippet(module, node, 160),
                )
            )
    return found


def all_patterns(modules: list[Module]) -> list[Pattern]:
    return [p for m in outside_question(modules) for p in patterns_in(m)]


def word_patterns(patterns: list[Pattern]) -> list[Pattern]:
    return [p for p in patterns if p.rules and p.rules != ["unjudged"] and p.excluded is None]


# ============================================================================== metric 4: long modules
def long_modules(modules: list[Module], limit: int = MAX_MODULE_LINES) -> list[tuple[str, int]]:
    lengths = ((m.path, len(m.source.splitlines())) for m in modules)
    return sorted(((path, n) for path, n in lengths if n > limit), key=lambda item: -item[1])


# ============================================================================== metric 5: import cycles
@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    level: str  # "module" | "function" | "type_checking"
    via: str | None = None  # the package whose __init__ re-exports the target

    def describe(self) -> str:
        through = f" via {self.via}" if self.via else ""
        return f"{self.source} -> {self.target} (line {self.line}, {self.level}{through})"


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def imports_with_level(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with where it runs: 'module', 'function' or 'type_checking'."""

    def visit(nodes: Iterable[ast.AST], level: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node, level
            elif isinstance(node, ast.If) and is_type_checking(node.test):
                yield from visit(node.body, "type_checking")
                yield from visit(node.orelse, level)
            else:
                in_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and level == "module"
                inner = [c for c in ast.iter_child_nodes(node) if isinstance(c, STATEMENT_HOLDERS)]
                yield from visit(inner, "function" if in_function else level)

    yield from visit(tree.body, "module")


def deepest_module(name: str, known: set[str]) -> str | None:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in known:
            return ".".join(parts[:end])
    return None


def import_targets(module: Module, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    if isinstance(node, ast.Import):
        targets = [deepest_module(a.name, known) for a in node.names]
    else:
        base = import_base(module, node)
        if base is None:
            return []
        targets = [
            f"{base}.{a.name}" if f"{base}.{a.name}" in known else deepest_module(base, known) for a in node.names
        ]
    return list(dict.fromkeys(t for t in targets if t and t != module.name))


def import_edges(modules: list[Module]) -> list[Edge]:
    known = {m.name for m in modules}
    edges = []
    for module in modules:
        for node, level in imports_with_level(module.tree):
            edges += [Edge(module.name, target, node.lineno, level) for target in import_targets(module, node, known)]
    return edges


def is_inside(name: str, package: str) -> bool:
    return name.startswith(package + ".")


def reexports(edges: list[Edge], packages: set[str]) -> dict[str, set[str]]:
    """Per package, the submodules its __init__ imports, through sub-packages' __init__ too."""
    direct: dict[str, set[str]] = {p: set() for p in packages}
    for e in edges:
        if e.source in packages and is_inside(e.target, e.source) and e.level != "type_checking":
            direct[e.source].add(e.target)

    def expand(package: str, seen: set[str]) -> set[str]:
        found = set()
        for child in direct.get(package, set()):
            if child not in seen:
                seen.add(child)
                found |= {child} | expand(child, seen)
        return found

    return {p: expand(p, {p}) for p in packages}


def cycle_graph_edges(edges: list[Edge], packages: set[str]) -> list[Edge]:
    """The edges cycles are looked for in: type-checking imports and an __init__'s re-exports left out; an
    import of a package from outside it is also an edge to each submodule the package re-exports."""
    exported = reexports(edges, packages)
    graph = []
    for e in edges:
        if e.level == "type_checking" or (e.source in packages and is_inside(e.target, e.source)):
            continue
        graph.append(e)
        if e.target in packages and not is_inside(e.source, e.target):  # inside, its __init__ ran first
            graph += [Edge(e.source, c, e.line, e.level, e.target) for c in sorted(exported[e.target])]
    return list(dict.fromkeys(graph))


def strongly_connected(nodes: Iterable[str], successors: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative); components of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(successors.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(successors.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def shortest_cycle(start: str, successors: dict[str, set[str]], members: set[str]) -> list[str]:
    """A shortest path start -> ... -> start inside the component (breadth first)."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(successors.get(node, set()) & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return [start]


@dataclass
class Cycle:
    modules: list[str]
    cycle: list[str]  # one shortest cycle through the component
    function_level: bool  # some edge of the component is an import inside a function
    edges: list[str]


def successors_of(edges: Iterable[Edge]) -> dict[str, set[str]]:
    successors: dict[str, set[str]] = {}
    for e in edges:
        successors.setdefault(e.source, set()).add(e.target)
    return successors


def cycles_of(edges: list[Edge]) -> list[Cycle]:
    successors = successors_of(edges)
    nodes = {e.source for e in edges} | {e.target for e in edges}
    cycles = []
    for component in strongly_connected(nodes, successors):
        members = set(component)
        inner = [e for e in edges if e.source in members and e.target in members]
        cycles.append(
            Cycle(
                modules=component,
                cycle=shortest_cycle(component[0], successors, members),
                function_level=any(e.level == "function" for e in inner),
                edges=[e.describe() for e in sorted(inner, key=lambda e: (e.source, e.target, e.line))],
            )
        )
    return cycles


def package_of(name: str) -> str:
    return ".".join(name.split(".")[:2])


def package_edges(edges: list[Edge]) -> list[Edge]:
    return [
        Edge(package_of(e.source), package_of(e.target), e.line, e.level, f"{e.source} -> {e.target}")
        for e in edges
        if package_of(e.source) != package_of(e.target)
    ]


@dataclass
class ImportReport:
    edges: list[Edge]
    cycles: list[Cycle]
    module_level_cycles: list[Cycle]
    package_cycles: list[Cycle]


def import_report(modules: list[Module]) -> ImportReport:
    edges = import_edges(modules)
    packages = {m.name for m in modules if m.is_package}
    graph = cycle_graph_edges(edges, packages)
    module_level = [e for e in graph if e.level == "module"]
    return ImportReport(edges, cycles_of(graph), cycles_of(module_level), package_cycles(graph))


def package_cycles(graph: list[Edge]) -> list[Cycle]:
    cycles = cycles_of(package_edges(graph))
    for cycle in cycles:  # "a -> b (line 3, module via lakeplanner.a.x -> lakeplanner.b.y)" reads better reworded
        cycle.edges = [e.replace(" via ", ": ") for e in cycle.edges]
    return cycles


# ====================================================================== metric 6: benchmark words in strings
def word_regex(word: str) -> str:
    parts = [re.escape(p).replace("'", "['’]") for p in word.split(" ")]
    return r"[\s_-]+".join(parts) + ("" if "." in word else "(?:e?s)?")


def words_pattern(groups: dict[str, tuple[str, ...]]) -> tuple[re.Pattern, list[str]]:
    """One regex for every listed word, a named group each; and the words by group index."""
    words = sorted({w for ws in groups.values() for w in ws}, key=lambda w: (-len(w), w))
    alternatives = "|".join(f"(?P<w{i}>{word_regex(w)})" for i, w in enumerate(words))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])", re.I), words


@dataclass
class Occurrence:
    path: str
    line: int
    word: str
    docstring: bool

    def name(self) -> str:
        return f"{self.path}:{self.line}:{self.word}"


def docstring_nodes(module: Module) -> set[int]:
    found = set()
    for node in module.nodes:
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.add(id(first.value))
    return found


def word_of(match: re.Match, words: list[str]) -> str:
    return words[int(match.lastgroup[1:])]


def occurrence_lines(node: ast.Constant, lines: list[str], pattern: re.Pattern, words: list[str]) -> list[int]:
    """The source line of each listed word in a string literal, in order (its first line as a fallback)."""
    value_words = [word_of(m, words) for m in pattern.finditer(node.value)]
    if node.lineno == node.end_lineno:
        return [node.lineno] * len(value_words)
    in_source = [
        (number, word_of(m, words))
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1)
        for m in pattern.finditer(lines[number - 1])
    ]
    found, cursor = [], 0
    for word in value_words:
        at = next((i for i in range(cursor, len(in_source)) if in_source[i][1] == word), None)
        if at is None:
            found.append(node.lineno)
            continue
        found.append(in_source[at][0])
        cursor = at + 1
    return found


def word_occurrences(modules: list[Module], groups: dict[str, tuple[str, ...]]) -> list[Occurrence]:
    pattern, words = words_pattern(groups)
    found = []
    for module in modules:
        if module.path.startswith(WORDS_SKIPPED_DIRS):
            continue
        docstrings = docstring_nodes(module)
        for node in module.nodes:
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and pattern.search(node.value):
                listed = [word_of(m, words) for m in pattern.finditer(node.value)]
                for word, line in zip(listed, occurrence_lines(node, module.lines, pattern, words), strict=True):
                    found.append(Occurrence(module.path, line, word, id(node) in docstrings))
    return sorted(found, key=lambda o: (o.path, o.line, o.word))


# ================================================================================================ the report
@dataclass
class Metric:
    name: str
    value: int
    target: int | None  # met when value <= target; None: no target
    items: list[str]
    details: list = field(default_factory=list)
    note: str = ""

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.value <= self.target


def reader_metric(readers: list[Reader]) -> Metric:
    only_variables = [r for r in readers if all(read.how.endswith(PLAN_VARIABLE_READ) for read in r.reads)]
    return Metric(
        "question_text_readers_outside_question",
        len(readers),
        3,
        [r.function for r in readers],
        [asdict(r) for r in readers],
        f"functions outside lakeplanner/question/ that read question/step text (not only quote it); "
        f"{len(only_variables)} of them read it only through patterns of plan variables ($var_N)",
    )


def cycle_metric(name: str, cycles: list, target: int | None, note: str) -> Metric:
    return Metric(name, len(cycles), target, [" -> ".join(c.cycle) for c in cycles], [asdict(c) for c in cycles], note)


def measure(root: Path) -> dict[str, Metric]:
    modules = load_modules(root)
    readers = question_text_readers(modules)
    calls = question_reader_calls(modules)
    patterns = all_patterns(modules)
    words = word_patterns(patterns)
    imports = import_report(modules)
    occurrences = word_occurrences(modules, BENCHMARK_WORDS)
    ambiguous = word_occurrences(modules, AMBIGUOUS_WORDS)
    handed = question_text_handed_to_helpers(modules)
    metrics = [
        reader_metric(readers),
        Metric("read_question_calls_outside_question", len(calls), 1, calls, note="path:line:function"),
        Metric(
            "word_regexes_outside_question",
            len(words),
            0,
            [f"{p.where}: {p.pattern}" for p in words],
            [asdict(p) for p in words],
            "patterns matching words of text; all_regexes_outside_question lists every pattern with its verdict",
        ),
        Metric(
            "modules_over_600_lines",
            len(long := long_modules(modules)),
            None,
            [f"{path} ({n} lines)" for path, n in long],
            [{"path": path, "lines": n} for path, n in long],
            "no target in the issue",
        ),
        cycle_metric(
            "import_cycles",
            imports.cycles,
            0,
            f"{len(imports.module_level_cycles)} of them remain with module-level imports only",
        ),
        cycle_metric(
            "import_cycles_module_level",
            imports.module_level_cycles,
            None,
            "the cycles left when imports inside functions are dropped (these run at import time)",
        ),
        cycle_metric("package_cycles", imports.package_cycles, 0, "over packages (a module's first two name parts)"),
        Metric(
            "benchmark_words_outside_packs",
            len(occurrences),
            0,
            [o.name() for o in occurrences],
            [asdict(o) for o in occurrences],
            "whole words of BENCHMARK_WORDS in string literals and docstrings",
        ),
        Metric(
            "docstring_benchmark_citations",
            len(cited := [o for o in occurrences if o.docstring]),
            0,
            [o.name() for o in cited],
            note="the part of benchmark_words_outside_packs in docstrings",
        ),
        Metric(
            "benchmark_words_ambiguous",
            len(ambiguous),
            None,
            [o.name() for o in ambiguous],
            note="'contract' (also lakeplanner's data contract) and 'actor' (also Ray's actors); not targeted",
        ),
        Metric(
            "question_text_handed_to_helpers",
            len(handed),
            None,
            handed,
            note="question text passed as-is to lakeplanner functions outside lakeplanner/question/",
        ),
        Metric(
            "all_regexes_outside_question",
            len(patterns),
            None,
            [f"{p.where}: {p.pattern}" for p in patterns],
            [asdict(p) for p in patterns],
            "every pattern literal given to re.* outside lakeplanner/question/, with its rules or exclusion",
        ),
    ]
    return {m.name: m for m in metrics}


def hits_by_file(metrics: dict[str, Metric]) -> list[tuple[str, dict[str, int]]]:
    """Per file, the items it holds of the targeted metrics that name files; most hits first."""
    counted = (
        "question_text_readers_outside_question",
        "read_question_calls_outside_question",
        "word_regexes_outside_question",
        "benchmark_words_outside_packs",
    )
    table: dict[str, dict[str, int]] = {}
    for name in counted:
        for item in metrics[name].items:
            table.setdefault(item.split(":", 1)[0], dict.fromkeys(counted, 0))[name] += 1
    return sorted(table.items(), key=lambda row: (-sum(row[1].values()), row[0]))


def git_state(root: Path) -> dict[str, str | bool | None]:
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    status = git("status", "--porcelain", "--", PACKAGE)
    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "package_uncommitted_changes": bool(status) if status is not None else None,
    }


TABLE_METRICS = (
    "question_text_readers_outside_question",
    "read_question_calls_outside_question",
    "word_regexes_outside_question",
    "modules_over_600_lines",
    "import_cycles",
    "import_cycles_module_level",
    "package_cycles",
    "benchmark_words_outside_packs",
    "docstring_benchmark_citations",
    "benchmark_words_ambiguous",
    "question_text_handed_to_helpers",
)


def met_text(metric: Metric) -> str:
    return {True: "yes", False: "no", None: "—"}[metric.met]


def target_text(metric: Metric) -> str:
    return "—" if metric.target is None else f"<= {metric.target}" if metric.target else "0"


def summary_rows(metrics: dict[str, Metric]) -> list[tuple[str, str, str, str]]:
    return [(m.name, str(m.value), target_text(m), met_text(m)) for m in (metrics[n] for n in TABLE_METRICS)]


def summary_text(metrics: dict[str, Metric]) -> str:
    rows = [("metric", "value", "target", "met?"), *summary_rows(metrics)]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows)


def markdown_list(items: Iterable[str]) -> list[str]:
    return [f"- `{item}`" for item in items] or ["- (none)"]


def reader_section(metric: Metric) -> list[str]:
    lines = []
    for reader in metric.details:
        lines.append(f"- `{reader['function']}`")
        lines += [f"  - line {r['line']} `{r['how']}`: `{r['code']}`" for r in reader["reads"]]
    return lines or ["- (none)"]


def pattern_rows(details: list[dict]) -> list[str]:
    rows = ["| where | function | pattern | verdict |", "|---|---|---|---|"]
    for p in details:
        verdict = f"excluded: {p['excluded']}" if p["excluded"] else "; ".join(p["rules"]) or "not words"
        pattern = html.escape(p["pattern"], quote=False).replace("|", "\\|")
        rows.append(f"| {p['where']} | {p['function']} | <code>{pattern}</code> | {verdict} |")
    return rows


def cycle_section(metric: Metric) -> list[str]:
    lines = []
    for cycle in metric.details:
        kind = "has a function-level edge" if cycle["function_level"] else "module-level edges only"
        lines.append(f"- `{' -> '.join(cycle['cycle'])}` ({len(cycle['modules'])} in the component; {kind})")
        lines += [f"  - {e}" for e in cycle["edges"]]
    return lines or ["- (none)"]


def word_counts(items: list[str]) -> list[str]:
    by_file = Counter(i.split(":", 1)[0] for i in items)
    by_word = Counter(i.rsplit(":", 1)[1] for i in items)
    lines = ["By file: " + ", ".join(f"`{path}` {n}" for path, n in by_file.most_common())]
    return [*lines, "", "By word: " + ", ".join(f"{word} {n}" for word, n in by_word.most_common())]


def markdown(metrics: dict[str, Metric], state: dict, seconds: float) -> str:
    lines = [
        "# Code structure of lakeplanner/",
        "",
        f"`python benchmarks/structure.py` at {state['commit']}"
        + (" with uncommitted changes under lakeplanner/" if state["package_uncommitted_changes"] else "")
        + f" ({seconds:.2f} s). Rules: the module docstring of benchmarks/structure.py.",
        "",
        "| metric | value | target | met? |",
        "|---|---:|---|---|",
        *(f"| {n} | {v} | {t} | {m} |" for n, v, t, m in summary_rows(metrics)),
        "",
        "## Files with the most hits",
        "",
        "| file | readers | read_question calls | word regexes | benchmark words |",
        "|---|---:|---:|---:|---:|",
        *(f"| {path} | {' | '.join(str(v) for v in counts.values())} |" for path, counts in hits_by_file(metrics)[:15]),
        "",
        "## question_text_readers_outside_question",
        "",
        *reader_section(metrics["question_text_readers_outside_question"]),
        "",
        "## read_question_calls_outside_question",
        "",
        *markdown_list(metrics["read_question_calls_outside_question"].items),
        "",
        "## word_regexes_outside_question",
        "",
        *pattern_rows(metrics["word_regexes_outside_question"].details),
        "",
        "Every other pattern outside lakeplanner/question/ (not words, excluded as code, or unjudged):",
        "",
        *pattern_rows(
            [
                p
                for p in metrics["all_regexes_outside_question"].details
                if p not in metrics["word_regexes_outside_question"].details
            ]
        ),
        "",
        "## modules_over_600_lines",
        "",
        *markdown_list(metrics["modules_over_600_lines"].items),
        "",
        "## import_cycles",
        "",
        *cycle_section(metrics["import_cycles"]),
        "",
        "## package_cycles",
        "",
        *cycle_section(metrics["package_cycles"]),
        "",
        "## benchmark_words_outside_packs",
        "",
        *word_counts(metrics["benchmark_words_outside_packs"].items),
        "",
        "In docstrings (docstring_benchmark_citations):",
        "",
        *word_counts(metrics["docstring_benchmark_citations"].items),
        "",
        "Every occurrence: `structure.json`. benchmark_words_ambiguous ('contract', 'actor'): "
        + ", ".join(
            f"`{p}` {n}"
            for p, n in Counter(i.split(":", 1)[0] for i in metrics["benchmark_words_ambiguous"].items).most_common(8)
        )
        + ", ...",
        "",
        "## question_text_handed_to_helpers (untargeted)",
        "",
        *markdown_list(metrics["question_text_handed_to_helpers"].items),
        "",
    ]
    return "\n".join(lines)


def report_json(metrics: dict[str, Metric], state: dict, seconds: float) -> dict:
    return {
        "script": "benchmarks/structure.py",
        **state,
        "seconds": round(seconds, 3),
        "metrics": {
            name: {
                "value": m.value,
                "target": m.target,
                "met": m.met,
                "note": m.note,
                "items": m.items,
                "details": m.details,
            }
            for name, m in metrics.items()
        },
        "files_with_most_hits": [{"path": path, **counts} for path, counts in hits_by_file(metrics)],
        "rules": {
            "question_names": sorted(QUESTION_NAMES),
            "string_methods": sorted(STRING_METHODS),
            "regex_functions": sorted(REGEX_FUNCTIONS),
            "word_readers": sorted(WORD_READERS),
            "benchmark_words": BENCHMARK_WORDS,
            "ambiguous_words": AMBIGUOUS_WORDS,
        },
    }


def print_report(metrics: dict[str, Metric], verbose: bool) -> None:
    print(summary_text(metrics))
    print("\nfiles with the most hits (readers, read_question calls, word regexes, benchmark words):")
    for path, counts in hits_by_file(metrics)[:10]:
        print(f"  {path}: {', '.join(str(v) for v in counts.values())}")
    shown = TABLE_METRICS if verbose else ("question_text_readers_outside_question", "word_regexes_outside_question")
    for name in shown:
        print(f"\n{name}:")
        for item in metrics[name].items:
            print(f"  {item}")
    if not verbose:
        print("\n(-v lists the items of every figure; structure.json holds them all)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=REPO, help="the checkout holding lakeplanner/")
    parser.add_argument("--out", type=Path, default=None, help="default: <root>/benchmarks/results")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    metrics = measure(args.root)
    seconds = time.perf_counter() - started
    state = git_state(args.root)
    out = args.out or args.root / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "structure.md").write_text(markdown(metrics, state, seconds), encoding="utf-8")
    report = report_json(metrics, state, seconds)
    (out / "structure.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print_report(metrics, args.verbose)
    print(f"\n{seconds:.2f} s; wrote {out / 'structure.md'} and {out / 'structure.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
