"""Text in the lake is data, never instructions. A sentence of a document, a table cell or a title that
addresses the model (to override its instructions, force an answer, reveal its prompt or cite a
chosen source) is withheld before any prompt sees it: masked with a marker of the same length, so the
spans cited around it keep their offsets, and the grounding check finds no planted value to ground an
answer on.

A rule on lake text, not on roles: it sits below every stage that shows lake text to a prompt (field
profiling, reading files at ingest, each node of execution)."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import yaml

MARKER, SHORT_MARKER = "[withheld: text addressed to the model]", "[withheld]"
SENTENCE = re.compile(r"[^\s.!?][^.!?\n]*[.!?]*")
_NEAR = r"[^.!?\n]{0,40}"
PHRASES = "injection.yaml"  # beside this module: the phrase lists the rules below say in order


def phrases() -> dict[str, list[str]]:
    return yaml.safe_load((resources.files("lakeplanner") / PHRASES).read_text())


def instructions_pattern(lists: dict[str, list[str]]) -> re.Pattern:
    """One regex for every rule: each says its phrase lists in order, a space apart or within `_NEAR`
    of the same sentence; a list is a group of its phrases, escaped, any one of them."""

    def of(*names: str) -> str:
        return "(" + "|".join(re.escape(phrase) for name in names for phrase in lists[name]) + ")"

    return re.compile(
        "|".join(
            [
                # overriding what the model was told
                rf"\b{of('override')}\b{_NEAR}\b{of('told_by')}\b{_NEAR}\b{of('told')}\b",
                rf"\b{of('new_instructions')}\s*:",
                # addressing the model, or giving it a role
                rf"\b{of('notes')}s? {of('to')} ({of('articles')} )?{of('models')}s?\b",
                rf"\b{of('conditions')} {of('being')} {of('models')}\b",
                rf"\b{of('taking_a_role')}\b{_NEAR}\b{of('models', 'roles')}\b",
                # forcing an answer or a citation
                rf"\b{of('replies')}\b{_NEAR}\b{of('insisting')}\b{_NEAR}[\"'“‘`]",
                rf"\b{of('whenever')}\b [^.!?\n]{{0,20}}\b{of('asked')}\b[^.!?\n]{{0,80}}\b{of('answers')}\b",
                rf"\b{of('cite')}\b{_NEAR}\b{of('cited_as')} {of('sources')}\b",
                # asking for what the model was given
                rf"\b{of('reveal')}\b{_NEAR}\b{of('given')}\b",
                rf"\b{of('givers')} {of('messages')}\b",
                rf"<\|?{of('chat_roles')}\|?>",
            ]
        ),
        re.IGNORECASE,
    )


INSTRUCTIONS = instructions_pattern(phrases())


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
