"""LLM runtime benchmark: prompt and generation speed, time to first token with and without prefix
reuse on a ~1,500-token schema prompt, and FieldValidity of LLM schema discovery before and after
repair on the sample lake and 20 TAT-QA contexts.

    python benchmarks/llm.py                  # default model (Qwen2.5-Coder-1.5B Q4_K_M)
    python benchmarks/llm.py --model small    # 0.5B, faster
    python benchmarks/llm.py --skip-discovery # speed figures only

Writes benchmarks/results/llm.md and llm.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

from lakeplanner import Lake, sample_lake_path
from lakeplanner.contract.semantic import INSTRUCTIONS, catalog_block
from lakeplanner.llm import LLM, LLMSettings, system, user
from lakeplanner.llm.local import LocalBackend
from lakeplanner.llm.weights import MODELS

ROOT = Path(__file__).resolve().parent.parent
TATQA = ROOT / "tests" / "data" / "tatqa"
DESCRIBE = "Describe every table of this lake in detail, one paragraph per table."
QUESTIONS = [
    "Which entity types hold money amounts?",
    "Which fields identify a customer?",
    "Which tables join on invoice_id?",
]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def schema_prompt(lake: Lake) -> str:
    """The discovery instructions and the whole field catalog of the sample lake (~1,500 tokens)."""
    return INSTRUCTIONS + "\n\n" + catalog_block(lake.contract.fields)


def timed_call(llm: LLM, prefix: str, question: str, max_tokens: int) -> tuple[float, int, int]:
    started = time.perf_counter()
    done = llm.complete([system(prefix), user(question)], max_tokens=max_tokens)
    return time.perf_counter() - started, done.usage.prompt_tokens, done.usage.completion_tokens


def speed(settings: LLMSettings, prefix: str) -> dict:
    """TTFT = latency of a one-token completion; the second call shares the first call's prefix.

    Generation speed = tokens / latency of a 128-token answer whose whole prompt is already in the KV
    cache (a one-token call with the same prompt ran just before), so it times decoding alone."""
    result = {}
    for reuse in (False, True):
        llm = LLM(LocalBackend(settings, prefix_reuse=reuse), settings)
        timed_call(llm, "warm-up", "hi", 1)
        first, prompt_tokens, _ = timed_call(llm, prefix, QUESTIONS[0], 1)
        second = [timed_call(llm, prefix, q, 1)[0] for q in QUESTIONS[1:]]
        result["reuse" if reuse else "no_reuse"] = {
            "first_ttft_s": first,
            "second_ttft_s": sum(second) / len(second),
            "prompt_tokens": prompt_tokens,
        }
        if reuse:
            timed_call(llm, prefix, DESCRIBE, 1)  # the whole prompt is now cached
            full, _, generated = timed_call(llm, prefix, DESCRIBE, 128)
            result["generated_tokens"] = generated
            result["generated_tok_per_s"] = generated / full
        else:
            result["prompt_tok_per_s"] = prompt_tokens / first
        llm.close()
    saving = 1 - result["reuse"]["second_ttft_s"] / result["no_reuse"]["second_ttft_s"]
    result["prefix_reuse_saving"] = saving
    return result


def discovery(settings: LLMSettings, folder: Path, workdir: Path) -> list[dict]:
    llm = LLM(LocalBackend(settings), settings)
    lake = Lake.create(workdir / folder.name)
    report = lake.ingest(
        folder, discover=True, llm=llm, progress=lambda d, i, n: log(f"  {d} {i}/{n}") if d.startswith("LLM") else None
    )
    for warning in report.warnings:
        log(f"  warning: {warning}")
    skipped = [
        {"source": w.split("LLM discovery skipped for ", 1)[1].split(":", 1)[0], "reason": w}
        for w in report.warnings
        if "LLM discovery skipped for " in w
    ]
    records = [
        r.model_dump() | {"entities": sorted(e.name for e in lake.contract.entities if e.source == r.source)}
        for r in lake.contract.discovery
    ]
    lake.close()
    llm.close()
    return records + [{"skipped": True, **s} for s in skipped]


def markdown(result: dict) -> str:
    s = result["speed"]
    lines = [
        "# LLM runtime benchmark",
        "",
        f"Model: {result['model']} via llama-cpp-python, {result['threads']} threads, greedy decoding.",
        "",
        "## Speed (schema prompt of the sample lake's field catalog)",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| prompt tokens | {s['no_reuse']['prompt_tokens']} |",
        f"| prompt tok/s | {s['prompt_tok_per_s']:.1f} |",
        f"| generated tok/s | {s['generated_tok_per_s']:.1f} |",
        f"| TTFT, first call | {s['no_reuse']['first_ttft_s']:.2f} s |",
        f"| TTFT, next call with the same prefix, no reuse | {s['no_reuse']['second_ttft_s']:.2f} s |",
        f"| TTFT, next call with the same prefix, prefix reuse | {s['reuse']['second_ttft_s']:.2f} s |",
        f"| **prefix_reuse_saving** (target >= 0.7) | **{s['prefix_reuse_saving']:.3f}** "
        f"{'PASS' if s['prefix_reuse_saving'] >= 0.7 else 'FAIL'} |",
        "",
    ]
    if result.get("discovery"):
        lines += [
            "## FieldValidity of two-pass LLM discovery (Eq. 3), before and after repair",
            "",
            "| lake | source | before | after | repaired | dropped | calls | entity types |",
            "|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for lake, records in result["discovery"].items():
            for r in records:
                if r.get("skipped"):
                    lines.append(f"| {lake} | {r['source']} | skipped: {r['reason'][:160]} | | | | | |")
                    continue
                lines.append(
                    f"| {lake} | {r['source']} | {r['field_validity_before']:.3f} | "
                    f"{r['field_validity_after']:.3f} | {r['repaired']} | {r['dropped']} | {r['calls']} | "
                    f"{', '.join(r['entities'])} |"
                )
        lines += [
            "",
            f"**field_validity_before_repair** (mean) = {result['field_validity_before_repair']:.3f}; "
            f"**field_validity_after_repair** (min over sources, target == 1) = "
            f"{result['field_validity_after_repair']:.3f} "
            f"{'PASS' if result['field_validity_after_repair'] == 1 else 'FAIL'}",
            "",
        ]
    lines += [
        "## Command",
        "",
        f"```\n{result['command']}\n```",
        "",
        f"Machine: {result['machine']}. Date: {result['date']}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default", help="'default' (1.5B), 'small' (0.5B) or a GGUF path")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--skip-discovery", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    settings = LLMSettings(backend="local", model=args.model, threads=args.threads)
    result: dict = {
        "command": "python " + shlex.join(["benchmarks/llm.py", *(argv or sys.argv[1:])]),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "threads": settings.threads or "all",
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lake = Lake.create(work / "schema")
        lake.ingest(sample_lake_path())
        prefix = schema_prompt(lake)
        lake.close()
        log("speed")
        result["speed"] = speed(settings, prefix)
        result["model"] = MODELS[settings.model].name if settings.model in MODELS else settings.model
        log(json.dumps(result["speed"]))
        if not args.skip_discovery:
            result["discovery"] = {}
            for name, folder in (("sample_lake", sample_lake_path()), ("tatqa_20", TATQA)):
                log(f"discovery on {name}")
                result["discovery"][name] = discovery(settings, folder, work)
            records = [r for rs in result["discovery"].values() for r in rs if not r.get("skipped")]
            result["discovery_skipped_sources"] = sum(
                r.get("skipped", False) for rs in result["discovery"].values() for r in rs
            )
            result["field_validity_before_repair"] = sum(r["field_validity_before"] for r in records) / len(records)
            result["field_validity_after_repair"] = min(r["field_validity_after"] for r in records)
    result["prefix_reuse_saving"] = result["speed"]["prefix_reuse_saving"]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "llm.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "llm.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
