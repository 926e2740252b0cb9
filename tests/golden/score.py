"""Score the recorded golden answers with generality.py's rule (every `expect` value held, or an
abstention where none is expected), beside those of a commit: what a prompt change did to both sample
lakes, after `python -m tests.golden.record --reuse-replies`.

    python -m tests.golden.score            # the working tree against HEAD
    python -m tests.golden.score d0d2296    # against another commit
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from generality import is_right  # noqa: E402

LAKES = {"sales": "sample_lake", "logistics": "sample_lake_logistics"}


def recorded(path: str, commit: str | None) -> dict | None:
    if commit is None:
        file = REPO / path
        return json.loads(file.read_text()) if file.exists() else None
    shown = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=REPO, capture_output=True, text=True)
    return json.loads(shown.stdout) if shown.returncode == 0 else None


def right(golden: dict | None, expect: list[str]) -> bool:
    if golden is None:
        return False
    answer = golden["answer"]
    return is_right(str(answer.get("value") or ""), bool(answer.get("abstained")), expect)


def main(commit: str = "HEAD") -> None:
    for lake, folder in LAKES.items():
        questions = json.loads((REPO / "lakeplanner" / folder / "questions.json").read_text())
        paths = [f"tests/golden/{lake}/q{i:02d}.json" for i in range(1, len(questions) + 1)]
        now = [right(recorded(p, None), q.get("expect", [])) for p, q in zip(paths, questions, strict=True)]
        then = [right(recorded(p, commit), q.get("expect", [])) for p, q in zip(paths, questions, strict=True)]
        changed = [f"q{i:02d}" for i, (a, b) in enumerate(zip(then, now, strict=True), 1) if a != b]
        print(f"{lake}: {sum(now)}/{len(now)} right now, {sum(then)}/{len(then)} at {commit}; changed: {changed}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
