"""Plan cache on a lake of another domain (the logistics sample lake), run in order on one lake.

Twelve question shapes: each seed question is cached with its hand-written plan, then asked again in
two rewordings with new values (another truck, shipment, carrier, incident report), and half of the
shapes are followed by a near miss that needs another plan. A rewording is a hit when the cache
serves exactly the seed's plan with the new values; anything served to a near miss, or a wrong plan
served to a rewording, is false reuse. Plans are hand-written so this measures the cache alone.

    python benchmarks/plan_cache_logistics.py   # writes benchmarks/results/plan_cache_logistics.{md,json}
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.plan_cache import sql_plan
from lakeplanner import Lake, sample_lake_path
from lakeplanner.llm.embeddings import default_embedder
from lakeplanner.plan.cache import cache_for
from lakeplanner.plan.lake_schema import LakeSchema
from lakeplanner.plan.model import Plan, PlanNode
from lakeplanner.plan.validate import validate
from lakeplanner.question import read_question

ROOT = Path(__file__).resolve().parent.parent


def search_plan(report: str) -> Plan:
    return Plan(
        question=f"shipment cited in {report}",
        nodes=(
            PlanNode(
                question=f"the shipment described in incident report {report}",
                tool="vector",
                label="$var_1",
                source="documents_incidents",
                filter=f"document_id = '{report}'",
                should_expose_answer=True,
                answer_description=f"the shipment of {report}",
            ),
        ),
    )


# (shape, seed, rewordings, values: seed's then one per rewording, plan builder, near miss or None)
SHAPES = [
    (
        "truck operator",
        "Which carrier operates truck {v}?",
        ["Who operates truck {v}?", "truck {v} is run by which carrier?"],
        ["TRK-117", "TRK-108", "TRK-131"],
        lambda v: sql_plan(
            f"carrier of {v}",
            "trucks",
            "SELECT c.name FROM trucks AS t JOIN carriers AS c ON t.operator = c.carrier_code "
            f"WHERE t.truck_id = '{v}'",
            f"carrier of {v}",
        ),
        "What is the capacity of truck TRK-120?",
    ),
    (
        "shipment weight",
        "What is the weight of shipment {v}?",
        ["How heavy is shipment {v}?", "weight of shipment {v} in kg?"],
        ["SHP-20013", "SHP-20023", "SHP-20101"],
        lambda v: sql_plan(
            f"weight of {v}",
            "shipments",
            f"SELECT weight_kg FROM shipments WHERE shipment_id = '{v}'",
            f"weight of {v}",
        ),
        "What is the freight cost of shipment SHP-20007?",
    ),
    (
        "shipment status",
        "What is the status of shipment {v}?",
        ["Tell me the status of shipment {v}", "status of shipment {v}?"],
        ["SHP-20002", "SHP-20050", "SHP-20150"],
        lambda v: sql_plan(
            f"status of {v}", "shipments", f"SELECT status FROM shipments WHERE shipment_id = '{v}'", f"status of {v}"
        ),
        None,
    ),
    (
        "order placed by",
        "Who placed order {v}?",
        ["Which staff member placed order {v}?", "order {v} was placed by whom?"],
        ["ORD-50110", "ORD-50010", "ORD-50042"],
        lambda v: sql_plan(
            f"who placed {v}",
            "orders",
            f"SELECT s.full_name FROM orders AS o JOIN staff AS s ON o.placed_by = s.staff_id WHERE o.order_id = '{v}'",
            f"who placed {v}",
        ),
        "When was order ORD-50020 placed?",
    ),
    (
        "incident shipment",
        "Which shipment does incident report {v} describe?",
        ["Which shipment is described in incident report {v}?", "the shipment in incident report {v}?"],
        ["IR-007", "IR-003", "IR-011"],
        search_plan,
        None,
    ),
    (
        "supervisor",
        "Who supervises {v}?",
        ["Who is the supervisor of {v}?", "{v} reports to whom?"],
        ["Sanne Mulder", "Marta Navarro", "Jonas Krüger"],
        lambda v: sql_plan(
            f"supervisor of {v}",
            "staff",
            "SELECT b.full_name FROM staff AS s JOIN staff AS b ON s.supervisor = b.staff_id "
            f"WHERE s.full_name = '{v}'",
            f"supervisor of {v}",
        ),
        "When was Sanne Bos hired?",
    ),
    (
        "carrier shipment count",
        "How many shipments did carrier {v} handle?",
        ["Number of shipments handled by carrier {v}?", "count the shipments of carrier {v}"],
        ["NRTH", "RHNL", "BLTX"],
        lambda v: sql_plan(
            f"shipments of {v}", "shipments", f"SELECT count(*) AS n FROM shipments WHERE carrier = '{v}'", "count"
        ),
        "What is the total weight shipped by carrier BLTX?",
    ),
    (
        "shipments by status",
        "How many shipments are {v}?",
        ["How many {v} shipments are there?", "number of {v} shipments?"],
        ["delayed", "lost", "delivered"],
        lambda v: sql_plan(
            f"{v} shipments", "shipments", f"SELECT count(*) AS n FROM shipments WHERE status = '{v}'", "count"
        ),
        "How many shipments are not delayed?",
    ),
    (
        "carrier country",
        "Which country is carrier {v} based in?",
        ["In which country is carrier {v} based?", "carrier {v} is based in which country?"],
        ["NRTH", "RHNL", "BLTX"],
        lambda v: sql_plan(
            f"country of {v}", "carriers", f"SELECT country FROM carriers WHERE carrier_code = '{v}'", f"country of {v}"
        ),
        None,
    ),
    (
        "warehouse capacity",
        "What is the pallet capacity of warehouse {v}?",
        ["How many pallets can warehouse {v} hold?", "pallet capacity of warehouse {v}?"],
        ["WH-01", "WH-04", "WH-07"],
        lambda v: sql_plan(
            f"capacity of {v}",
            "warehouses",
            f"SELECT capacity_pallets FROM warehouses WHERE warehouse_id = '{v}'",
            f"capacity of {v}",
        ),
        None,
    ),
    (
        "truck plate",
        "What is the licence plate of truck {v}?",
        ["Which plate does truck {v} carry?", "plate of truck {v}?"],
        ["TRK-120", "TRK-101", "TRK-133"],
        lambda v: sql_plan(
            f"plate of {v}", "trucks", f"SELECT plate FROM trucks WHERE truck_id = '{v}'", f"plate of {v}"
        ),
        None,
    ),
    (
        "staff role",
        "What is the role of {v}?",
        ["What role does {v} have?", "role of {v}?"],
        ["Sanne Bos", "Marta Navarro", "Jonas Krüger"],
        lambda v: sql_plan(f"role of {v}", "staff", f"SELECT role FROM staff WHERE full_name = '{v}'", f"role of {v}"),
        None,
    ),
]


def main() -> int:
    embedder = default_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.create(Path(tmp) / "lake")
        lake.ingest(sample_lake_path("logistics"))
        schema = LakeSchema.from_contract(lake.contract)
        cache = cache_for(lake, Path(tmp) / "cache.jsonl", embed=embedder.embed_query)
        rewordings = hits = false_reuse = near_misses = 0
        log = []
        for shape, seed, reworded, values, build, near_miss in SHAPES:
            seed_plan = build(values[0])
            assert validate(seed_plan, schema) == [], (shape, validate(seed_plan, schema))
            cache.put(read_question(seed.format(v=values[0])), seed_plan)
            for phrasing, value in zip(reworded, values[1:], strict=True):
                question = phrasing.format(v=value)
                hit = cache.get(read_question(question))
                rewordings += 1
                if hit is not None and hit.plan == build(value):
                    hits += 1
                    log.append(f"hit ({hit.kind}): {question}")
                elif hit is not None:
                    false_reuse += 1
                    log.append(f"FALSE REUSE: {question} <- {hit.source_question}")
                else:
                    log.append(f"miss: {question}")
            if near_miss is not None:
                near_misses += 1
                hit = cache.get(read_question(near_miss))
                if hit is not None:
                    false_reuse += 1
                    log.append(f"FALSE REUSE (near miss): {near_miss} <- {hit.source_question}")
        lake.close()
    result = {
        "shapes": len(SHAPES),
        "rewordings": rewordings,
        "near_misses": near_misses,
        "cache_hit_rate_new_lake": round(hits / rewordings, 3),
        "cache_false_reuse_new_lake": false_reuse,
        "log": log,
        "command": "python benchmarks/plan_cache_logistics.py",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    out = ROOT / "benchmarks" / "results"
    (out / "plan_cache_logistics.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    (out / "plan_cache_logistics.md").write_text(markdown(result))
    print(markdown(result))
    return 0


def markdown(r: dict) -> str:
    lines = [
        "# Plan cache on the logistics lake",
        "",
        f"{r['shapes']} question shapes run in order on one lake: each seed cached with its hand-written plan, "
        f"then {r['rewordings']} rewordings with new values and {r['near_misses']} near misses that need "
        "another plan.",
        "",
        "| figure | value | target |",
        "|---|---:|---|",
        f"| cache_hit_rate_new_lake (rewordings served the right plan) | {r['cache_hit_rate_new_lake']:.3f} | |",
        f"| cache_false_reuse_new_lake (a plan that answers another question) | {r['cache_false_reuse_new_lake']} "
        "| 0 |",
        "",
        *[f"- {line}" for line in r["log"]],
        "",
        f"`{r['command']}`, {r['date']}.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
