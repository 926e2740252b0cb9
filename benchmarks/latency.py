"""Latency: what a question costs lakeplanner, lever by lever, against top-k RAG on the same model.

    python benchmarks/latency.py                       # the sample lake's 10 questions + TAT-QA's first 50
    python benchmarks/latency.py --tatqa 0             # the sample lake only (about 15 minutes)
    python benchmarks/latency.py --configs prefix-states,rag   # skip a lever already measured
    python benchmarks/latency.py --report              # latency.md and .json from the runs
    python benchmarks/latency.py --demo                # `make demo`'s question, as a fresh clone asks it

Each question is asked by every configuration in turn (so a loaded machine slows them alike), in one
process, serially, without the plan cache (a cached plan would hide what planning costs):
- `before`: no prefix states kept (llama.cpp reuses only the prefix shared with the previous call);
- `prefix-states`: the KV states of fixed prompt prefixes kept across calls (LAKEPLANNER_LLM_PREFIX_CACHE_MB);
- `read-answers`: `prefix-states` with ExecSettings.read_answers (a lookup one document step answered is
  answered by the value its evidence selector read, without a synthesis call);
- `small-select`, `small-synthesis`: `read-answers` with evidence selection (hseq.select), or synthesis and its
  repair, answered by the 0.5B (LLMSettings.routes), the 1.5B doing the rest;
- `rag`: top rows + top chunks, one generation (benchmarks/qabench/methods.py), on the same backend
  as `prefix-states` (its fixed instructions are kept too); TAT-QA only (on the sample lake RAG's
  time is mostly the reranker scoring every row).
Per configuration it reports p50 and mean seconds, LLM calls, prompt tokens sent and evaluated and
generated tokens per question, and right answers (sample lake: every expected value held; TAT-QA: EM).
Records go to benchmarks/results/runs/latency.jsonl (a rerun skips what is there at the same commit).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generality import LAKES, commit, is_right, log
from benchmarks.qabench.answers import judge
from benchmarks.qabench.data import lake_for, load
from benchmarks.qabench.methods import METHODS, answer_outcome, timed
from lakeplanner import Lake
from lakeplanner.execute.ask import ask
from lakeplanner.execute.engine import Executor
from lakeplanner.execute.settings import ExecSettings
from lakeplanner.lineage.tracing import SPANS_FILE, TRACES, attribute_values, spans_in
from lakeplanner.llm.base import LLM, RoutedLLM
from lakeplanner.llm.local import LocalBackend
from lakeplanner.llm.settings import LLMSettings

HERE = Path(__file__).resolve().parent
RUNS, WORK = HERE / "results" / "runs" / "latency.jsonl", HERE / ".work" / "qa"
DEMO_RUNS = RUNS.with_name("latency-demo.jsonl")
CONFIGS = {"before": {"prefix_cache_mb": 0}, "prefix-states": {}}
METHOD = {
    "before": "lakeplanner-uncached",
    "prefix-states": "lakeplanner-uncached",
    "read-answers": "lakeplanner-read-answers",
    "small-select": "lakeplanner-read-answers",
    "small-synthesis": "lakeplanner-read-answers",
    "rag": "rag",
}
# stages the 0.5B answers in a configuration (lever 4: the right model for each call)
SMALL_FOR = {"small-select": ("hseq.select",), "small-synthesis": ("synthesize", "synthesize.repair")}
DEFAULT_CONFIG = "read-answers"  # what ExecSettings' defaults run: the figures the issue's target is read from
# RAG reranks every row of the sample lake: its time there says little
SAMPLE_CONFIGS = ("before", "prefix-states", "read-answers", "small-select", "small-synthesis")


def run_uncached(lake: Lake, question: str, llm: LLM, read_answers: bool = False):
    """lakeplanner without the plan cache: the configurations ask the same questions of one lake."""
    executor = Executor(lake, llm, ExecSettings(mode="serial", read_answers=read_answers))
    return answer_outcome(ask(lake, question, executor, use_cache=False))


def run_reading_answers(lake: Lake, question: str, llm: LLM):
    return run_uncached(lake, question, llm, read_answers=True)


METHODS["lakeplanner-uncached"] = run_uncached
METHODS["lakeplanner-read-answers"] = run_reading_answers


def models(configs: set[str]) -> dict[str, LLM]:
    llms = {}
    shared = {"rag", "read-answers", *SMALL_FOR}  # on the backend of prefix-states: its states serve them too
    for name, overrides in CONFIGS.items():
        if name in configs or (name == "prefix-states" and configs & shared):
            settings = LLMSettings(backend="local", model="default", **overrides)
            llms[name] = LLM(LocalBackend(settings), settings)
    for name in configs & {"rag", "read-answers"}:
        llms[name] = llms["prefix-states"]
    if routed := configs & set(SMALL_FOR):
        settings = LLMSettings(backend="local", model="small")
        small = LLM(LocalBackend(settings), settings)
        for name in routed:
            llms[name] = RoutedLLM(llms["prefix-states"], dict.fromkeys(SMALL_FOR[name], small))
    return {name: llms[name] for name in METHOD if name in configs}


def done(at: str) -> set[tuple[str, str, str]]:
    if not RUNS.exists():
        return set()
    records = [json.loads(line) for line in RUNS.read_text().splitlines() if line.strip()]
    return {(r["set"], r["uid"], r["config"]) for r in records if r["commit"] == at}


def ask_each(llms: dict[str, LLM], lake: Lake, item: dict, at: str, skip: set) -> None:
    for config, llm in llms.items():
        if (item["set"], item["uid"], config) in skip or (item["set"] == "sample" and config not in SAMPLE_CONFIGS):
            continue
        outcome, usage, seconds, error = timed(METHOD[config], lake, item["question"], llm)
        record = item | {
            "config": config,
            "started": round(time.time() - seconds, 1),
            "seconds": round(seconds, 2),
            "llm_calls": usage.calls,
            "prompt_tokens": usage.prompt_tokens,
            "prompt_tokens_evaluated": usage.prompt_tokens_evaluated,
            "completion_tokens": usage.completion_tokens,
            "right": item["right"](outcome),
            "value": outcome.value,
            "error": error,
            "commit": at,
        }
        with RUNS.open("a") as fh:
            fh.write(json.dumps(record, default=str) + "\n")
        log(f"{item['set']} {item['uid'][:12]:<12} {config:<14} {seconds:6.1f} s right={record['right']}")


def spoken(value: str | list[str] | None) -> str:
    return " ".join(value) if isinstance(value, list) else value or ""


def sample_questions() -> list[dict]:
    return json.loads((LAKES["sample"] / "questions.json").read_text())


def sample_items() -> list[dict]:
    questions = sample_questions()
    return [
        {
            "set": "sample",
            "uid": f"s{i}",
            "question": q["question"],
            "right": lambda o, q=q: is_right(f"{spoken(o.value)} {o.text}", o.abstained, q.get("expect", [])),
        }
        for i, q in enumerate(questions)
    ]


def run(tatqa: int, configs: set[str]) -> None:
    at = commit()
    skip = done(at)
    RUNS.parent.mkdir(parents=True, exist_ok=True)
    llms = models(configs)
    with tempfile.TemporaryDirectory() as work:
        lake = Lake.create(Path(work) / "sample")
        lake.ingest(LAKES["sample"])
        lake.release_vectors()
        for item in sample_items():
            ask_each(llms, lake, item, at, skip)
        lake.close()
    if tatqa:
        questions, contexts = load("tatqa", tatqa)
        for q in questions:
            context = contexts[q.context]
            lake = lake_for(context, WORK / "tatqa")
            item = {
                "set": "tatqa",
                "uid": q.uid,
                "question": q.question,
                "right": lambda o, q=q, c=context: judge(q, c, o.value)[2].em == 1,
            }
            try:
                ask_each(llms, lake, item, at, skip)
            finally:
                lake.close()


def demo_question() -> str:
    """The question `make demo` asks (the Makefile's QUESTION)."""
    makefile = (HERE.parent / "Makefile").read_text()
    return next(line.split("=", 1)[1].strip() for line in makefile.splitlines() if line.startswith("QUESTION ?="))


def in_a_new_process(env: dict[str, str], *args: str) -> str:
    cli = Path(sys.executable).with_name("lakeplanner")
    finished = subprocess.run([str(cli), *args], env=env, capture_output=True, text=True)
    if finished.returncode != 0:
        raise SystemExit(f"lakeplanner {args[0]} failed: {finished.stderr[-2000:]}")
    return finished.stdout


def time_the_demo() -> None:
    """`make demo` on a fresh clone: `lakeplanner ingest --sample` into a new folder, then the question
    asked by a new process with no prefix states on disk but those the ingest kept (`cold`: a fresh
    machine), then by another that finds the states the first one left too (`warm`; plan cache off, so
    it plans again). The ingest's seconds are kept: what it prepares is moved there, not removed."""
    question, at = demo_question(), commit()
    with tempfile.TemporaryDirectory() as work:
        env = os.environ | {"LAKEPLANNER_LLM_PREFIX_STATES_DIR": f"{work}/states"}
        lake = str(Path(work) / "lake")
        started = time.perf_counter()
        in_a_new_process(env, "ingest", "--sample", "--lake", lake, "--json")
        ingest_s = round(time.perf_counter() - started, 1)
        for process, extra in (("cold", ()), ("warm", ("--no-cache",))):
            answer = json.loads(in_a_new_process(env, "ask", question, "--lake", lake, "--json", *extra))
            timings = {k: round(v, 1) for k, v in answer["timings"].items()}
            if process == "cold":
                timings["ingest_s"] = ingest_s
            record = {"process": process, "question": question, "value": answer["value"], "timings": timings}
            with DEMO_RUNS.open("a") as fh:
                fh.write(json.dumps(record | {"commit": at, "date": time.strftime("%Y-%m-%d")}) + "\n")
            log(f"demo {process}: {timings}")


def demo_figures() -> dict | None:
    """The latest demo run's timings per process (cold, warm)."""
    if not DEMO_RUNS.exists():
        return None
    records = [json.loads(line) for line in DEMO_RUNS.read_text().splitlines() if line.strip()]
    latest = records[-1]["commit"]
    return {"commit": latest} | {r["process"]: r["timings"] for r in records if r["commit"] == latest}


# ---------------------------------------------------------------- report


def figures(records: list[dict]) -> dict:
    n = len(records)
    seconds = [r["seconds"] for r in records]
    return {
        "questions": n,
        "p50_s": round(statistics.median(seconds), 2),
        "mean_s": round(statistics.fmean(seconds), 2),
        "llm_calls_per_question": round(sum(r["llm_calls"] for r in records) / n, 2),
        "prompt_tokens_per_question": round(sum(r["prompt_tokens"] for r in records) / n),
        "prompt_tokens_evaluated_per_question": round(sum(r["prompt_tokens_evaluated"] for r in records) / n),
        "generated_tokens_per_question": round(sum(r["completion_tokens"] for r in records) / n),
        "right": sum(bool(r["right"]) for r in records),
    }


def traced_calls(lakes: Path, since: float) -> list[tuple[float, float, str, int]]:
    """(start, seconds, purpose, generated tokens) of each LLM call the lakes' traces hold since `since`."""
    calls = []
    for path in lakes.glob(f"*/lake/{TRACES}/{SPANS_FILE}"):
        for span in spans_in(path):
            start, end = int(span["startTimeUnixNano"]) / 1e9, int(span["endTimeUnixNano"]) / 1e9
            values = attribute_values(span)
            if start >= since and (purpose := values.get("lakeplanner.llm.purpose")):
                calls.append((start, end - start, purpose, int(values.get("gen_ai.usage.output_tokens", 0))))
    return calls


def calls_of_asks(records: list[dict], lakes: Path) -> dict[int, list[tuple[float, str, int]]]:
    """Per ask of `records` (by its index), the (seconds, purpose, generated tokens) of each LLM call its
    lake traced while it ran."""
    timed = [(i, r) for i, r in enumerate(records) if "started" in r]
    if not timed:
        return {}
    calls = traced_calls(lakes, min(r["started"] for _, r in timed))
    return {
        i: [
            (seconds, purpose, generated)
            for start, seconds, purpose, generated in calls
            if r["started"] <= start <= r["started"] + r["seconds"]
        ]
        for i, r in timed
    }


def time_by_purpose(records: list[dict], calls_of: dict[int, list[tuple[float, str, int]]]) -> dict:
    """LLM calls, seconds and generated tokens per question by the call's purpose, and the p50 the asks
    would have had if that purpose's calls had cost nothing (which calls stand between the median and a
    target)."""
    if not calls_of:
        return {}
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0])
    spent: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(records))
    for i, calls in calls_of.items():
        for seconds, purpose, generated in calls:
            total = totals[purpose]
            total[0], total[1], total[2] = total[0] + 1, total[1] + seconds, total[2] + generated
            spent[purpose][i] += seconds
    n = len(calls_of)
    return {
        purpose: {
            "calls_per_question": round(count / n, 2),
            "seconds_per_question": round(seconds / n, 1),
            "generated_tokens_per_call": round(generated / count),
            "p50_s_without": round(
                statistics.median(r["seconds"] - spent[purpose][i] for i, r in enumerate(records)), 1
            ),
        }
        for purpose, (count, seconds, generated) in sorted(totals.items(), key=lambda kv: -kv[1][1])
    }


def p50_by_calls(records: list[dict]) -> list[dict]:
    """Asks grouped by how many LLM calls they made: the median falls where the groups meet."""
    groups: dict[int, list[dict]] = defaultdict(list)
    for r in records:
        groups[r["llm_calls"]].append(r)
    return [
        {
            "llm_calls": calls,
            "questions": len(group),
            "p50_s": round(statistics.median(r["seconds"] for r in group), 1),
            "right": sum(bool(r["right"]) for r in group),
        }
        for calls, group in sorted(groups.items())
    ]


def run_table(records: list[dict]) -> dict[tuple[str, str], dict]:
    """(question set, configuration) -> figures of one run's records, over the questions every
    configuration of the run answered (a run may have stopped half way through one)."""
    unanswerable = {f"s{i}" for i, q in enumerate(sample_questions()) if not q.get("expect")}
    for r in records:  # records before the answer text was kept scored an abstention on these as wrong
        if r["set"] == "sample" and r["uid"] in unanswerable:
            r["right"] = r["value"] is None
    configs_of: dict[tuple[str, str], set[str]] = {}
    for r in records:
        configs_of.setdefault((r["set"], r["uid"]), set()).add(r["config"])
    expected = {s: set().union(*(c for (s2, _), c in configs_of.items() if s2 == s)) for s, _ in configs_of}
    records = [r for r in records if configs_of[(r["set"], r["uid"])] == expected[r["set"]]]
    return {
        (s, c): figures([r for r in records if r["set"] == s and r["config"] == c])
        for s in ("sample", "tatqa")
        for c in METHOD
        if any(r["set"] == s and r["config"] == c for r in records)
    }


def report() -> dict:
    every = [json.loads(line) for line in RUNS.read_text().splitlines() if line.strip()]
    latest = every[-1]["commit"]
    records = [r for r in every if r["commit"] == latest]
    table = run_table(records)
    by_set = {f"{s}/{c}": v for (s, c), v in table.items()}
    result = {"commit": latest, "date": time.strftime("%Y-%m-%d"), "by_set": by_set}
    main = "tatqa" if ("tatqa", "rag") in table else "sample"
    default = DEFAULT_CONFIG if (main, DEFAULT_CONFIG) in table else "prefix-states"
    ours, rag = table[(main, default)], table.get((main, "rag"))
    result |= {
        "measured_on": main,
        "ours": default,
        "p50_s": ours["p50_s"],
        "rag_p50_s": rag["p50_s"] if rag else None,
        "p50_over_rag": round(ours["p50_s"] / rag["p50_s"], 2) if rag else None,
        "prompt_tokens_evaluated_per_question": ours["prompt_tokens_evaluated_per_question"],
        "generated_tokens_per_question": ours["generated_tokens_per_question"],
        "llm_calls_per_question": ours["llm_calls_per_question"],
        "sample_right": table[("sample", default)]["right"] if ("sample", default) in table else None,
        **small_model_runs(every, default),
        "earlier_runs": earlier_runs(every, latest),
        "demo": demo_figures(),
    }
    if main == "tatqa":
        result |= {"em": ours["right"] / ours["questions"], "rag_em": rag["right"] / rag["questions"]}
        asked = [r for r in records if r["set"] == "tatqa" and r["config"] == default]
        result["llm_time_by_purpose"] = time_by_purpose(asked, calls_of_asks(asked, WORK / "tatqa"))
        result["p50_by_llm_calls"] = p50_by_calls(asked)
    speed = json.loads((HERE / "results" / "llm.json").read_text())["speed"]  # this machine's measured rates
    result["breakdown_s"] = {
        "prompt_evaluation": round(ours["prompt_tokens_evaluated_per_question"] / speed["prompt_tok_per_s"], 1),
        "generation": round(ours["generated_tokens_per_question"] / speed["generated_tok_per_s"], 1),
    }
    (HERE / "results" / "latency.json").write_text(json.dumps(result, indent=2) + "\n")
    (HERE / "results" / "latency.md").write_text(markdown(result))
    print(markdown(result))
    return result


def earlier_runs(records: list[dict], latest: str) -> list[dict]:
    """p50 over RAG's of each earlier run on TAT-QA's questions (its default configuration then: what
    each change bought, the questions each run got through)."""
    runs = []
    for at in dict.fromkeys(r["commit"] for r in records if r["commit"] != latest):
        table = run_table([r for r in records if r["commit"] == at])
        ours = next((c for c in (DEFAULT_CONFIG, "prefix-states") if ("tatqa", c) in table), None)
        if ours and ("tatqa", "rag") in table:
            f, rag = table[("tatqa", ours)], table[("tatqa", "rag")]
            runs.append(
                {"commit": at, "config": ours, "questions": f["questions"], "p50_s": f["p50_s"]}
                | {"rag_p50_s": rag["p50_s"], "p50_over_rag": round(f["p50_s"] / rag["p50_s"], 2), "right": f["right"]}
            )
    return runs


def small_model_runs(records: list[dict], default: str) -> dict:
    """Lever 4 from the latest run that measured it (a later run may measure only the default and RAG)."""
    small = [r["commit"] for r in records if r["config"] in SMALL_FOR]
    if not small:
        return {"small_model_stages": {}}
    table = run_table([r for r in records if r["commit"] == small[-1]])
    return {"small_model_stages": small_model_stages(table, default), "small_model_stages_commit": small[-1]}


def small_model_stages(table: dict, default: str) -> dict:
    """Per configuration routing stages to the 0.5B, per question set it ran on: its p50 and right
    answers beside the default configuration's on the same questions."""
    return {
        config: {
            "stages": list(stages),
            **{
                question_set: {
                    "p50_s": table[(question_set, config)]["p50_s"],
                    "right": table[(question_set, config)]["right"],
                    "default_p50_s": table[(question_set, default)]["p50_s"],
                    "default_right": table[(question_set, default)]["right"],
                    "questions": table[(question_set, config)]["questions"],
                }
                for question_set in ("sample", "tatqa")
                if (question_set, config) in table and (question_set, default) in table
            },
        }
        for config, stages in SMALL_FOR.items()
        if any((question_set, config) in table for question_set in ("sample", "tatqa"))
    }


def earlier_lines(runs: list[dict]) -> list[str]:
    if not runs:
        return []
    return [
        "Earlier runs of this script (TAT-QA; each run's own RAG on the same questions):",
        "",
        "| commit | configuration | questions | p50 s | RAG p50 s | over RAG | right |",
        "|---|---|---:|---:|---:|---:|---:|",
        *[
            f"| {r['commit']} | {r['config']} | {r['questions']} | {r['p50_s']} | {r['rag_p50_s']} | "
            f"{r['p50_over_rag']} | {r['right']} |"
            for r in runs
        ],
        "",
    ]


def markdown(result: dict) -> str:
    ours = result["ours"]
    lines = [
        "# Latency: lakeplanner lever by lever vs top-k RAG (same model, same machine, same commit)",
        "",
        f"Commit {result['commit']}, {result['date']}; Qwen2.5-Coder-1.5B Q4_K_M on 2 CPU cores; each question asked "
        "by every configuration in turn, serially, plan cache off. Produced by `python benchmarks/latency.py`.",
        "",
        "| questions / configuration | n | p50 s | mean s | LLM calls | prompt tokens sent | prompt tokens evaluated "
        "| generated tokens | right |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, f in result["by_set"].items():
        lines.append(
            f"| {name} | {f['questions']} | {f['p50_s']} | {f['mean_s']} | {f['llm_calls_per_question']} | "
            f"{f['prompt_tokens_per_question']} | {f['prompt_tokens_evaluated_per_question']} | "
            f"{f['generated_tokens_per_question']} | {f['right']} |"
        )
    lines += [
        "",
        f"p50 of {ours} over RAG's ({result['measured_on']}): **{result['p50_over_rag']}** (target <= 1.2).",
        "",
        *earlier_lines(result.get("earlier_runs", [])),
        f"Where a question's time goes now ({result['measured_on']}, {ours}, at the rates llm.md measured on "
        f"this machine): about {result['breakdown_s']['prompt_evaluation']} s evaluating prompt tokens and "
        f"{result['breakdown_s']['generation']} s generating; the rest is engines, embedding and reranking.",
        "",
    ]
    if by_purpose := result.get("llm_time_by_purpose"):
        lines += [
            f"LLM calls by purpose ({result['measured_on']}, {ours}; read from the lakes' traces):",
            "",
            "| purpose | calls per question | seconds per question | generated tokens per call | p50 s if free |",
            "|---|---:|---:|---:|---:|",
            *[
                f"| {p} | {f['calls_per_question']} | {f['seconds_per_question']} | {f['generated_tokens_per_call']} "
                f"| {f['p50_s_without']} |"
                for p, f in by_purpose.items()
            ],
            "",
        ]
    if by_calls := result.get("p50_by_llm_calls"):
        lines += [
            f"Asks by their number of LLM calls ({result['measured_on']}, {ours}; the median falls where the groups "
            f"meet, RAG's p50 is {result['rag_p50_s']} s):",
            "",
            "| LLM calls | questions | p50 s | right |",
            "|---:|---:|---:|---:|",
            *[f"| {g['llm_calls']} | {g['questions']} | {g['p50_s']} | {g['right']} |" for g in by_calls],
            "",
        ]
    if demo := result.get("demo"):
        cold, warm = demo.get("cold", {}), demo.get("warm", {})
        lines += [
            f"`make demo`'s question on a fresh lake, each ask a new process (commit {demo['commit']}; "
            "`latency.py --demo`; target: a total of at most 44 s, half of the 88 s the issue measured):",
            "",
            "| process | ingest s (before it) | plan s | execute s | synthesis s | total s |",
            "|---|---:|---:|---:|---:|---:|",
            *[
                f"| {name} | {t.get('ingest_s', '')} | {t.get('plan_s')} | {t.get('execute_s')} | "
                f"{t.get('synthesis_s')} | {t.get('total_s')} |"
                for name, t in (
                    ("cold: no prefix states on disk but the ingest's (a fresh machine)", cold),
                    ("warm: the states the cold process left (plan cache off)", warm),
                )
                if t
            ],
            "",
        ]
    if small := result.get("small_model_stages"):
        lines += [
            f"Lever 4, the 0.5B for one stage (commit {result['small_model_stages_commit']}; {ours} otherwise; "
            "same questions, same run):",
            "",
            f"| configuration | stages on the 0.5B | questions | p50 s | right | {ours} p50 s | {ours} right |",
            "|---|---|---|---:|---:|---:|---:|",
            *[
                f"| {config} | {', '.join(f['stages'])} | {question_set} ({g['questions']}) | {g['p50_s']} | "
                f"{g['right']} | {g['default_p50_s']} | {g['default_right']} |"
                for config, f in small.items()
                for question_set, g in f.items()
                if question_set != "stages"
            ],
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tatqa", type=int, default=50, help="TAT-QA questions after the sample lake's (default 50)")
    parser.add_argument(
        "--configs",
        default=",".join(METHOD),
        help=f"comma-separated configurations to run (default all: {','.join(METHOD)})",
    )
    parser.add_argument("--report", action="store_true", help="write results/latency.md and .json from the runs")
    parser.add_argument("--demo", action="store_true", help="time `make demo`'s question as a fresh clone asks it")
    args = parser.parse_args()
    configs = set(args.configs.split(","))
    if unknown := configs - set(METHOD):
        parser.error(f"unknown configuration(s) {sorted(unknown)}; choose from {', '.join(METHOD)}")
    if args.demo:
        time_the_demo()
    elif not args.report:
        run(args.tatqa, configs)
    report()


if __name__ == "__main__":
    main()
