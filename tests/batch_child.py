"""A batch run in its own process, for the kill-and-resume test: a scripted model that takes a moment
per call, questions from a JSONL file, two answers per commit."""

import json
import sys
import time

from lakeplanner import Lake
from lakeplanner.batch import questions_of, read_source, run_batch
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend

PLAN = {
    "nodes": [
        {
            "question": "count customers",
            "tool": "sql",
            "label": "$var_1",
            "source": "customers",
            "should_expose_answer": True,
            "answer_description": "the count",
        }
    ]
}
REPLIES = {
    "GeneratedPlan": PLAN,
    "SqlDraft": {"sql": "SELECT count(*) AS n FROM customers"},
    "Draft": {"answer": "40", "sentence": "There are 40.", "sources": ["E1"], "abstain": False},
}


def scripted_reply(schema) -> str:
    """The scripted model's reply to a request for `schema`'s output (an empty object for others)."""
    return json.dumps(REPLIES.get((schema or {}).get("title"), {}))


def scripted() -> LLM:
    return LLM(FakeBackend(lambda messages, schema: scripted_reply(schema)))


def reply(messages, schema):
    time.sleep(float(sys.argv[3]))
    return scripted_reply(schema)


def main() -> None:
    lake = Lake.open(sys.argv[1])
    questions = questions_of(read_source(sys.argv[2], lake))
    report = run_batch(lake, questions, name="resume", llm=LLM(FakeBackend(reply)), commit_every=2)
    print(report.model_dump_json(), flush=True)
    lake.close()


if __name__ == "__main__":
    main()
