"""Answer metrics, re-implemented from the papers' definitions (not the upstream code).

TAT-QA: numbers are parsed ("$1,496.5", "(12.6)", "22.22%"), multiplied by their scale, rounded
to 2 decimals; spans are SQuAD-normalised; EM compares the bags of answers; F1 aligns gold and
predicted spans one to one (DROP), pairs whose numbers differ score 0; for arithmetic and count
questions F1 = EM. HotpotQA: SQuAD normalisation, EM and token F1, yes/no/noanswer all or nothing.
"""

from __future__ import annotations

import itertools
import re
import string
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel

SCALES = {"": 1.0, "thousand": 1e3, "million": 1e6, "billion": 1e9, "percent": 1.0}
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")


class Score(BaseModel):
    em: float
    f1: float


def squad_normalize(text: str) -> str:
    text = "".join(c for c in text.lower() if c not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def parse_number(text: str) -> float | None:
    """'$1,496.5' -> 1496.5, '(12.6)' -> -12.6, '22.22%' -> 22.22; None if not one number."""
    s = str(text).strip().replace("\u2212", "-").replace("$", "").replace(",", "").replace("%", "").strip()
    negative = s.startswith("(") and s.endswith(")")
    s = s.strip("()").strip()
    if not _NUMBER.match(s):
        return None
    value = float(s)
    return -value if negative else value


def tatqa_item(answer: object, scale: str) -> str:
    """One answer item as the string compared: a scaled number rounded to 2 decimals, or a span."""
    number = answer if isinstance(answer, int | float) and not isinstance(answer, bool) else parse_number(str(answer))
    if number is None:
        return squad_normalize(str(answer))
    scaled = round(float(number) * SCALES.get(scale, 1.0), 2)
    return f"{scaled:.2f}"


def as_items(answer: object) -> list:
    if isinstance(answer, list | tuple):
        return [a for a in answer if str(a).strip()]
    return [answer] if str(answer).strip() else []


def token_f1(pred: str, gold: str) -> float:
    p, g = pred.split(), gold.split()
    common = sum((Counter(p) & Counter(g)).values())
    if not p and not g:
        return 1.0
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def numbers_in(text: str) -> set[str]:
    return {t for t in text.split() if _NUMBER.match(t)}


def span_f1(pred: str, gold: str) -> float:
    """Token F1, 0 when both mention numbers and none agree (DROP's number rule)."""
    pn, gn = numbers_in(pred), numbers_in(gold)
    if pn and gn and not pn & gn:
        return 0.0
    return token_f1(pred, gold)


def aligned_f1(preds: list[str], golds: list[str]) -> float:
    """Best one-to-one alignment of spans (exhaustive: TAT-QA answers hold a few spans)."""
    if not preds or not golds:
        return float(preds == golds)
    small, large = (preds, golds) if len(preds) <= len(golds) else (golds, preds)
    scores = {
        (i, j): span_f1(small[i], large[j]) if small is preds else span_f1(large[j], small[i])
        for i in range(len(small))
        for j in range(len(large))
    }
    if len(large) > 8:  # greedy beyond 8! alignments
        used, total = set(), 0.0
        for i in range(len(small)):
            j = max((j for j in range(len(large)) if j not in used), key=lambda j: scores[i, j])
            used.add(j)
            total += scores[i, j]
    else:
        total = max(
            sum(scores[i, j] for i, j in enumerate(perm))
            for perm in itertools.permutations(range(len(large)), len(small))
        )
    precision, recall = total / len(preds), total / len(golds)
    return 0.0 if total == 0 else 2 * precision * recall / (precision + recall)


def tatqa_score(gold: object, gold_type: str, gold_scale: str, prediction: object, pred_scale: str = "") -> Score:
    """EM and F1 of one TAT-QA prediction (value or list of spans, plus its scale word)."""
    golds = [tatqa_item(g, gold_scale) for g in as_items(gold)]
    raw = as_items(prediction)
    if gold_scale == "percent" and not pred_scale and any(str(p).strip().endswith("%") for p in raw):
        pred_scale = "percent"
    preds = [tatqa_item(p, pred_scale) for p in raw]
    if not preds or not golds:
        return Score(em=0.0, f1=0.0)
    em = float(sorted(preds) == sorted(golds))
    f1 = em if gold_type in ("arithmetic", "count") else aligned_f1(preds, golds)
    return Score(em=em, f1=round(f1, 4))


def hotpot_score(gold: str, prediction: str) -> Score:
    g, p = squad_normalize(gold), squad_normalize(prediction or "")
    em = float(g == p)
    if (g in ("yes", "no", "noanswer") or p in ("yes", "no", "noanswer")) and g != p:
        return Score(em=em, f1=0.0)
    return Score(em=em, f1=round(token_f1(p, g), 4))


def mean(scores: Sequence[Score]) -> Score:
    n = len(scores) or 1
    return Score(em=sum(s.em for s in scores) / n * 100, f1=sum(s.f1 for s in scores) / n * 100)
