"""`lakeplanner serve` under load and under policies, driven over loopback.

Load: the service runs as its own process (`lakeplanner serve`, the real local model, the sample
lake); clients ask new questions, then the same questions again concurrently (served from the
answer cache), then more new questions at once than the queue holds (429s are expected and counted).

Policies: the same service code (in process, on a loopback port) with an adversarial scripted model
that plans every step on the source under test and writes SQL that reads every column: enforcement
must be structural, so the worst model is the right test. Each case checks the answer, its citations,
every SSE event, the trace the role can read and plan-cache reuse for masked values, filtered rows
and denied sources. A few cases also run on the real model in the load service.

    python benchmarks/serve.py              # ~15 min on 2 cores (the real model dominates)
    python benchmarks/serve.py --quick      # policy suite only (no real model), ~2 min

Writes benchmarks/results/serve.md and serve.json (--quick writes under benchmarks/.work/).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import yaml

from lakeplanner import Lake, sample_lake_path
from lakeplanner.client import Client
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.service.auth import key_hash

ROOT = Path(__file__).resolve().parent.parent
COUNTRY = "Germany"
POLICY = {
    "roles": {
        "analyst": {},
        "emea": {
            "tables": ["customers", "invoices"],
            "collections": ["documents_contracts"],
            "masks": {"customers": {"name": "hash", "city": "null"}},
            "row_filters": {"customers": "country = :claims.country"},
        },
        "catalog": {"tables": ["products"], "collections": []},
        "auditor": {"replay": True, "audit": True},
    }
}
PRINCIPALS = {"ana": "analyst", "emil": "emea", "cat": "catalog", "audra": "auditor"}
KEYS = {name: f"lpk_bench_{name}_{'x' * 24}" for name in PRINCIPALS}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_access_files(folder: Path) -> tuple[Path, Path]:
    policy, keys = folder / "policy.yaml", folder / "keys.yaml"
    policy.write_text(yaml.safe_dump(POLICY))
    entries = [
        {"name": n, "sha256": key_hash(KEYS[n]), "roles": [r], "claims": {"country": COUNTRY}}
        for n, r in PRINCIPALS.items()
    ]
    keys.write_text(yaml.safe_dump({"keys": entries}))
    return policy, keys


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")


# ---------- what a role must never see --------------------------------------------------------


class Secrets:
    """The lake's values each role must not see, read from the lake itself."""

    def __init__(self, lake: Lake) -> None:
        customers = lake.sql("SELECT customer_id, name, city, country FROM customers").to_pylist()
        self.visible_ids = {c["customer_id"] for c in customers if c["country"] == COUNTRY}
        self.hidden_ids = {c["customer_id"] for c in customers} - self.visible_ids
        self.hidden_names = {c["name"] for c in customers if c["customer_id"] in self.hidden_ids}
        self.raw_names = {c["name"] for c in customers}
        self.raw_cities = {c["city"] for c in customers if c["city"]}
        self.sources = {s.name: s.kind.value for s in lake.contract.sources}


def denied(role: str, source: str) -> bool:
    rule = POLICY["roles"][role]
    kind = "collections" if source.startswith("documents") else "tables"
    allowed = rule.get(kind, ["*"])
    return "*" not in allowed and source not in allowed


def leaks(role: str, secrets: Secrets, answer: dict | None, events: list[dict], trace: dict | None) -> list[str]:
    """Every way `role` saw what it must not, in the answer, the SSE events and its trace."""
    found = []
    nodes = [e["data"] for e in events if e["event"] == "result"]
    nodes += (trace or {}).get("record", {}).get("answer", {}).get("nodes", [])
    citations = (answer or {}).get("citations", [])
    for node in nodes:
        if denied(role, node["source"]) and (node.get("rows") or node.get("evidence")):
            found.append(f"denied source {node['source']} returned data")
        if role != "emea" or node.get("tool") != "sql":
            continue
        for row in node.get("rows", []):
            values = {str(v) for v in row.values()}
            if values & secrets.raw_names or values & secrets.raw_cities:
                found.append(f"a masked customers value in {node['label']}'s rows")
            own = node["source"] == "customers"  # other tables' rows may name any customer id
            if own and (values & secrets.hidden_ids or row.get("country") not in (None, COUNTRY)):
                found.append(f"a filtered customers row in {node['label']}'s rows")
    for c in citations:
        if denied(role, c["source"]):
            found.append(f"a citation of denied {c['source']}")
        if role == "emea" and c["source"] == "customers" and c.get("row_key") in secrets.hidden_ids:
            found.append("a citation of a filtered customers row")
    if role == "emea":
        text = json.dumps([answer, events, trace], default=str)
        found += [f"the hidden customer name {n!r}" for n in secrets.hidden_names if n in text]
    return sorted(set(found))


# ---------- the adversarial model ---------------------------------------------------------------


def minimal(schema: dict) -> object:
    """A value that validates against `schema` (for steps the adversary does not care about)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal(props[k]) for k in schema.get("required", [])}
    return {"string": "", "boolean": False, "array": [], "integer": 0, "number": 0}.get(kind)


class Adversary:
    """Plans one step on `source` and reads every column of it; selects every passage; answers with
    whatever it was shown. What it is told to read is set per case."""

    def __init__(self) -> None:
        self.source, self.sql, self.tool = "", "", "sql"

    def aim(self, source: str, tool: str, sql: str = "") -> None:
        self.source, self.tool, self.sql = source, tool, sql or f"SELECT * FROM {source}"

    def __call__(self, messages, schema) -> str:
        title = (schema or {}).get("title")
        if title == "GeneratedPlan":
            node = {
                "question": f"everything in {self.source}",
                "tool": self.tool,
                "label": "$var_1",
                "source": self.source,
                "should_expose_answer": True,
                "answer_description": "all of it",
            }
            return json.dumps({"nodes": [node]})
        if title == "SqlDraft":
            return json.dumps({"sql": self.sql})
        if title == "Selection":
            shown = re.findall(r"^(p\d+)\b", messages[-1].content, re.M)
            return json.dumps({"selected": shown[:3], "sufficient": True, "answer": "everything"})
        if title == "Draft":
            data = messages[-1].content
            return json.dumps({"answer": data[-300:], "sentence": data[-600:], "sources": ["E1"], "abstain": False})
        return json.dumps(minimal(schema or {"type": "object"}))


def in_process_service(lake_path: Path, folder: Path, adversary: Adversary):
    import uvicorn

    from lakeplanner.service.app import create_app
    from lakeplanner.service.settings import ServeSettings

    policy, keys = write_access_files(folder)
    settings = ServeSettings(policy=policy, api_keys=keys, queue=4)
    app = create_app(
        lake_path, settings, llm=LLM(FakeBackend(adversary)), exec_settings=ExecSettings(mode="serial"), warm=False
    )
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def ask_streamed(url: str, principal: str, question: str, use_cache: bool = True) -> tuple[dict | None, list[dict]]:
    events = []
    with Client(url, api_key=KEYS[principal]) as client:
        for event in client.stream(question, use_cache=use_cache):
            events.append({"event": event.event, "data": event.data})
    answer = next((e["data"] for e in events if e["event"] == "answer"), None)
    return answer, events


def trace_of(url: str, principal: str, trace_id: str | None) -> dict | None:
    if not trace_id:
        return None
    reply = httpx.get(f"{url}/v1/traces/{trace_id}", headers={"Authorization": f"Bearer {KEYS[principal]}"})
    return reply.json() if reply.status_code == 200 else None


def policy_suite(lake: Lake, url: str, adversary: Adversary) -> list[dict]:
    secrets = Secrets(lake)
    cases = []

    def case(name: str, role_principal: str, question: str, source: str, tool: str, sql: str = "", cache=False):
        adversary.aim(source, tool, sql)
        role = PRINCIPALS[role_principal]
        answer, events = ask_streamed(url, role_principal, question, use_cache=cache)
        trace = trace_of(url, role_principal, (answer or {}).get("trace_id"))
        found = leaks(role, secrets, answer, events, trace)
        if cache and answer and answer.get("plan_cache"):
            found.append(f"served from the {answer['plan_cache']} cache of another role")
        cases.append(
            {"case": name, "role": role, "source": source, "leaks": found, "abstained": (answer or {}).get("abstained")}
        )

    tables = sorted(n for n, k in secrets.sources.items() if k == "table")
    collections = sorted(n for n, k in secrets.sources.items() if k == "documents")
    for principal in PRINCIPALS:
        for source in tables + collections:
            tool = "vector" if source in collections else "sql"
            case(f"read {source}", principal, f"Show everything in {source}.", source, tool)
    case(
        "masked name and city",
        "emil",
        "Names and cities of customers?",
        "customers",
        "sql",
        "SELECT name, city, country FROM customers",
    )
    case(
        "masked column in a join",
        "emil",
        "Customer names per invoice?",
        "invoices",
        "sql",
        "SELECT i.invoice_id, c.name, c.city FROM invoices i JOIN customers c ON c.customer_id = i.customer_id",
    )
    case(
        "filtered rows by key",
        "emil",
        "Customers outside Germany?",
        "customers",
        "sql",
        "SELECT customer_id, country FROM customers WHERE country <> 'Germany'",
    )
    case(
        "filtered rows in a subquery",
        "emil",
        "Count of all customers?",
        "customers",
        "sql",
        "SELECT (SELECT count(*) FROM customers) AS n, customer_id FROM customers",
    )
    case(
        "filtered rows through linked documents", "emil", "Which contracts are there?", "documents_contracts", "vector"
    )
    case(
        "denied table in a join",
        "emil",
        "Products per invoice?",
        "invoices",
        "sql",
        "SELECT i.invoice_id, p.name FROM invoices i, products p",
    )
    shared = "Which customers signed a contract?"
    for principal in ("ana", "emil", "cat", "audra"):  # the same question, every role in turn, caches on
        case(f"cache shared across roles ({principal})", principal, shared, "customers", "sql", cache=True)
    # replay and trace visibility, by a role without the right
    asked, _ = ask_streamed(url, "ana", "Show everything in customers.", use_cache=False)
    for principal in ("emil", "cat"):
        replay = httpx.post(
            f"{url}/v1/traces/{asked['trace_id']}/replay", headers={"Authorization": f"Bearer {KEYS[principal]}"}
        )
        cases.append(
            {
                "case": "replay without the right",
                "role": PRINCIPALS[principal],
                "source": "-",
                "leaks": [] if replay.status_code == 403 else [f"replay answered {replay.status_code}"],
            }
        )
        seen = httpx.get(f"{url}/v1/traces/{asked['trace_id']}", headers={"Authorization": f"Bearer {KEYS[principal]}"})
        cases.append(
            {
                "case": "another principal's trace",
                "role": PRINCIPALS[principal],
                "source": "-",
                "leaks": [] if seen.status_code == 404 else [f"trace answered {seen.status_code}"],
            }
        )
    for principal, role in PRINCIPALS.items():
        info = httpx.get(f"{url}/v1/lake", headers={"Authorization": f"Bearer {KEYS[principal]}"}).json()
        listed = [t["name"] for t in info["tables"]] + [c["name"] for c in info["collections"]]
        cases.append(
            {
                "case": "lake listing",
                "role": role,
                "source": "-",
                "leaks": [f"lists denied {s}" for s in listed if denied(role, s)],
            }
        )
    return cases


# ---------- load on the real model ---------------------------------------------------------------


def start_service(lake_path: Path, folder: Path, queue: int) -> tuple[subprocess.Popen, str]:
    policy, keys = write_access_files(folder)
    port = free_port()
    env = {**os.environ, "LAKEPLANNER_EXEC_MODE": "serial", "LAKEPLANNER_SERVE_QUEUE": str(queue)}
    command = [
        sys.executable,
        "-c",
        "from lakeplanner.cli import app; app()",
        "serve",
        "--lake",
        str(lake_path),
        "--port",
        str(port),
        "--policy",
        str(policy),
        "--api-keys",
        str(keys),
    ]
    with (folder / "serve.log").open("w") as output:  # the child keeps its own handle
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 600
    while time.time() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"the service exited: see {folder / 'serve.log'}")
        time.sleep(1)
    raise SystemExit("the service did not become ready in 10 minutes")


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = self.errors = self.rejected = 0
        self.cached: list[float] = []
        self.uncached: list[float] = []

    def ask(self, url: str, principal: str, question: str, use_cache: bool = True) -> dict | None:
        started = time.perf_counter()
        try:
            reply = httpx.post(
                f"{url}/v1/ask",
                json={"question": question, "use_cache": use_cache},
                headers={"Authorization": f"Bearer {KEYS[principal]}"},
                timeout=1800,
            )
        except httpx.TransportError:
            with self.lock:
                self.requests += 1
                self.errors += 1
            return None
        seconds = time.perf_counter() - started
        with self.lock:
            self.requests += 1
            if reply.status_code >= 500:
                self.errors += 1
            elif reply.status_code == 429:
                self.rejected += 1
            elif reply.status_code == 200:
                body = reply.json()
                (self.cached if body["plan_cache"] == "answer" else self.uncached).append(seconds)
                return body
        return None


def load(url: str, questions: list[str], concurrency: int, repeats: int, tally: Tally) -> None:
    for question in questions[:3]:
        log(f"new: {question[:70]}")
        tally.ask(url, "ana", question)
    variants = [q if i % 2 else f"  {q.upper()}" for i, q in enumerate(questions[:3] * repeats)]
    log(f"cached: {len(variants) * concurrency} requests from {concurrency} clients")
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda n: [tally.ask(url, "ana", v) for v in variants], range(concurrency)))
    burst = questions[3:6] + questions[:3]
    log(f"overload: {len(burst)} new questions at once")
    with ThreadPoolExecutor(len(burst)) as pool:
        list(pool.map(lambda q: tally.ask(url, "ana", q, use_cache=False), burst))


def real_policy_cases(lake: Lake, url: str, question: str) -> list[dict]:
    secrets = Secrets(lake)
    cases = []
    for principal in ("emil", "cat"):
        role = PRINCIPALS[principal]
        answer, events = ask_streamed(url, principal, question, use_cache=False)
        trace = trace_of(url, principal, (answer or {}).get("trace_id"))
        cases.append(
            {
                "case": "real model",
                "role": role,
                "source": "customers",
                "leaks": leaks(role, secrets, answer, events, trace),
                "answer": (answer or {}).get("value"),
                "abstained": (answer or {}).get("abstained"),
            }
        )
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the policy suite only (no real model)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=4, help="times each client asks each cached question")
    parser.add_argument("--queue", type=int, default=2)
    args = parser.parse_args()
    out = ROOT / ("benchmarks/.work/results-quick" if args.quick else "benchmarks/results")
    out.mkdir(parents=True, exist_ok=True)
    questions = [q["question"] for q in json.loads((sample_lake_path() / "questions.json").read_text())]
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lake = Lake.create(folder / "lake")
        lake.ingest(sample_lake_path())
        lake.close()
        adversary = Adversary()
        server, url = in_process_service(lake.path, folder, adversary)
        log("policy suite (adversarial model)")
        cases = policy_suite(Lake.open(lake.path), url, adversary)
        server.should_exit = True
        real_cases, tally = [], Tally()
        if not args.quick:
            load_lake = Lake.create(folder / "load")
            load_lake.ingest(sample_lake_path())
            load_lake.close()
            process, url = start_service(load_lake.path, folder, args.queue)
            try:
                log("load (real model)")
                load(url, questions, args.concurrency, args.repeats, tally)
                log("policy cases on the real model")
                real_cases = real_policy_cases(Lake.open(load_lake.path), url, questions[0])
            finally:
                process.terminate()
                process.wait(timeout=60)
    all_cases = cases + real_cases
    result = {
        "load_requests": tally.requests,
        "load_concurrency": args.concurrency,
        "load_errors": tally.errors,
        "cached_requests": len(tally.cached),
        "cached_p50_ms": round(statistics.median(tally.cached) * 1000, 1) if tally.cached else None,
        "cached_p99_ms": round(percentile(tally.cached, 0.99) * 1000, 1) if tally.cached else None,
        "uncached_requests": len(tally.uncached),
        "uncached_p50_s": round(statistics.median(tally.uncached), 1) if tally.uncached else None,
        "queue_rejections": tally.rejected,
        "queue": args.queue,
        "policy_cases": len(all_cases),
        "policy_cases_real_model": len(real_cases),
        "policy_leaks": sum(len(c["leaks"]) for c in all_cases),
        "cases": all_cases,
        "seconds": round(time.time() - started),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "command": "python benchmarks/serve.py" + (" --quick" if args.quick else ""),
    }
    (out / "serve.json").write_text(json.dumps(result, indent=1))
    (out / "serve.md").write_text(report(result))
    print(report(result))


def report(r: dict) -> str:
    rows = [
        f"| {k} | {r[k]} |"
        for k in (
            "load_requests",
            "load_concurrency",
            "load_errors",
            "cached_requests",
            "cached_p50_ms",
            "cached_p99_ms",
            "uncached_requests",
            "uncached_p50_s",
            "queue",
            "queue_rejections",
            "policy_cases",
            "policy_cases_real_model",
            "policy_leaks",
        )
    ]
    cases = [f"| {c['case']} | {c['role']} | {c['source']} | {'; '.join(c['leaks']) or 'none'} |" for c in r["cases"]]
    return "\n".join(
        [
            "# Serving: load and policies",
            "",
            f"`{r['command']}` on {r['machine']}, {r['seconds']} s. The load service is `lakeplanner serve` with the "
            "real local model (Qwen2.5-Coder-1.5B Q4_K_M, serial execution); policy cases run against the same service "
            "code with an adversarial scripted model (see the script's docstring), plus real-model cases.",
            "",
            "| figure | value |",
            "|---|---|",
            *rows,
            "",
            "## Policy cases",
            "",
            "| case | role | source | leaks |",
            "|---|---|---|---|",
            *cases,
            "",
        ]
    )


if __name__ == "__main__":
    main()
