"""benchmarks/structure.py on a tiny fake lakeplanner package: each rule finds what it should, and only that."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from benchmarks import structure

FILES = {
    "lakeplanner/__init__.py": '"""A fake lakeplanner."""\n',
    "lakeplanner/question/__init__.py": "from lakeplanner.question.read import read_question\n",
    "lakeplanner/question/read.py": """
        import re

        from lakeplanner.question import frame

        WORD = re.compile(r"\\b\\w+\\b")  # inside lakeplanner/question/: allowed


        def read_question(text: str) -> str:
            return text.lower()  # inside lakeplanner/question/: not counted
    """,
    "lakeplanner/question/frame.py": """
        from lakeplanner.question import read_question  # a child importing its package: no cycle
    """,
    "lakeplanner/plan/__init__.py": "",
    "lakeplanner/plan/steps.py": '''
        """Steps of the film director question."""

        import re

        from lakeplanner import lake
        from lakeplanner.question import read_question

        LABEL = re.compile(r"\\$var_[0-9]+")
        NAME = re.compile(r"\\b[A-Z][a-z]+\\b")
        DATE = re.compile(r"\\d{4}-\\d{2}-\\d{2}")
        WORDS = ("ignore", "disregard")
        ORDERS = re.compile(r"(?<![\\w-])(" + "|".join(WORDS) + r")(?![\\w-])")


        def lowered(question: str) -> str:
            return question.lower()


        def quoted(plan) -> str:
            return f"asked: {plan.question}" + plan.question


        def framed(plan):
            return read_question(plan.question)


        def labels(node):
            return LABEL.findall(node.question)


        class Checker:
            def aliased(self, plan) -> bool:
                text = plan.question or ""
                return "total" in text

            def compared(self, plan, other) -> bool:
                return plan.question == other.question


        def sliced(frame) -> str:
            return frame.text[:5]


        def invoice_label() -> str:
            return "an invoice"
    ''',
    "lakeplanner/lake.py": """
        def open_lake():
            from lakeplanner.plan import steps  # function level: closes lake <-> plan.steps

            return steps
    """,
    "lakeplanner/execute/__init__.py": "",
    "lakeplanner/execute/first.py": "from lakeplanner.execute import second\n",
    "lakeplanner/execute/second.py": "from . import first  # module level: closes first <-> second\n",
    "lakeplanner/contract/__init__.py": '"""The data contract."""\n',
    "lakeplanner/long.py": "x = 1\n" * 601,
}


def write_package(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def metrics(tmp_path_factory) -> dict[str, structure.Metric]:
    return structure.measure(write_package(tmp_path_factory.mktemp("fake"), FILES))


def test_readers_lowercasing_subscripting_in_and_regex_but_not_quoting(metrics):
    readers = metrics["question_text_readers_outside_question"]
    assert readers.items == [
        "lakeplanner/plan/steps.py:lowered",
        "lakeplanner/plan/steps.py:labels",
        "lakeplanner/plan/steps.py:Checker.aliased",
        "lakeplanner/plan/steps.py:sliced",
    ]
    hows = {d["function"].split(":")[1]: [r["how"] for r in d["reads"]] for d in readers.details}
    assert hows == {
        "lowered": [".lower()"],
        "labels": ["LABEL.findall() [$var pattern]"],
        "Checker.aliased": ["in"],
        "sliced": ["[...]"],
    }
    assert "1 of them read it only through patterns of plan variables" in readers.note
    assert not readers.met  # 4 > 3


def test_read_question_calls_outside_the_question_package(metrics):
    calls = metrics["read_question_calls_outside_question"]
    assert calls.items == ["lakeplanner/plan/steps.py:24:framed"]
    assert calls.met


def test_word_regexes_leave_out_plan_variables_dates_and_the_question_package(metrics):
    found = {item.split(": ", 1)[1] for item in metrics["word_regexes_outside_question"].items}
    assert found == {r"\b[A-Z][a-z]+\b", r"(?<![\w-])(ignore|disregard)(?![\w-])"}
    every = {p["pattern"]: p for p in metrics["all_regexes_outside_question"].details}
    assert every[r"\$var_[0-9]+"]["excluded"].startswith("plan variable")
    assert every[r"\d{4}-\d{2}-\d{2}"]["rules"] == []


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        (r"\bfrom\b", True),
        (r"[\w-]+", True),
        (r"[a-z0-9]+", True),
        (r"(?:vs|versus)", True),
        ("(?<![\\w-])\x00(?![\\w-])", True),  # a value of unknown text, bounded as a word
        (r"(?<![\w.-])-?\d+(?:\.\d+)?(?![\w-])", False),  # a number
        (r"\b(19|20)\d{2}\b", False),
        (r"\s+", False),
        (r"[^a-z]+", False),
        (r"^(?P<neg>\()?\d+(?(neg)\))$", False),  # a conditional names its group, not a word
    ],
)
def test_word_rules(pattern, words):
    assert bool(structure.word_rules(pattern, 0)) is words


@pytest.mark.parametrize(
    "pattern",
    [r"(^|_)(name|title)$", r"(?<![\w$.{])x", r"^\$var_[1-9][0-9]*$", "^```(?:json)?"],
)
def test_code_patterns_are_excluded(pattern):
    assert structure.code_marker(pattern, 0) is not None


def test_patterns_over_lake_data_are_excluded_with_what_they_read(tmp_path):
    [(path, _)] = [key for key in structure.LAKE_DATA_PATTERNS if key[1] == "<module>"]
    files = {path: 'import re\n\nCODE = re.compile(r"^[A-Z]{3}\\s\\d+$")\n'}
    modules = structure.load_modules(write_package(tmp_path, files))
    [pattern] = structure.all_patterns(modules)
    assert pattern.excluded.startswith("lake data") and structure.word_patterns([pattern]) == []


def test_long_modules(metrics):
    assert metrics["modules_over_600_lines"].items == ["lakeplanner/long.py (601 lines)"]


def test_import_cycles_module_and_function_level(metrics):
    cycles = {tuple(c["modules"]): c for c in metrics["import_cycles"].details}
    assert set(cycles) == {
        ("lakeplanner.execute.first", "lakeplanner.execute.second"),
        ("lakeplanner.lake", "lakeplanner.plan.steps"),
    }
    assert not cycles[("lakeplanner.execute.first", "lakeplanner.execute.second")]["function_level"]
    assert cycles[("lakeplanner.lake", "lakeplanner.plan.steps")]["function_level"]
    assert metrics["import_cycles_module_level"].items == [
        "lakeplanner.execute.first -> lakeplanner.execute.second -> lakeplanner.execute.first"
    ]
    assert metrics["package_cycles"].items == ["lakeplanner.lake -> lakeplanner.plan -> lakeplanner.lake"]


def test_a_cycle_through_a_reexport_is_found(tmp_path):
    files = {
        "lakeplanner/__init__.py": "",
        "lakeplanner/tools/__init__.py": "from lakeplanner.tools.inner import helper\n",
        "lakeplanner/tools/inner.py": "from lakeplanner.user import used\n",
        "lakeplanner/user.py": "import lakeplanner.tools\n",
    }
    report = structure.import_report(structure.load_modules(write_package(tmp_path, files)))
    assert [c.modules for c in report.cycles] == [["lakeplanner.tools.inner", "lakeplanner.user"]]
    assert any("via lakeplanner.tools" in e for e in report.cycles[0].edges)


def test_benchmark_words_in_strings_and_docstrings_not_identifiers(metrics):
    words = metrics["benchmark_words_outside_packs"]
    assert words.items == [
        "lakeplanner/plan/steps.py:1:director",
        "lakeplanner/plan/steps.py:1:film",
        "lakeplanner/plan/steps.py:45:invoice",
    ]
    assert metrics["docstring_benchmark_citations"].items == [
        "lakeplanner/plan/steps.py:1:director",
        "lakeplanner/plan/steps.py:1:film",
    ]
    assert metrics["benchmark_words_ambiguous"].items == ["lakeplanner/contract/__init__.py:1:contract"]


def test_word_lines_inside_a_multiline_string(tmp_path):
    files = {"lakeplanner/__init__.py": '"""One line.\n\nThe carriers\nand a shipment."""\n'}
    found = structure.word_occurrences(
        structure.load_modules(write_package(tmp_path, files)), structure.BENCHMARK_WORDS
    )
    assert [(o.line, o.word, o.docstring) for o in found] == [(3, "carrier", True), (4, "shipment", True)]


def test_main_writes_both_reports(tmp_path, capsys):
    root = write_package(tmp_path / "repo", FILES)
    assert structure.main(["--root", str(root), "--out", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "structure.json").read_text())
    assert report["metrics"]["read_question_calls_outside_question"]["value"] == 1
    assert report["metrics"]["import_cycles"]["target"] == 0
    table = (tmp_path / "out" / "structure.md").read_text()
    assert "| question_text_readers_outside_question | 4 | <= 3 | no |" in table
    assert "question_text_readers_outside_question" in capsys.readouterr().out
