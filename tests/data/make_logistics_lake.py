"""Generate the logistics sample lake in ``lakeplanner/sample_lake_logistics/``.

Deterministic (fixed seed, no wall clock).  Run from anywhere:

    python tests/data/make_logistics_lake.py

Writes carriers.csv, warehouses.json, staff.csv, trucks.csv, orders.jsonl,
shipments.csv, documents/ (carrier agreements, policies, incident reports, an
operations memo), questions.json, structure.json, exclude.yaml and README.md.

Every value is mutually consistent: every foreign key resolves (``vehicle`` is
empty for rail, air and sea shipments; ``supervisor`` is empty for the two top
managers; ``agreement`` is empty for two carriers), every agreement id names a
contract file, incident reports cite shipments whose status matches the story,
orders are placed by staff hired before the order, shipments leave the order's
origin warehouse after the order was placed.  The gold answers of the table
questions are computed by running their ``gold_sql`` with DuckDB over the
written files; document answers are the values the generator wrote.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import random
import re
import shutil
from collections import Counter, defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

SEED = 20250117
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "lakeplanner" / "sample_lake_logistics"
UTC = dt.UTC
AS_OF = dt.datetime(2024, 12, 23, 18, 0, tzinfo=UTC)  # snapshot time of shipment statuses
COMPANY = "Corvid Freight Solutions B.V."
CENT = Decimal("0.01")
GBP_PER_EUR = Decimal("0.86")
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


def q2(x: Decimal) -> Decimal:
    return x.quantize(CENT, rounding=ROUND_HALF_UP)


def money(x) -> str:
    return f"{Decimal(x):,.2f}"


def long_date(d: dt.date) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


# --------------------------------------------------------------------------- #
# time zones (EU rules, computed by hand so that no tz database is needed)
# --------------------------------------------------------------------------- #
TZ_BASE = {"United Kingdom": 0, "Ireland": 0, "Portugal": 0, "Greece": 2, "Finland": 2,
           "Lithuania": 2, "Latvia": 2, "Estonia": 2}


def last_sunday(y: int, m: int) -> dt.date:
    d = dt.date(y, m + 1, 1) - dt.timedelta(days=1)
    while d.weekday() != 6:
        d -= dt.timedelta(days=1)
    return d


def offset_hours(country: str, t_utc: dt.datetime) -> int:
    y = t_utc.year
    start = dt.datetime.combine(last_sunday(y, 3), dt.time(1), UTC)
    end = dt.datetime.combine(last_sunday(y, 10), dt.time(1), UTC)
    return TZ_BASE.get(country, 1) + (1 if start <= t_utc < end else 0)


def iso_local(t_utc: dt.datetime, country: str) -> str:
    h = offset_hours(country, t_utc)
    return (t_utc + dt.timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%S") + f"+{h:02d}:00"


def local_dt(t_utc: dt.datetime, country: str) -> dt.datetime:
    return (t_utc + dt.timedelta(hours=offset_hours(country, t_utc))).replace(tzinfo=None)


def from_local(naive: dt.datetime, country: str) -> dt.datetime:
    guess = (naive - dt.timedelta(hours=TZ_BASE.get(country, 1))).replace(tzinfo=UTC)
    return (naive - dt.timedelta(hours=offset_hours(country, guess))).replace(tzinfo=UTC)


# --------------------------------------------------------------------------- #
# reference data
# --------------------------------------------------------------------------- #
# code, name, country, mode
CARRIERS = [
    ("NRTH", "Northway Haulage Ltd", "United Kingdom", "road"),
    ("RHNL", "Rheinland Spedition GmbH", "Germany", "road"),
    ("BLTX", "Baltix Freight SIA", "Latvia", "road"),
    ("IBRF", "Iberfreight Transportes S.A.", "Spain", "road"),
    ("VSTL", "Vistula Logistyka Sp. z o.o.", "Poland", "road"),
    ("ALPR", "Alpenrail Cargo AG", "Switzerland", "rail"),
    ("DNRL", "Danubia Rail Logistics Kft.", "Hungary", "rail"),
    ("SKYW", "Skyward Air Cargo B.V.", "Netherlands", "air"),
    ("AERO", "Aérolift Express SAS", "France", "air"),
    ("OCNL", "Oceanlink Shipping A/S", "Denmark", "sea"),
]
NO_AGREEMENT = ("VSTL", "AERO")
TRUCKS_PER_CARRIER = {"NRTH": 8, "RHNL": 9, "BLTX": 7, "IBRF": 6, "VSTL": 5}

# id, name, street, city, postcode, country
WAREHOUSES = [
    ("WH-01", "Rotterdam Europoort DC", "Moezelweg 212", "Rotterdam", "3198 LS", "Netherlands"),
    ("WH-02", "Duisburg Logport Hub", "Hochfelder Straße 40", "Duisburg", "47053", "Germany"),
    ("WH-03", "Lyon Gerland Depot", "18 Avenue Tony Garnier", "Lyon", "69007", "France"),
    ("WH-04", "Zaragoza Plaza Crossdock", "Calle Osca 6", "Zaragoza", "50197", "Spain"),
    ("WH-05", "Milton Keynes Fulfilment Centre", "3 Fingle Drive", "Milton Keynes", "MK13 0AT",
     "United Kingdom"),
    ("WH-06", "Poznań East Warehouse", "ul. Gnieźnieńska 51", "Poznań", "61-021", "Poland"),
    ("WH-07", "Milan Linate Hub", "Via Rivoltana 35", "Milan", "20138", "Italy"),
    ("WH-08", "Antwerp Port Warehouse", "Noorderlaan 147", "Antwerp", "2030", "Belgium"),
]
WH_WEIGHT = {"WH-01": 5, "WH-02": 4, "WH-03": 2, "WH-04": 2, "WH-05": 3, "WH-06": 2, "WH-07": 2, "WH-08": 3}
ROAD_CARRIERS = {
    "WH-01": [("RHNL", 3), ("BLTX", 2), ("NRTH", 1)],
    "WH-02": [("RHNL", 4), ("BLTX", 2)],
    "WH-03": [("IBRF", 2), ("RHNL", 2)],
    "WH-04": [("IBRF", 4)],
    "WH-05": [("NRTH", 5)],
    "WH-06": [("VSTL", 3), ("BLTX", 3)],
    "WH-07": [("RHNL", 2), ("IBRF", 2)],
    "WH-08": [("RHNL", 2), ("NRTH", 2), ("BLTX", 1)],
}
RAIL_SITES = ("WH-01", "WH-02", "WH-06", "WH-07")
SEA_SITES = ("WH-01", "WH-08")

DESTINATIONS = {
    "road": [("Lille", "France"), ("Brussels", "Belgium"), ("Frankfurt", "Germany"), ("Leipzig", "Germany"),
             ("Vienna", "Austria"), ("Prague", "Czechia"), ("Warsaw", "Poland"), ("Barcelona", "Spain"),
             ("Porto", "Portugal"), ("Bordeaux", "France"), ("Birmingham", "United Kingdom"),
             ("Leeds", "United Kingdom"), ("Copenhagen", "Denmark"), ("Turin", "Italy"),
             ("Vilnius", "Lithuania"), ("Munich", "Germany"), ("Ghent", "Belgium"), ("Stuttgart", "Germany")],
    "rail": [("Budapest", "Hungary"), ("Vienna", "Austria"), ("Verona", "Italy"), ("Bratislava", "Slovakia"),
             ("Basel", "Switzerland"), ("Munich", "Germany")],
    "air": [("Dublin", "Ireland"), ("Athens", "Greece"), ("Helsinki", "Finland"), ("Stockholm", "Sweden"),
            ("Lisbon", "Portugal"), ("Oslo", "Norway")],
    "sea": [("Gothenburg", "Sweden"), ("Gdańsk", "Poland"), ("Piraeus", "Greece"), ("Valencia", "Spain"),
            ("Felixstowe", "United Kingdom"), ("Tallinn", "Estonia")],
}
TRANSIT_H = {"road": (10, 60), "rail": (30, 96), "air": (12, 40), "sea": (72, 240)}
WEIGHT_KG = {"road": (250, 24000), "rail": (6000, 32000), "air": (20, 1600), "sea": (2000, 26000)}
FREIGHT = {"road": ("180", "0.11", "0.19"), "rail": ("320", "0.06", "0.09"), "air": ("95", "2.60", "3.90"),
           "sea": ("450", "0.04", "0.06")}

NAMES = {
    "Netherlands": (["Sanne", "Daan", "Femke", "Joris", "Lotte", "Bram", "Ruben", "Noor"],
                    ["de Vries", "Jansen", "Bakker", "Visser", "Smit", "Mulder", "van Dijk", "Bos"]),
    "Germany": (["Anna", "Jonas", "Katrin", "Lukas", "Jürgen", "Stefan", "Ulrike", "Tobias"],
                ["Schmidt", "Becker", "Hoffmann", "Krüger", "Wagner", "Lehmann", "Brandt", "Vogel"]),
    "France": (["Camille", "Julien", "Élodie", "Mathieu", "Claire", "Antoine"],
               ["Moreau", "Lefèvre", "Girard", "Dubois", "Roux", "Fontaine"]),
    "Spain": (["Lucía", "Javier", "Marta", "Pablo", "Carmen", "Diego"],
              ["García", "Fernández", "López", "Martín", "Navarro", "Ruiz"]),
    "United Kingdom": (["Oliver", "Amelia", "Harry", "Charlotte", "George", "Priya"],
                       ["Thompson", "Clarke", "Hughes", "Patel", "Wright", "Evans"]),
    "Poland": (["Łukasz", "Agnieszka", "Marek", "Katarzyna", "Piotr", "Zofia"],
               ["Nowak", "Wójcik", "Mazur", "Krawczyk", "Kaczmarek", "Zając"]),
    "Italy": (["Giulia", "Marco", "Chiara", "Luca", "Francesca", "Matteo"],
              ["Rossi", "Bianchi", "Romano", "Colombo", "Ricci", "Marino"]),
    "Belgium": (["Lien", "Wouter", "Elise", "Pieter", "Margot", "Thomas"],
                ["Peeters", "Janssens", "Maes", "Claes", "Wouters", "Lambert"]),
}

CUSTOMERS = [
    ("Hollandia Bikes B.V.", 6), ("Kessler Industrietechnik GmbH", 5), ("Papeterie Durand SA", 3),
    ("Bodegas Almira S.L.", 3), ("Thames Garden Supplies Ltd", 4), ("Polmeble S.A.", 3),
    ("Ferramenta Lombarda S.r.l.", 3), ("Vlaamse Bouwmaterialen NV", 4), ("Nordic Kitchenware AB", 3),
    ("Brightline Electronics Ltd", 4), ("Cafés Montserrat S.A.", 2), ("Hanse Pharma Distribution GmbH", 5),
    ("Atelier Mobilier Roux", 2), ("Amber Coast Crafts Sp. z o.o.", 2), ("Luce & Forma S.p.A.", 3),
    ("Oranje Toys B.V.", 3), ("Ardennes Outdoor SRL", 2), ("Pennine Tools Ltd", 3),
]
# sku, description, unit price EUR, qty range
SKUS = [
    ("PAL-1200", "Euro pallet 1200x800, heat-treated", "14.50", (40, 600)),
    ("SHL-4010", "Steel shelving unit 40x100 cm", "89.00", (4, 60)),
    ("CRT-0640", "Stackable crate 600x400", "7.80", (50, 800)),
    ("STR-0025", "Stretch film roll 25 µm", "11.25", (20, 300)),
    ("LBL-1000", "Thermal shipping labels, roll of 1000", "18.90", (10, 200)),
    ("BOX-0432", "Double-wall carton 40x30x20", "1.35", (200, 2500)),
    ("STP-1900", "Steel strapping coil 19 mm", "64.00", (2, 40)),
    ("PTR-2500", "Hand pallet truck 2.5 t", "389.00", (1, 8)),
    ("SCN-0700", "Handheld barcode scanner", "412.50", (1, 12)),
    ("DRM-0200", "HDPE drum 200 l", "58.40", (4, 80)),
    ("FIB-1000", "FIBC bulk bag 1 t", "12.70", (20, 400)),
    ("TAP-0048", "Packing tape 48 mm", "2.10", (50, 1200)),
    ("CRN-0090", "Corner board 90 cm", "0.85", (100, 3000)),
    ("DUN-0309", "Dunnage air bag 300x900", "3.60", (50, 900)),
    ("MAT-0610", "Anti-slip mat 600x1000", "6.95", (20, 500)),
]

# --------------------------------------------------------------------------- #
# document markup: [[L|table|column|value]] is a deliberate citation of a row,
# [[D|kind|token]] an id-like or numeric token that must not become a link.
# --------------------------------------------------------------------------- #
MARK = re.compile(r"\[\[(L|D)\|([^\]]+)\]\]")


def L(table: str, column: str, value: str) -> str:
    return f"[[L|{table}|{column}|{value}]]"


def D(kind: str, token: str) -> str:
    return f"[[D|{kind}|{token}]]"


def render(src: str, rel: str):
    out, links, dists, n, pos = [], [], [], 0, 0
    for m in MARK.finditer(src):
        chunk = src[pos:m.start()]
        out.append(chunk)
        n += len(chunk)
        parts = m.group(2).split("|")
        if m.group(1) == "L":
            table, col, tok = parts
            links.append({"document": rel, "table": table, "column": col, "value": tok,
                          "start": n, "end": n + len(tok)})
        else:
            kind, tok = parts
            dists.append({"document": rel, "token": tok, "kind": kind, "start": n, "end": n + len(tok)})
        out.append(tok)
        n += len(tok)
        pos = m.end()
    out.append(src[pos:])
    return "".join(out), links, dists


# --------------------------------------------------------------------------- #
# tables
# --------------------------------------------------------------------------- #
def build(rng: random.Random) -> dict:
    # ---- carriers --------------------------------------------------------
    ratings = [Decimal(x) / 10 for x in rng.sample(range(29, 50), len(CARRIERS))]
    carriers = []
    for (code, name, country, mode), rating in zip(CARRIERS, ratings, strict=True):
        carriers.append({"carrier_code": code, "name": name, "country": country, "mode": mode,
                         "rating": rating, "agreement": "" if code in NO_AGREEMENT else f"CA-{code}"})
    top = max(carriers, key=lambda c: c["rating"])
    if not top["agreement"]:  # the best-rated carrier must have an agreement (a question reads it)
        other = max((c for c in carriers if c["agreement"]), key=lambda c: c["rating"])
        top["rating"], other["rating"] = other["rating"], top["rating"]
    by_code = {c["carrier_code"]: c for c in carriers}

    # ---- warehouses ------------------------------------------------------
    caps = rng.sample(range(40, 240), len(WAREHOUSES))
    opened = rng.sample(range(0, 13 * 365), len(WAREHOUSES))
    warehouses = []
    for (wid, name, street, city, pc, country), cap, o in zip(WAREHOUSES, caps, opened, strict=True):
        warehouses.append({"warehouse_id": wid, "name": name,
                           "address": {"street": street, "city": city, "postcode": pc, "country": country},
                           "capacity_pallets": cap * 100 + rng.choice([0, 25, 50, 75]),
                           "opened": dt.date(2008, 3, 1) + dt.timedelta(days=o)})
    by_wh = {w["warehouse_id"]: w for w in warehouses}

    # ---- staff -----------------------------------------------------------
    wids = [w["warehouse_id"] for w in warehouses]
    plan = [("operations director", "WH-01", "TOP"), ("head of fleet", "WH-02", "TOP")]
    plan += [("warehouse manager", w, "DIR") for w in wids]
    plan += [("planning lead", "WH-01", "DIR")]
    plan += [("planner", rng.choice(["WH-01", "WH-01", "WH-02", "WH-08", "WH-05"]), "PL") for _ in range(5)]
    plan += [("dispatcher", w, "WM") for w in wids]
    plan += [("fleet coordinator", "WH-02", "FLEET"), ("fleet coordinator", "WH-06", "FLEET")]
    plan += [("driver", w, "DISP") for w in wids]  # one driver per site ...
    plan += [("driver", rng.choice(wids), "DISP") for _ in range(8)]  # ... and eight more
    plan += [("customer service agent", w, "PL") for w in ("WH-01", "WH-01", "WH-03")]
    used_names = set()
    hire_days = rng.sample(range(0, (dt.date(2024, 3, 31) - dt.date(2007, 1, 1)).days), len(plan))
    people = []
    for (role, site, boss), day in zip(plan, hire_days, strict=True):
        firsts, lasts = NAMES[by_wh[site]["address"]["country"]]
        while True:
            full = f"{rng.choice(firsts)} {rng.choice(lasts)}"
            if full not in used_names:
                used_names.add(full)
                break
        people.append({"full_name": full, "role": role, "base_site": site, "_boss": boss,
                       "hire_date": dt.date(2007, 1, 1) + dt.timedelta(days=day)})
    people.sort(key=lambda p: p["hire_date"])  # staff ids follow hiring order
    for k, p in enumerate(people):
        p["staff_id"] = f"E{1001 + k}"

    def one(role, site=None):
        found = [p for p in people if p["role"] == role and (site is None or p["base_site"] == site)]
        assert len(found) == 1, (role, site)
        return found[0]

    for p in people:
        boss = p.pop("_boss")
        if boss == "TOP":
            p["supervisor"] = ""
        elif boss == "DIR":
            p["supervisor"] = one("operations director")["staff_id"]
        elif boss == "PL":
            p["supervisor"] = one("planning lead")["staff_id"]
        elif boss == "WM":
            p["supervisor"] = one("warehouse manager", p["base_site"])["staff_id"]
        elif boss == "FLEET":
            p["supervisor"] = one("head of fleet")["staff_id"]
        else:
            p["supervisor"] = one("dispatcher", p["base_site"])["staff_id"]
    staff = people
    by_staff = {p["staff_id"]: p for p in staff}

    # ---- trucks ----------------------------------------------------------
    ops = [c for c in TRUCKS_PER_CARRIER for _ in range(TRUCKS_PER_CARRIER[c])]
    rng.shuffle(ops)
    trucks = []
    letters = "ABCDEFGHJKLMNPRSTVWXYZ"
    for k, op in enumerate(ops):
        n4 = rng.randint(1000, 9999)
        l3 = "".join(rng.choice(letters) for _ in range(3))
        plate = {
            "NRTH": f"{rng.choice(['NX', 'MK', 'YD', 'LN'])}{rng.choice(['17', '19', '68', '21', '71'])} {l3}",
            "RHNL": f"{rng.choice(['DU', 'D', 'KR'])}-{l3[:2]} {n4}",
            "BLTX": f"{l3[:2]}-{n4}",
            "IBRF": f"{n4} {l3}",
            "VSTL": f"PO {n4}{l3[0]}",
        }[op]
        trucks.append({"truck_id": f"TRK-{101 + k}", "operator": op, "plate": plate,
                       "capacity_kg": rng.choice([7500, 12000, 18000, 24000, 24000, 26000]),
                       "year_built": rng.randint(2011, 2023)})
    assert len({t["plate"] for t in trucks}) == len(trucks)
    by_truck = {t["truck_id"]: t for t in trucks}
    trucks_of = defaultdict(list)
    for t in trucks:
        trucks_of[t["operator"]].append(t)

    # ---- orders ----------------------------------------------------------
    takers = [p for p in staff if p["role"] in ("planner", "customer service agent", "planning lead")]
    days23 = rng.sample(range(2, 348), 52)
    days24 = rng.sample(range(1, 340), 63) + rng.sample(range(340, 356), 5)  # busy weeks before Christmas
    stamps = sorted([dt.datetime(2023, 1, 1, tzinfo=UTC) + dt.timedelta(days=d) for d in days23]
                    + [dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(days=d) for d in days24])
    orders = []
    for k, day in enumerate(stamps):
        placed = day + dt.timedelta(hours=rng.randint(7, 18), minutes=rng.randrange(0, 60))
        origin = rng.choices(list(WH_WEIGHT), weights=list(WH_WEIGHT.values()))[0]
        eligible = [p for p in takers if p["hire_date"] < placed.date()]
        cur = "GBP" if origin == "WH-05" else "EUR"
        lines = []
        for sku, desc, price, (lo, hi) in rng.sample(SKUS, rng.choice([1, 1, 2, 2, 2, 3, 3, 4])):
            unit = Decimal(price) if cur == "EUR" else q2(Decimal(price) * GBP_PER_EUR)
            lines.append({"sku": sku, "description": desc, "qty": rng.randint(lo, hi), "unit_price": unit})
        orders.append({"order_id": f"ORD-{50001 + k}",
                       "customer": rng.choices([c for c, _ in CUSTOMERS], weights=[w for _, w in CUSTOMERS])[0],
                       "placed_by": rng.choice(eligible)["staff_id"], "placed_at": placed, "origin": origin,
                       "lines": lines, "currency": cur})
    assert len({o["placed_at"] for o in orders}) == len(orders)
    by_order = {o["order_id"]: o for o in orders}

    # ---- shipments -------------------------------------------------------
    n_ship = Counter({o["order_id"]: 1 for o in orders})
    for o in rng.choices(orders, k=80):
        n_ship[o["order_id"]] += 1
    raw = []
    for o in orders:
        wh = o["origin"]
        country = by_wh[wh]["address"]["country"]
        for part in range(n_ship[o["order_id"]]):
            day = o["placed_at"].date() + dt.timedelta(days=rng.randint(1, 5) + 2 * part)
            naive = dt.datetime.combine(day, dt.time(rng.randint(6, 18), rng.randrange(0, 60, 5)))
            disp = from_local(naive, country)
            if disp > AS_OF - dt.timedelta(hours=1):  # nothing leaves after the snapshot
                disp = AS_OF - dt.timedelta(hours=rng.randint(2, 7), minutes=rng.randrange(0, 60, 5))
            modes = ["road", "air"] + (["rail"] if wh in RAIL_SITES else []) + (["sea"] if wh in SEA_SITES else [])
            mw = {"road": 10, "air": 2, "rail": 4, "sea": 4}
            mode = rng.choices(modes, weights=[mw[m] for m in modes])[0]
            if mode == "road":
                cs = ROAD_CARRIERS[wh]
                code = rng.choices([c for c, _ in cs], weights=[w for _, w in cs])[0]
            else:
                pool = [c["carrier_code"] for c in carriers if c["mode"] == mode]
                code = rng.choice(pool) if mode != "air" else rng.choices(pool, weights=[3, 2])[0]
            lo, hi = WEIGHT_KG[mode]
            if mode == "road":
                hi = min(hi, max(t["capacity_kg"] for t in trucks_of[code]))
            weight = Decimal(rng.randint(lo * 10, hi * 10)) / 10
            vehicle = ""
            if mode == "road":
                fits = [t for t in trucks_of[code] if t["capacity_kg"] >= weight]
                vehicle = rng.choice(fits)["truck_id"]
            base, rlo, rhi = FREIGHT[mode]
            rate = Decimal(rng.randint(int(Decimal(rlo) * 1000), int(Decimal(rhi) * 1000))) / 1000
            cost = q2(Decimal(base) + weight * rate)
            cur = "GBP" if code == "NRTH" else "EUR"
            if cur == "GBP":
                cost = q2(cost * GBP_PER_EUR)
            dest = rng.choice(DESTINATIONS[mode])
            lo_h, hi_h = TRANSIT_H[mode]
            transit = dt.timedelta(minutes=15 * rng.randint(lo_h * 4, hi_h * 4))
            raw.append({"order_ref": o["order_id"], "carrier": code, "vehicle": vehicle, "from_wh": wh,
                        "destination_city": dest[0], "_dest_country": dest[1], "_from_country": country,
                        "_disp": disp, "_transit": transit, "_mode": mode, "weight_kg": weight,
                        "freight_cost": cost, "currency": cur})
    raw.sort(key=lambda s: (s["_disp"], s["order_ref"]))
    shipments = []
    for k, s in enumerate(raw):
        s["shipment_id"] = f"SHP-{20001 + k}"
        shipments.append(s)
    by_ship = {s["shipment_id"]: s for s in shipments}

    # statuses: a fixed number of lost shipments of each kind, some delayed, the rest delivered/in transit
    early = [s for s in shipments if s["_disp"] < dt.datetime(2024, 12, 1, tzinfo=UTC)]
    lost = (rng.sample([s for s in early if s["_mode"] == "road"], 5)
            + rng.sample([s for s in early if s["_mode"] == "air"], 1)
            + rng.sample([s for s in early if s["_mode"] == "sea"], 1))
    lost_ids = {s["shipment_id"] for s in lost}
    rest = [s for s in early if s["shipment_id"] not in lost_ids]
    delayed = []  # delays grew in 2024 (more congestion), so the two years differ
    for year, n_road, n_other in ((2023, 7, 2), (2024, 10, 3)):
        pool = [s for s in rest if s["_disp"].year == year]
        delayed += rng.sample([s for s in pool if s["_mode"] == "road"], n_road)
        delayed += rng.sample([s for s in pool if s["_mode"] != "road"], n_other)
    delayed_ids = {s["shipment_id"] for s in delayed}
    for s in shipments:
        sid = s["shipment_id"]
        if sid in lost_ids:
            s["status"], s["_arr"] = "lost", None
            continue
        if sid in delayed_ids:
            s["_delay"] = dt.timedelta(hours=rng.randint(26, 110))
            s["_transit"] += s["_delay"]
        arr = s["_disp"] + s["_transit"]
        if arr > AS_OF:
            s["status"], s["_arr"] = "in_transit", None
        else:
            s["status"], s["_arr"] = ("delayed" if sid in delayed_ids else "delivered"), arr
    for s in shipments:
        s["dispatched_at"] = iso_local(s["_disp"], s["_from_country"])
        s["delivered_at"] = iso_local(s["_arr"], s["_dest_country"]) if s["_arr"] else ""

    return {"carriers": carriers, "by_code": by_code, "warehouses": warehouses, "by_wh": by_wh,
            "staff": staff, "by_staff": by_staff, "trucks": trucks, "by_truck": by_truck,
            "orders": orders, "by_order": by_order, "shipments": shipments, "by_ship": by_ship}


# --------------------------------------------------------------------------- #
# documents
# --------------------------------------------------------------------------- #
def agreement_terms(rng, carriers) -> dict:
    with_ag = [c for c in carriers if c["agreement"]]
    caps = rng.sample([20000, 25000, 30000, 40000, 50000, 60000, 75000, 100000, 150000], len(with_ag))
    terms = {}
    for c, cap in zip(with_ag, caps, strict=True):
        terms[c["carrier_code"]] = {
            "on_time": rng.choice(["95", "96", "96.5", "97", "97.5", "98", "98.5", "99"]),
            "liability": cap,
            "penalty": rng.choice([120, 150, 175, 200, 250, 300, 350, 400]),
            "penalty_cap_days": rng.choice([5, 10, 15]),
            "notice": rng.choice([30, 60, 90, 120, 180]),
            "term_months": rng.choice([12, 24, 36]),
            "effective": dt.date(2021, 6, 1) + dt.timedelta(days=rng.randint(0, 540)),
            "claims_days": rng.choice([7, 14, 21]),
        }
    return terms


def contract_md(c, t, sites, rng) -> str:
    code, name, mode = c["carrier_code"], c["name"], c["mode"]
    eff = t["effective"].isoformat()
    site_txt = " and ".join(f"{L('warehouses', 'warehouse_id', w)} ({city})" for w, city in sites)
    parties = rng.choice([
        f"This Carrier Agreement (the \"Agreement\") is made between {COMPANY}, Rotterdam (the "
        f"\"Shipper\"), and {name}, {c['country']} (the \"Carrier\", carrier code "
        f"{L('carriers', 'carrier_code', code)}).",
        f"{COMPANY} (\"Shipper\") and {name} of {c['country']} (\"Carrier\"; carrier code "
        f"{L('carriers', 'carrier_code', code)}) agree to the terms set out below.",
    ])
    scope = rng.choice([
        f"The Carrier provides {mode} transport services, mainly for consignments leaving the Shipper's "
        f"sites {site_txt}.",
        f"Services covered: {mode} freight from the Shipper's sites, in particular {site_txt}, to "
        "destinations agreed per order.",
    ])
    sla = rng.choice([
        f"The Carrier shall deliver at least {t['on_time']}% of shipments on time, measured monthly "
        "against the delivery window confirmed at booking.",
        f"On-time delivery target: {t['on_time']}% of shipments per calendar month. A shipment is on time "
        "when it arrives within the confirmed delivery window.",
    ])
    sla2 = rng.choice([
        "Proof of delivery must be uploaded to the Shipper's portal within 24 hours of delivery.",
        "The Carrier reports shipment milestones (pickup, hand-over, delivery) electronically.",
    ])
    liab = rng.choice([
        f"The Carrier's liability for loss of or damage to goods is capped at EUR {t['liability']:,} per "
        "shipment, unless the loss was caused intentionally or by gross negligence.",
        f"Liability for loss or damage is limited to EUR {t['liability']:,} per shipment. Higher values "
        "must be declared and insured separately before dispatch.",
    ])
    liab2 = (f"Claims for visible damage must reach the Carrier within {t['claims_days']} days of delivery."
             if rng.random() < 0.7 else
             f"The Shipper notifies the Carrier of any damage within {t['claims_days']} days of delivery.")
    pen = rng.choice([
        f"For each day a shipment is delivered late, the Carrier pays a penalty of EUR {t['penalty']}, "
        f"up to a maximum of {t['penalty_cap_days']} days per shipment.",
        f"Late delivery penalty: EUR {t['penalty']} per late day and shipment, capped at "
        f"{t['penalty_cap_days']} days.",
    ])
    pen2 = rng.choice(["Delays caused by force majeure or by the Shipper's own actions are excluded.",
                       "Penalties are set off against the Carrier's next invoice."])
    term = rng.choice([
        f"The Agreement starts on {eff} and runs for {t['term_months']} months; it then renews "
        f"automatically for periods of twelve months. Either party may terminate with {t['notice']} "
        "days' written notice.",
        f"Initial term: {t['term_months']} months from {eff}. A notice period of {t['notice']} days "
        "applies to termination by either party.",
    ])
    body = [
        f"# Carrier Agreement — {name}",
        f"Document ID: {L('carriers', 'agreement', c['agreement'])} · Carrier code: "
        f"{L('carriers', 'carrier_code', code)} · Effective date: {eff}",
        "",
        "## Parties",
        "",
        f"{parties} {scope}",
        "",
        "## Service level",
        "",
        f"{sla} {sla2}",
        "",
        "## Liability",
        "",
        f"{liab} {liab2}",
        "",
        "## Penalties",
        "",
        f"{pen} {pen2}",
        "",
        "## Term and termination",
        "",
        f"{term} Material breach not remedied within 30 days entitles the other party to terminate "
        "with immediate effect.",
        "",
    ]
    return "\n".join(body)


def policies(rng, staff) -> tuple[dict, dict]:
    p = {
        "weekly_hours": rng.choice([50, 52, 54, 55]),
        "fortnight_hours": 90,
        "daily_rest": rng.choice([11, 12]),
        "ot_rate": rng.choice([125, 150]),
        "ot_cap": rng.choice([16, 20, 24]),
        "decl_hours": rng.choice([24, 48, 72]),
        "adr_years": rng.choice([3, 5]),
        "claim_days": rng.choice([10, 14, 21, 28]),
        "concealed_days": rng.choice([3, 5, 7]),
        "survey_eur": rng.choice([2500, 5000, 10000]),
        "ship_years": rng.choice([6, 7, 10]),
        "telematics_months": rng.choice([13, 18, 24]),
        "cctv_days": rng.choice([30, 31, 60]),
        "timesheet_years": rng.choice([2, 3]),
    }
    fleet = next(s for s in staff if s["role"] == "head of fleet")
    docs = {}
    docs["policies/driving-hours-and-overtime-policy.md"] = f"""# Driving Hours and Overtime Policy
Policy reference: {D('policy-ref', 'POL-OPS-03')} · Version 4 · Approved 2023-11-20 · Owner: Head of Fleet

## Scope

This policy applies to every driver employed by {COMPANY} and to the dispatchers who plan their
duties. Drivers of subcontracted carriers follow the rules set in their carrier agreements.
Questions about this policy go to the head of fleet, {fleet['full_name']} ({L('staff', 'staff_id', fleet['staff_id'])}).

## Driving limits

- Daily driving time must not exceed 9 hours; it may be extended to 10 hours at most twice a week.
- Weekly driving time must not exceed **{p['weekly_hours']} hours**, and {p['fortnight_hours']} hours in any two
  consecutive weeks. This is stricter than the legal maximum of 56 hours.
- After 4.5 hours of driving a break of at least 45 minutes is mandatory.

## Rest periods

- Daily rest: at least {p['daily_rest']} consecutive hours.
- Weekly rest: at least 45 consecutive hours, to be taken away from the vehicle cab.
- Dispatchers must not schedule a departure before the required rest period has ended.

## Overtime

Overtime beyond 48 working hours per week needs the dispatcher's approval in advance and is paid at
{p['ot_rate']}% of the base hourly rate. No driver may work more than {p['ot_cap']} hours of overtime
per calendar month.

## Contact

Fleet desk, 24/7: {D('phone', '+31 10 555 0199')}.
"""
    docs["policies/hazardous-goods-policy.md"] = f"""# Hazardous Goods Policy
Policy reference: {D('policy-ref', 'POL-SHE-07')} · Version 2 · Approved 2024-02-05

## Purpose

Dangerous goods (ADR for road, RID for rail, IATA DGR for air, IMDG for sea) may only be moved when
they are declared, packed and documented correctly.

## Declaration

- Every hazardous shipment must be declared to the planning team at least **{p['decl_hours']} hours
  before dispatch**, with the UN number, class and packing group (for example {D('un-number', 'UN 1203')},
  petrol, class 3).
- Lithium batteries ({D('un-number', 'UN 3480')}) are only accepted by air when packed under
  section II of the IATA rules.
- Class 1 (explosives) and class 7 (radioactive material) are never accepted.

## Drivers and vehicles

- Only drivers with a valid ADR certificate may carry hazardous goods; the certificate is refreshed every
  {p['adr_years']} years at the company's expense.
- Vehicles carry two 6 kg fire extinguishers and orange plates front and rear.

## Emergencies

Call the 24-hour emergency line {D('phone', '+49 203 555 0147')} and follow the written instructions in the cab.
"""
    docs["policies/returns-and-damaged-goods-policy.md"] = f"""# Returns and Damaged Goods Policy
Policy reference: {D('policy-ref', 'POL-CS-02')} · Version 3 · Approved 2023-06-12

## Claims

A claim for goods lost or damaged in transit must be filed within **{p['claim_days']} days of the
delivery date** (for lost goods: of the planned delivery date). Claims filed later are rejected.
Visible damage must be noted on the proof of delivery; concealed damage must be reported within
{p['concealed_days']} days of delivery with photographs.

## Assessment

Claims above EUR {p['survey_eur']:,} require an independent surveyor's report. The customer service team
confirms receipt of a claim within two working days and settles accepted claims by credit note within
30 days.

## Returns

Goods are only taken back with a return authorisation number (format {D('rma', 'RMA-2024-0113')}).
Returned pallets are inspected at the receiving warehouse before a credit is issued.
"""
    docs["policies/data-retention-policy.md"] = f"""# Data Retention Policy
Policy reference: {D('policy-ref', 'POL-IT-11')} · Version 1 · Approved 2022-09-30

## Retention periods

| Record | Retention |
|---|---|
| Shipment records and proofs of delivery | {p['ship_years']} years after delivery |
| Vehicle telematics and GPS traces | {p['telematics_months']} months |
| Warehouse CCTV footage | {p['cctv_days']} days, unless needed for an incident |
| Driver timesheets and tachograph data | {p['timesheet_years']} years |
| Incident reports | 10 years |

## Deletion

Records are deleted or anonymised at the end of their retention period by an automated job that runs
on the first Sunday of each month. Legal holds suspend deletion for the records concerned.

## Questions

Data protection officer: dpo@corvid-freight.example, {D('phone', '+31 10 555 0123')}.
"""
    return docs, p


def pick_incidents(rng, t) -> list[dict]:
    """Fifteen incidents: delayed and lost shipments, plus damaged deliveries."""
    sh = t["shipments"]
    plan = ([("delay-road", s) for s in rng.sample([s for s in sh if s["status"] == "delayed" and s["vehicle"]], 6)]
            + [("delay-other", s) for s in rng.sample(
                [s for s in sh if s["status"] == "delayed" and s["_mode"] in ("rail", "sea")], 1)]
            + [("lost-road", s) for s in rng.sample([s for s in sh if s["status"] == "lost" and s["vehicle"]], 4)]
            + [("lost-air", s) for s in sh if s["status"] == "lost" and s["_mode"] == "air"]
            + [("lost-sea", s) for s in sh if s["status"] == "lost" and s["_mode"] == "sea"]
            + [("damage", s) for s in rng.sample([s for s in sh if s["status"] == "delivered" and s["vehicle"]], 2)])
    assert len(plan) == 15 and len({s["shipment_id"] for _, s in plan}) == 15
    plan.sort(key=lambda x: x[1]["_disp"])
    return [{"id": f"IR-{k:03d}", "kind": kind, "s": s} for k, (kind, s) in enumerate(plan, start=1)]


def incident_md(inc, t, rng, n_variant) -> str:
    s = inc["s"]
    sid, wh = s["shipment_id"], t["by_wh"][s["from_wh"]]
    order = t["by_order"][s["order_ref"]]
    disp_local = local_dt(s["_disp"], s["_from_country"])
    ddate = long_date(disp_local.date())
    S = L("shipments", "shipment_id", sid)
    TR = L("trucks", "truck_id", s["vehicle"]) if s["vehicle"] else ""
    ORD = L("orders", "order_id", order["order_id"])
    W = L("warehouses", "warehouse_id", wh["warehouse_id"])
    # the carriers' drivers are not our staff; a site dispatcher or manager handles the incident
    site = [p for p in t["staff"] if p["base_site"] == wh["warehouse_id"]
            and p["role"] in ("dispatcher", "warehouse manager") and p["hire_date"] < disp_local.date()]
    handler = rng.choice(site or [p for p in t["staff"] if p["role"] == "operations director"])
    H = f"{handler['role'].capitalize()} {handler['full_name']} ({L('staff', 'staff_id', handler['staff_id'])})"
    dest = s["destination_city"]
    arr = local_dt(s["_arr"], s["_dest_country"]) if s["_arr"] else None
    if arr:
        reported = arr.date() + dt.timedelta(days=rng.randint(1, 3))
    else:
        reported = disp_local.date() + dt.timedelta(days=rng.randint(22, 30))
    uk = "United Kingdom" in (s["_from_country"], s["_dest_country"])
    winter = disp_local.month in (11, 12, 1, 2, 3)
    kind = inc["kind"]
    pallets = rng.randint(6, 26)
    paras = []
    if kind == "delay-road":
        late_days = max(1, round(s["_delay"].total_seconds() / 86400))
        v = n_variant % 6
        if v == 0:
            paras.append(f"On {ddate} truck {TR} left the {wh['name']} ({W}) with shipment {S} for {dest}. "
                         f"About four hours into the trip the gearbox failed on the motorway and the vehicle had "
                         f"to be towed to a workshop. The carrier's driver stayed with the load and {H[0].lower()}"
                         f"{H[1:]} informed the customer.")
            paras.append(f"A replacement tractor unit ({D('unknown-id', 'TRK-199')}, from the carrier's rental pool) "
                         f"took over trailer {D('trailer', 'TRL-7')} the next day. The consignment reached {dest} on "
                         f"{long_date(arr.date())}, roughly {late_days} day{'s' if late_days > 1 else ''} late.")
        elif v == 1 and uk:
            paras.append(f"Shipment {S} (order {ORD}) was held at customs for missing export documents after "
                         f"truck {TR} reached the border on its way to {dest}. The customs broker's office "
                         f"can be reached on {D('phone', '+44 1304 555 018')}.")
            paras.append(f"Planning re-issued the commercial invoice and the truck was released. Delivery took "
                         f"place on {long_date(arr.date())} instead of the promised date.")
        elif v == 1:
            paras.append(f"Truck {TR} with shipment {S} (order {ORD}) for {dest} was stopped at a roadside "
                         f"inspection because the CMR consignment note was missing and the load was not "
                         f"secured to standard.")
            paras.append(f"The load was re-strapped and a new consignment note was issued. Delivery took "
                         f"place on {long_date(arr.date())} instead of the promised date. Inspection office: "
                         f"{D('phone', '+48 61 555 0178')}.")
        elif v == 2:
            weather = "Heavy snowfall closed the pass road" if winter else "Flash flooding closed the motorway"
            paras.append(f"{weather} used by truck {TR} on {ddate}. Shipment {S}, "
                         f"{D('pallet-count', str(pallets))} pallets for {dest}, waited at a truck stop (postcode "
                         f"{D('postcode', '39049')}) until the road reopened.")
            paras.append(f"The carrier's driver took the required rest at the truck stop. The goods arrived on "
                         f"{long_date(arr.date())}; the customer was informed by {handler['role']} "
                         f"{handler['full_name']}.")
        elif v == 3:
            paras.append(f"The driver of truck {TR} reported sick in the morning of {ddate}. Shipment {S} "
                         f"for {dest} was left at {W} until a relief driver was found.")
            paras.append(f"First reported as {D('typo-id', 'SHP-99999')} in the duty log (typing error, corrected "
                         f"to {S}). Delivered on {long_date(arr.date())}.")
        elif v == 4:
            paras.append(f"Truck {TR} arrived in {dest} with shipment {S} (order {ORD}), but the delivery "
                         f"address on the booking was the customer's old site, closed since {D('year', '2019')}.")
            paras.append(f"The load was re-delivered to the correct address on {long_date(arr.date())}. "
                         f"Customer service corrected the master data.")
        else:
            if uk:
                cause = (f"a cancelled ferry sailing and a queue of around {D('count', '600')} lorries at the "
                         "port delayed")
                fix = "rebooked the crossing"
            else:
                cause = (f"a multi-vehicle accident closed the motorway for about {D('count', '9')} hours and "
                         "held up")
                fix = "agreed a new delivery slot with the consignee"
            paras.append(f"On {ddate} {cause} truck {TR} carrying shipment {S} to {dest}.")
            paras.append(f"{H} {fix}. "
                         f"The goods were delivered on {long_date(arr.date())}.")
        cat = "Delay"
    elif kind == "delay-other":
        paras.append(f"Shipment {S} (order {ORD}) left {W} on {ddate}. A strike closed the route "
                     f"for several days and the consignment was held at an intermediate terminal.")
        paras.append(f"It reached {dest} on {long_date(arr.date())}. No goods were damaged. Terminal office: "
                     f"{D('phone', '+43 1 555 0190')}.")
        cat = "Delay"
    elif kind == "lost-road":
        v = n_variant % 4
        if v == 0:
            paras.append(f"During the night after {ddate} the curtain of the trailer of truck {TR} was cut "
                         f"open at an unguarded parking area (postcode {D('postcode', '96160')}). "
                         f"All {D('pallet-count', str(pallets))} pallets of shipment {S} were stolen.")
            paras.append(f"The carrier's driver reported the theft to the police (reference "
                         f"{D('police-ref', f'4471/{disp_local.year % 100:02d}')}). {H} informed the customer. "
                         "The goods were not recovered and the shipment has been written off as lost.")
        elif v == 1:
            paras.append(f"Shipment {S} (order {ORD}) was collected at {W} on {ddate} by a vehicle presenting "
                         f"forged papers for truck {TR}. The real truck arrived two hours later.")
            paras.append("This was a fictitious pickup. The case is with the police and the insurer; the "
                         "shipment is recorded as lost.")
        elif v == 2:
            paras.append(f"Truck {TR} delivered shipment {S} in {dest}, but the signature on the proof of "
                         f"delivery does not belong to the consignee, and no one at the address received the "
                         f"goods. Seal number {D('seal', '0048817')} was recorded at departure.")
            paras.append("After three weeks of searching the shipment was declared lost and a claim was filed.")
        else:
            paras.append(f"A tyre fire destroyed the trailer of truck {TR} on {ddate}, with shipment {S} "
                         f"(order {ORD}) on board. The carrier's driver was unhurt.")
            paras.append(f"The fire brigade ({D('phone', '+33 4 72 55 01 12')}) confirmed a total loss of the "
                         f"cargo; the shipment is recorded as lost. {H} informed the customer and the insurer.")
        cat = "Loss"
    elif kind == "lost-air":
        paras.append(f"Shipment {S} (order {ORD}) was handed to the airline at the hub on {ddate} for "
                     f"{dest}. The pieces were misrouted during transfer and could not be traced.")
        paras.append(f"After the 14-day trace period the shipment was declared lost. Air waybill "
                     f"{D('awb', '176-55010942')} is closed.")
        cat = "Loss"
    elif kind == "lost-sea":
        paras.append(f"Container {D('container', 'OCLU 4417302')} with shipment {S} (order {ORD}) went "
                     f"overboard in a storm on the way to {dest}, a few days after leaving {W} on {ddate}.")
        paras.append("The vessel operator declared general average. The shipment is recorded as lost and the "
                     "customer's claim was forwarded to the insurer.")
        cat = "Loss"
    else:
        v = n_variant % 2
        if v == 0:
            paras.append(f"Shipment {S} was delivered in {dest} on {long_date(arr.date())} by truck {TR}. "
                         f"While unloading, a forklift pierced {D('pallet-count', '3')} of the "
                         f"{D('pallet-count', str(pallets))} pallets.")
            paras.append(f"The consignee noted the damage on the proof of delivery and filed a claim under the "
                         f"returns and damaged goods policy for order {ORD}.")
        else:
            paras.append(f"Rain entered the trailer of truck {TR} through a torn roof; shipment {S} for {dest} "
                         f"was delivered on {long_date(arr.date())} with water-damaged cartons.")
            paras.append(f"{H} collected the consignee's photographs and opened a claim. The carrier has "
                         "taken the trailer out of service for repair.")
        cat = "Damage"
    head = [f"# Incident report {inc['id']}", "",
            f"**Reported:** {reported.isoformat()} · **Category:** {cat} · **Site:** {wh['name']}", "",
            "## What happened", "", paras[0], "", "## Follow-up", "", paras[1], ""]
    return "\n".join(head)


def memo_txt(t, memo) -> str:
    director = next(p for p in t["staff"] if p["role"] == "operations director")
    pc, sk = memo["probation"], memo["best"]
    lost_txt = ", ".join(L("shipments", "shipment_id", s) for s in memo["lost"])
    return f"""CORVID FREIGHT SOLUTIONS - OPERATIONS MEMO
Quarter: Q4 2024
From: {director['full_name']} ({L('staff', 'staff_id', director['staff_id'])}), operations director
To: warehouse managers, planning, customer service
Date: 2025-01-08

1. Carrier performance
----------------------
{L('carriers', 'carrier_code', pc)} recorded {memo['probation_delayed']} delayed shipments in 2024, more than any
other carrier. From 1 February 2025 {L('carriers', 'carrier_code', pc)} is on probation for six months: no new
lanes, and weekly reviews of its delivery times with planning.
{L('carriers', 'carrier_code', sk)} had no delayed or lost shipments in 2024 and will be offered the
additional volume.
{L('carriers', 'carrier_code', 'SKYW')} announced a fuel surcharge increase of 4.5% from 1 March 2025;
planning should prefer rail for non-urgent consignments where {L('warehouses', 'warehouse_id', 'WH-02')}
or {L('warehouses', 'warehouse_id', 'WH-07')} can serve the order.

2. Losses
---------
{memo['lost_n']} shipments were lost in 2024 ({lost_txt}). All claims have been filed with
the carriers' insurers. Please keep pallet counts on every proof of delivery.

3. Volumes
----------
We dispatched {memo['n24']} shipments in 2024, compared with {memo['n23']} in 2023.

4. Housekeeping
---------------
Gate {D('gate', '7')} at Duisburg is closed for resurfacing from 13 to 17 January. Questions to
the site office on {D('phone', '+49 203 555 0110')}.
"""


# --------------------------------------------------------------------------- #
# writing
# --------------------------------------------------------------------------- #
def write_tables(t) -> None:
    with open(OUT / "carriers.csv", "w", newline="", encoding="utf-8") as f:
        wr = csv.writer(f, lineterminator="\n")
        cols = ["carrier_code", "name", "country", "mode", "rating", "agreement"]
        wr.writerow(cols)
        for c in t["carriers"]:
            wr.writerow([f"{c[k]:.1f}" if k == "rating" else c[k] for k in cols])
    wh = [{**w, "opened": long_date(w["opened"])} for w in t["warehouses"]]
    (OUT / "warehouses.json").write_text(json.dumps(wh, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with open(OUT / "staff.csv", "w", newline="", encoding="utf-8") as f:
        wr = csv.writer(f, lineterminator="\n")
        cols = ["staff_id", "full_name", "role", "base_site", "supervisor", "hire_date"]
        wr.writerow(cols)
        for p in sorted(t["staff"], key=lambda p: p["staff_id"]):
            wr.writerow([p[k].isoformat() if isinstance(p[k], dt.date) else p[k] for k in cols])
    with open(OUT / "trucks.csv", "w", newline="", encoding="utf-8") as f:
        wr = csv.writer(f, lineterminator="\n")
        cols = ["truck_id", "operator", "plate", "capacity_kg", "year_built"]
        wr.writerow(cols)
        for tr in t["trucks"]:
            wr.writerow([tr[k] for k in cols])
    with open(OUT / "orders.jsonl", "w", encoding="utf-8") as f:
        for o in t["orders"]:
            rec = {"order_id": o["order_id"], "customer": o["customer"], "placed_by": o["placed_by"],
                   "placed_at": o["placed_at"].strftime("%Y-%m-%dT%H:%M:%SZ"), "origin": o["origin"],
                   "lines": [{**li, "unit_price": float(li["unit_price"])} for li in o["lines"]],
                   "currency": o["currency"]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    with open(OUT / "shipments.csv", "w", newline="", encoding="utf-8") as f:
        wr = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        cols = ["shipment_id", "order_ref", "carrier", "vehicle", "from_wh", "destination_city", "dispatched_at",
                "delivered_at", "status", "weight_kg", "freight_cost", "currency"]
        wr.writerow(cols)
        for s in t["shipments"]:
            row = [s[k] for k in cols]
            row[cols.index("weight_kg")] = f"{s['weight_kg']:.1f}"
            row[cols.index("freight_cost")] = money(s["freight_cost"])
            wr.writerow(row)
    # make sure every freight cost is quoted text, even those below 1,000 (as the source system exports them)
    text = (OUT / "shipments.csv").read_text(encoding="utf-8")
    fixed = []
    for k, line in enumerate(text.splitlines()):
        if k and not re.search(r',"[0-9,]+\.\d\d",[A-Z]{3}$', line):
            line = re.sub(r",([0-9]+\.\d\d),([A-Z]{3})$", r',"\1",\2', line)
        fixed.append(line)
    (OUT / "shipments.csv").write_text("\n".join(fixed) + "\n", encoding="utf-8")


def main() -> None:
    import duckdb  # only to compute the gold answers

    rng = random.Random(SEED)
    t = build(rng)
    terms = agreement_terms(rng, t["carriers"])

    # ---- wipe and write tables --------------------------------------------------
    shutil.rmtree(OUT, ignore_errors=True)
    for sub in ("contracts", "policies", "incidents"):
        (OUT / "documents" / sub).mkdir(parents=True)
    write_tables(t)

    # ---- documents -----------------------------------------------------------
    docs: dict[str, str] = {}  # rel path -> marked-up source
    sites_of = defaultdict(Counter)
    for s in t["shipments"]:
        sites_of[s["carrier"]][s["from_wh"]] += 1
    for c in t["carriers"]:
        if c["agreement"]:
            top2 = sorted(sites_of[c["carrier_code"]].items(), key=lambda kv: (-kv[1], kv[0]))[:2]
            sites = sorted((w, t["by_wh"][w]["address"]["city"]) for w, _ in top2)
            docs[f"contracts/{c['agreement']}.md"] = contract_md(c, terms[c["carrier_code"]], sites, rng)
    pol_docs, pol = policies(rng, t["staff"])
    docs.update(pol_docs)
    incidents = pick_incidents(rng, t)
    counters = Counter()
    for inc in incidents:
        docs[f"incidents/{inc['id']}.md"] = incident_md(inc, t, rng, counters[inc["kind"]])
        counters[inc["kind"]] += 1

    def year_of(s):
        return s["_disp"].year

    s24 = [s for s in t["shipments"] if year_of(s) == 2024]
    delayed24 = Counter(s["carrier"] for s in s24 if s["status"] == "delayed")
    (pc, pn), (_, pn2) = delayed24.most_common(2)
    assert pn > pn2
    bad24 = {s["carrier"] for s in s24 if s["status"] in ("delayed", "lost")}
    clean = [c["carrier_code"] for c in t["carriers"]
             if c["carrier_code"] not in bad24 and any(s["carrier"] == c["carrier_code"] for s in s24)
             and c["carrier_code"] != "SKYW"]
    lost24 = [s["shipment_id"] for s in s24 if s["status"] == "lost"]
    memo = {"probation": pc, "probation_delayed": pn, "best": clean[0], "lost": lost24, "lost_n": len(lost24),
            "n24": len(s24), "n23": sum(1 for s in t["shipments"] if year_of(s) == 2023)}
    docs["ops-memo-2024Q4.txt"] = memo_txt(t, memo)

    links, distractors = [], []
    for rel in sorted(docs):
        text, lk, ds = render(docs[rel], rel)
        (OUT / "documents" / rel).write_text(text, encoding="utf-8")
        links += lk
        distractors += ds

    # ---- questions (gold answers from SQL) --------------------------------------
    con = duckdb.connect()
    con.execute(f"SET file_search_path = '{OUT.as_posix()}'")
    con.execute("SET TimeZone = 'UTC'")

    def sql(q: str):
        return con.execute(q).fetchall()

    questions = make_questions(rng, t, terms, pol, incidents, memo, sql)
    (OUT / "questions.json").write_text(json.dumps(questions, indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")

    structure = make_structure(links, distractors)
    (OUT / "structure.json").write_text(json.dumps(structure, indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    (OUT / "exclude.yaml").write_text("files:\n  - README.md\n  - questions.json\n  - structure.json\n"
                                      "fields: []\n", encoding="utf-8")
    (OUT / "README.md").write_text(readme(t, terms, incidents, questions, structure), encoding="utf-8")
    verify(t, sql)
    con.close()
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {OUT}: {len(t['carriers'])} carriers, {len(t['warehouses'])} warehouses, "
          f"{len(t['staff'])} staff, {len(t['trucks'])} trucks, {len(t['orders'])} orders, "
          f"{len(t['shipments'])} shipments, {len(docs)} documents, {len(questions)} questions, "
          f"{len(links)} document links, {size // 1024} KB")


# --------------------------------------------------------------------------- #
# questions
# --------------------------------------------------------------------------- #
def num1(x) -> str:
    """A one-decimal quantity as a person writes it; '12,345' when the decimal is zero."""
    s = f"{Decimal(str(x)):,.1f}"
    return s[:-2] if s.endswith(".0") else s


def make_questions(rng, t, terms, pol, incidents, memo, sql) -> list[dict]:
    qs: list[dict] = []
    by_code, by_staff = t["by_code"], t["by_staff"]
    SH, CA, TR, ST = "read_csv('shipments.csv')", "read_csv('carriers.csv')", "read_csv('trucks.csv')", \
        "read_csv('staff.csv')"
    WH, OR = "read_json('warehouses.json')", "read_json('orders.jsonl')"
    YEAR = "year(CAST(dispatched_at AS TIMESTAMPTZ))"
    COST = "CAST(replace(freight_cost, ',', '') AS DECIMAL(12, 2))"
    incident_sids = {i["s"]["shipment_id"] for i in incidents}

    def add(question, kind, answer, expect, gold_sql=None, hop_sql=None, documents=None):
        q = {"question": question, "kind": kind, "answer": answer, "expect": expect}
        if gold_sql:
            q["gold_sql"] = gold_sql
        if hop_sql:
            q["hop_sql"] = hop_sql
        if documents:
            q["documents"] = documents
        qs.append(q)

    def one(q):
        rows = sql(q)
        assert len(rows) == 1 and len(rows[0]) >= 1, (q, rows)
        return rows[0]

    # ---- lookup -------------------------------------------------------------
    truck = rng.choice([tr for tr in t["trucks"] if by_code[tr["operator"]]["agreement"]])
    g = f"SELECT c.name FROM {TR} t JOIN {CA} c ON t.operator = c.carrier_code WHERE t.truck_id = '{truck['truck_id']}'"
    (name,) = one(g)
    assert name == by_code[truck["operator"]]["name"]
    add(f"Which carrier operates truck {truck['truck_id']}?", "lookup", f"{name} ({truck['operator']})", [name], g)

    person = rng.choice([p for p in t["staff"] if p["role"] in ("planner", "dispatcher")])
    g = f"SELECT hire_date FROM {ST} WHERE full_name = '{person['full_name']}'"
    (hd,) = one(g)
    assert hd == person["hire_date"]
    add(f"When was {person['full_name']} hired?", "lookup", hd.isoformat(), [hd.isoformat()], g)

    truck2 = rng.choice([tr for tr in t["trucks"] if tr["truck_id"] != truck["truck_id"]])
    g = f"SELECT plate FROM {TR} WHERE truck_id = '{truck2['truck_id']}'"
    (plate,) = one(g)
    add(f"What is the licence plate of truck {truck2['truck_id']}?", "lookup", plate, [plate], g)

    # ---- filtered_aggregate ------------------------------------------------
    g = f"SELECT count(*) FROM {SH} WHERE status = 'delayed' AND {YEAR} = 2024"
    (n,) = one(g)
    assert n == sum(1 for s in t["shipments"] if s["status"] == "delayed" and s["_disp"].year == 2024)
    add("How many shipments were delayed in 2024?", "filtered_aggregate", str(n), [str(n)], g)

    g = f"SELECT round(sum(weight_kg), 1), count(*) FROM {SH} WHERE status = 'lost'"
    w, n = one(g)
    assert Decimal(str(w)) == sum(s["weight_kg"] for s in t["shipments"] if s["status"] == "lost")
    add("What is the total weight of lost shipments?", "filtered_aggregate",
        f"{num1(w)} kg across {n} lost shipments", [num1(w)], g)

    g = (f"SELECT sum({COST}), count(*) FROM {SH} s JOIN {CA} c ON s.carrier = c.carrier_code "
         f"WHERE c.mode = 'rail' AND {YEAR} = 2024")
    total, n = one(g)
    assert total == sum(s["freight_cost"] for s in t["shipments"] if s["_mode"] == "rail" and s["_disp"].year == 2024)
    assert all(s["currency"] == "EUR" for s in t["shipments"] if s["_mode"] == "rail")
    add("What was the total freight cost of rail shipments dispatched in 2024?", "filtered_aggregate",
        f"{money(total)} EUR across {n} rail shipments", [money(total)], g)

    # ---- join ---------------------------------------------------------------
    drv = rng.choice([p for p in t["staff"] if p["role"] == "driver"])
    g = (f"SELECT b.full_name FROM {ST} a JOIN {ST} b ON a.supervisor = b.staff_id "
         f"WHERE a.full_name = '{drv['full_name']}'")
    (boss,) = one(g)
    assert boss == by_staff[drv["supervisor"]]["full_name"]
    add(f"Who supervises {drv['full_name']}?", "join", f"{boss} ({drv['supervisor']})", [boss], g)

    order = rng.choice(t["orders"][5:40])
    g = (f"SELECT w.address.city FROM {OR} o JOIN {WH} w ON o.origin = w.warehouse_id "
         f"WHERE o.order_id = '{order['order_id']}'")
    (city,) = one(g)
    add(f"Which warehouse city did order {order['order_id']} ship from?", "join",
        f"{city} ({t['by_wh'][order['origin']]['name']}, {order['origin']})", [city], g)

    order2 = rng.choice(t["orders"][60:110])
    g = (f"SELECT s.full_name FROM {OR} o JOIN {ST} s ON o.placed_by = s.staff_id "
         f"WHERE o.order_id = '{order2['order_id']}'")
    (who,) = one(g)
    add(f"Who placed order {order2['order_id']}?", "join", f"{who} ({order2['placed_by']})", [who], g)

    # ---- ranking ------------------------------------------------------------
    g = (f"SELECT c.name, count(*) AS n FROM {SH} s JOIN {CA} c ON s.carrier = c.carrier_code "
         f"WHERE {YEAR} = 2024 GROUP BY c.name ORDER BY n DESC LIMIT 2")
    (top, n1), (_, n2) = sql(g)
    assert n1 > n2
    add("Which carrier handled the most shipments in 2024?", "ranking", f"{top} ({n1} shipments)", [top], g)

    g = (f"SELECT w.name, round(sum(s.weight_kg), 1) AS kg FROM {SH} s JOIN {WH} w ON s.from_wh = w.warehouse_id "
         f"WHERE {YEAR} = 2023 GROUP BY w.name ORDER BY kg DESC LIMIT 2")
    (top, k1), (_, k2) = sql(g)
    assert k1 > k2
    add("Which warehouse dispatched the largest total shipment weight in 2023?", "ranking",
        f"{top} ({num1(k1)} kg)", [top], g)

    g = f"SELECT customer, count(*) AS n FROM {OR} GROUP BY customer ORDER BY n DESC LIMIT 2"
    (top, n1), (_, n2) = sql(g)
    assert n1 > n2
    add("Which customer has placed the most orders?", "ranking", f"{top} ({n1} orders)", [top], g)

    # ---- period_change ------------------------------------------------------
    g = (f"SELECT count(*) FILTER (WHERE {YEAR} = 2023) AS y2023, count(*) FILTER (WHERE {YEAR} = 2024) AS y2024, "
         f"y2024 - y2023 AS change FROM {SH}")
    a, b, d = one(g)
    assert d != 0 and (a, b) == (memo["n23"], memo["n24"])
    add("By how much did the number of shipments dispatched change from 2023 to 2024?", "period_change",
        f"{d:+d} ({a} in 2023, {b} in 2024)", [str(abs(d))], g)

    g = (f"SELECT sum({COST}) FILTER (WHERE {YEAR} = 2023) AS y2023, sum({COST}) FILTER (WHERE {YEAR} = 2024) "
         f"AS y2024, y2024 - y2023 AS change FROM {SH} WHERE currency = 'EUR'")
    a, b, d = one(g)
    assert d != 0
    sign = "+" if d > 0 else "-"
    add("How did total freight cost billed in EUR change between 2023 and 2024?", "period_change",
        f"{sign}{money(abs(d))} EUR ({money(a)} EUR in 2023, {money(b)} EUR in 2024)", [money(abs(d))], g)

    g = (f"SELECT count(*) FILTER (WHERE {YEAR} = 2023) AS y2023, count(*) FILTER (WHERE {YEAR} = 2024) AS y2024, "
         f"y2024 - y2023 AS change FROM {SH} WHERE status = 'delayed'")
    a, b, d = one(g)
    assert d != 0
    add("How did the number of delayed shipments change from 2023 to 2024?", "period_change",
        f"{d:+d} ({a} in 2023, {b} in 2024)", [str(abs(d))], g)

    g = (f"SELECT round(sum(weight_kg) FILTER (WHERE {YEAR} = 2023), 1) AS y2023, "
         f"round(sum(weight_kg) FILTER (WHERE {YEAR} = 2024), 1) AS y2024, round(y2024 - y2023, 1) AS change "
         f"FROM {SH}")
    a, b, d = one(g)
    assert d != 0
    add("By how much did the total weight shipped change between 2023 and 2024?", "period_change",
        f"{'+' if d > 0 else '-'}{num1(abs(d))} kg ({num1(a)} kg in 2023, {num1(b)} kg in 2024)",
        [num1(abs(d))], g)

    # ---- document_fact -------------------------------------------------------
    P = "documents/policies/"
    add("What is the maximum number of weekly driving hours under the driving hours policy?", "document_fact",
        f"{pol['weekly_hours']} hours per week ({pol['fortnight_hours']} hours over two consecutive weeks)",
        [str(pol["weekly_hours"])], documents=[P + "driving-hours-and-overtime-policy.md"])
    add("Within how many days of delivery must a claim for damaged goods be filed?", "document_fact",
        f"{pol['claim_days']} days", [str(pol["claim_days"])], documents=[P + "returns-and-damaged-goods-policy.md"])
    add("How long are vehicle telematics and GPS data kept?", "document_fact",
        f"{pol['telematics_months']} months", [f"{pol['telematics_months']} months"],
        documents=[P + "data-retention-policy.md"])
    add("How far in advance must a hazardous shipment be declared before dispatch?", "document_fact",
        f"At least {pol['decl_hours']} hours before dispatch", [f"{pol['decl_hours']} hours"],
        documents=[P + "hazardous-goods-policy.md"])

    # ---- table_to_document ---------------------------------------------------
    tr = rng.choice([x for x in t["trucks"] if by_code[x["operator"]]["agreement"]
                     and x["truck_id"] != truck["truck_id"]])
    h = (f"SELECT c.agreement FROM {TR} t JOIN {CA} c ON t.operator = c.carrier_code "
         f"WHERE t.truck_id = '{tr['truck_id']}'")
    (ag,) = one(h)
    tm = terms[tr["operator"]]
    add(f"What liability cap per shipment does the agreement of the carrier that operates truck "
        f"{tr['truck_id']} set?", "table_to_document",
        f"EUR {tm['liability']:,} per shipment ({by_code[tr['operator']]['name']}, agreement {ag})",
        [f"{tm['liability']:,}"], hop_sql=h, documents=[f"documents/contracts/{ag}.md"])

    ship = rng.choice([s for s in t["shipments"] if s["_mode"] in ("rail", "sea", "air")
                       and by_code[s["carrier"]]["agreement"] and s["shipment_id"] not in incident_sids])
    h = (f"SELECT c.agreement FROM {SH} s JOIN {CA} c ON s.carrier = c.carrier_code "
         f"WHERE s.shipment_id = '{ship['shipment_id']}'")
    (ag,) = one(h)
    tm = terms[ship["carrier"]]
    add(f"What on-time delivery target applies to the carrier that moved shipment {ship['shipment_id']}?",
        "table_to_document", f"{tm['on_time']}% ({by_code[ship['carrier']]['name']}, agreement {ag})",
        [f"{tm['on_time']}%"], hop_sql=h, documents=[f"documents/contracts/{ag}.md"])

    h = f"SELECT agreement FROM {CA} ORDER BY rating DESC LIMIT 1"
    (ag,) = one(h)
    best = max(t["carriers"], key=lambda c: c["rating"])
    assert ag == best["agreement"]
    tm = terms[best["carrier_code"]]
    add("What penalty per late day does the agreement of the highest-rated carrier specify?", "table_to_document",
        f"EUR {tm['penalty']} per late day, capped at {tm['penalty_cap_days']} days ({best['name']}, "
        f"rating {best['rating']}, agreement {ag})", [str(tm["penalty"])], hop_sql=h,
        documents=[f"documents/contracts/{ag}.md"])

    # ---- document_to_table ---------------------------------------------------
    inc7 = incidents[6]
    s = inc7["s"]
    g = (f"SELECT c.name FROM {SH} s JOIN {CA} c ON s.carrier = c.carrier_code "
         f"WHERE s.shipment_id = '{s['shipment_id']}'")
    (name,) = one(g)
    add(f"Which carrier moved the shipment described in incident report {inc7['id']}?", "document_to_table",
        f"{name} ({s['carrier']}; shipment {s['shipment_id']})", [name], g,
        documents=[f"documents/incidents/{inc7['id']}.md"])

    inc3 = incidents[2]
    s = inc3["s"]
    g = f"SELECT weight_kg FROM {SH} WHERE shipment_id = '{s['shipment_id']}'"
    (w,) = one(g)
    assert Decimal(str(w)) == s["weight_kg"]
    add(f"What is the weight of the shipment cited in incident report {inc3['id']}?", "document_to_table",
        f"{num1(w)} kg (shipment {s['shipment_id']})", [num1(w)], g,
        documents=[f"documents/incidents/{inc3['id']}.md"])

    inc11 = incidents[10]
    s = inc11["s"]
    g = (f"SELECT o.customer FROM {SH} s JOIN {OR} o ON s.order_ref = o.order_id "
         f"WHERE s.shipment_id = '{s['shipment_id']}'")
    (cust,) = one(g)
    add(f"For which customer was the shipment in incident report {inc11['id']} carried?", "document_to_table",
        f"{cust} (shipment {s['shipment_id']}, order {s['order_ref']})", [cust], g,
        documents=[f"documents/incidents/{inc11['id']}.md"])

    g = f"SELECT count(*) FROM {SH} WHERE carrier = '{memo['probation']}' AND {YEAR} = 2024"
    (n,) = one(g)
    add("The Q4 2024 operations memo puts one carrier on probation. How many shipments did that carrier "
        "handle in 2024?", "document_to_table",
        f"{n} ({by_code[memo['probation']]['name']}, {memo['probation']})", [str(n)], g,
        documents=["documents/ops-memo-2024Q4.txt"])

    # ---- arithmetic ----------------------------------------------------------
    a, b = rng.sample(t["shipments"][:60], 2)
    if a["weight_kg"] < b["weight_kg"]:
        a, b = b, a
    assert a["weight_kg"] > b["weight_kg"]
    g = (f"SELECT max(weight_kg) FILTER (WHERE shipment_id = '{a['shipment_id']}') - "
         f"max(weight_kg) FILTER (WHERE shipment_id = '{b['shipment_id']}') FROM {SH}")
    (d,) = one(g)
    d = Decimal(str(round(d, 1)))
    assert d == a["weight_kg"] - b["weight_kg"]
    add(f"How much heavier is shipment {a['shipment_id']} than shipment {b['shipment_id']}?", "arithmetic",
        f"{num1(d)} kg ({num1(a['weight_kg'])} kg vs {num1(b['weight_kg'])} kg)", [num1(d)], g)

    x, y = rng.sample([tr for tr in t["trucks"]], 2)
    while x["capacity_kg"] == y["capacity_kg"]:
        x, y = rng.sample([tr for tr in t["trucks"]], 2)
    if x["capacity_kg"] < y["capacity_kg"]:
        x, y = y, x
    g = (f"SELECT max(capacity_kg) FILTER (WHERE truck_id = '{x['truck_id']}') - "
         f"max(capacity_kg) FILTER (WHERE truck_id = '{y['truck_id']}') FROM {TR}")
    (d,) = one(g)
    add(f"How many more kilograms can truck {x['truck_id']} carry than truck {y['truck_id']}?", "arithmetic",
        f"{d:,} kg ({x['capacity_kg']:,} kg vs {y['capacity_kg']:,} kg)", [f"{d:,}"], g)

    cands = [s for s in t["shipments"] if s["status"] == "delivered" and s["_transit"].total_seconds() % 3600 == 0
             and offset_hours(s["_from_country"], s["_disp"]) != offset_hours(s["_dest_country"], s["_arr"])
             and s["shipment_id"] not in incident_sids]
    s = rng.choice(cands)
    g = (f"SELECT date_diff('minute', CAST(dispatched_at AS TIMESTAMPTZ), CAST(delivered_at AS TIMESTAMPTZ)) / 60 "
         f"FROM {SH} WHERE shipment_id = '{s['shipment_id']}'")
    (hrs,) = one(g)
    assert hrs == s["_transit"].total_seconds() / 3600 and hrs == int(hrs)
    add(f"How many hours did shipment {s['shipment_id']} take from dispatch to delivery?", "arithmetic",
        f"{int(hrs)} hours (dispatched {s['dispatched_at']}, delivered {s['delivered_at']})", [str(int(hrs))], g)

    # ---- unanswerable ----------------------------------------------------------
    p = rng.choice([p for p in t["staff"] if p["role"] == "driver" and p is not drv])
    add(f"What is {p['full_name']}'s salary?", "unanswerable",
        "Unanswerable: the staff table has no salary or pay information.", [])
    no_ag = [x for x in t["trucks"] if not by_code[x["operator"]]["agreement"]]
    tr = rng.choice([x for x in t["trucks"] if x not in no_ag])
    add(f"What is the fuel consumption of truck {tr['truck_id']}?", "unanswerable",
        "Unanswerable: the lake records each truck's operator, plate, capacity and year built, but no fuel "
        "consumption.", [])
    tr = rng.choice(no_ag)
    c = by_code[tr["operator"]]
    add(f"What liability cap per shipment does the agreement of the carrier that operates truck "
        f"{tr['truck_id']} set?", "unanswerable",
        f"Unanswerable: truck {tr['truck_id']} is operated by {c['name']} ({c['carrier_code']}), which has no "
        "carrier agreement on file.", [])
    return qs


# --------------------------------------------------------------------------- #
# structure, README, verification
# --------------------------------------------------------------------------- #
FOREIGN_KEYS = [
    ("staff", "base_site", "warehouses", "warehouse_id"),
    ("staff", "supervisor", "staff", "staff_id"),
    ("trucks", "operator", "carriers", "carrier_code"),
    ("orders", "placed_by", "staff", "staff_id"),
    ("orders", "origin", "warehouses", "warehouse_id"),
    ("shipments", "order_ref", "orders", "order_id"),
    ("shipments", "carrier", "carriers", "carrier_code"),
    ("shipments", "vehicle", "trucks", "truck_id"),
    ("shipments", "from_wh", "warehouses", "warehouse_id"),
]
KEYS = {"carriers": "carrier_code", "warehouses": "warehouse_id", "staff": "staff_id", "trucks": "truck_id",
        "orders": "order_id", "shipments": "shipment_id"}


def make_structure(links, distractors) -> dict:
    return {
        "keys": KEYS,
        "foreign_keys": [{"source": s, "column": c, "target": t, "target_column": tc}
                         for s, c, t, tc in FOREIGN_KEYS],
        "document_id_columns": [{"table": "carriers", "column": "agreement",
                                 "documents": "documents/contracts/<value>.md"}],
        "label_columns": {"staff": "full_name", "carriers": "name", "warehouses": "name"},
        "document_links": links,
        "distractors": distractors,
    }


def readme(t, terms, incidents, questions, structure) -> str:
    st = Counter(s["status"] for s in t["shipments"])
    yr = Counter(s["_disp"].year for s in t["shipments"])
    cur = Counter(s["currency"] for s in t["shipments"])
    roles = Counter(p["role"] for p in t["staff"])
    kinds = Counter(q["kind"] for q in questions)
    lags = [(s["_disp"] - t["by_order"][s["order_ref"]]["placed_at"]).total_seconds() / 86400
            for s in t["shipments"]]
    no_ag = ", ".join(c["carrier_code"] for c in t["carriers"] if not c["agreement"])
    qlines = "\n".join(
        f"{k}. **[{q['kind']}]** {q['question']}  \n   *Answer:* {q['answer']}"
        for k, q in enumerate(questions, start=1))
    inc_kinds = Counter(i["s"]["status"] for i in incidents)
    fks = "\n".join(f"* `{f['source']}.{f['column']}` → `{f['target']}.{f['target_column']}`"
                    for f in structure["foreign_keys"])
    return f"""# Logistics sample lake

A second small, self-consistent data lake, from a different domain than `sample_lake/`: the freight
operations of a fictitious logistics provider ({COMPANY}) — carriers, warehouses, staff, trucks, customer
orders and shipments — next to documents (carrier agreements, company policies, incident reports and a
quarterly operations memo) that cite table rows by their ids. Column names deliberately do not repeat the
names of the tables they point to (`order_ref`, `from_wh`, `vehicle`, `operator`, `placed_by`, ...).
It is generated deterministically by `tests/data/make_logistics_lake.py`; edit the script and re-run it
rather than editing these files by hand.

## Tables

| File | Format | Rows | Key | Links |
|---|---|---:|---|---|
| `carriers.csv` | CSV, UTF-8, header | {len(t['carriers'])} | `carrier_code` (4 letters) | `agreement` → `documents/contracts/<id>.md` (empty for {no_ag}) |
| `warehouses.json` | JSON array, nested `address` | {len(t['warehouses'])} | `warehouse_id` (WH-01..) | — |
| `staff.csv` | CSV | {len(t['staff'])} | `staff_id` (E1001..) | `base_site` → warehouses; `supervisor` → staff (empty for the 2 top managers) |
| `trucks.csv` | CSV | {len(t['trucks'])} | `truck_id` (TRK-101..) | `operator` → carriers |
| `orders.jsonl` | JSON Lines, nested `lines` list | {len(t['orders'])} | `order_id` (ORD-50001..) | `placed_by` → staff; `origin` → warehouses |
| `shipments.csv` | CSV | {len(t['shipments'])} | `shipment_id` (SHP-20001..) | `order_ref` → orders; `carrier` → carriers; `vehicle` → trucks (empty for rail/air/sea); `from_wh` → warehouses |

Column notes:

* `carriers.csv`: `carrier_code, name, country, mode (road/rail/air/sea), rating (1 decimal), agreement`.
* `warehouses.json`: `warehouse_id, name, address{{street, city, postcode, country}}, capacity_pallets (int),
  opened` — `opened` is written as text like "14 March 2016" (day, English month name, year).
* `staff.csv`: `staff_id, full_name (unique), role, base_site, supervisor, hire_date (ISO, all distinct)`.
  Staff ids follow hiring order. Roles: {", ".join(f"{r} ({n})" for r, n in sorted(roles.items()))}.
  Drivers report to the dispatcher of their site, dispatchers to the site's warehouse manager. The drivers
  are the company's own (shuttle fleet); carriers' drivers are not staff, so incident reports cite a
  dispatcher or warehouse manager instead.
* `trucks.csv`: `truck_id, operator, plate, capacity_kg (int), year_built (int)`; only road carriers own trucks.
* `orders.jsonl`: `order_id, customer (company name), placed_by, placed_at (UTC, "…Z", all distinct), origin,
  lines[{{sku, description, qty (int), unit_price}}], currency` (GBP for orders from WH-05, else EUR).
  Orders are placed only by staff hired before the order.
* `shipments.csv`: `shipment_id, order_ref, carrier, vehicle, from_wh, destination_city, dispatched_at,
  delivered_at, status, weight_kg, freight_cost, currency`. Timestamps carry the local UTC offset of the
  origin (dispatch) and destination (delivery) sites, so durations need time-zone-aware arithmetic.
  `from_wh` is always the order's origin; shipments leave {min(lags):.1f}–{max(lags):.1f} days after the
  order was placed.
  `freight_cost` is quoted text with thousands separators (e.g. "1,234.50"); currency is GBP for
  carrier NRTH, else EUR ({cur['EUR']} EUR, {cur['GBP']} GBP). Road shipments name a truck of the same
  carrier whose capacity is at least the weight.
  Status as of {AS_OF.strftime('%Y-%m-%d %H:%M')} UTC: {st['delivered']} delivered, {st['delayed']} delayed
  (arrived later than promised; `delivered_at` is the actual arrival), {st['in_transit']} in transit and
  {st['lost']} lost (`delivered_at` empty for both). {yr[2023]} shipments were dispatched in 2023, {yr[2024]} in 2024.

Foreign keys (also in `structure.json`):

{fks}

## Documents

* `documents/contracts/CA-XXXX.md` — {len(terms)} carrier agreements (line 2: `Document ID: CA-XXXX ·
  Carrier code: XXXX`) with sections *Parties* (which sites the carrier mainly serves), *Service level*
  (on-time delivery target in %), *Liability* (cap per shipment in EUR; claim notice days), *Penalties*
  (EUR per late day, capped in days) and *Term and termination* (notice period in days).
* `documents/policies/` — four policies whose facts exist only there: driving hours and overtime
  (weekly driving limit, rest periods, overtime pay and cap), hazardous goods (declaration lead time, ADR
  refresh), returns and damaged goods (claim window, concealed damage, surveyor threshold) and data
  retention (shipment records, telematics, CCTV, timesheets).
* `documents/incidents/IR-001.md` … `IR-{len(incidents):03d}.md` — incident reports in date order, each citing one
  shipment in running text ({inc_kinds['delayed']} delayed, {inc_kinds['lost']} lost, {inc_kinds['delivered']}
  delivered with damage), usually its truck and sometimes its order, warehouse or a staff member. They never
  name the carrier, the weight or the customer: those need the tables.
* `documents/ops-memo-2024Q4.txt` — a plain-text quarterly operations memo that names carriers by code
  (one put on probation), the shipments lost in 2024 and the yearly shipment volumes.

`structure.json` lists, from how the generator built the lake, the keys, foreign keys, label columns,
every deliberate document → row citation ({len(structure['document_links'])} links, with character offsets
into the file text) and {len(structure['distractors'])} distractor tokens that look like ids or codes but
must not become links (phone numbers, postcodes, years, pallet counts, policy references, a mistyped
`SHP-99999`, trailer `TRL-7`, a rental truck `TRK-199` that is not in the fleet, ...).

## Example questions

The same questions are in `questions.json`, each with `kind`, `answer` and `expect` (substrings a right
answer must contain; `[]` for unanswerable questions). Table answers carry the `gold_sql` (DuckDB, file
paths relative to this folder) that computed them; `table_to_document` questions carry the `hop_sql` that
finds the document, and document questions list their `documents`.
Kinds: {", ".join(f"`{k}` ({n})" for k, n in kinds.items())}.

{qlines}
"""


def verify(t, sql) -> None:
    """Re-read the written files and check the consistency rules."""
    def rows(name):
        with open(OUT / name, encoding="utf-8") as f:
            return list(csv.DictReader(f))

    tables = {
        "carriers": rows("carriers.csv"),
        "warehouses": json.loads((OUT / "warehouses.json").read_text(encoding="utf-8")),
        "staff": rows("staff.csv"),
        "trucks": rows("trucks.csv"),
        "orders": [json.loads(x) for x in (OUT / "orders.jsonl").read_text(encoding="utf-8").splitlines()],
        "shipments": rows("shipments.csv"),
    }
    for name, key in KEYS.items():
        vals = [r[key] for r in tables[name]]
        assert len(set(vals)) == len(vals), name
    for s, c, tt, tc in FOREIGN_KEYS:
        targets = {r[tc] for r in tables[tt]}
        for r in tables[s]:
            v = r[c]
            if v == "":
                assert (s, c) in {("staff", "supervisor"), ("shipments", "vehicle")}, (s, c)
                continue
            assert v in targets, (s, c, v)
    # empties only where stated
    assert sum(1 for r in tables["staff"] if not r["supervisor"]) == 2
    assert sum(1 for r in tables["carriers"] if not r["agreement"]) == 2
    modes = {r["carrier_code"]: r["mode"] for r in tables["carriers"]}
    ops = {r["truck_id"]: r for r in tables["trucks"]}
    orders = {o["order_id"]: o for o in tables["orders"]}
    staff = {p["staff_id"]: p for p in tables["staff"]}
    assert len({p["full_name"] for p in tables["staff"]}) == len(staff)
    assert len({p["hire_date"] for p in tables["staff"]}) == len(staff)
    assert len({o["placed_at"] for o in tables["orders"]}) == len(orders)
    for p in tables["staff"]:
        assert p["supervisor"] != p["staff_id"]
    for o in tables["orders"]:
        assert staff[o["placed_by"]]["hire_date"] < o["placed_at"][:10]
        assert o["placed_at"].endswith("Z") and all(isinstance(li["qty"], int) for li in o["lines"])
    for s in tables["shipments"]:
        assert (s["vehicle"] != "") == (modes[s["carrier"]] == "road"), s["shipment_id"]
        if s["vehicle"]:
            assert ops[s["vehicle"]]["operator"] == s["carrier"]
            assert int(ops[s["vehicle"]]["capacity_kg"]) >= float(s["weight_kg"])
        o = orders[s["order_ref"]]
        assert s["from_wh"] == o["origin"]
        disp = dt.datetime.fromisoformat(s["dispatched_at"])
        assert disp > dt.datetime.fromisoformat(o["placed_at"].replace("Z", "+00:00"))
        assert (s["delivered_at"] == "") == (s["status"] in ("lost", "in_transit"))
        if s["delivered_at"]:
            assert dt.datetime.fromisoformat(s["delivered_at"]) > disp
        assert re.fullmatch(r"\d{1,3}(,\d{3})*\.\d\d", s["freight_cost"])
    raw = (OUT / "shipments.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert all(re.search(r',"[0-9,]+\.\d\d",[A-Z]{3}$', line) for line in raw)
    assert {s[:4] for s in (r["dispatched_at"] for r in tables["shipments"])} == {"2023", "2024"}
    # DuckDB reads the same shapes
    (n,) = sql("SELECT count(*) FROM read_csv('shipments.csv') s JOIN read_json('orders.jsonl') o "
               "ON s.order_ref = o.order_id")[0]
    assert n == len(tables["shipments"])

    # documents: agreements, links, distractors, completeness of id mentions
    docs = {p.relative_to(OUT).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((OUT / "documents").rglob("*")) if p.is_file()}
    for c in tables["carriers"]:
        if c["agreement"]:
            text = docs[f"documents/contracts/{c['agreement']}.md"]
            assert text.splitlines()[1].startswith(f"Document ID: {c['agreement']} ")
    assert len([d for d in docs if d.startswith("documents/contracts/")]) == 8
    structure = json.loads((OUT / "structure.json").read_text(encoding="utf-8"))
    values = {(name, col): {str(r[col]) for r in rows} for name, rows in tables.items() for col in rows[0]}
    id_values = set().union(*(values[(t_, c_)] for t_, c_ in KEYS.items()),
                            *(values[(s_, c_)] for s_, c_, _, _ in FOREIGN_KEYS))
    spans = defaultdict(list)
    for lk in structure["document_links"]:
        text = docs["documents/" + lk["document"]]
        assert text[lk["start"]:lk["end"]] == lk["value"], lk
        assert lk["value"] in values[(lk["table"], lk["column"])], lk
        spans[lk["document"]].append((lk["start"], lk["end"]))
    for ds in structure["distractors"]:
        text = docs["documents/" + ds["document"]]
        assert text[ds["start"]:ds["end"]] == ds["token"], ds
        assert ds["token"] not in id_values, ds
        spans[ds["document"]].append((ds["start"], ds["end"]))
    codes = "|".join(sorted(r["carrier_code"] for r in tables["carriers"]))
    idlike = re.compile(rf"\b(?:SHP-\d+|TRK-\d+|ORD-\d+|E\d{{4}}|WH-\d+|CA-[A-Z]{{4}}|{codes})\b")
    for rel, text in docs.items():
        short = rel.removeprefix("documents/")
        for m in idlike.finditer(text):
            assert any(a <= m.start() and m.end() <= b for a, b in spans[short]), (rel, m.group())
    # incidents cite shipments whose status fits the story, and never leak the carrier
    ships = {s["shipment_id"]: s for s in tables["shipments"]}
    names = [r["name"] for r in tables["carriers"]]
    for rel, text in docs.items():
        if "/incidents/" in rel:
            cited = [lk for lk in structure["document_links"]
                     if lk["document"] == rel.removeprefix("documents/") and lk["table"] == "shipments"]
            assert len({lk["value"] for lk in cited}) == 1, rel
            s = ships[cited[0]["value"]]
            cat = re.search(r"\*\*Category:\*\* (\w+)", text).group(1)
            assert s["status"] == {"Delay": "delayed", "Loss": "lost", "Damage": "delivered"}[cat], rel
            assert not any(n in text for n in names) and not re.search(rf"\b({codes})\b", text)
            for lk in structure["document_links"]:
                if lk["document"] == rel.removeprefix("documents/"):
                    if lk["table"] == "trucks":
                        assert lk["value"] == s["vehicle"]
                    if lk["table"] == "orders":
                        assert lk["value"] == s["order_ref"]
    qs = json.loads((OUT / "questions.json").read_text(encoding="utf-8"))
    kinds = Counter(q["kind"] for q in qs)
    assert len(qs) >= 26 and all(kinds[k] >= 2 for k in (
        "lookup", "filtered_aggregate", "join", "ranking", "period_change", "document_fact",
        "table_to_document", "document_to_table", "arithmetic", "unanswerable")), kinds
    for q in qs:
        assert (q["expect"] == []) == (q["kind"] == "unanswerable")
        assert all(e in q["answer"] for e in q["expect"]), q
        if q["kind"] not in ("document_fact", "table_to_document", "unanswerable"):
            assert "gold_sql" in q, q["question"]
    for d in docs:
        assert d.endswith((".md", ".txt"))
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    assert size < 400_000, size


if __name__ == "__main__":
    main()
