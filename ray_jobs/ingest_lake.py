"""Ingest as a Ray job: build or refresh a lake on the cluster's shared storage.

    ray job submit --address http://HEAD:8265 --working-dir . -- \\
        python ray_jobs/ingest_lake.py /shared/raw --lake /shared/lake

It is `lakeplanner ingest` (same options, see `--help`): tables become Iceberg tables, documents
become chunks in the vector store, and the lake's contract is discovered; run again on the same
folder, rows are upserted by their identity keys (new snapshots, no duplicates) and changed documents
replace their chunks. The job's driver does the work, on whichever node Ray places it.
"""

from __future__ import annotations

import sys

from lakeplanner.cli import app


def main(argv: list[str]) -> None:
    app(["ingest", *argv], prog_name="ingest_lake.py")


if __name__ == "__main__":
    main(sys.argv[1:])
