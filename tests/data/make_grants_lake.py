"""Generate the SEALED grants evaluation lake in ``benchmarks/sealed/grants/``.

Deterministic (fixed seed, no wall clock, stdlib + pyarrow + duckdb only).  Run from anywhere:

    python tests/data/make_grants_lake.py

The lake is the research office of a fictitious university (Vellmar University, Research Services
Office): departments, staff, funders, grants, ethics approvals, expenses and publications, next to
documents (policies, an internal audit report, committee minutes, an HTML committee report, funder
letters, a quarterly update and data-steward notes) that cite rows by their ids.

Formats are mixed on purpose:

* ``departments.csv``, ``ethics_approvals.csv``, ``publications.csv``: plain comma CSV;
* ``staff.parquet``: Parquet;
* ``funders.json``: a JSON array, each object with a nested ``contact{name, email, phone}``;
* ``grants.jsonl``: JSON Lines, each record with a nested list ``milestones[{name, due, status}]``
  and an ``awarded_at`` UTC timestamp;
* ``expenses.csv``: an ERP export, semicolon-delimited, decimal commas (``1234,50``), dates dd.mm.yyyy.

Every gold answer of a table question is computed by running its ``gold_sql`` in DuckDB over the
files just written (each must return exactly one row without NULLs); every document answer is
checked to occur in the document it names.  The lake is SEALED (issue 52): do not read
questions.json or tune code against it before its one scored run.
"""

from __future__ import annotations

import calendar
import csv
import datetime as dt
import json
import random
import re
import shutil
import unicodedata
from collections import Counter, defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SEED = 52_2025_06
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "sealed" / "grants"
SNAP = dt.date(2025, 6, 30)  # the export date: statuses are as of this day
FIRST_AWARD = dt.date(2023, 1, 9)
LAST_AWARD = dt.date(2025, 3, 20)
UNI = "Vellmar University"
MAIL = "vellmar-uni.eu"
CENT = Decimal("0.01")
SECOND_SIGNATURE_ABOVE = Decimal("5000")
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
SEALED_LINE = ("SEALED: do not read questions.json or tune code against this lake before its one scored run "
               "(issue 52).")


def q2(x) -> Decimal:
    return Decimal(x).quantize(CENT, rounding=ROUND_HALF_UP)


def money(x) -> str:
    return f"{Decimal(x):,.2f}"


def money0(x) -> str:
    return f"{Decimal(x):,.0f}"


def plain(x) -> str:
    """A number as the `expect` lists hold it: no thousands separators."""
    d = Decimal(str(x))
    if d == d.to_integral_value():
        return str(int(d))
    return f"{q2(d):f}"


def long_date(d: dt.date) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def add_months(d: dt.date, n: int) -> dt.date:
    y, m = divmod(d.month - 1 + n, 12)
    y, m = d.year + y, m + 1
    return dt.date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def month_end(d: dt.date) -> dt.date:
    return dt.date(d.year, d.month, calendar.monthrange(d.year, d.month)[1])


def ascii_fold(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()


def rand_date(rng: random.Random, a: dt.date, b: dt.date) -> dt.date:
    return a + dt.timedelta(days=rng.randint(0, (b - a).days))


# --------------------------------------------------------------------------- #
# reference data
# --------------------------------------------------------------------------- #
DEPTS = [  # code, name, faculty, building
    ("BIOL", "Biology", "Faculty of Science", "Linnaeus Building"),
    ("CHEM", "Chemistry", "Faculty of Science", "Curie Building"),
    ("PHYS", "Physics", "Faculty of Science", "Meitner Building"),
    ("MATH", "Mathematics", "Faculty of Science", "Noether Building"),
    ("CSCI", "Computer Science", "Faculty of Science", "Lovelace Building"),
    ("EENG", "Electrical Engineering", "Faculty of Engineering", "Tesla Hall"),
    ("MECH", "Mechanical Engineering", "Faculty of Engineering", "Diesel Hall"),
    ("MEDI", "Clinical Medicine", "Faculty of Medicine and Health", "Virchow Centre"),
    ("NURS", "Nursing and Midwifery", "Faculty of Medicine and Health", "Nightingale Centre"),
    ("PSYC", "Psychology", "Faculty of Social Sciences", "Wundt House"),
    ("ECON", "Economics", "Faculty of Social Sciences", "Ostrom House"),
    ("SOCI", "Sociology", "Faculty of Social Sciences", "Weber House"),
    ("HIST", "History", "Faculty of Humanities", "Ranke Building"),
    ("LING", "Linguistics", "Faculty of Humanities", "Humboldt Building"),
    ("GEOG", "Geography", "Faculty of Science", "Humboldt Annex"),
    ("ARCH", "Architecture", "Faculty of Engineering", "Gropius Hall"),
    ("PHAR", "Pharmacy", "Faculty of Medicine and Health", "Paracelsus Centre"),
    ("EDUC", "Education", "Faculty of Social Sciences", "Montessori House"),
    ("PHIL", "Philosophy", "Faculty of Humanities", "Arendt Building"),
    ("LAWS", "Law", "Faculty of Law", "Grotius Building"),
    ("RSRV", "Research Services", "Central Administration", "Senate House"),
]
ACADEMIC = [d[0] for d in DEPTS if d[0] != "RSRV"]
HUMAN_RESEARCH = {"MEDI", "NURS", "PSYC", "SOCI", "LING", "ECON", "CSCI", "PHAR", "EDUC"}
ANIMAL_RESEARCH = {"BIOL"}

SUBJECTS = {
    "BIOL": ["soil microbial communities", "pollinator decline in farmland", "coral reef heat tolerance",
             "drought signalling in wheat", "antibiotic resistance in river sediments", "bat migration corridors",
             "gut microbiome of wild rodents"],
    "CHEM": ["solid-state battery electrolytes", "green ammonia catalysts", "PFAS breakdown in water",
             "self-healing polymers", "metal-organic frameworks for carbon capture", "enzyme-mimicking catalysts"],
    "PHYS": ["quantum sensors for navigation", "perovskite solar cell stability", "dark matter detector noise",
             "ultrafast laser spectroscopy", "superconducting qubit coherence", "atmospheric aerosol optics"],
    "MATH": ["uncertainty in climate ensembles", "random graphs for epidemic spread", "optimal transport in imaging",
             "stochastic models of traffic flow", "topological data analysis of proteins"],
    "CSCI": ["privacy-preserving federated learning", "energy-efficient language models",
             "explainable triage algorithms", "verified smart-contract compilers", "robust speech recognition",
             "accessible interfaces for older adults"],
    "EENG": ["grid-scale battery inverters", "low-power wearable sensors", "wireless charging of e-buses",
             "radar imaging for flood monitoring", "silicon photonics interconnects"],
    "MECH": ["hydrogen combustion engines", "additively manufactured heat exchangers", "wind turbine blade fatigue",
             "soft robotic grippers", "lightweight rail bogies"],
    "MEDI": ["early detection of sepsis", "long-term outcomes after stroke", "childhood asthma triggers",
             "antimicrobial stewardship in primary care", "wearable monitoring after cardiac surgery",
             "biomarkers of early dementia"],
    "NURS": ["nurse staffing and patient falls", "home care after hip fracture", "midwife-led birth units",
             "pressure ulcer prevention", "night-shift fatigue in intensive care"],
    "PSYC": ["adolescent sleep and mood", "loneliness in later life", "attention in multilingual children",
             "resilience of emergency workers", "digital therapy for anxiety", "memory and ageing"],
    "ECON": ["minimum wage effects in retail", "household energy poverty", "microfinance and rural women",
             "housing supply and rents", "carbon pricing and competitiveness"],
    "SOCI": ["youth volunteering in small towns", "platform work and precarity", "migrant family networks",
             "trust in local government", "neighbourhood change and belonging"],
    "HIST": ["Hanseatic trade letters", "post-war housing cooperatives", "women in early trade unions",
             "medieval river toll records", "colonial botanical collections"],
    "GEOG": ["urban heat islands", "glacier retreat in the Alps", "coastal flood risk perception",
             "river restoration outcomes", "land use change from satellite data"],
    "ARCH": ["timber high-rise housing", "low-carbon concrete facades", "adaptive reuse of factories",
             "daylight in school buildings", "climate-ready public squares"],
    "PHAR": ["drug interactions in older patients", "antibiotic dosing in children", "pharmacist-led deprescribing",
             "stability of biologic medicines", "medication adherence apps"],
    "EDUC": ["early literacy in rural schools", "teacher retention", "inclusive classrooms",
             "digital homework and inequality", "vocational training pathways"],
    "PHIL": ["ethics of algorithmic decisions", "philosophy of climate risk", "moral status of animals",
             "trust and scientific testimony", "medieval theories of language"],
    "LAWS": ["platform liability in the EU", "cross-border insolvency", "data protection enforcement",
             "climate litigation", "access to justice for migrants"],
    "LING": ["endangered Sámi dialects", "child bilingual language acquisition", "sign language corpora",
             "code-switching in online speech", "historical place names"],
}
METHODS = ["Mapping", "Modelling", "Understanding", "Monitoring", "Predicting", "Rethinking", "Quantifying",
           "Improving"]

FIRST_NAMES = ["Anna", "Lukas", "Sofia", "Jonas", "Mara", "Elias", "Ingrid", "Tobias", "Leonie", "Matteo",
               "Amira", "Henrik", "Clara", "Rafael", "Yuki", "Samuel", "Nadia", "Oskar", "Priya", "Felix",
               "Helena", "Tariq", "Greta", "Daniel", "Ewa", "Marco", "Lina", "Arjun", "Freya", "Julian",
               "Zofia", "Kwame", "Isabel", "Niklas", "Hana", "Pieter", "Chiara", "Omar", "Astrid", "Viktor",
               "Maeve", "Rui", "Selma", "Bruno", "Ayesha", "Jakob", "Elena", "Tomás", "Ida", "Kenji",
               "Paula", "Emil", "Noor", "Fabian", "Irene", "Malik", "Vera", "Stefan", "Lucía", "Anton"]
LAST_NAMES = ["Bergström", "Okafor", "Müller", "Rossi", "Kowalski", "Nakamura", "Haddad", "Jansen", "Lindqvist",
              "Fischer", "Moreau", "Novak", "Schmidt", "Costa", "Andersen", "Papadopoulos", "Keller", "Horvat",
              "Brennan", "Vogel", "Ivanova", "Sandoval", "Petersen", "Richter", "Mensah", "Dąbrowska", "Laine",
              "Weber", "Oliveira", "Hartmann", "Kaya", "Dubois", "Eriksen", "Lehmann", "Marino", "Szabó",
              "Quinn", "Becker", "Yilmaz", "Van Dijk", "Ferreira", "Nowak", "Holm", "Castillo", "Krüger",
              "Sato", "Ahmed", "Wolff", "Berger", "Nielsen", "Romano", "Schulz", "Virtanen", "Fontaine"]

FUNDERS = [  # name, type, country, faculties it funds (None: any)
    ("Norland Science Council", "government", "Norway", None),
    ("Federal Agency for Health Research", "government", "Germany", {"Faculty of Medicine and Health",
                                                                      "Faculty of Social Sciences"}),
    ("Westmark Regional Innovation Fund", "government", "Germany", {"Faculty of Engineering", "Faculty of Science"}),
    ("Dutch Council for Energy Research", "government", "Netherlands", {"Faculty of Engineering",
                                                                       "Faculty of Science"}),
    ("Austrian Heritage Research Programme", "government", "Austria", {"Faculty of Humanities"}),
    ("Swiss Agency for Digital Science", "government", "Switzerland", {"Faculty of Science"}),
    ("EU Frontier Research Programme", "eu", "Belgium", None),
    ("EU Green Transition Mission", "eu", "Belgium", {"Faculty of Engineering", "Faculty of Science",
                                                      "Faculty of Social Sciences"}),
    ("Interreg North Sea Cooperation", "eu", "Denmark", {"Faculty of Social Sciences", "Faculty of Humanities",
                                                         "Faculty of Engineering", "Faculty of Law"}),
    ("Aurelia Foundation", "charity", "Germany", {"Faculty of Science", "Faculty of Humanities"}),
    ("Brenner Trust for Medical Research", "charity", "United Kingdom", {"Faculty of Medicine and Health"}),
    ("Halvorsen Charitable Trust", "charity", "Norway", {"Faculty of Social Sciences",
                                                         "Faculty of Medicine and Health"}),
    ("Keller-Stein Foundation", "charity", "Switzerland", {"Faculty of Humanities", "Faculty of Social Sciences",
                                                           "Faculty of Law"}),
    ("Lindqvist Foundation for Children's Health", "charity", "Sweden", {"Faculty of Medicine and Health",
                                                                         "Faculty of Social Sciences"}),
    ("Marlowe Wellbeing Trust", "charity", "Ireland", {"Faculty of Social Sciences",
                                                       "Faculty of Medicine and Health"}),
    ("Nordvik Energy AS", "industry", "Norway", {"Faculty of Engineering", "Faculty of Science"}),
    ("Corvex Pharmaceuticals", "industry", "Switzerland", {"Faculty of Medicine and Health", "Faculty of Science"}),
    ("Meridian Semiconductors", "industry", "Netherlands", {"Faculty of Engineering", "Faculty of Science"}),
    ("Altamira Robotics", "industry", "Spain", {"Faculty of Engineering", "Faculty of Science"}),
    ("Bellhaven Foods", "industry", "Ireland", {"Faculty of Science", "Faculty of Social Sciences"}),
]
AMOUNT_RANGE = {"eu": (350_000, 2_400_000), "government": (60_000, 950_000), "charity": (15_000, 320_000),
                "industry": (20_000, 480_000)}
PHONE_CC = {"Norway": "+47", "Germany": "+49", "Netherlands": "+31", "Austria": "+43", "Switzerland": "+41",
            "Belgium": "+32", "Denmark": "+45", "United Kingdom": "+44", "Sweden": "+46", "Ireland": "+353",
            "Spain": "+34"}

MILESTONE_NAMES = ["Kick-off meeting", "Data management plan", "Ethics clearance", "Recruitment complete",
                   "Interim report", "Prototype delivered", "Dataset release", "Mid-term review",
                   "Stakeholder workshop", "Final report"]

CATEGORIES = [  # category, weight, (low, high) EUR, vendors
    ("travel", 30, (60, 2400), ["Lufthansa", "Deutsche Bahn", "KLM", "Hotel Adler", "Eurowings", "SAS"]),
    ("consumables", 26, (35, 3900), ["Sigma-Aldrich", "Thermo Fisher", "VWR International", "Carl Roth",
                                     "Office Depot"]),
    ("personnel", 18, (2100, 9400), ["Payroll transfer"]),
    ("equipment", 9, (800, 24500), ["Dell Technologies", "Zeiss", "Bruker", "Keysight", "Leica Microsystems"]),
    ("subcontracting", 6, (3000, 18500), ["Institut Kappa GmbH", "FieldData Surveys Ltd", "Nordic Lab Services"]),
    ("publication fees", 6, (600, 3200), ["Open Science Press", "Frontline Journals", "Elvira Publishing"]),
    ("participant payments", 5, (150, 2400), ["Voucher batch", "Participant reimbursement"]),
]
TRAVEL_DESTS = ["Lisbon", "Vienna", "Copenhagen", "Kraków", "Ghent", "Bologna", "Uppsala", "Edinburgh", "Porto",
                "Tallinn"]

VENUES = {  # per department
    "BIOL": ["Journal of Applied Ecology", "Molecular Ecology", "Nature Communications"],
    "CHEM": ["Chemical Science", "ACS Catalysis", "Journal of Materials Chemistry A"],
    "PHYS": ["Physical Review B", "Optica", "Nature Communications"],
    "MATH": ["Annals of Applied Statistics", "SIAM Journal on Applied Mathematics"],
    "CSCI": ["ACM Computing Surveys", "Transactions on Machine Learning Research", "ACM CHI Proceedings"],
    "EENG": ["IEEE Transactions on Power Electronics", "IEEE Sensors Journal"],
    "MECH": ["Applied Energy", "Wind Energy", "Additive Manufacturing"],
    "MEDI": ["BMJ Open", "The Lancet Regional Health", "Critical Care"],
    "NURS": ["Journal of Advanced Nursing", "International Journal of Nursing Studies"],
    "PSYC": ["Journal of Child Psychology", "Psychological Medicine"],
    "ECON": ["Labour Economics", "Energy Economics"],
    "SOCI": ["Sociology Compass", "Journal of Ethnic and Migration Studies"],
    "HIST": ["Journal of Social History", "Urban History"],
    "LING": ["Language Documentation", "Journal of Child Language"],
    "GEOG": ["Remote Sensing of Environment", "Urban Climate"],
    "ARCH": ["Building and Environment", "Architectural Science Review"],
    "PHAR": ["British Journal of Clinical Pharmacology", "International Journal of Pharmaceutics"],
    "EDUC": ["British Educational Research Journal", "Teaching and Teacher Education"],
    "PHIL": ["Philosophy and Technology", "Synthese"],
    "LAWS": ["Common Market Law Review", "European Law Journal"],
}

# --------------------------------------------------------------------------- #
# document markup: [[L|table|column|value]] cites a row deliberately,
# [[D|kind|token]] is an id-like or numeric token that must not become a link.
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
def ids(rng: random.Random, prefix: str, lo: int, hi: int, n: int, width: int, avoid=()) -> list[str]:
    pool = [i for i in range(lo, hi + 1) if i not in set(avoid)]
    return [f"{prefix}-{i:0{width}d}" for i in sorted(rng.sample(pool, n))]


def build(rng: random.Random) -> dict:
    t: dict = {}
    dept_by = {d[0]: {"dept_code": d[0], "name": d[1], "faculty": d[2], "building": d[3]} for d in DEPTS}

    # ---- staff ------------------------------------------------------------------
    names, people = set(), []

    def person(role, title, dept):
        while True:
            full = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
            if full not in names:
                names.add(full)
                break
        people.append({"full_name": full, "title": title, "role": role, "dept": dept})
        return people[-1]

    for code in ACADEMIC:
        person("professor", "Prof.", code)
        for _ in range(rng.randint(1, 2)):
            person("professor", "Prof.", code)
        for _ in range(rng.randint(1, 2)):
            person("associate professor", "Dr.", code)
        for _ in range(rng.randint(1, 2)):
            person("senior lecturer", "Dr.", code)
        for _ in range(rng.randint(0, 1)):
            person("research fellow", "Dr.", code)
        for _ in range(rng.randint(1, 2)):
            person("postdoctoral researcher", "Dr.", code)
    person("director of research services", "Dr.", "RSRV")
    for _ in range(3):
        person("grants officer", None, "RSRV")
    person("ethics officer", "Dr.", "RSRV")
    person("research finance officer", None, "RSRV")

    rng.shuffle(people)
    for p, sid in zip(people, ids(rng, "ST", 101, 399, len(people), 3), strict=True):
        p["staff_id"] = sid
        first, last = p["full_name"].split(" ", 1)
        p["email"] = f"{ascii_fold(first).lower()}.{ascii_fold(last).lower().replace(' ', '')}@{MAIL}"
        p["fte"] = rng.choice([1.0, 1.0, 1.0, 0.8, 0.6, 0.5]) if p["role"] != "professor" else 1.0
        academic = p["dept"] != "RSRV"
        p["orcid"] = (f"0000-000{rng.randint(1, 3)}-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}"
                      if academic else None)
    people.sort(key=lambda p: p["staff_id"])
    by_staff = {p["staff_id"]: p for p in people}
    # heads: the lowest-id professor of each department; the director heads Research Services
    for code in ACADEMIC:
        profs = sorted(p["staff_id"] for p in people if p["dept"] == code and p["role"] == "professor")
        dept_by[code]["head"] = profs[0]
    dept_by["RSRV"]["head"] = next(p["staff_id"] for p in people if p["role"] == "director of research services")
    cc = rng.sample(range(100, 999), len(DEPTS))
    departments = []
    for (code, *_), c in zip(DEPTS, cc, strict=True):
        d = dept_by[code]
        d["cost_centre"] = f"KST-4{c}"
        departments.append(d)
    t["departments"], t["by_dept"] = departments, dept_by
    t["staff"], t["by_staff"] = people, by_staff

    # ---- funders ----------------------------------------------------------------
    funders = []
    for (name, ftype, country, faculties), fid in zip(FUNDERS, ids(rng, "FN", 11, 98, len(FUNDERS), 3),
                                                      strict=True):
        words = re.sub(r"[^a-z]+", " ", ascii_fold(name).lower().replace("'", "")).split()
        slug = "-".join([w for w in words if w not in ("for", "of", "the", "and", "as", "s")][:3])
        while True:
            cname = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
            if cname not in names:
                names.add(cname)
                break
        cf, cl = cname.split(" ", 1)
        domain = {"eu": "ec-programmes.eu"}.get(ftype, f"{slug}.org" if ftype != "industry" else f"{slug}.com")
        funders.append({
            "funder_id": fid, "name": name, "type": ftype, "country": country,
            "contact": {"name": cname,
                        "email": f"{ascii_fold(cf).lower()[0]}.{ascii_fold(cl).lower().replace(' ', '')}@{domain}",
                        "phone": f"{PHONE_CC[country]} {rng.randint(20, 89)} {rng.randint(100, 999)} "
                                 f"{rng.randint(1000, 9999)}"},
            "overhead_cap_pct": rng.choice([0, 10, 15, 20, 25, 25]),
            "_faculties": faculties,
        })
    t["funders"], t["by_funder"] = funders, {f["funder_id"]: f for f in funders}

    # ---- grants -----------------------------------------------------------------
    pi_pool = [p for p in people if p["role"] in ("professor", "associate professor", "senior lecturer",
                                                  "research fellow")]
    pi_weight = {p["staff_id"]: rng.choice([1, 1, 2, 3, 4]) for p in pi_pool}
    n_grants = 128
    gids = ids(rng, "GR", 2001, 2260, n_grants, 4, avoid=(2021,))
    span = (LAST_AWARD - FIRST_AWARD).days
    award_days = sorted(rng.sample(range(span), n_grants))
    titles, amounts, grants = set(), set(), []
    for gid, off in zip(gids, award_days, strict=True):
        day = FIRST_AWARD + dt.timedelta(days=off)
        day = day.replace(day=min(max(day.day, 2), 27))  # never the first or last day of a month
        pi = rng.choices(pi_pool, weights=[pi_weight[p["staff_id"]] for p in pi_pool])[0]
        fac = dept_by[pi["dept"]]["faculty"]
        options = [f for f in funders if f["_faculties"] is None or fac in f["_faculties"]]
        funder = rng.choice(options)
        while True:
            title = f"{rng.choice(METHODS)} {rng.choice(SUBJECTS[pi['dept']])}"
            if title not in titles:
                titles.add(title)
                break
        lo, hi = AMOUNT_RANGE[funder["type"]]
        while True:
            amount = rng.randrange(lo, hi, 10)
            if amount not in amounts:
                amounts.add(amount)
                break
        start = add_months(day.replace(day=1), 1 if day.day < 20 else 2)
        months = rng.choice([12, 18, 24, 24, 36, 36, 48])
        end = add_months(start, months) - dt.timedelta(days=1)
        awarded_at = dt.datetime(day.year, day.month, day.day, rng.randint(7, 15), rng.randrange(0, 60, 1),
                                 rng.randrange(0, 60, 1))
        grants.append({"grant_id": gid, "title": title, "pi": pi["staff_id"], "funder": funder["funder_id"],
                       "amount": amount, "currency": "EUR", "awarded_at": awarded_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "start_date": start, "end_date": end, "status": "closed" if end < SNAP else "active",
                       "_award_day": day})
    by_grant = {g["grant_id"]: g for g in grants}
    # milestones: at most one late milestone per grant, except the tracker's red grant (three)
    for g in grants:
        k = rng.randint(3, 5)
        pool = [m for m in MILESTONE_NAMES[1:-1]
                if by_staff[g["pi"]]["dept"] in HUMAN_RESEARCH | ANIMAL_RESEARCH
                or m not in ("Ethics clearance", "Recruitment complete")]
        names_ = ["Kick-off meeting"] + rng.sample(pool, k - 2) + ["Final report"]
        total = (g["end_date"] - g["start_date"]).days
        dues = [rng.randint(14, 45)] + sorted(rng.sample(range(60, total - 30), k - 2)) + [total + 30]
        ms, late = [], 0
        for nm, off in zip(names_, dues, strict=True):
            due = g["start_date"] + dt.timedelta(days=off)
            if due > SNAP:
                st = "pending"
            else:
                r = rng.random()
                st = "waived" if r < 0.05 else "late" if r < 0.17 and late == 0 else "done"
                late += st == "late"
            ms.append({"name": nm, "due": due, "status": st})
        g["milestones"] = ms
    red_candidates = [g for g in grants if g["status"] == "active"
                      and sum(1 for m in g["milestones"] if m["due"] <= dt.date(2025, 3, 31)) >= 4]
    red = rng.choice(red_candidates)
    past = [m for m in red["milestones"] if m["due"] <= dt.date(2025, 3, 31)]
    for m in red["milestones"]:
        if m["due"] <= SNAP:
            m["status"] = "done"
    for m in past[1:4]:
        m["status"] = "late"
    t["red"] = red["grant_id"]
    t["grants"], t["by_grant"] = grants, by_grant

    # ---- special grants for the documents --------------------------------------------
    active = [g for g in grants if g["status"] == "active" and g["grant_id"] != red["grant_id"]]
    # the suspended grant (funder letter): active, started before mid 2024
    sus = rng.choice([g for g in active if g["start_date"] <= dt.date(2024, 5, 1) and g["end_date"] >= dt.date(2025, 12, 31)])
    sus["status"] = "suspended"
    t["suspended_letter_date"] = dt.date(2024, 11, rng.randint(4, 22))
    for g in rng.sample([g for g in active if g is not sus], 2):
        g["status"] = "suspended"
    # the no-cost extension (funder letter): active, unique (PI, funder) pair, ending Jul-Dec 2025
    pairs = Counter((g["pi"], g["funder"]) for g in grants)
    ext = rng.choice([g for g in active if g["status"] == "active" and pairs[(g["pi"], g["funder"])] == 1
                      and dt.date(2025, 7, 31) <= g["end_date"] <= dt.date(2025, 12, 31)])
    t["ext"] = ext["grant_id"]
    # the second instalment letter
    inst = rng.choice([g for g in active if g["status"] == "active" and g is not ext
                       and g["start_date"] <= dt.date(2024, 3, 1) and g["end_date"] >= dt.date(2025, 12, 31)])
    t["inst"] = inst["grant_id"]
    t["sus"] = sus["grant_id"]

    # ---- ethics approvals ---------------------------------------------------------
    reviewers = [p for p in people if p["role"] in ("professor", "associate professor")]
    eth = []
    for g in grants:
        dept = by_staff[g["pi"]]["dept"]
        p = 0.8 if dept in HUMAN_RESEARCH | ANIMAL_RESEARCH else 0.08
        if rng.random() >= p:
            continue
        sub = g["_award_day"] + dt.timedelta(days=rng.randint(-30, 70))
        sub = max(sub, dt.date(2023, 1, 16))
        committee = ("Animal Welfare Body" if dept in ANIMAL_RESEARCH and rng.random() < 0.7
                     else "Human Research Ethics Committee")
        rev = rng.choice([r for r in reviewers if r["dept"] != dept and r["staff_id"] != g["pi"]])
        dec_day = sub + dt.timedelta(days=rng.randint(12, 70))
        if dec_day > SNAP:
            decision, dec = "pending", None
        else:
            decision = rng.choices(["approved", "approved with conditions", "rejected", "withdrawn"],
                                   weights=[55, 31, 8, 4])[0]
            dec = dec_day
        eth.append({"grant_ref": g["grant_id"], "committee": committee, "reviewer": rev["staff_id"],
                    "risk_level": rng.choices(["low", "medium", "high"], weights=[45, 40, 15])[0],
                    "submitted_on": sub, "decided_on": dec, "decision": decision})
    eth.sort(key=lambda e: (e["submitted_on"], e["grant_ref"]))
    for e, eid in zip(eth, ids(rng, "EA", 1, 160, len(eth), 4), strict=True):
        e["approval_id"] = eid
    t["ethics"] = eth

    # ---- expenses -----------------------------------------------------------------
    heads = {d["dept_code"]: d["head"] for d in departments}
    director = dept_by["RSRV"]["head"]
    dept_members = defaultdict(list)
    for p in people:
        if p["role"] in ("postdoctoral researcher", "research fellow", "senior lecturer"):
            dept_members[p["dept"]].append(p["staff_id"])
    exp = []

    def stop_of(g):
        stop = min(g["end_date"], SNAP)
        if g["grant_id"] == sus["grant_id"]:
            stop = t["suspended_letter_date"] - dt.timedelta(days=1)
        return stop

    spending = [g for g in grants if g["start_date"] <= SNAP - dt.timedelta(days=20)]
    weights = [max(1, (stop_of(g) - g["start_date"]).days) * (1 + g["amount"] / 600_000) for g in spending]
    cat_w = [c[1] for c in CATEGORIES]
    for _ in range(352):
        g = rng.choices(spending, weights=weights)[0]
        day = rand_date(rng, g["start_date"], stop_of(g))
        cat, _, (lo, hi), vendors = rng.choices(CATEGORIES, weights=cat_w)[0]
        if cat == "participant payments" and by_staff[g["pi"]]["dept"] not in HUMAN_RESEARCH:
            cat, _, (lo, hi), vendors = CATEGORIES[1]
        amt = q2(Decimal(rng.randint(lo * 100, hi * 100)) / 100)
        if amt == SECOND_SIGNATURE_ABOVE:
            amt += CENT
        vendor = rng.choice(vendors)
        desc = {"travel": f"{vendor} - trip to {rng.choice(TRAVEL_DESTS)}",
                "personnel": f"Salary charge {MONTHS[day.month - 1][:3]} {day.year}",
                "publication fees": f"Article processing charge - {vendor}"}.get(cat, f"{cat.capitalize()} - {vendor}")
        exp.append({"grant": g["grant_id"], "booked_on": day, "category": cat, "description": desc, "amount": amt,
                    "_vendor": vendor})
    # the audit's split purchase: three equipment lines, same vendor, one week, each just below 25,000
    candidates = [g for g in spending if g["status"] == "active" and g["amount"] >= 400_000
                  and g["start_date"] <= dt.date(2024, 3, 1) and g["grant_id"] not in (red["grant_id"],)]
    split = rng.choice(candidates)
    t["split"] = split["grant_id"]
    base = rand_date(rng, dt.date(2024, 5, 6), dt.date(2024, 9, 20))
    split_vendor = "Bruker"
    for k in range(3):
        amt = q2(Decimal(rng.randint(2_310_000, 2_495_000)) / 100)
        exp.append({"grant": split["grant_id"], "booked_on": base + dt.timedelta(days=2 * k), "category": "equipment",
                    "description": f"Equipment - {split_vendor} (order part {k + 1})", "amount": amt,
                    "_vendor": split_vendor})
    exp.sort(key=lambda e: (e["booked_on"], e["grant"], e["amount"]))
    for e, eid in zip(exp, ids(rng, "EX", 10001, 10999, len(exp), 5), strict=True):
        e["expense_id"] = eid
        g = by_grant[e["grant"]]
        dept = by_staff[g["pi"]]["dept"]
        if e["category"] == "personnel":
            e["claimant"] = g["pi"]
        else:
            e["claimant"] = g["pi"] if rng.random() < 0.45 or not dept_members[dept] else rng.choice(dept_members[dept])
        if e["booked_on"] > SNAP - dt.timedelta(days=30):
            e["status"] = "pending" if rng.random() < 0.6 else "posted"
        else:
            e["status"] = "rejected" if rng.random() < 0.06 and e["category"] != "personnel" else "posted"
        if e["amount"] > SECOND_SIGNATURE_ABOVE:
            h = heads[dept]
            e["second_signatory"] = h if h != e["claimant"] else director
        else:
            e["second_signatory"] = None
    for e in exp:  # the split lines were signed
        if e["grant"] == split["grant_id"] and e["_vendor"] == split_vendor and e["category"] == "equipment":
            e["status"] = "posted"
    # two posted lines above the threshold in 2024 without a second signature (the audit's finding)
    unsigned = rng.sample([e for e in exp if e["status"] == "posted" and e["amount"] > SECOND_SIGNATURE_ABOVE
                           and e["booked_on"].year == 2024 and e["grant"] != split["grant_id"]
                           and e["category"] != "personnel"], 2)
    for e in unsigned:
        e["second_signatory"] = None
    t["unsigned"] = sorted(e["expense_id"] for e in unsigned)
    t["expenses"] = exp

    # ---- publications ------------------------------------------------------------
    pubs = []
    pub_grants = [g for g in grants if g["start_date"] <= dt.date(2025, 1, 31)]
    ptitles = set()
    for _ in range(84):
        g = rng.choice(pub_grants)
        dept = by_staff[g["pi"]]["dept"]
        lo = g["start_date"] + dt.timedelta(days=120)
        if lo > SNAP:
            continue
        day = rand_date(rng, lo, min(SNAP, g["end_date"] + dt.timedelta(days=180)))
        lead = g["pi"] if rng.random() < 0.4 or not dept_members[dept] else rng.choice(dept_members[dept])
        subject = g["title"].split(" ", 1)[1]
        while True:
            title = rng.choice(["New evidence on", "A framework for", "Revisiting", "Towards", "Lessons from",
                                "A multi-site study of", "Open data on"]) + " " + subject
            if rng.random() < 0.5:
                title += rng.choice([": a pilot study", ": first results", " in practice", " at scale"])
            if title not in ptitles:
                ptitles.add(title)
                break
        oa = rng.random() < 0.7
        apc = q2(Decimal(rng.randint(900, 3200))) if oa and rng.random() < 0.75 else None
        pubs.append({"funded_by": g["grant_id"], "lead_author": lead, "title": title,
                     "venue": rng.choice(VENUES[dept]), "published_on": day, "open_access": oa,
                     "apc_eur": apc, "doi": f"10.{rng.randint(1000, 9999)}/{rng.choice('abcdefghjk')}"
                                            f"{rng.randint(100000, 999999)}"})
    pubs.sort(key=lambda p: (p["published_on"], p["title"]))
    for p, pid in zip(pubs, ids(rng, "PB", 5001, 5400, len(pubs), 4), strict=True):
        p["pub_id"] = pid
    t["publications"] = pubs
    return t


def write_tables(t) -> None:
    def csv_out(name, header, rows, delim=","):
        with open(OUT / name, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, delimiter=delim, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)

    csv_out("departments.csv", ["dept_code", "name", "faculty", "building", "head", "cost_centre"],
            [[d["dept_code"], d["name"], d["faculty"], d["building"], d["head"], d["cost_centre"]]
             for d in t["departments"]])

    st = t["staff"]
    table = pa.table({
        "staff_id": pa.array([p["staff_id"] for p in st], pa.string()),
        "full_name": pa.array([p["full_name"] for p in st], pa.string()),
        "title": pa.array([p["title"] for p in st], pa.string()),  # null for administrative staff
        "role": pa.array([p["role"] for p in st], pa.string()),
        "dept": pa.array([p["dept"] for p in st], pa.string()),
        "email": pa.array([p["email"] for p in st], pa.string()),
        "fte": pa.array([p["fte"] for p in st], pa.float64()),
        "orcid": pa.array([p["orcid"] for p in st], pa.string()),
    })
    pq.write_table(table, OUT / "staff.parquet", compression="snappy")

    funders = [{k: v for k, v in f.items() if not k.startswith("_")} for f in t["funders"]]
    (OUT / "funders.json").write_text(json.dumps(funders, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    with open(OUT / "grants.jsonl", "w", encoding="utf-8") as f:
        for g in t["grants"]:
            rec = {"grant_id": g["grant_id"], "title": g["title"], "pi": g["pi"], "funder": g["funder"],
                   "amount": g["amount"], "currency": g["currency"], "awarded_at": g["awarded_at"],
                   "start_date": g["start_date"].isoformat(), "end_date": g["end_date"].isoformat(),
                   "status": g["status"],
                   "milestones": [{"name": m["name"], "due": m["due"].isoformat(), "status": m["status"]}
                                  for m in g["milestones"]]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")

    csv_out("ethics_approvals.csv", ["approval_id", "grant_ref", "committee", "reviewer", "risk_level",
                                     "submitted_on", "decided_on", "decision"],
            [[e["approval_id"], e["grant_ref"], e["committee"], e["reviewer"], e["risk_level"],
              e["submitted_on"].isoformat(), e["decided_on"].isoformat() if e["decided_on"] else "", e["decision"]]
             for e in t["ethics"]])

    csv_out("expenses.csv", ["expense_id", "grant", "claimant", "booked_on", "category", "description", "amount",
                             "currency", "status", "second_signatory"],
            [[e["expense_id"], e["grant"], e["claimant"], e["booked_on"].strftime("%d.%m.%Y"), e["category"],
              e["description"], f"{e['amount']:.2f}".replace(".", ","), "EUR", e["status"],
              e["second_signatory"] or ""] for e in t["expenses"]], delim=";")

    csv_out("publications.csv", ["pub_id", "funded_by", "lead_author", "title", "venue", "published_on",
                                 "open_access", "apc_eur", "doi"],
            [[p["pub_id"], p["funded_by"], p["lead_author"], p["title"], p["venue"], p["published_on"].isoformat(),
              "true" if p["open_access"] else "false", f"{p['apc_eur']:.2f}" if p["apc_eur"] is not None else "",
              p["doi"]] for p in t["publications"]])


# --------------------------------------------------------------------------- #
# documents
# --------------------------------------------------------------------------- #
def G(gid):
    return L("grants", "grant_id", gid)


def S(sid):
    return L("staff", "staff_id", sid)


def E(eid):
    return L("expenses", "expense_id", eid)


def A(aid):
    return L("ethics_approvals", "approval_id", aid)


def P(pid):
    return L("publications", "pub_id", pid)


def documents(rng: random.Random, t) -> tuple[dict, dict]:
    """Marked-up sources by path (relative to documents/), and the facts that only the documents hold."""
    docs, facts = {}, {}
    by_staff, by_grant, by_funder, by_dept = t["by_staff"], t["by_grant"], t["by_funder"], t["by_dept"]
    eo = next(p for p in t["staff"] if p["role"] == "ethics officer")
    director = by_staff[t["by_dept"]["RSRV"]["head"]]
    finance = next(p for p in t["staff"] if p["role"] == "research finance officer")

    # ---- policies ---------------------------------------------------------------
    facts["expiry_months"] = 36
    facts["renewal_days"] = 60
    docs["policies/ethics-approval-policy.md"] = f"""# Ethics Approval Policy for Funded Research

Policy reference: {D('policy-ref', 'RSO-POL-03')} (version 4, adopted by the Senate Research Committee)
Owner: Research Services Office, {UNI}
Contact: the university ethics officer, {eo['title']} {eo['full_name']} ({S(eo['staff_id'])})

## 1. Scope

Every funded project that involves human participants, personal data or live animals needs a
favourable opinion of the competent committee before any data collection starts: the Human
Research Ethics Committee for research with people, the Animal Welfare Body for animal work.

## 2. Review

1. Each application is assigned to one lead reviewer. A reviewer may not belong to the
   department of the principal investigator and may not be named on the grant.
2. Applications rated high risk additionally go to an external lay member before a decision.
3. The committee aims to decide within 45 working days of a complete submission.

## 3. Validity and renewal

* A favourable opinion is valid for {facts['expiry_months']} months from the date of the decision; approvals
  expire after {facts['expiry_months']} months even if the grant itself runs longer.
* A renewal request must reach the committee at least {facts['renewal_days']} days before expiry.
* Substantial amendments (new sites, new participant groups, new data linkages) need a fresh review.

## 4. Participant payments

Payments to participants must be proportionate. The ceiling per participant and session is set by
the Human Research Ethics Committee and recorded in its minutes.
"""

    facts["second_sig"] = "EUR 5,000"
    facts["quotes_above"] = "EUR 25,000"
    facts["subsistence"] = "EUR 48"
    facts["claim_days"] = 90
    docs["policies/research-expenses-policy.md"] = f"""# Research Expenses and Procurement Policy

Policy reference: {D('policy-ref', 'RSO-POL-05')} - applies to all expenditure charged to external grants.

## Approval of claims

* Every claim is approved by the budget holder (normally the principal investigator).
* Any single expense above {facts['second_sig']} needs a second signature, given by the head of the
  principal investigator's department (or by the Director of Research Services where the head is
  the claimant). The second signatory is recorded on the expense line.
* Claims must be submitted within {facts['claim_days']} days of the expense being incurred; later claims are
  rejected unless the funder agrees in writing.

## Procurement

* Purchases of equipment above {facts['quotes_above']} (net) require three written quotes and a record of the
  selection. Orders must not be split to stay below this threshold.
* Equipment bought on a grant remains university property and is entered in the asset register.

## Travel

* Rail is preferred for journeys under six hours; flights are economy class.
* The daily subsistence allowance for conference and fieldwork travel is {facts['subsistence']} per day,
  unless the funder sets a lower rate.

Questions: research finance, {finance['full_name']} ({S(finance['staff_id'])}),
phone {D('phone', '+49 561 804 2291')}.
"""

    facts["apc_cap"] = "EUR 3,200"
    facts["deposit_months"] = 3
    docs["policies/open-access-policy.txt"] = f"""OPEN ACCESS PUBLICATION POLICY
{UNI} - Research Services Office and University Library
Reference {D('policy-ref', 'RSO-POL-08')}

1. Every peer-reviewed article arising from a funded project must be openly available.

2. The author's accepted manuscript must be deposited in the institutional repository
   within {facts['deposit_months']} months of acceptance, whatever the route to open access.

3. Article processing charges (APCs) may be paid from grant funds or from the central
   open access fund. The university will not pay more than {facts['apc_cap']} per article;
   higher charges need the written consent of the University Librarian.

4. Hybrid journals are not eligible for the central fund.

5. Data underlying a publication should be deposited with a persistent identifier at the
   time of publication.
"""

    # ---- internal audit ----------------------------------------------------------
    split = by_grant[t["split"]]
    split_lines = [e for e in t["expenses"] if e["grant"] == split["grant_id"] and e["_vendor"] == "Bruker"
                   and e["category"] == "equipment" and e["description"].startswith("Equipment - Bruker (order")]
    assert len(split_lines) == 3
    split_total = sum(e["amount"] for e in split_lines)
    unsigned = [next(e for e in t["expenses"] if e["expense_id"] == x) for x in t["unsigned"]]
    sampled = 60
    facts["audit_sampled"] = sampled
    u_lines = "\n".join(f"| {E(e['expense_id'])} | {G(e['grant'])} | {e['booked_on'].isoformat()} | "
                        f"{money(e['amount'])} | {e['category']} |" for e in unsigned)
    docs["audit/internal-audit-grant-expenditure-2024.md"] = f"""# Internal Audit Report: Expenditure on External Grants, 2024

Report number: {D('report-ref', 'IA-24-07')} - Internal Audit, {UNI}
Issued: 14 February 2025 - Distribution: Director of Research Services ({S(director['staff_id'])}), Finance Committee

## Scope

The audit covered expense lines posted to external grants between 1 January and 31 December 2024.
A sample of {sampled} expense lines was tested against the research expenses policy ({D('policy-ref', 'RSO-POL-05')}).

## Findings

### Finding 1 - split equipment order (high priority)

Grant {G(split['grant_id'])} was flagged: three equipment lines from the same supplier were booked within
one week in {MONTHS[split_lines[0]['booked_on'].month - 1]} {split_lines[0]['booked_on'].year}, each just below the three-quote threshold and
together worth EUR {money(split_total)}. The purchase should have been tendered as one order. The
department has been asked to document the selection retrospectively and to attend procurement
training by 30 April 2025.

### Finding 2 - missing second signature (medium priority)

Two lines above the second-signature threshold were posted without a second signatory:

| Expense | Grant | Booked | Amount (EUR) | Category |
|---|---|---|---:|---|
{u_lines}

Finance will block the posting of such lines in the ERP system from the March 2025 release.

### Finding 3 - late claims (low priority)

Four travel claims in the sample were submitted more than 90 days after the trip. They were
paid because the funders had agreed in writing.

## Overall opinion

Moderate assurance. One follow-up review is scheduled for the fourth quarter of 2025.
"""

    # ---- ethics committee minutes --------------------------------------------------
    eth = t["ethics"]
    oct_pick = [e for e in eth if e["decision"] == "approved with conditions" and e["decided_on"]
                and dt.date(2024, 8, 20) <= e["decided_on"] <= dt.date(2024, 10, 14)]
    if not oct_pick:
        oct_pick = [e for e in eth if e["decision"] == "approved with conditions" and e["decided_on"]
                    and e["decided_on"].year == 2024]
    e1 = rng.choice(oct_pick)
    t["minutes_oct_approval"] = e1["approval_id"]
    chair = rng.choice([p for p in t["staff"] if p["role"] == "professor" and p["dept"] in HUMAN_RESEARCH
                        and p["staff_id"] != e1["reviewer"]])
    t["hrec_chair"] = chair["staff_id"]
    facts["voucher_cap"] = "EUR 25"
    other = [e for e in eth if e["decided_on"] and dt.date(2024, 8, 20) <= e["decided_on"] <= dt.date(2024, 10, 14)
             and e is not e1]
    other_lines = "".join(f"* {A(e['approval_id'])} (grant {G(e['grant_ref'])}): {e['decision']}, noted.\n"
                          for e in other[:3])
    docs["committee/ethics-committee-minutes-2024-10.md"] = f"""# Human Research Ethics Committee - Minutes

Meeting of 15 October 2024, Senate House, room {D('room', 'S-214')}

Present: {S(chair['staff_id'])} (chair), {S(e1['reviewer'])}, {S(eo['staff_id'])} (secretary), two lay members.

## 1. Decisions taken since the last meeting

Approval {A(e1['approval_id'])} for grant {G(e1['grant_ref'])} was granted with conditions. The reviewer
{S(e1['reviewer'])} reported that the consent form had been simplified as requested; the remaining
condition is that interview recordings are deleted once transcribed and checked.

{other_lines}
## 2. Participant payments

After discussion the committee set the ceiling for participant vouchers at {facts['voucher_cap']} per participant
and session. Higher amounts need a written justification in the application.

## 3. Any other business

The secretary reminded members that approvals expire after the period set in {D('policy-ref', 'RSO-POL-03')}.
Next meeting: 18 March 2025.
"""

    deputy = rng.choice([p for p in t["staff"] if p["role"] in ("professor", "associate professor")
                         and p["staff_id"] not in (chair["staff_id"], e1["reviewer"])
                         and p["dept"] != by_staff[chair["staff_id"]]["dept"]])
    t["deputy"] = deputy["staff_id"]
    pend = [e for e in eth if e["submitted_on"] <= dt.date(2025, 3, 10) and
            (e["decided_on"] is None or e["decided_on"] > dt.date(2025, 3, 18))]
    early = sorted([e for e in eth if e["decided_on"] and e["decided_on"] < dt.date(2023, 7, 1)
                    and e["decision"].startswith("approved")], key=lambda e: e["approval_id"])[:3]
    pend_text = (f"Application {A(pend[0]['approval_id'])} for grant {G(pend[0]['grant_ref'])} is still under review; "
                 f"the reviewer {S(pend[0]['reviewer'])} has asked for a revised data management plan.\n"
                 if pend else "No application is outstanding.\n")
    assert early
    early_text = ", ".join(A(e["approval_id"]) for e in early)
    docs["committee/ethics-committee-minutes-2025-03.md"] = f"""# Human Research Ethics Committee - Minutes

Meeting of 18 March 2025, Senate House, room {D('room', 'S-214')}

Present: {S(chair['staff_id'])} (chair), {S(deputy['staff_id'])}, {S(eo['staff_id'])} (secretary), three lay members.

## 1. Membership

The committee elected {deputy['title']} {deputy['full_name']} ({S(deputy['staff_id'])}) as deputy chair for a term
of two years.

## 2. Applications under review

{pend_text}
## 3. Renewals

The first approvals of the current cycle ({early_text}) were decided in the first half of 2023.
The secretary will remind their principal investigators about renewal well ahead of expiry.

## 4. Training

From the winter term all new reviewers complete a half-day induction before their first review.
"""

    # ---- research committee annual report (HTML) ------------------------------------
    g24 = sorted([g for g in t["grants"] if g["awarded_at"].startswith("2024")], key=lambda g: -g["amount"])
    top3 = g24[:3]
    t["top24"] = top3[0]["grant_id"]
    facts["prize"] = "Rector's Prize for Research Impact"
    facts["seed_fund"] = "EUR 180,000"
    rows_html = "\n".join(
        f"      <tr><td>{G(g['grant_id'])}</td><td>{by_funder[g['funder']]['name']}</td>"
        f"<td>{S(g['pi'])}</td><td>{money0(g['amount'])}</td></tr>" for g in top3)
    docs["committee/research-committee-annual-report-2024.html"] = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Senate Research Committee - Annual Report 2024</title>
</head>
<body>
  <h1>Senate Research Committee: Annual Report 2024</h1>
  <p>Adopted on 28 January 2025. Prepared by the Research Services Office ({S(director['staff_id'])}).</p>
  <h2>Largest new awards of 2024</h2>
  <table>
    <thead><tr><th>Grant</th><th>Funder</th><th>Principal investigator</th><th>Award (EUR)</th></tr></thead>
    <tbody>
{rows_html}
    </tbody>
  </table>
  <p>The committee congratulates the teams. Grant {G(top3[0]['grant_id'])} has been nominated for the
  {facts['prize']}, which will be presented at the opening of the academic year.</p>
  <h2>Internal seed funding</h2>
  <p>For 2025 the committee has set aside {facts['seed_fund']} for seed grants of up to EUR 15,000 each,
  open to early-career staff. The call closes on 30 April 2025.</p>
  <h2>Research integrity</h2>
  <p>The committee noted the internal audit of grant expenditure ({D('report-ref', 'IA-24-07')}) and asked for
  a progress report at its autumn meeting.</p>
</body>
</html>
"""

    # ---- funder letters ----------------------------------------------------------
    ext = by_grant[t["ext"]]
    fx = by_funder[ext["funder"]]
    new_end = month_end(add_months(ext["end_date"], 6))
    t["ext_new_end"] = new_end
    facts["ext_new_end"] = long_date(new_end)
    letter_day = dt.date(2025, 4, rng.randint(7, 25))
    docs["letters/FL-2025-019.md"] = f"""{fx['name']}
{fx['country']}

To: Research Services Office, {UNI}
Date: {long_date(letter_day)}
Our reference: {D('letter-ref', 'FL-2025-019')}

## No-cost extension - grant {G(ext['grant_id'])}

Dear colleagues,

thank you for your request of last month. We are pleased to approve a no-cost extension for
grant {G(ext['grant_id'])}, "{ext['title']}". The project may now run until {facts['ext_new_end']} instead of
{long_date(ext['end_date'])}. The total award is unchanged; no additional funds are committed.

The final scientific and financial reports are due three months after the new end date. The revised end
date takes effect once the amendment is countersigned and will then be entered in your grants register.

Kind regards,

{fx['contact']['name']}
Programme officer, {fx['name']}
"""

    inst = by_grant[t["inst"]]
    fi = by_funder[inst["funder"]]
    share = 40
    facts["inst_amount"] = money(q2(Decimal(inst["amount"]) * share / 100))
    facts["report_due"] = "30 September 2025"
    docs["letters/FL-2025-006.md"] = f"""{fi['name']}

To: Research Services Office, {UNI}
Date: 3 February 2025
Our reference: {D('letter-ref', 'FL-2025-006')}

## Second instalment - grant {G(inst['grant_id'])}

Dear colleagues,

following our review of the first progress report, we confirm the release of the second
instalment for grant {G(inst['grant_id'])}: EUR {facts['inst_amount']} ({share}% of the award) will be transferred
to the university's account within ten working days.

Please note that the interim scientific report is due on {facts['report_due']}. The third and final
instalment will be released after its approval.

Yours sincerely,

{fi['contact']['name']}
{fi['name']}
"""

    sus = by_grant[t["sus"]]
    fs = by_funder[sus["funder"]]
    sd = t["suspended_letter_date"]
    docs["letters/FL-2024-058.txt"] = f"""{fs['name'].upper()}

Research Services Office
{UNI}

{long_date(sd)}
Reference: {D('letter-ref', 'FL-2024-058')}

Subject: Suspension of payments, grant {G(sus['grant_id'])}

Dear colleagues,

we have not received the annual progress report for grant {G(sus['grant_id'])}, which was due
three months ago, despite two reminders. In line with our general conditions we are
suspending all payments on this grant with immediate effect. No further costs may be
charged to the grant until the report has been received and approved.

Please contact {fs['contact']['name']} ({D('phone', fs['contact']['phone'])}) to agree a timetable.

Yours faithfully,
Grants Management
"""

    # ---- quarterly update (Q1 2025) ----------------------------------------------
    red = by_grant[t["red"]]
    q1 = [g for g in t["grants"] if g["awarded_at"][:7] in ("2025-01", "2025-02", "2025-03")]
    q1_total = sum(g["amount"] for g in q1)
    facts["recovery_due"] = "16 May 2025"
    officer = next(p for p in t["staff"] if p["role"] == "grants officer")
    docs["reports/research-office-update-2025-Q1.md"] = f"""# Research Services Office - Quarterly Update, Q1 2025

Prepared for the Deans' Forum, 9 April 2025.

## New awards

In the first quarter of 2025 the university received {len(q1)} new awards worth EUR {money0(q1_total)} in total.

## Milestone tracker

Grant {G(red['grant_id'])} is rated red: three of its milestones are overdue. Its principal investigator
({S(red['pi'])}) has been asked to submit a recovery plan by {facts['recovery_due']}. All other grants are rated
green or amber.

## Funder relations

* The suspension of payments on grant {G(sus['grant_id'])} ({D('letter-ref', 'FL-2024-058')}) remains in place.
* Grants officer {S(officer['staff_id'])} now coordinates all EU applications; the helpdesk remains on
  extension {D('phone', '2290')}.

## Systems

The new ERP release blocks expense lines above the second-signature threshold that lack a second
signatory (audit {D('report-ref', 'IA-24-07')}).
"""

    # ---- data steward notes ----------------------------------------------------------
    pubs = t["publications"]
    missing = rng.choice([p for p in pubs if p["open_access"] and p["published_on"] >= dt.date(2024, 6, 1)])
    t["missing_deposit"] = missing["pub_id"]
    docs["notes/data-steward-handover.txt"] = f"""Data steward handover notes - Research Services Office
Written for the incoming data steward, June 2025.

- Publication {P(missing['pub_id'])} has no accepted manuscript in the repository yet; the lead author
  ({S(missing['lead_author'])}) has promised it for July. Chase if not received.
- The ORCID field in the staff table is filled for academic staff only. Example format:
  {D('orcid-example', '0000-0002-1825-0097')} (this one is the ORCID documentation example, not one of ours).
- Old identifiers from the previous grants database (e.g. {D('unknown-id', 'GR-1987')}) were not migrated and
  appear in no current table.
- Repository DOIs use the prefix {D('doi-prefix', '10.80412')}; journal DOIs are kept as published.
- Backups of the grants register run nightly at 02:00; the restore test is quarterly.
"""
    return docs, facts


# --------------------------------------------------------------------------- #
# structure
# --------------------------------------------------------------------------- #
FOREIGN_KEYS = [
    ("departments", "head", "staff", "staff_id"),
    ("staff", "dept", "departments", "dept_code"),
    ("grants", "pi", "staff", "staff_id"),
    ("grants", "funder", "funders", "funder_id"),
    ("ethics_approvals", "grant_ref", "grants", "grant_id"),
    ("ethics_approvals", "reviewer", "staff", "staff_id"),
    ("expenses", "grant", "grants", "grant_id"),
    ("expenses", "claimant", "staff", "staff_id"),
    ("expenses", "second_signatory", "staff", "staff_id"),
    ("publications", "funded_by", "grants", "grant_id"),
    ("publications", "lead_author", "staff", "staff_id"),
]
KEYS = {"departments": "dept_code", "staff": "staff_id", "funders": "funder_id", "grants": "grant_id",
        "ethics_approvals": "approval_id", "expenses": "expense_id", "publications": "pub_id"}
FILES = {"departments": "departments.csv", "staff": "staff.parquet", "funders": "funders.json",
         "grants": "grants.jsonl", "ethics_approvals": "ethics_approvals.csv", "expenses": "expenses.csv",
         "publications": "publications.csv"}


def make_structure(links, distractors) -> dict:
    return {
        "keys": KEYS,
        "foreign_keys": [{"source": s, "column": c, "target": t, "target_column": tc}
                         for s, c, t, tc in FOREIGN_KEYS],
        "document_id_columns": [],
        "label_columns": {"staff": "full_name", "departments": "name", "funders": "name", "grants": "title",
                          "publications": "title"},
        "document_links": links,
        "distractors": distractors,
        "files": FILES,
        "nested": [{"table": "funders", "column": "contact", "shape": "object", "fields": ["name", "email", "phone"]},
                   {"table": "grants", "column": "milestones", "shape": "list of objects",
                    "fields": ["name", "due", "status"]}],
    }


# --------------------------------------------------------------------------- #
# questions
# --------------------------------------------------------------------------- #
GR, ST, FU = "read_json('grants.jsonl')", "read_parquet('staff.parquet')", "read_json('funders.json')"
DE, EA, PU = "read_csv('departments.csv')", "read_csv('ethics_approvals.csv')", "read_csv('publications.csv')"
EX = "read_csv('expenses.csv', delim=';', decimal_separator=',', dateformat='%d.%m.%Y')"
AWARD_YEAR = "year(CAST(g.awarded_at AS TIMESTAMPTZ))"


def lit(value) -> str:
    """A SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def make_questions(rng, t, facts, docs_text, sql) -> list[dict]:
    qs: list[dict] = []
    by_staff, by_grant, by_funder, by_dept = t["by_staff"], t["by_grant"], t["by_funder"], t["by_dept"]

    def one(q):
        rows = sql(q)
        assert len(rows) == 1, (q, rows)
        assert len(rows[0]) >= 1 and all(v is not None for v in rows[0]), (q, rows)
        return rows[0]

    def add(question, kind, answer, expect, gold_sql=None, hop_sql=None, doc=None, note=None):
        q = {"question": question, "kind": kind, "answer": answer, "expect": expect, "gold_sql": gold_sql}
        if hop_sql:
            q["hop_sql"] = hop_sql
        if doc:
            q["gold_doc"] = f"documents/{doc}"
            q["documents"] = [f"documents/{doc}"]
        if note:
            q["note"] = note
        assert all(e in answer for e in expect), (answer, expect)
        qs.append(q)

    def doc_has(doc, literal):
        assert literal in docs_text[doc], (doc, literal)

    grants, exp = t["grants"], t["expenses"]

    # ---- lookup -------------------------------------------------------------------
    g = rng.choice([g for g in grants if g["status"] == "active"])
    sql_ = f"SELECT s.full_name FROM {GR} g JOIN {ST} s ON g.pi = s.staff_id WHERE g.grant_id = {lit(g['grant_id'])}"
    (name,) = one(sql_)
    assert name == by_staff[g["pi"]]["full_name"]
    add(f"Who is the principal investigator on grant {g['grant_id']}?", "lookup", f"{name} ({g['pi']})", [name],
        sql_)

    g = rng.choice([x for x in grants if x is not g])
    sql_ = f"SELECT end_date FROM {GR} WHERE grant_id = {lit(g['grant_id'])}"
    (end,) = one(sql_)
    assert end == g["end_date"]
    add(f"When is grant {g['grant_id']} scheduled to end?", "lookup", end.isoformat(), [end.isoformat()], sql_)

    p = rng.choice(t["publications"])
    sql_ = f"SELECT venue FROM {PU} WHERE pub_id = {lit(p['pub_id'])}"
    (venue,) = one(sql_)
    add(f"In which journal did publication {p['pub_id']} appear?", "lookup", venue, [venue], sql_)

    # ---- aggregate -----------------------------------------------------------------
    sql_ = f"SELECT count(*) FROM {GR} WHERE status = 'suspended'"
    (n,) = one(sql_)
    assert n == 3
    add("How many of our grants are currently suspended?", "aggregate", str(n), [str(n)], sql_)

    sql_ = f"SELECT sum(g.amount), count(*) FROM {GR} g WHERE {AWARD_YEAR} = 2024"
    total, n = one(sql_)
    assert total == sum(g["amount"] for g in grants if g["awarded_at"].startswith("2024"))
    add("What was the total value of all grants awarded in 2024?", "aggregate",
        f"EUR {plain(total)} ({money0(total)}) across {n} grants", [plain(total)], sql_)

    sql_ = f"SELECT round(avg(apc_eur), 2), count(*) FROM {PU} WHERE open_access AND apc_eur IS NOT NULL"
    avg, n = one(sql_)
    add("On average, how much did we pay in article processing charges for open-access papers that had one?",
        "aggregate", f"EUR {plain(avg)} on average over {n} papers", [plain(avg)], sql_)

    # ---- chain_aggregate ---------------------------------------------------------------
    def posted_by_dept(code):
        return sum(e["amount"] for e in exp if e["status"] == "posted"
                   and by_staff[by_grant[e["grant"]]["pi"]]["dept"] == code)

    code = rng.choice(["CHEM", "PSYC", "MEDI", "PHYS", "EENG"])
    dname = by_dept[code]["name"]
    sql_ = (f"SELECT round(sum(e.amount), 2) FROM {EX} e JOIN {GR} g ON e.grant = g.grant_id "
            f"JOIN {ST} s ON g.pi = s.staff_id JOIN {DE} d ON s.dept = d.dept_code "
            f"WHERE d.name = {lit(dname)} AND e.status = 'posted'")
    (v,) = one(sql_)
    assert q2(v) == posted_by_dept(code), (v, posted_by_dept(code))
    add(f"What is the total of posted expenses on grants whose principal investigator sits in the {dname} "
        "department?", "chain_aggregate", f"EUR {plain(v)}", [plain(v)], sql_)

    fac = rng.choice(["Faculty of Engineering", "Faculty of Humanities", "Faculty of Social Sciences"])
    sql_ = (f"SELECT sum(g.amount), count(*) FROM {GR} g JOIN {ST} s ON g.pi = s.staff_id "
            f"JOIN {DE} d ON s.dept = d.dept_code WHERE d.faculty = {lit(fac)}")
    v, n = one(sql_)
    assert v == sum(g["amount"] for g in grants if by_dept[by_staff[g["pi"]]["dept"]]["faculty"] == fac)
    add(f"How much funding has been awarded in total to grants led by PIs from the {fac}?", "chain_aggregate",
        f"EUR {plain(v)} across {n} grants", [plain(v)], sql_)

    sql_ = (f"SELECT count(*) FROM {PU} p JOIN {GR} g ON p.funded_by = g.grant_id "
            f"JOIN {FU} f ON g.funder = f.funder_id WHERE f.type = 'charity'")
    (n,) = one(sql_)
    assert n == sum(1 for p in t["publications"] if by_funder[by_grant[p["funded_by"]]["funder"]]["type"] == "charity")
    add("How many publications came out of grants funded by charities?", "chain_aggregate", str(n), [str(n)], sql_)

    # ---- related_filter_count ------------------------------------------------------------
    sql_ = f"SELECT count(*) FROM {GR} g JOIN {FU} f ON g.funder = f.funder_id WHERE f.type = 'industry'"
    (n,) = one(sql_)
    add("How many grants in the register are funded by industry partners?", "related_filter_count", str(n), [str(n)], sql_)

    rev_dept = Counter(by_staff[e["reviewer"]]["dept"] for e in t["ethics"])
    code = rng.choice([c for c, k in rev_dept.items() if k >= 3])
    dname = by_dept[code]["name"]
    sql_ = (f"SELECT count(*) FROM {EA} a JOIN {ST} s ON a.reviewer = s.staff_id "
            f"JOIN {DE} d ON s.dept = d.dept_code WHERE d.name = {lit(dname)}")
    (n,) = one(sql_)
    assert n == rev_dept[code]
    add(f"How many ethics applications were reviewed by members of the {dname} department?",
        "related_filter_count", str(n), [str(n)], sql_)

    sql_ = (f"SELECT count(*) FROM {EX} e JOIN {ST} s ON e.claimant = s.staff_id "
            "WHERE s.role = 'postdoctoral researcher'")
    (n,) = one(sql_)
    assert n > 0
    add("How many expense claims were submitted by postdoctoral researchers?", "related_filter_count", str(n),
        [str(n)], sql_)

    # ---- ranking -----------------------------------------------------------------
    per_f = defaultdict(list)
    for g in grants:
        if g["awarded_at"].startswith("2024"):
            per_f[g["funder"]].append(g)
    fid = rng.choice(sorted(f for f, gs in per_f.items() if len(gs) >= 3 and f != by_grant[t["top24"]]["funder"]))
    fname = by_funder[fid]["name"]
    sql_ = (f"SELECT g.title, g.grant_id, g.amount FROM {GR} g JOIN {FU} f ON g.funder = f.funder_id "
            f"WHERE f.name = {lit(fname)} AND {AWARD_YEAR} = 2024 ORDER BY g.amount DESC LIMIT 1")
    title, gid, amt = one(sql_)
    add(f"What was the largest grant that the {fname} awarded us in 2024?", "ranking",
        f"{title} ({gid}, EUR {money0(amt)})", [title], sql_)

    per_pi = defaultdict(Counter)
    for g in grants:
        per_pi[by_staff[g["pi"]]["dept"]][g["pi"]] += 1
    ok = [c for c, cnt in per_pi.items() if len(cnt) >= 3 and
          cnt.most_common(2)[0][1] > cnt.most_common(2)[1][1]]
    code = rng.choice(sorted(ok))
    dname = by_dept[code]["name"]
    sql_ = (f"SELECT s.full_name, count(*) AS n FROM {GR} g JOIN {ST} s ON g.pi = s.staff_id "
            f"JOIN {DE} d ON s.dept = d.dept_code WHERE d.name = {lit(dname)} GROUP BY s.full_name "
            "ORDER BY n DESC LIMIT 1")
    name, n = one(sql_)
    add(f"Which PI in {dname} holds the most grants?", "ranking", f"{name} ({n} grants)", [name], sql_)

    travel = Counter()
    for e in exp:
        if e["category"] == "travel" and e["status"] == "posted" and e["booked_on"].year == 2024:
            travel[by_staff[by_grant[e["grant"]]["pi"]]["dept"]] += e["amount"]
    (c1, v1), (_, v2) = travel.most_common(2)
    assert v1 > v2
    sql_ = (f"SELECT d.name, round(sum(e.amount), 2) AS total FROM {EX} e JOIN {GR} g ON e.grant = g.grant_id "
            f"JOIN {ST} s ON g.pi = s.staff_id JOIN {DE} d ON s.dept = d.dept_code "
            "WHERE e.category = 'travel' AND e.status = 'posted' AND year(e.booked_on) = 2024 "
            "GROUP BY d.name ORDER BY total DESC LIMIT 1")
    name, v = one(sql_)
    assert name == by_dept[c1]["name"] and q2(v) == v1
    add("Which department's grants booked the most posted travel spending in 2024?", "ranking",
        f"{name} (EUR {money(v)})", [name], sql_)

    # ---- nested_count ---------------------------------------------------------------
    per_fl = Counter(by_grant_["funder"] for by_grant_ in grants for m in by_grant_["milestones"]
                     if m["status"] == "late")
    fid = rng.choice(sorted(f for f, k in per_fl.items() if k >= 2))
    fname = by_funder[fid]["name"]
    sql_ = (f"SELECT count(*) FROM (SELECT g.funder, unnest(g.milestones) AS m FROM {GR} g) x "
            f"JOIN {FU} f ON x.funder = f.funder_id WHERE f.name = {lit(fname)} AND x.m.status = 'late'")
    (n,) = one(sql_)
    assert n == per_fl[fid]
    add(f"How many milestones on grants from the {fname} are marked late?", "nested_count", str(n), [str(n)], sql_)

    g = rng.choice([g for g in grants if sum(m["status"] == "done" for m in g["milestones"]) >= 2
                    and any(m["status"] != "done" for m in g["milestones"])])
    sql_ = (f"SELECT count(*) FROM (SELECT unnest(milestones) AS m FROM {GR} WHERE grant_id = {lit(g['grant_id'])}) "
            "WHERE m.status = 'done'")
    (n,) = one(sql_)
    add(f"How many of the milestones of grant {g['grant_id']} have been completed?", "nested_count", str(n),
        [str(n)], sql_)

    sql_ = (f"SELECT count(*) FROM (SELECT unnest(milestones) AS m FROM {GR}) "
            "WHERE m.status = 'pending' AND year(m.due) = 2025")
    (n,) = one(sql_)
    add("Across all grants, how many milestones due in 2025 are still pending?", "nested_count", str(n), [str(n)],
        sql_)

    # ---- nested_attribute ---------------------------------------------------------------
    f = rng.choice([f for f in t["funders"] if f["funder_id"] not in (by_grant[t["ext"]]["funder"],)])
    sql_ = f"SELECT contact.email FROM {FU} WHERE name = {lit(f['name'])}"
    (mail,) = one(sql_)
    assert mail == f["contact"]["email"]
    add(f"What is the email address of our contact at the {f['name']}?", "nested_attribute", mail, [mail], sql_)

    g = rng.choice([g for g in grants if g["funder"] != f["funder_id"]])
    sql_ = (f"SELECT f.contact.name FROM {GR} g JOIN {FU} f ON g.funder = f.funder_id "
            f"WHERE g.grant_id = {lit(g['grant_id'])}")
    (cname,) = one(sql_)
    add(f"Who is the contact person at the funder of grant {g['grant_id']}?", "nested_attribute",
        f"{cname} ({by_funder[g['funder']]['name']})", [cname], sql_)

    # ---- period ---------------------------------------------------------------------
    sql_ = (f"SELECT round(sum(amount), 2), count(*) FROM {EX} WHERE status = 'posted' "
            "AND booked_on BETWEEN DATE '2024-07-01' AND DATE '2024-09-30'")
    v, n = one(sql_)
    assert q2(v) == sum(e["amount"] for e in exp if e["status"] == "posted"
                        and dt.date(2024, 7, 1) <= e["booked_on"] <= dt.date(2024, 9, 30))
    add("What was the total of posted expenses booked in Q3 2024?", "period", f"EUR {plain(v)} across {n} lines",
        [plain(v)], sql_)

    sql_ = (f"SELECT count(*) FROM {GR} g WHERE {AWARD_YEAR} = 2024 "
            "AND month(CAST(g.awarded_at AS TIMESTAMPTZ)) = 3")
    (n,) = one(sql_)
    assert n >= 1
    add("How many grants were awarded to us in March 2024?", "period", str(n), [str(n)], sql_)

    sql_ = (f"SELECT round(sum(amount) FILTER (WHERE booked_on BETWEEN DATE '2024-01-01' AND DATE '2024-06-30'), 2) "
            "AS h1, round(sum(amount) FILTER (WHERE booked_on BETWEEN DATE '2024-07-01' AND DATE '2024-12-31'), 2) "
            f"AS h2, round(h2 - h1, 2) AS change FROM {EX} WHERE status = 'posted'")
    h1, h2, ch = one(sql_)
    add("How did posted expense spending in the second half of 2024 compare with the first half?", "period",
        f"{'+' if ch >= 0 else '-'}EUR {plain(abs(ch))} (H1 2024: EUR {plain(h1)}, H2 2024: EUR {plain(h2)})",
        [plain(abs(ch))], sql_)

    sql_ = (f"SELECT count(*) FROM {EA} WHERE decided_on BETWEEN DATE '2024-05-01' AND DATE '2024-08-31'")
    (n,) = one(sql_)
    assert n >= 1
    add("How many ethics applications were decided from May through August 2024?", "period", str(n), [str(n)], sql_)

    # ---- document_fact -----------------------------------------------------------------
    doc = "policies/ethics-approval-policy.md"
    doc_has(doc, f"{facts['expiry_months']} months")
    add("How long does an ethics approval stay valid before it expires?", "document_fact",
        f"{facts['expiry_months']} months from the decision", [str(facts["expiry_months"])], None, doc=doc)

    doc = "policies/research-expenses-policy.md"
    doc_has(doc, facts["second_sig"])
    add("Above what amount does a single research expense need a second signature?", "document_fact",
        f"{facts['second_sig']} (5000)", ["5000"], None, doc=doc)

    doc = "policies/open-access-policy.txt"
    doc_has(doc, facts["apc_cap"])
    add("What is the most the university will pay in article processing charges for one article?",
        "document_fact", f"{facts['apc_cap']} (3200) per article", ["3200"], None, doc=doc)

    doc = "committee/ethics-committee-minutes-2024-10.md"
    doc_has(doc, facts["voucher_cap"])
    add("What ceiling did the ethics committee set for participant vouchers?", "document_fact",
        f"{facts['voucher_cap']} per participant and session", ["25"], None, doc=doc)

    # ---- document_to_table ----------------------------------------------------------------
    doc = "audit/internal-audit-grant-expenditure-2024.md"
    doc_has(doc, t["split"])
    sql_ = f"SELECT title FROM {GR} WHERE grant_id = {lit(t['split'])}"
    (title,) = one(sql_)
    add("The internal audit of 2024 grant expenditure flagged one grant for a split equipment order. "
        "What is that grant's title?", "document_to_table", f"{title} ({t['split']})", [title], sql_, doc=doc)

    doc = "committee/ethics-committee-minutes-2024-10.md"
    e1 = next(e for e in t["ethics"] if e["approval_id"] == t["minutes_oct_approval"])
    doc_has(doc, e1["reviewer"])
    sql_ = (f"SELECT d.name FROM {ST} s JOIN {DE} d ON s.dept = d.dept_code WHERE s.staff_id = {lit(e1['reviewer'])}")
    (dname,) = one(sql_)
    add(f"In the October 2024 ethics committee minutes, a reviewer reports back on approval {e1['approval_id']}. "
        "Which department does that reviewer belong to?", "document_to_table",
        f"{dname} ({by_staff[e1['reviewer']]['full_name']}, {e1['reviewer']})", [dname], sql_, doc=doc)

    doc = "letters/FL-2025-006.md"
    doc_has(doc, t["inst"])
    sql_ = f"SELECT s.full_name FROM {GR} g JOIN {ST} s ON g.pi = s.staff_id WHERE g.grant_id = {lit(t['inst'])}"
    (name,) = one(sql_)
    add("Letter FL-2025-006 releases a second instalment. Who is the principal investigator of that grant?",
        "document_to_table", f"{name} (grant {t['inst']})", [name], sql_, doc=doc)

    doc = "letters/FL-2024-058.txt"
    doc_has(doc, t["sus"])
    sql_ = f"SELECT amount FROM {GR} WHERE grant_id = {lit(t['sus'])}"
    (amt,) = one(sql_)
    add("A funder suspended payments on one of our grants in letter FL-2024-058. How much was that grant "
        "originally awarded?", "document_to_table", f"EUR {plain(amt)} ({money0(amt)}; grant {t['sus']})",
        [plain(amt)], sql_, doc=doc)

    # ---- table_to_document ------------------------------------------------------------------
    doc = "committee/research-committee-annual-report-2024.html"
    hop = f"SELECT g.grant_id FROM {GR} g WHERE {AWARD_YEAR} = 2024 ORDER BY g.amount DESC LIMIT 1"
    (gid,) = one(hop)
    assert gid == t["top24"]
    doc_has(doc, gid)
    doc_has(doc, facts["prize"])
    add("Our largest grant awarded in 2024 was nominated for a prize. Which one?", "table_to_document",
        f"The {facts['prize']} (grant {gid})", [facts["prize"]], None, hop_sql=hop, doc=doc)

    doc = "reports/research-office-update-2025-Q1.md"
    hop = (f"SELECT grant_id FROM (SELECT grant_id, unnest(milestones) AS m FROM {GR}) WHERE m.status = 'late' "
           "GROUP BY grant_id ORDER BY count(*) DESC LIMIT 1")
    (gid,) = one(hop)
    assert gid == t["red"]
    late = Counter(g["grant_id"] for g in grants for m in g["milestones"] if m["status"] == "late")
    (_, k1), (_, k2) = late.most_common(2)
    assert k1 > k2
    doc_has(doc, gid)
    doc_has(doc, facts["recovery_due"])
    add("The grant with the most late milestones was asked for a recovery plan. By what date is it due?",
        "table_to_document", f"{facts['recovery_due']} (grant {gid})", [facts["recovery_due"]], None,
        hop_sql=hop, doc=doc)

    ext = by_grant[t["ext"]]
    pi_name, fname = by_staff[ext["pi"]]["full_name"], by_funder[ext["funder"]]["name"]
    doc = "letters/FL-2025-019.md"
    hop = (f"SELECT g.grant_id FROM {GR} g JOIN {ST} s ON g.pi = s.staff_id JOIN {FU} f ON g.funder = f.funder_id "
           f"WHERE s.full_name = {lit(pi_name)} AND f.name = {lit(fname)}")
    (gid,) = one(hop)
    assert gid == ext["grant_id"]
    doc_has(doc, gid)
    doc_has(doc, facts["ext_new_end"])
    add(f"{pi_name}'s grant from the {fname} was given a no-cost extension. What is the new end date?",
        "table_to_document", f"{facts['ext_new_end']} (grant {gid}; originally {long_date(ext['end_date'])})",
        [facts["ext_new_end"]], None, hop_sql=hop, doc=doc)

    # ---- unanswerable ---------------------------------------------------------------------
    (n,) = sql(f"SELECT count(*) FROM {EX} WHERE year(booked_on) = 2021")[0]
    assert n == 0
    (n,) = sql(f"SELECT count(*) FROM {GR} WHERE year(CAST(awarded_at AS TIMESTAMPTZ)) = 2021 "
               "OR year(start_date) = 2021")[0]
    assert n == 0
    add("How much did we spend on travel across all grants in 2021?", "unanswerable", "abstain", [],
        note="The expense records start in 2023; nothing covers 2021.")
    pi = by_staff[rng.choice(grants)["pi"]]
    add(f"What is the h-index of {pi['full_name']}?", "unanswerable", "abstain", [],
        note="No table or document holds citation metrics such as an h-index.")
    (n,) = sql(f"SELECT count(*) FROM {GR} WHERE grant_id = 'GR-2999'")[0]
    assert n == 0 and not any("GR-2999" in x for x in docs_text.values())
    add("Who is the principal investigator on grant GR-2999?", "unanswerable", "abstain", [],
        note="There is no grant GR-2999 in the register or in any document.")
    return qs


# --------------------------------------------------------------------------- #
# README
# --------------------------------------------------------------------------- #
def readme(t, docs, questions, structure) -> str:
    kinds = Counter(q["kind"] for q in questions)
    fk_lines = "\n".join(f"* `{s}.{c}` -> `{tt}.{tc}`" for s, c, tt, tc in FOREIGN_KEYS)
    doc_lines = "\n".join(f"* `documents/{d}`" for d in sorted(docs))
    return f"""{SEALED_LINE}

# Grants lake (sealed evaluation)

A self-consistent data lake of the Research Services Office of a fictitious university ({UNI}):
departments, staff, funders, grants, ethics approvals, expenses and publications, plus documents
(policies, an internal audit report, ethics committee minutes, an HTML research committee report,
funder letters, a quarterly office update and data-steward notes) that cite table rows by their ids.
Data run from January 2023 to the export date, {SNAP.isoformat()}; nothing covers 2021.

## Tables

| File | Format | Rows | Key |
|---|---|---:|---|
| `departments.csv` | CSV, comma | {len(t['departments'])} | `dept_code` (4 letters) |
| `staff.parquet` | Parquet | {len(t['staff'])} | `staff_id` (ST-nnn) |
| `funders.json` | JSON array, nested `contact{{name, email, phone}}` | {len(t['funders'])} | `funder_id` (FN-0xx) |
| `grants.jsonl` | JSON Lines, nested `milestones[{{name, due, status}}]`, `awarded_at` UTC timestamp | {len(t['grants'])} | `grant_id` (GR-2xxx) |
| `ethics_approvals.csv` | CSV, comma | {len(t['ethics'])} | `approval_id` (EA-0xxx) |
| `expenses.csv` | ERP export: `;`-delimited, decimal commas, dates dd.mm.yyyy | {len(t['expenses'])} | `expense_id` (EX-1xxxx) |
| `publications.csv` | CSV, comma | {len(t['publications'])} | `pub_id` (PB-5xxx) |

Foreign keys:

{fk_lines}

Grant amounts and expenses are in EUR. Expenses are dated within their grant's period. Milestone
statuses: done, late, waived, pending. Expense statuses: posted, pending, rejected.

## Documents ({len(docs)})

{doc_lines}

`structure.json` lists the keys, foreign keys, label columns, every deliberate document -> row citation
({len(structure['document_links'])} links, character offsets into the raw file text) and
{len(structure['distractors'])} id-like distractor tokens. `questions.json` holds {len(questions)} questions
({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) with DuckDB gold SQL over the raw files.
`exclude.yaml` keeps README.md, questions.json and structure.json out of ingestion.

## Regenerate

    python tests/data/make_grants_lake.py

(needs duckdb and pyarrow; deterministic, fixed seed; it rewrites this folder and re-checks every gold
answer).
"""


# --------------------------------------------------------------------------- #
# verification
# --------------------------------------------------------------------------- #
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


def holds(expected: str, text: str) -> bool:
    """`expected` occurs in `text`: as a number among its numbers (commas ignored), else as words."""
    try:
        number = float(expected.replace(",", ""))
    except ValueError:
        return expected.casefold() in text.casefold()
    decimals = len(expected.split(".")[1]) if "." in expected else 0
    for found in _NUMBER.findall(text):
        try:
            value = float(found.replace(",", ""))
        except ValueError:
            continue
        if round(value, decimals) == round(number, decimals):
            return True
    return False


def verify(sql) -> None:
    def rows(name, delim=","):
        with open(OUT / name, encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f, delimiter=delim))

    staff = pq.read_table(OUT / "staff.parquet").to_pylist()
    tables = {
        "departments": rows("departments.csv"),
        "staff": staff,
        "funders": json.loads((OUT / "funders.json").read_text(encoding="utf-8")),
        "grants": [json.loads(x) for x in (OUT / "grants.jsonl").read_text(encoding="utf-8").splitlines()],
        "ethics_approvals": rows("ethics_approvals.csv"),
        "expenses": rows("expenses.csv", ";"),
        "publications": rows("publications.csv"),
    }
    for name, rs in tables.items():
        assert 20 <= len(rs) <= 400, (name, len(rs))
    for name, key in KEYS.items():
        vals = [r[key] for r in tables[name]]
        assert len(set(vals)) == len(vals), name
    for s, c, tt, tc in FOREIGN_KEYS:
        targets = {r[tc] for r in tables[tt]}
        for r in tables[s]:
            v = r[c]
            if v in ("", None):
                assert (s, c) == ("expenses", "second_signatory"), (s, c)
                continue
            assert v in targets, (s, c, v)
    st = {p["staff_id"]: p for p in staff}
    gr = {g["grant_id"]: g for g in tables["grants"]}
    assert len({p["full_name"] for p in staff}) == len(staff)
    assert len({g["title"] for g in tables["grants"]}) == len(gr)
    assert len({g["amount"] for g in tables["grants"]}) == len(gr)
    for d in tables["departments"]:
        assert st[d["head"]]["dept"] == d["dept_code"]
    for g in tables["grants"]:
        assert st[g["pi"]]["role"] in ("professor", "associate professor", "senior lecturer", "research fellow")
        assert g["start_date"] < g["end_date"]
        assert "2023-01-01" <= g["awarded_at"][:10] < g["start_date"] <= "2025-06-30"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", g["awarded_at"])
        assert 2 <= int(g["awarded_at"][8:10]) <= 27
        for m in g["milestones"]:
            assert g["start_date"] <= m["due"]
            assert (m["status"] == "pending") == (m["due"] > SNAP.isoformat())
        assert (g["status"] == "closed") == (g["end_date"] < SNAP.isoformat())
    for e in tables["ethics_approvals"]:
        g = gr[e["grant_ref"]]
        assert e["reviewer"] != g["pi"] and st[e["reviewer"]]["dept"] != st[g["pi"]]["dept"]
        assert (e["decided_on"] == "") == (e["decision"] == "pending")
        assert "2023-01-01" <= e["submitted_on"] <= "2025-06-30"
        if e["decided_on"]:
            assert e["submitted_on"] < e["decided_on"] <= SNAP.isoformat()
    unsigned = 0
    for e in tables["expenses"]:
        g = gr[e["grant"]]
        day = dt.datetime.strptime(e["booked_on"], "%d.%m.%Y").date().isoformat()
        assert g["start_date"] <= day <= min(g["end_date"], SNAP.isoformat()), e
        assert re.fullmatch(r"\d+,\d\d", e["amount"]), e["amount"]
        amount = Decimal(e["amount"].replace(",", "."))
        if amount > SECOND_SIGNATURE_ABOVE:
            if e["second_signatory"] == "":
                unsigned += 1
            else:
                assert e["second_signatory"] != e["claimant"]
        else:
            assert e["second_signatory"] == ""
        assert st[e["claimant"]]["dept"] == st[g["pi"]]["dept"]
    assert unsigned == 2
    for p in tables["publications"]:
        g = gr[p["funded_by"]]
        assert g["start_date"] < p["published_on"] <= SNAP.isoformat()
        if p["apc_eur"]:
            assert p["open_access"] == "true" and Decimal(p["apc_eur"]) <= 3200
    # nothing dated in 2021, anywhere
    for f in OUT.iterdir():
        if f.suffix in (".csv", ".json", ".jsonl"):
            text = f.read_text(encoding="utf-8")
            assert not re.search(r"2021-\d\d-\d\d|\.\d\d\.2021\b", text), f
    assert sql(f"SELECT count(*) FROM {EX}")[0][0] == len(tables["expenses"])
    assert sql(f"SELECT count(*) FROM {EX} e JOIN {GR} g ON e.grant = g.grant_id")[0][0] == len(tables["expenses"])
    assert sql(f"SELECT typeof(amount), typeof(booked_on) FROM {EX} LIMIT 1")[0] == ("DOUBLE", "DATE")

    # documents: links and distractors at their offsets, every id-like token accounted for
    docs = {p.relative_to(OUT / "documents").as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((OUT / "documents").rglob("*")) if p.is_file()}
    assert 8 <= len(docs) <= 15 and any(d.endswith(".html") for d in docs)
    structure = json.loads((OUT / "structure.json").read_text(encoding="utf-8"))
    values = {(name, col): {str(r[col]) for r in rs} for name, rs in tables.items() for col in rs[0]}
    id_values = set().union(*(values[(t_, c_)] for t_, c_ in KEYS.items()))
    spans = defaultdict(list)
    for lk in structure["document_links"]:
        text = docs[lk["document"]]
        assert text[lk["start"]:lk["end"]] == lk["value"], lk
        assert lk["value"] in values[(lk["table"], lk["column"])], lk
        spans[lk["document"]].append((lk["start"], lk["end"]))
    for ds in structure["distractors"]:
        text = docs[ds["document"]]
        assert text[ds["start"]:ds["end"]] == ds["token"], ds
        assert ds["token"] not in id_values, ds
        spans[ds["document"]].append((ds["start"], ds["end"]))
    codes = "|".join(sorted(values[("departments", "dept_code")]))
    idlike = re.compile(rf"\b(?:GR-\d+|ST-\d+|EA-\d+|EX-\d+|PB-\d+|FN-\d+|{codes})\b")
    for rel, text in docs.items():
        assert not re.search(r"\b2021\b", text), rel
        for m in idlike.finditer(text):
            assert any(a <= m.start() and m.end() <= b for a, b in spans[rel]), (rel, m.group())
    # questions
    qs = json.loads((OUT / "questions.json").read_text(encoding="utf-8"))
    kinds = Counter(q["kind"] for q in qs)
    assert sum(v for k, v in kinds.items() if k != "unanswerable") >= 30 and kinds["unanswerable"] == 3, kinds
    assert all(v >= 2 for k, v in kinds.items() if k != "unanswerable"), kinds
    for q in qs:
        assert set(q) >= {"question", "kind", "answer", "expect", "gold_sql"}
        assert (q["expect"] == []) == (q["kind"] == "unanswerable")
        if q["kind"] in ("document_fact", "table_to_document"):
            assert q["gold_sql"] is None and q["gold_doc"]
        elif q["kind"] != "unanswerable":
            rs = sql(q["gold_sql"])
            assert len(rs) == 1 and all(v is not None for v in rs[0]), q["question"]
        if q.get("hop_sql"):
            rs = sql(q["hop_sql"])
            assert len(rs) == 1 and all(v is not None for v in rs[0]), q["question"]
        if q["kind"] in ("document_fact", "table_to_document"):
            text = docs[q["gold_doc"].removeprefix("documents/")]
            assert all(holds(e, text) for e in q["expect"]), q["question"]
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    assert size < 600_000, size


# --------------------------------------------------------------------------- #
def main() -> None:
    import duckdb  # only to compute and check the gold answers

    rng = random.Random(SEED)
    t = build(rng)
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "documents").mkdir(parents=True)
    write_tables(t)

    src, facts = documents(rng, t)
    links, distractors, texts = [], [], {}
    for rel in sorted(src):
        text, lk, ds = render(src[rel], rel)
        path = OUT / "documents" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        texts[rel] = text
        links += lk
        distractors += ds

    con = duckdb.connect()
    con.execute(f"SET file_search_path = '{OUT.as_posix()}'")
    con.execute("SET TimeZone = 'UTC'")

    def sql(q: str):
        return con.execute(q).fetchall()

    questions = make_questions(rng, t, facts, texts, sql)
    (OUT / "questions.json").write_text(json.dumps(questions, indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    structure = make_structure(links, distractors)
    (OUT / "structure.json").write_text(json.dumps(structure, indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    (OUT / "exclude.yaml").write_text("files:\n  - README.md\n  - questions.json\n  - structure.json\n"
                                      "fields: []\n", encoding="utf-8")
    (OUT / "README.md").write_text(readme(t, src, questions, structure), encoding="utf-8")
    verify(sql)
    con.close()
    kinds = Counter(q["kind"] for q in questions)
    print(f"wrote {OUT}: {len(t['departments'])} departments, {len(t['staff'])} staff, {len(t['funders'])} funders, "
          f"{len(t['grants'])} grants, {len(t['ethics'])} ethics approvals, {len(t['expenses'])} expenses, "
          f"{len(t['publications'])} publications, {len(src)} documents, {len(links)} links, "
          f"{len(distractors)} distractors, {len(questions)} questions: {dict(sorted(kinds.items()))}")


if __name__ == "__main__":
    main()
