"""How sure an answer is of the path it took: factors on the composite confidence (synthesize.py) for
what the answer's steps show, each sized by what benchmarks/results/calibration.md measured."""

from __future__ import annotations

from collections.abc import Iterable

from lakeplanner.lineage.steps import Step

UNPLANNED = 0.6  # a question no valid plan answers, searched as it is: nothing checked that searching was right
MODEL_PLANNED = 0.8  # a plan the LLM wrote (not a rule, template or cache): right 0.33 of the time, others 0.61
REPAIRED = 0.8  # a path that needed a repair (SQL rewritten, DataOps replan, draft re-asked): 0.31 against 0.49


def planned_by_model(steps: Iterable[Step]) -> bool:
    return any(s.attributes.get("lakeplanner.llm.purpose") == "plan" for s in steps)


def repaired(steps: Iterable[Step], replans: int) -> bool:
    """A SQL statement ran a second time, the plan was replanned, or the synthesis draft was re-asked."""
    steps = list(steps)
    return (
        replans > 0
        or any(int(s.attributes.get("lakeplanner.sql.attempt") or 1) > 1 for s in steps)
        or any(s.attributes.get("lakeplanner.llm.purpose") == "synthesize.repair" for s in steps)
    )


def path_factor(steps: Iterable[Step], replans: int = 0, planned: bool = True) -> float:
    """The factor the path's signals put on an answer's confidence: 1.0 for a path rules chose and
    nothing had to mend."""
    steps = list(steps)
    factor = 1.0 if planned else UNPLANNED
    if planned and planned_by_model(steps):
        factor *= MODEL_PLANNED
    if repaired(steps, replans):
        factor *= REPAIRED
    return factor
