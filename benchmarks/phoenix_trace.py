"""One real answer's trace in Phoenix: a screenshot of it in Phoenix's UI, and the share of its spans
Phoenix received.

Phoenix (from `make phoenix`) starts on loopback; the sample lake is ingested; the README's two-hop
question is asked with the real local model, its spans exported over OTLP/HTTP to Phoenix as the
service exports them (`LAKEPLANNER_EXEC_OTLP_ENDPOINT`); Phoenix's own client reads them back; headless
Chromium (Debian's) opens the trace in Phoenix's UI for the screenshot.

    python benchmarks/phoenix_trace.py    # writes results/phoenix.{md,json} and results/phoenix-trace.png
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from phoenix_server import phoenix_server, spans_in_phoenix  # noqa: E402

from lakeplanner import Lake, __version__, sample_lake_path  # noqa: E402
from lakeplanner.execute.settings import ExecSettings  # noqa: E402
from lakeplanner.lineage.tracing import read_spans  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CHROMIUM = "/usr/bin/chromium"
QUESTION = "What monthly availability (uptime) does the contract of the customer that signed up earliest guarantee?"
FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def project_path(project_rowid: int = 1) -> str:
    """Phoenix's UI addresses a project by its GraphQL id, base64 of 'Project:<row id>'."""
    return "/projects/" + base64.b64encode(f"Project:{project_rowid}".encode()).decode()


def screenshot(base: str, trace_id: str, path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(f"{base}{project_path()}/traces/{trace_id}", wait_until="networkidle")
        page.get_by_text("lakeplanner.ask").first.wait_for(timeout=60_000)
        time.sleep(2)  # the span tree's details settle after the first paint
        page.screenshot(path=str(path))
        browser.close()


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="lp-phoenix-"))
    lake = Lake.create(work / "lake")
    log("ingesting the sample lake")
    lake.ingest(sample_lake_path())
    with phoenix_server() as base:
        log(f"Phoenix at {base}; asking with the local model")
        started = time.perf_counter()
        answer = lake.ask(QUESTION, settings=ExecSettings(mode="serial", otlp_endpoint=f"{base}/v1/traces"))
        seconds = time.perf_counter() - started
        sent = read_spans(lake.path, answer.trace_id)
        received: list[dict] = []
        deadline = time.monotonic() + 60
        while len(received) < len(sent) and time.monotonic() < deadline:
            time.sleep(2)
            received = [s for s in spans_in_phoenix(base) if s["context"]["trace_id"] == answer.trace_id]
        log(f"{len(received)} of {len(sent)} spans in Phoenix; screenshot")
        screenshot(base, answer.trace_id, RESULTS / "phoenix-trace.png")
    kinds = sorted({s["span_kind"] for s in received})
    result = {
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "version": __version__,
        "question": QUESTION,
        "answer": answer.text,
        "abstained": answer.abstained,
        "seconds": round(seconds, 1),
        "trace_id": answer.trace_id,
        "spans_sent": len(sent),
        "spans_received": len(received),
        "phoenix_spans_received_fraction": round(len(received) / len(sent), 3) if sent else None,
        "span_kinds": kinds,
    }
    (RESULTS / "phoenix.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "phoenix.md").write_text(
        "\n".join(
            [
                "# One answer's trace in Phoenix",
                "",
                f"`python benchmarks/phoenix_trace.py` at {result['commit']} ({result['date']}), Phoenix 20.26.1 on "
                "loopback, the real local model, the sample lake.",
                "",
                f"Question: {QUESTION}",
                f"Answer: {answer.text} ({'abstained' if answer.abstained else 'answered'} in {seconds:.0f} s)",
                "",
                "| spans sent | spans Phoenix returned | fraction | OpenInference kinds |",
                "|---:|---:|---:|---|",
                f"| {len(sent)} | {len(received)} | {result['phoenix_spans_received_fraction']} | {', '.join(kinds)} |",
                "",
                "![the trace in Phoenix](phoenix-trace.png)",
                "",
            ]
        )
    )
    print((RESULTS / "phoenix.md").read_text())
    lake.close()


if __name__ == "__main__":
    main()
