"""lakeplanner answers inside Spark: each partition's questions go to a running `lakeplanner serve`,
a few at a time, with retries, or are asked in the executor itself (`InExecutor`, against the model its
environment names: an OpenAI-compatible or vLLM endpoint); a question that fails gets its error in its
row, never the job's end.

    from spark_udfs import Service, ask_column, register_ask
    answered = ask_column(questions_df, Service(url="http://lakeplanner:8321", api_key="lpk_..."))
    register_ask(spark, Service(url=...))   # SQL: SELECT id, lakeplanner_ask(question) FROM questions
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, Field
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from lakeplanner.batch.answers import CITATION, SCHEMA
from lakeplanner.client import Client, ServiceError, ServiceUnreachableError
from lakeplanner.errors import LakeplannerError

RETRIED_STATUSES = frozenset({429, 502, 503, 504})  # busy, or restarting: worth asking again
ANSWER = pa.struct(
    [
        *(SCHEMA.field(name) for name in ("value", "items", "sentence", "citations", "confidence", "abstained")),
        *(SCHEMA.field(name) for name in ("reason", "trace_id")),
        ("error", pa.string()),
    ]
)  # an answer as the batch answers table holds it, and the error when a question failed
EMPTY_QUESTION = {"error": "ValueError: the question is empty", "abstained": True}


class Service(BaseModel):
    """Where the answers come from, and how hard each Spark task may press it."""

    url: str = Field(description="the lakeplanner service, e.g. http://lakeplanner:8321")
    api_key: str | None = Field(None, description="an lpk_ key of `lakeplanner keys new`, if the service wants one")
    role: str | None = Field(None, description="ask under this role of the service's policy")
    concurrency: int = Field(4, ge=1, description="questions in flight per Spark task (per executor: times its cores)")
    retries: int = Field(3, ge=0, description="further tries of a question the service was too busy or down for")


def transient(error: BaseException) -> bool:
    return isinstance(error, ServiceUnreachableError) or (
        isinstance(error, ServiceError) and error.status in RETRIED_STATUSES
    )


def answer_of(client: Client, question: str | None, service: Service) -> dict:
    """The answer struct of one question: the service's answer, or the error that stopped it."""
    if not question or not question.strip():
        return dict(EMPTY_QUESTION)
    retrying = Retrying(
        stop=stop_after_attempt(service.retries + 1),
        wait=wait_exponential(multiplier=0.5, max=8),
        retry=retry_if_exception(transient),
        reraise=True,
    )
    try:
        reply = retrying(client.ask, question, role=service.role)
    except LakeplannerError as e:
        return failed(e)
    return answer_struct(reply, reply.sentence)


def failed(error: LakeplannerError) -> dict:
    return {"error": f"{type(error).__name__}: {error}", "abstained": True}


def answer_struct(found, sentence: str | None) -> dict:
    """The ANSWER struct of a service reply or an `Answer` (they name the sentence differently)."""
    return {
        "value": found.value,
        "items": found.items,
        "sentence": sentence,
        "citations": [c.model_dump(include=set(CITATION.names)) for c in found.citations],
        "confidence": found.confidence,
        "abstained": found.abstained,
        "reason": found.reason,
        "trace_id": found.trace_id,
    }


class InExecutor(BaseModel):
    """Answers asked in the Spark executor itself: each Python worker opens the lake (a path every
    executor reads, with a Milvus server as its vector store when several workers run at once; Milvus
    Lite admits one process) and asks with the model the executor's environment configures, e.g.
    spark.executorEnv.LAKEPLANNER_LLM_BACKEND=openai and LAKEPLANNER_LLM_BASE_URL=http://vllm:8000/v1."""

    lake: str = Field(description="the lake's folder, as the executors see it")
    role: str | None = Field(None, description="ask under this role of the lake's policy.yaml")
    llm: dict[str, str] = Field(
        default_factory=dict,
        description="LLM settings (as LAKEPLANNER_LLM_* names them, lower case without the prefix: backend, "
        "base_url, model) over the executor's environment",
    )


Answerer = Service | InExecutor


@functools.cache
def executor_lake(path: str):
    """The lake, opened once per Python worker and kept for its later tasks."""
    from lakeplanner import Lake

    return Lake.open(path)


@functools.cache
def executor_llm(settings: tuple[tuple[str, str], ...]):
    """The model, made once per Python worker: the executor's LAKEPLANNER_LLM_* settings, `settings` over them."""
    from lakeplanner.llm.base import get_llm
    from lakeplanner.llm.settings import LLMSettings

    return get_llm(LLMSettings(**dict(settings)))


def asked_here(question: str | None, answerer: InExecutor) -> dict:
    """The answer struct of one question asked in this process, or the error that stopped it."""
    from lakeplanner.policy import lake_policy

    if not question or not question.strip():
        return dict(EMPTY_QUESTION)
    lake = executor_lake(answerer.lake)
    policy = lake_policy(lake.path)
    access = policy.grant(answerer.role) if policy is not None and answerer.role else None
    try:
        answer = lake.ask(question, access=access, llm=executor_llm(tuple(sorted(answerer.llm.items()))))
    except LakeplannerError as e:
        return failed(e)
    return answer_struct(answer, answer.text)


def answers_of(questions: list[str | None], service: Answerer) -> pa.Array:
    """The answer structs of `questions`, in order: from the service, at most `service.concurrency` asked
    at once, or asked here one after another (`InExecutor`)."""
    if isinstance(service, InExecutor):
        return pa.array([asked_here(q, service) for q in questions], type=ANSWER)
    with Client(service.url, api_key=service.api_key) as client, ThreadPoolExecutor(service.concurrency) as pool:
        answers = list(pool.map(lambda q: answer_of(client, q, service), questions))
    return pa.array(answers, type=ANSWER)


def spark_type(arrow_type: pa.DataType):
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(arrow_type)


def ask_column(frame, service: Answerer, *, question_column: str = "question", answer_column: str = "answer"):
    """`frame` with one more column, `answer_column`: the struct of each row's answer (value, items,
    sentence, citations, confidence, abstained, reason, trace_id, error). Runs with mapInArrow, so
    rows travel to the Python workers as Arrow batches."""
    from pyspark.sql.types import StructField, StructType

    if question_column not in frame.columns:
        raise LakeplannerError(
            f"the DataFrame has no column {question_column!r}",
            hint=f"pass question_column=; columns: {', '.join(frame.columns)}",
        )
    schema = StructType([*frame.schema.fields, StructField(answer_column, spark_type(ANSWER))])

    def answer_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            answers = answers_of(batch.column(question_column).to_pylist(), service)
            yield pa.RecordBatch.from_arrays([*batch.columns, answers], names=[*batch.schema.names, answer_column])

    return frame.mapInArrow(answer_batches, schema)


def register_ask(spark, service: Answerer, name: str = "lakeplanner_ask"):
    """Register `name` as a SQL function of one question: `SELECT id, lakeplanner_ask(question).value
    FROM questions`. A pandas UDF, so Spark hands it a whole Arrow batch of questions at a time."""
    from pyspark.sql.functions import pandas_udf

    @pandas_udf(spark_type(ANSWER))
    def ask(questions: pd.Series) -> pd.DataFrame:
        return pd.DataFrame(answers_of(questions.tolist(), service).to_pylist(), columns=ANSWER.names)

    return spark.udf.register(name, ask)
