"""Run with Phoenix's own environment (.venv-phoenix): print every span Phoenix holds for a project, as
its Python client returns them, as JSON. Usage: phoenix_spans.py BASE_URL PROJECT"""

import json
import sys

from phoenix.client import Client


def main(base_url: str, project: str) -> None:
    spans = Client(base_url=base_url).spans.get_spans(project_identifier=project, limit=10_000, timeout=30)
    print(json.dumps(list(spans), default=str))


if __name__ == "__main__":
    main(*sys.argv[1:3])
