"""Yes/no comparisons over what each step read are decided by code, not by the LLM."""

import pytest

from lakeplanner.execute.compare import compared
from lakeplanner.execute.results import Evidence, NodeResult
from lakeplanner.execute.synthesize import synthesize
from lakeplanner.lineage.steps import Recorder
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.question import read_question


def read(label: str, what: str, value: str) -> NodeResult:
    snippet = f"{what} is {value}."
    evidence = Evidence.of("paragraph", f"documents/{label}", (0, len(snippet)), snippet, document_id=label)
    return NodeResult(
        label=label, tool="vector", source="documents", question=what, answer=value, evidence=[evidence], exposed=True
    )


@pytest.mark.parametrize(
    ("question", "values", "expected"),
    [
        (
            "Are the Laleli Mosque and Esma Sultan Mansion located in the same neighborhood?",
            ["Laleli, Fatih, Istanbul, Turkey", "Ortaköy neighborhood"],
            "no",
        ),
        ("Were Scott Derrickson and Ed Wood of the same nationality?", ["American", "american."], "yes"),
        ("Are Local H and For Against both from the United States?", ["Yes", "yes."], "yes"),
        ("Are Random House Tower and 888 7th Avenue both used for real estate?", ["Yes", "No"], "no"),
        ("Who was born earlier, Emma Bull or Virginia Woolf?", ["1964", "1882"], None),  # not a yes/no question
        ("Are A and B both operas?", ["Yes", "a composer"], None),  # one step read no verdict
        ("Are A and B in the same city?", ["city", "city"], None),  # nothing beyond the question's words
    ],
)
def test_comparisons(question, values, expected):
    results = [read(f"$var_{i}", f"step {i}", v) for i, v in enumerate(values, 1)]
    decided = compared(read_question(question), results)
    assert (decided.value if decided else None) == expected


def test_synthesis_decides_a_comparison_without_an_llm_call():
    backend = FakeBackend()
    results = [
        read("$var_1", "neighborhood of the Laleli Mosque", "Laleli, Fatih"),
        read("$var_2", "neighborhood of the Esma Sultan Mansion", "Ortaköy"),
    ]
    question = "Are the Laleli Mosque and Esma Sultan Mansion located in the same neighborhood?"
    answer = synthesize(read_question(question), results, LLM(backend), Recorder())
    assert answer.value == "no" and "Ortaköy" in answer.text and "Laleli, Fatih" in answer.text
    assert {c.document_id for c in answer.citations} == {"$var_1", "$var_2"}
    assert backend.calls == []  # a model's "yes" would have been overruled: it is not asked
