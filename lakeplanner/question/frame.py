"""The question frame: what a question asks, read once, with the text span behind every field."""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from lakeplanner.question.words import (
    content_stems,
    content_words,
    mentions,
    singular,
    stem,
    tokens,
    word_ends,
    word_position,
    word_set,
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Span(_Frozen):
    """question[start:end] == text."""

    start: int
    end: int
    text: str


class Operation(StrEnum):
    lookup = "lookup"
    count = "count"
    sum = "sum"
    average = "average"
    change = "change"
    percent_change = "percent_change"
    ratio = "ratio"
    share = "share"
    difference = "difference"
    extreme = "extreme"
    list = "list"
    yes_no = "yes_no"
    definition = "definition"
    reason = "reason"


COMPUTED = frozenset(
    {
        Operation.average,
        Operation.change,
        Operation.percent_change,
        Operation.ratio,
        Operation.share,
        Operation.difference,
    }
)


MEASURED = frozenset({Operation.change, Operation.percent_change, Operation.difference, Operation.ratio})
MEASURES = (Operation.count, Operation.sum, Operation.average)


class Period(_Frozen):
    """A year the question names; 'from' and 'to' mark the ends of a change ("from 2023 to 2024")."""

    year: int
    span: Span
    role: Literal["named", "from", "to"] = "named"


class DateRange(_Frozen):
    """A period shorter than a year, or a range of dates, the question names: [start, end)."""

    start: date
    end: date
    grain: Literal["quarter", "half", "month", "range"]
    span: Span


class BoundValue(_Frozen):
    """A value of the lake the question names, bound to the column that holds it."""

    span: Span
    column: str  # table.column


class Predicate(_Frozen):
    """What a "what is X?" or "what does X represent?" question says of its subject: the subject (its
    article and an owner such as "the museum's" left out) and the verb (None for a plain is/are)."""

    subject: Span
    verb: str | None = None
    auxiliary: Literal["be", "do"] = "be"
    defines: bool = False  # it asks what the subject is, represents, consists of: a passage's definition


class QuestionFrame(_Frozen):
    text: str
    packs: tuple[str, ...] = ()
    operation: Operation = Operation.lookup
    operation_span: Span | None = None
    measure: Operation | None = None  # what a change or ratio is of: "the number of" (count), "total" (sum)
    absolute: bool = False  # "the absolute change": a change in points, not in percent
    percent: bool = False  # the answer is asked in percent ("what percentage of", "in %")
    direction: Literal["max", "min"] | None = None
    direction_span: Span | None = None
    superlative: bool = False  # the direction ranks ("the most", "the earliest"), not compares ("more than")
    limit: int | None = None
    comparison: Literal["gt", "lt"] | None = None  # a threshold: "after 2024-06-01", "under 10000"
    negated: bool = False  # "not yet paid", "without a contract"
    periods: tuple[Period, ...] = ()
    listed_years: tuple[int, ...] = ()  # the years named, ranges written out ("2017-2019" is three)
    ranges: tuple[DateRange, ...] = ()  # quarters, halves, months and date ranges named (question/dates.py)
    asks_year: bool = False  # the answer is a year ("in which year ...")
    several: bool = False  # the answer is a list ("each", "which years", a value per named year)
    several_span: Span | None = None
    second_ask: Span | None = None  # "..., and how many loans ...": a second value is asked
    reason: Span | None = None  # the cue of a why / reason question
    prose: Span | None = None  # the first cue that the answer is prose: a reason, a cause, a description, a method
    document: Span | None = None  # a cue that a document tells part of it ("according to", "because")
    names_document: Span | None = None  # a kind of document it names ("the driving hours policy")
    subject: Span | None = None  # what is asked ("the total volume of spoiled batches")
    attribute: Span | None = None  # the subject's head phrase ("the total volume"): what a lookup returns
    wh: str | None = None  # the question word: who, when, where, why, which, what, how
    entity: str | None = None  # the kind of thing asked for ("lender" in "which lender"), 'person' for who
    one: str | None = None  # the kind of thing exactly one is meant of: "which loan", "one loan was ..."
    one_said: Span | None = None  # "one supplier" in a clause that states it: "The memo puts one supplier on notice"
    counted: Span | None = None  # "how many loans": what a count counts
    unit: Span | None = None  # "how many hours", "how many more kilograms": the unit a quantity is asked in
    seconds_per_unit: int | None = None  # the length of a time unit asked in ("hours": 3600)
    judgement: Literal["all", "same"] | None = None  # a yes/no over several: all hold, or values agree
    shape: Literal["number", "year", "date", "entity", "list", "yes_no", "text"] = "text"
    predicate: Predicate | None = None
    alternatives: bool = False  # it offers things to choose from ("A or B", "which", "between")
    clauses: tuple[Span, ...] = ()  # its sentences and joined clauses, in order
    asks: Span | None = None  # the words naming what it asks for: "government position", "seat how many people"
    relative: Span | None = None  # a word opening a clause about a thing it names: "who" in "the woman who portrayed"
    values: tuple[BoundValue, ...] = ()
    mentions: tuple[BoundValue, ...] = ()  # values named by part of their words ("visiting hours")
    filled: tuple[str, ...] = ()  # the fields an LLM proposed (as spans of the question) where the reader could not

    @property
    def content_words(self) -> set[str]:
        """Its words of two characters or more, function words left out (question.words)."""
        return content_words(self.text)

    @property
    def content_stems(self) -> set[str]:
        """The stems of its content words ('rows' and 'row' alike)."""
        return content_stems(self.text)

    @property
    def word_tokens(self) -> set[str]:
        """Its lower-case words and numbers (question.words.tokens)."""
        return set(tokens(self.text))

    @property
    def stems(self) -> set[str]:
        """The stems of all its words, function words included."""
        return {stem(w) for w in tokens(self.text)}

    @property
    def opens_with_question_word(self) -> bool:
        """ "What city ..." does; "... is based in what city?" asks late."""
        words = tokens(self.text)
        return bool(words) and words[0] in word_set("question_words")

    @property
    def prose_root(self) -> str | None:
        """The first five letters of the cue that the answer is prose ('reaso' of 'the reason'): a
        column whose name holds them may hold the answer."""
        return self.prose.text.lower()[:5] if self.prose is not None else None

    def without(self, phrase: str) -> str:
        """The question with each `phrase` blanked out."""
        return self.text.replace(phrase, " ")

    def text_until(self, span: Span) -> str:
        """The question up to the end of `span`."""
        return self.text[: span.end]

    def rest_of_clause(self, span: Span) -> str:
        """The question from `span` to the end of its clause ("how many loans has that member taken out")."""
        return self.text[span.start : self.clause_of(span).end]

    def position_of(self, phrase: str) -> int | None:
        """Where the question first names `phrase` as whole words (question.words.word_position)."""
        return word_position(self.text, phrase)

    def word_ends(self, word: str) -> list[int]:
        """Where each 'from' (or other `word`) of the question ends."""
        return word_ends(self.text, word)

    def with_answer(self, answer: str) -> str:
        """The question as the sentence of its answer: "What is the loan limit: 12 books."."""
        return f"{self.text.rstrip('?')}: {answer}."

    def says(self, text: str) -> bool:
        """Whether the question holds `text` as written, case aside (a value a plan names literally)."""
        return text.casefold() in self.text.casefold()

    def says_word(self, phrase: str) -> bool:
        """Whether the question holds `phrase` as whole words, case aside ('LN-1' not in 'LN-12')."""
        return mentions(self.text, phrase)

    @property
    def years(self) -> list[int]:
        """The years named, in the order named, each once."""
        return list(dict.fromkeys(p.year for p in self.periods))

    @property
    def year_order(self) -> tuple[int, int] | None:
        """(old, new) of "from A to B"."""
        ends = {p.role: p.year for p in self.periods if p.role != "named"}
        return (ends["from"], ends["to"]) if {"from", "to"} <= ends.keys() else None

    @property
    def counted_noun(self) -> str | None:
        """'loan' for "how many loans"."""
        if self.counted is None:
            return None
        return singular(self.counted.text.split()[-1].lower())

    @property
    def documents_tell(self) -> bool:
        """The question says documents tell (part of) it: it names a kind of document, a reason or a
        document cue ('according to', 'because')."""
        return self.document is not None or self.names_document is not None or self.reason is not None

    @property
    def asked_attribute(self) -> Span | None:
        """The attribute a lookup returns, where the question says it: a 'what' question's head phrase,
        or the one an LLM pointed at in a question with no question word."""
        said = self.wh == "what" or "subject" in self.filled
        return self.attribute if said else None

    @property
    def asks_kind(self) -> bool:
        """A "what KIND ..." question ("What breed were A and B?", "What occupation do they
        share?"): the answer is a thing of that kind, which prose names without naming the kind."""
        attribute = self.asked_attribute
        return attribute is not None and self.text[: attribute.start].strip().lower() == "what"

    @property
    def computed(self) -> bool:
        """An arithmetic answer: a change, a ratio, an average, a share or a difference."""
        return self.operation in COMPUTED

    def asked(self, clause: Span) -> str:
        """A clause that states one thing is meant, asked as a question: "One loan was written off
        because ..." -> "Which loan was written off because ...?"; any other clause as it is."""
        said = self.one_said
        if said is None or not clause.start <= said.start < clause.end:
            return clause.text
        which = ("Which" if said.text[0].isupper() else "which") + said.text[3:]
        at, end = said.start - clause.start, said.end - clause.start
        return f"{clause.text[:at]}{which}{clause.text[end:]}?"

    def clause_of(self, span: Span) -> Span:
        """The clause (or run of clauses) holding `span`."""
        start = max((c.start for c in self.clauses if c.start <= span.start), default=0)
        end = min((c.end for c in self.clauses if c.end >= span.end), default=len(self.text))
        return Span(start=start, end=end, text=self.text[start:end])

    def summary(self) -> dict:
        """The decided fields, for a trace attribute (spans left out)."""
        return self.model_dump(
            mode="json",
            exclude={"text", "operation_span", "direction_span", "several_span", "clauses"},
            exclude_defaults=True,
        )
