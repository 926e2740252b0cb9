"""Batch question answering as a Ray job: the entry point a cluster runs.

    ray job submit --address http://HEAD:8265 --working-dir . -- \\
        python ray_jobs/batch_ask.py questions.parquet --lake /shared/lake --name compliance --actors 4

It is `lakeplanner batch` (same options, see `--help`) with a pool of 2 actors unless `--actors` says
otherwise, and the questions streamed through Ray Data (a lake table or Parquet files of any size,
`--block-rows` at a time) unless `--no-stream` says otherwise, on the cluster the job was submitted
to: answers go to the lake's lakeplanner.answers_NAME,
exactly once per question id; submit the same command again after a failure and it goes on. Progress
is a log line per question, in the job's log (`ray job logs`, the dashboard's Jobs page).
"""

from __future__ import annotations

import sys

from lakeplanner.cli import app

DEFAULTS = {"--actors": ["--actors", "2"], "--stream": ["--stream"]}
SAYS = {"--actors": ("--actors",), "--stream": ("--stream", "--no-stream")}


def main(argv: list[str]) -> None:
    """`lakeplanner batch` with argv, and each default the arguments do not override."""
    defaults = [
        value
        for option, value in DEFAULTS.items()
        if not any(a in SAYS[option] or a.startswith(f"{option}=") for a in argv)
    ]
    app(["batch", *argv, *(v for value in defaults for v in value)], prog_name="batch_ask.py")


if __name__ == "__main__":
    main(sys.argv[1:])
