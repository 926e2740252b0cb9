"""The words of a report's column and row headers: the scale its figures are printed in ("in
thousands", "$'000", "£m") and a comparison of periods ("2019 vs. 2018 Variance")."""

from __future__ import annotations

import re

COMPARISON = re.compile(r"\b(?:vs|versus|over|compared|change|variance|variation|between)\b", re.I)
CURRENCIES = "$€£¥"
_MONEY = f"[{re.escape(CURRENCIES)}]"
_SCALES = (
    ("thousand", re.compile(rf"\bthousands?\b|{_MONEY}\s*'?000s?\b|\b000s\b|\(000\)|(?<=[a-z])\s*\(1,000s?\)", re.I)),
    ("million", re.compile(rf"\bmillions?\b|{_MONEY}\s*m\b|\bmn\b", re.I)),
    ("billion", re.compile(rf"\bbillions?\b|{_MONEY}\s*bn?\b", re.I)),
)


def scale_of(texts: list[str]) -> str:
    """The first scale word in `texts` ('thousand', 'million', 'billion'), else ''."""
    for text in texts:
        for scale, pattern in _SCALES:
            if pattern.search(text):
                return scale
    return ""


def compares(label: str) -> bool:
    """The label compares periods or values ("2019 vs. 2018", "change over 2018")."""
    return COMPARISON.search(label) is not None
