"""How an answer's words stand to the question's: an answer that only restates the question names
nothing the lake was asked for."""

from __future__ import annotations

from lakeplanner.question.frame import QuestionFrame
from lakeplanner.question.words import content_sequence, content_words, stem


def restates(frame: QuestionFrame, item: str) -> bool:
    """The item is a phrase of the question, plurals and word order aside ("five step approach" for
    "What is the firm's five step approach?", "cash equivalents" for "what is a cash equivalent?"),
    where the question offers no alternatives to choose from; or the kind of thing asked for itself
    ("Supplier" for "Which supplier delivered it?"), whatever the question offers. A name made of words the
    question holds apart ("Harbour Line" for "which line serves the harbour?") is not a restatement."""
    words = {stem(w) for w in content_words(item)}
    if not words or words == {stem(w) for w in content_words(frame.entity or "")}:
        return bool(words)
    if frame.alternatives:
        return False
    asked = [stem(w) for w in content_sequence(frame.text)]
    return any(set(asked[i : i + len(words)]) == words for i in range(len(asked) - len(words) + 1))
