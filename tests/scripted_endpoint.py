"""An OpenAI-compatible chat endpoint that answers from a script: what processes the tests do not
control (a Ray job's actors, Spark's Python workers) reach a scripted model through it."""

import json
from collections import Counter

from batch_child import REPLIES
from fastapi import FastAPI


def scripted_endpoint(replies: dict = REPLIES) -> tuple[FastAPI, Counter]:
    """The app, and a count of the requests it answered per output schema."""
    app = FastAPI()
    calls: Counter = Counter()

    @app.post("/v1/chat/completions")
    def complete(body: dict) -> dict:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        calls[schema] += 1
        content = json.dumps(replies.get(schema, {}))
        return {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": len(content.split())},
        }

    return app, calls
