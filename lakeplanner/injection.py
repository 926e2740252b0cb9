"""Text in the lake is data, never instructions. A sentence of a document, a table cell or a title that
addresses the model (to override its instructions, force an answer, reveal its prompt or cite a
chosen source) is withheld before any prompt sees it: masked with a marker of the same length, so the
spans cited around it keep their offsets, and the grounding check finds no planted value to ground an
answer on.

A rule on lake text, not on roles: it sits below every stage that shows lake text to a prompt (profiling
in contract/, reading files in ingest/, each node in execute/)."""

from __future__ import annotations

import re
from typing import Any

MARKER, SHORT_MARKER = "[withheld: text addressed to the model]", "[withheld]"
SENTENCE = re.compile(r"[^\s.!?][^.!?\n]*[.!?]*")
_NEAR = r"[^.!?\n]{0,40}"
INSTRUCTIONS = re.compile(
    "|".join(
        [
            # overriding what the model was told
            rf"\b(ignore|disregard|forget|override|bypass)\b{_NEAR}\b(all|any|previous|prior|above|earlier|your|system"
            rf"|every)\b{_NEAR}\b(instructions?|prompts?|rules|guidelines|directions)\b",
            r"\bnew instructions?\s*:",
            # addressing the model, or giving it a role
            r"\b(note|message|instructions?|reminder)s? (to|for) (the |any )?(ai|assistant|llm|chatbot"
            r"|language model)s?\b",
            r"\b(if|when) you are an? (ai|assistant|llm|chatbot|language model)\b",
            rf"\b(you are|you're|act as|pretend to be|behave as|role ?play as)\b{_NEAR}\b(ai|assistant|llm|chatbot"
            r"|language model|administrator|admin|root|superuser|developer mode|unrestricted)\b",
            # forcing an answer or a citation
            rf"\b(answer|respond|reply|say|output|print|return)\b{_NEAR}\b(only|exactly|just|always|instead)\b"
            rf"{_NEAR}[\"'“‘`]",
            r"\b(when|if|whenever)\b [^.!?\n]{0,20}\b(asked|questioned|queried)\b[^.!?\n]{0,80}\b(answer|respond"
            r"|reply|say|cite|tell)\b",
            rf"\bcite\b{_NEAR}\bas (the |your )?(only )?(source|evidence|reference)\b",
            # asking for what the model was given
            rf"\b(reveal|print|show|repeat|output|leak|disclose|dump)\b{_NEAR}\b(system prompt|your prompt"
            r"|your instructions|the prompt|hidden (tables?|columns?)|api keys?|passwords?|credentials)\b",
            r"\b(system|developer) (prompt|message|instructions?)\b",
            r"<\|?(system|im_start|im_end|assistant)\|?>",
        ]
    ),
    re.IGNORECASE,
)


def instruction_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text` that addresses the model."""
    return [m.span() for m in SENTENCE.finditer(text) if INSTRUCTIONS.search(m.group())]


def addresses_the_model(text: str) -> bool:
    return bool(INSTRUCTIONS.search(text))


def name_addresses_the_model(name: str) -> bool:
    """A column or file name that reads as an instruction once its separators are spaces."""
    return addresses_the_model(re.sub(r"[_\-.]+", " ", name))


def withheld(text: str) -> str:
    """`text` with each sentence addressed to the model masked, at the same length."""
    if not text or not addresses_the_model(text):
        return text
    out = text
    for start, end in instruction_spans(text):
        size = end - start
        marker = MARKER if size >= len(MARKER) else SHORT_MARKER
        out = out[:start] + marker[:size].ljust(size) + out[end:]
    return out


def withheld_value(value: Any) -> Any:
    return withheld(value) if isinstance(value, str) else value
