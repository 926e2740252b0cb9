"""Batch question answering as a Ray job: the entry point a cluster runs.

    ray job submit --address http://HEAD:8265 --working-dir . -- \\
        python ray_jobs/batch_ask.py --lake /shared/lake questions.parquet --name compliance --actors 4

It is `lakeplanner batch` with the Ray pool on: answers go to the lake's lakeplanner.answers_NAME,
exactly once per question id; submit the same command again after a failure and it goes on.
"""

from __future__ import annotations

import argparse
import json

from lakeplanner import Lake
from lakeplanner.batch import questions_of, read_source, run_batch
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.policy import lake_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="a lake table, or a .parquet, .csv or .jsonl file of questions")
    parser.add_argument("--lake", required=True)
    parser.add_argument("--name", default="batch")
    parser.add_argument("--id-column", default="id")
    parser.add_argument("--question-column", default="question")
    parser.add_argument("--template")
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--commit-every", type=int, default=8)
    parser.add_argument("--retry-failed", action="store_true")
    args = parser.parse_args()
    lake = Lake.open(args.lake)
    questions = questions_of(
        read_source(args.source, lake),
        id_column=args.id_column,
        question_column=args.question_column,
        template=args.template,
    )

    def progress(done: int, total: int) -> None:
        print(f"{done}/{total} questions answered", flush=True)  # the job's log in the Ray dashboard

    report = run_batch(
        lake,
        questions,
        name=args.name,
        settings=ExecSettings(mode="serial"),
        policy=lake_policy(lake.path),
        commit_every=args.commit_every,
        retry_failed=args.retry_failed,
        progress=progress,
        actors=args.actors,
    )
    print(report.model_dump_json())
    print(json.dumps({"table": report.table, "answered": report.answered, "failed": report.failed}))


if __name__ == "__main__":
    main()
