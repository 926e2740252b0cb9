"""Read a question once into its frame: deterministic, from the lexicon and the lake's packs.

The ask entry reads, fills and binds the question once; the frame then travels on the plan (and a step
frame on each node) to every later stage, Ray workers included.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from lakeplanner.question.dates import date_ranges
from lakeplanner.question.frame import (
    MEASURED,
    MEASURES,
    BoundValue,
    Operation,
    Period,
    Predicate,
    QuestionFrame,
    Span,
)
from lakeplanner.question.lexicon import Lexicon, cached_pattern, lexicon
from lakeplanner.question.words import is_plural, singular
from lakeplanner.question.years import YEAR, YEAR_DIGITS, years_in

YEAR_RANGE = re.compile(
    rf"(?<![\w.,-])({YEAR_DIGITS})(?:\s+(?:to|through|and)\s+|\s*[-\u2013]\s*)({YEAR_DIGITS})(?![\w%-])"
)
FROM_TO = re.compile(
    rf"\bfrom(?:\s+[a-z]+){{0,3}}?\s+({YEAR_DIGITS})\b.*?\bto(?:\s+[a-z]+){{0,2}}?\s+({YEAR_DIGITS})\b", re.I | re.S
)
WORD = re.compile(r"[\w'&-]+")
WHICH = re.compile(r"\bwhich\s+(?:one\s+of\s+the\s+)?([a-z][\w-]*)", re.I)
HOW_MANY = re.compile(r"\bhow many\s+(?:more\s+|fewer\s+|less\s+|of\s+the\s+)?([a-z][\w-]*)", re.I)
HOW_MUCH = re.compile(r"\bhow much\s+(?:more\s+|less\s+)?([a-z][\w-]*)", re.I)
ONE = re.compile(r"\bone\s+([a-z][\w-]*)", re.I)
TOP = re.compile(r"\b(?:top|first|last|bottom)\s+(\d{1,3})\b", re.I)
ASKED = re.compile(
    r"^\s*(?:what|which|who|how much|how many)\s+(?:is|are|was|were|did|does|do)?\s*(?P<subject>[^?]+)", re.I
)
PERCENT = re.compile(r"\bpercent|%", re.I)
# a sentence end (not "U.S." or "Inc."), ", and", or "and" before a new question word
CLAUSE_BREAK = re.compile(
    r"(?<![A-Z])(?<!Inc)(?<!Ltd)(?<!\bCo)[.?!;]\s+(?=[A-Z])|,\s+(?:and|but)\s+"
    r"|\s+and\s+(?=(?:what|which|who|whom|whose|when|where|how)\b)"
)
PREDICATE = re.compile(
    r"^\s*what\s+(?P<auxiliary>is|are|was|were|do|does|did)\s+(?:the\s+)?(?P<rest>[^?]+?)\s*\??\s*$", re.I
)
INFLECTIONS = ("s", "es", "d", "ed", "ing")
MAX_SPANNED = 10  # a range wider than this lists its two ends only


def span_of(match: re.Match, group: int = 0) -> Span:
    return Span(start=match.start(group), end=match.end(group), text=match.group(group))


def read_question(text: str, packs: tuple[str, ...] = ()) -> QuestionFrame:
    """The frame of `text` under the lexicon with `packs` switched on, read by the lexicon alone.
    The ask entry reads the user's question with it once; a step's sub-question is read by
    `QuestionFrame.step`, under the question's packs."""
    return read_frame(text, packs)


def read_step(frame: QuestionFrame, text: str) -> QuestionFrame:
    """The frame of a step's sub-question (or of what a step asks), read under `frame`'s packs: a
    plan's nodes and the question they serve read words alike (`frame` itself for its own text)."""
    return frame if text == frame.text else read_frame(text, frame.packs)


@functools.lru_cache(maxsize=4096)
def read_frame(text: str, packs: tuple[str, ...] = ()) -> QuestionFrame:
    """The frame of `text` under the lexicon with `packs` switched on, read by the lexicon alone."""
    words = lexicon(packs)
    unit = unit_of(text, words)
    operation, operation_span = operation_of(text, words, unit)
    direction, direction_span = direction_of(text, words)
    periods = periods_of(text)
    several = find(words.several, text)
    said = None if several else one_said(text, words)
    reason = find(words.reason, text)
    asks_year = find(words.which_year, text) is not None
    if reason is not None:
        operation, operation_span = Operation.reason, reason
    ranks = superlative(direction_span, words) and opens_with(text, ["which", "who", "whose"])
    if operation in (Operation.lookup, Operation.sum, Operation.count) and ranks:
        operation = Operation.extreme  # "which brewery bottled the largest total volume": a ranking
    if operation is Operation.lookup and opens_with(text, words.yes_no_openers):
        operation = Operation.yes_no
    return QuestionFrame(
        text=text,
        packs=packs,
        operation=operation,
        operation_span=operation_span,
        measure=measure_of(text, operation, words, unit),
        absolute=find(words.absolute, text) is not None,
        percent=PERCENT.search(text) is not None,
        direction=direction,
        direction_span=direction_span,
        superlative=superlative(direction_span, words),
        limit=limit_of(text),
        comparison=comparison_of(text, words),
        negated=find(words.negation, text) is not None,
        periods=periods,
        listed_years=tuple(listed_years(text)),
        ranges=date_ranges(text),
        asks_year=asks_year,
        several=several is not None,
        several_span=several,
        second_ask=find(words.joined_asks, text),
        reason=reason,
        prose=prose_of(text, words),
        document=None if find(words.not_documents, text) else find(words.document_cues, text),
        names_document=find(words.document_nouns, text),
        subject=(subject := subject_of(text)),
        attribute=attribute_of(subject, words),
        wh=question_word(text, words),
        entity=entity_of(text, words),
        one=None if several else one_meant(text, words, said),
        one_said=said,
        counted=None if unit else counted_of(text, words),
        unit=unit,
        seconds_per_unit=words.time_units.get(singular(unit.text.lower())) if unit else None,
        judgement=judgement_of(text, operation, words),
        shape="number" if unit and not asks_year else shape_of(text, operation, asks_year, several is not None, words),
        predicate=predicate_of(text, words),
        alternatives=find(words.alternatives, text) is not None,
        clauses=clauses_of(text),
        asks=(asked := asked_of(text, attribute_of(subject, words), words)),
        relative=relative_of(text, words, asked),
    )


def with_values(
    frame: QuestionFrame,
    found: Iterable[tuple[int, int, str]],
    mentioned: Iterable[tuple[int, int, str]] = (),
) -> QuestionFrame:
    """The frame with the lake's values the question names (start, end, table.column), in full and by
    part of their words, each bound to the column that holds it: the lake's half of reading a question,
    done where the lake is known."""

    def bound(spans: Iterable[tuple[int, int, str]]) -> tuple[BoundValue, ...]:
        return tuple(
            BoundValue(span=Span(start=start, end=end, text=frame.text[start:end]), column=column)
            for start, end, column in spans
        )

    return frame.model_copy(update={"values": bound(found), "mentions": bound(mentioned)})


def find(phrases: list[str], text: str) -> Span | None:
    pattern = cached_pattern(tuple(phrases))
    match = pattern.search(text) if pattern else None
    return span_of(match) if match else None


def operation_of(text: str, words: Lexicon, unit: Span | None = None) -> tuple[Operation, Span | None]:
    """The first operation, in lexicon order, whose cue the question holds (a labelled average,
    'weighted average', or one thing's own total, 'its total amount', is no operation; 'how many hours'
    asks a quantity, not a count)."""
    if (opening := find(words.count_openers, text)) and not text[: opening.start].strip():
        return Operation.count, opening
    for name, phrases in words.operations.items():
        pattern = cached_pattern(tuple(phrases))
        for match in pattern.finditer(text) if pattern else ():
            if attribute_of_one(text[: match.start()], Operation(name), words):
                continue
            if name == "count" and unit is not None and match.start() <= unit.start <= match.end() + 12:
                continue
            operation = Operation(name)
            if operation is Operation.percent_change and find(words.absolute, text):
                operation = Operation.change
            return operation, span_of(match)
    return Operation.lookup, None


def judgement_of(text: str, operation: Operation, words: Lexicon) -> str | None:
    if operation is not Operation.yes_no:
        return None
    return next((kind for kind, phrases in words.judgement.items() if find(phrases, text)), None)


def measure_of(text: str, operation: Operation, words: Lexicon, unit: Span | None = None) -> Operation | None:
    """The aggregate a change, difference or ratio is taken of, from its first cue ("the number of
    appointments": count; "the total volume": sum; "the average wait": average)."""
    if operation not in MEASURED:
        return None
    found = []
    for measure in MEASURES:
        pattern = cached_pattern(tuple(words.operations[measure.value]))
        for match in pattern.finditer(text) if pattern else ():
            if attribute_of_one(text[: match.start()], measure, words):
                continue
            if measure is Operation.count and unit is not None and match.start() <= unit.start <= match.end() + 12:
                continue
            found.append((match.start(), -len(match.group(0)), measure))
    return min(found)[2] if found else None


def attribute_of_one(before: str, operation: Operation, words: Lexicon) -> bool:
    """Whether an aggregate's cue names an attribute instead: a label ('weighted average') or one
    thing's own total or average ('its total amount')."""
    if operation is Operation.average and labelled(before, words.label_prefixes):
        return True
    return operation in (Operation.sum, Operation.average) and labelled(before, words.owners_of_one)


def labelled(before: str, prefixes: list[str]) -> bool:
    return bool(prefixes) and re.search(rf"\b(?:{'|'.join(map(re.escape, prefixes))})[\s-]+$", before, re.I) is not None


def direction_of(text: str, words: Lexicon) -> tuple[str | None, Span | None]:
    """max or min, from the first ranking word not followed by 'than' (a threshold is no ranking)."""
    found = []
    for side in ("max", "min"):
        pattern = cached_pattern((*words.direction[side], *words.first_last.get(side, [])), joined=True)
        for match in pattern.finditer(text):
            if text[match.end() : match.end() + 1] == "-" and not match.group(0).lower().endswith("est"):
                continue  # 'first-generation' ranks nothing; 'highest-rated' does
            if not re.match(r"\s+than\b", text[match.end() :], re.I):
                found.append((match.start(), side, span_of(match)))
    if not found:
        return None, None
    _, side, span = min(found, key=lambda f: f[0])
    return side, span


def comparison_of(text: str, words: Lexicon) -> str | None:
    """gt or lt, from the first threshold word ("after", "less than")."""
    found = [(span.start, side) for side in ("gt", "lt") if (span := find(words.comparison[side], text))]
    return min(found)[1] if found else None


def superlative(span: Span | None, words: Lexicon) -> bool:
    ranking = {*words.superlative_only, *(w for ws in words.first_last.values() for w in ws)}
    return span is not None and span.text.lower() in ranking


def limit_of(text: str) -> int | None:
    match = TOP.search(text)
    return int(match.group(1)) if match else None


def periods_of(text: str) -> tuple[Period, ...]:
    """Every year named, in order; the ends of "from A to B" get their roles ("between" orders nothing)."""
    roles: dict[int, str] = {}
    ordered = FROM_TO.search(text)
    if ordered:
        roles = {ordered.start(1): "from", ordered.start(2): "to"}
    return tuple(
        Period(year=int(m.group(0)), span=span_of(m), role=roles.get(m.start(), "named")) for m in YEAR.finditer(text)
    )


def listed_years(text: str) -> list[int]:
    """The years named, in order, each once; "2019 to 2017" lists 2019, 2018 and 2017."""

    def written_out(match: re.Match) -> str:
        first, last = int(match.group(1)), int(match.group(2))
        if abs(last - first) > MAX_SPANNED or " and " in match.group(0):
            return f"{first} {last}"
        step = 1 if last >= first else -1
        return " ".join(str(y) for y in range(first, last + step, step))

    return years_in(YEAR_RANGE.sub(written_out, text))


def opens_with(text: str, openers: list[str]) -> bool:
    first = WORD.search(text)
    return bool(first) and first.group(0).lower() in openers


def prose_of(text: str, words: Lexicon) -> Span | None:
    """The first cue that the answer is prose a table cannot hold: a reason, a cause, a description, what
    a thing is made of or a method ("how is X calculated")."""
    auxiliaries, stems = "|".join(words.method["auxiliaries"]), "|".join(words.method["stems"])
    method = re.search(rf"\bhow\s+(?:{auxiliaries})\b[^?]*?\b(?:{stems})\w*", text, re.I)
    pattern = cached_pattern(tuple(words.prose))
    prose = next((span_of(m) for m in pattern.finditer(text) if not locates(text, m, words)), None) if pattern else None
    cues = [find(words.reason, text), prose, span_of(method) if method else None]
    return min((c for c in cues if c is not None), key=lambda c: c.start, default=None)


def locates(text: str, cue: re.Match, words: Lexicon) -> bool:
    """The prose cue opens a longer document cue and follows a noun: "the patient described in note
    VN-7" says where a row is told of, not that the answer is a description ("what is described in
    the memo?" still asks for one)."""
    opened = cached_pattern(tuple(words.document_cues)).match(text, cue.start())
    before = WORD.findall(text[: cue.start()])
    auxiliary = not before or before[-1].lower() in words.method["auxiliaries"]
    return bool(opened) and opened.end() > cue.end() and not auxiliary


def asked_of(text: str, attribute: Span | None, words: Lexicon) -> Span | None:
    """The words that name what the question asks for, apart from those that say how to find it. A
    question opening with its question word asks its head phrase ("What government position was held
    by ..."), or, where that head only gives the answer's form, the phrase it is of ("the name of the
    fight song"). A question whose question word comes late asks from the word before it ("... can
    seat how many people?", "... has a population of how many inhabitants?"; a name before it is what
    is asked about, not what is asked)."""
    found = list(WORD.finditer(text))
    asking = [i for i, w in enumerate(found) if w.group(0).lower() in words.question_words]
    if not asking:
        return None
    if asking[0] == 0:
        if attribute is None or found[0].group(0).lower() in {*words.person_openers, "when", "where", "why"}:
            return None  # "Who was known as ...": a person is asked, the words after say how to find them
        heads = {w.lower() for w in WORD.findall(attribute.text)} - set(words.stopwords)
        if heads - set(words.answer_forms):
            return attribute
        of = re.match(r"\s+of\s+", text[attribute.end :])
        return attribute_of(subject_span(text, attribute.end + of.end()), words) if of else None
    at = asking[-1]
    skipped = set(words.stopwords) | set(words.attribute_ends)
    before = next((i for i in range(at - 1, -1, -1) if found[i].group(0).lower() not in skipped), None)
    start = at if before is None or found[before].group(0)[0].isupper() else before
    end = len(text.rstrip(" ?.!"))
    return Span(start=found[start].start(), end=end, text=text[found[start].start() : end])


def subject_span(text: str, start: int) -> Span:
    end = len(text.rstrip(" ?.!"))
    return Span(start=start, end=end, text=text[start:end])


def relative_of(text: str, words: Lexicon, asked: Span | None = None) -> Span | None:
    """The first word past the question's first that opens a clause about a thing it names (not the
    question word of what it asks: "formed by who?")."""
    for match in WORD.finditer(text):
        if asked is not None and asked.start <= match.start() < asked.end:
            continue
        if match.start() > 0 and match.group(0).lower() in words.relative_words:
            return Span(start=match.start(), end=match.end(), text=match.group(0))
    return None


def clauses_of(text: str) -> tuple[Span, ...]:
    """The sentences and joined clauses of a question, each without its closing punctuation."""
    found, start = [], 0
    for brk in [*CLAUSE_BREAK.finditer(text), None]:
        end = brk.start() if brk else len(text)
        body = text[start:end]
        lead = len(body) - len(body.lstrip())
        trimmed = body.strip().rstrip("?.!;, ")
        if trimmed:
            found.append(Span(start=start + lead, end=start + lead + len(trimmed), text=trimmed))
        start = brk.end() if brk else start
    return tuple(found)


def predicate_of(text: str, words: Lexicon) -> Predicate | None:
    """Subject and verb of "what is X?" / "what does X represent?" ("what are X mainly comprised of?"
    says `comprise` of X)."""
    match = PREDICATE.match(text)
    if match is None:
        return None
    start, rest = match.start("rest"), match.group("rest")
    owner = cached_pattern(tuple(f"{w}'s" for w in words.subject_owners))
    if owner is not None and (owned := owner.match(rest)) is not None:
        skipped = len(rest) - len(rest[owned.end() :].lstrip())
        start, rest = start + skipped, rest[skipped:]
    does = match["auxiliary"].lower() in ("do", "does", "did")
    hedge = "|".join(words.hedges)
    told = re.search(rf"\s+(?:(?:{hedge})\s+)?(?P<verb>[a-z]+)(?:\s+(?:{hedge}))?(?:\s+of)?$", rest)
    verb = told["verb"].lower() if told else None
    defining = next((v for v in words.definition_verbs if verb in {v, *(v + e for e in INFLECTIONS)}), None)
    if not does and defining is None:
        told, verb = None, None
    elif not does:
        verb = defining
    subject = rest[: told.start()] if told else rest
    if not subject.strip():
        return None
    return Predicate(
        subject=Span(start=start, end=start + len(subject), text=subject),
        verb=verb,
        auxiliary="do" if does else "be",
        defines=defining is not None or (not does and verb is None),
    )


def subject_of(text: str) -> Span | None:
    match = ASKED.search(text)
    if not match:
        return None
    subject = match.group("subject").rstrip()
    return Span(start=match.start("subject"), end=match.start("subject") + len(subject), text=subject)


def attribute_of(subject: Span | None, words: Lexicon) -> Span | None:
    """The subject up to its first preposition, relative word or verb; None when that leaves nothing."""
    if subject is None:
        return None
    ends = cached_pattern(tuple(words.attribute_ends))
    cut = ends.search(subject.text) if ends else None
    head = subject.text[: cut.start() if cut else len(subject.text)].rstrip(" ,")
    if not head.strip():
        return None
    return Span(start=subject.start, end=subject.start + len(head), text=head)


def question_word(text: str, words: Lexicon) -> str | None:
    found = find(words.question_words, text)
    if found is None:
        return None
    word = found.text.lower()
    return "who" if word in ("whom", "whose") else word


def entity_of(text: str, words: Lexicon) -> str | None:
    """The kind of thing asked for: 'which lender' -> lender, who -> person (what a count counts is `counted`)."""
    if opens_with(text, words.person_openers):
        return "person"
    match = WHICH.search(text)
    if not match:
        return None
    noun = match.group(1).lower()
    if noun in words.stopwords or noun in ("year", "years"):
        return None
    return singular(noun)


def one_meant(text: str, words: Lexicon, said: Span | None) -> str | None:
    """The kind of thing exactly one is meant of: 'which loan ...' (not 'which loans'), or a
    statement saying 'One loan was written off ...' (`said`, read by one_said)."""
    match = WHICH.search(text)
    if match and entity_of(text, words) == match.group(1).lower():
        return match.group(1).lower()
    return said.text.split()[-1].lower() if said else None


def one_said(text: str, words: Lexicon) -> Span | None:
    """'one loan' in a clause that states rather than asks: "One loan was written off because ...",
    "The Q4 memo puts one supplier on notice. How many ..."."""
    for clause in clauses_of(text):
        if find(words.question_words, clause.text):
            continue
        for match in ONE.finditer(clause.text):
            noun = match.group(1).lower()
            if noun not in words.stopwords and not is_plural(noun):
                return Span(start=clause.start + match.start(), end=clause.start + match.end(), text=match.group(0))
    return None


def unit_of(text: str, words: Lexicon) -> Span | None:
    """The unit after 'how many' / 'how much' ('how many more kilograms', 'how many hours')."""
    match = HOW_MANY.search(text) or HOW_MUCH.search(text)
    if match is None:
        return None
    known = {*words.time_units, *words.quantity_units}
    return span_of(match, 1) if singular(match.group(1).lower()) in known else None


def counted_of(text: str, words: Lexicon) -> Span | None:
    """ "how many exhibits", or up to the plural noun adjectives lead to: "how many restored bronze exhibits"."""
    match = HOW_MANY.search(text)
    if not match:
        return None
    end, after = match.end(), WORD.finditer(text, match.end())
    if not is_plural(match.group(1).lower()):
        for _, word in zip(range(3), after, strict=False):
            if word.group(0).lower() in words.stopwords:
                break
            if is_plural(word.group(0).lower()):
                end = word.end()
                break
    return Span(start=match.start(), end=end, text=text[match.start() : end])


def shape_of(text: str, operation: Operation, asks_year: bool, several: bool, words: Lexicon) -> str:
    if asks_year:
        return "year"
    if several or operation is Operation.list:
        return "list"
    if operation is Operation.yes_no:
        return "yes_no"
    if operation in (Operation.reason, Operation.definition):
        return "text"
    if operation is not Operation.lookup and operation is not Operation.extreme:
        return "number"
    if re.match(r"\s*(?:when|what date|what time|on what day)\b", text, re.I):
        return "date"
    if re.match(r"\s*how (?:much|many|long|far|old)\b", text, re.I):
        return "number"
    if opens_with(text, [*words.person_openers, "which", "where"]):
        return "entity"
    return "text"
