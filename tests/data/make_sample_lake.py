"""Generate the sample enterprise lake shipped in ``lakeplanner/sample_lake/``.

Deterministic (fixed seed).  Run from anywhere:

    python tests/data/make_sample_lake.py

Writes customers.csv, invoices.json, line_items.jsonl, products.parquet,
documents/ (contracts, invoices, a collections memo), README.md and
questions.json.  Every value is mutually consistent: invoice totals equal the
sum of their line items, every foreign key resolves, every non-null document id
names a file that exists, due dates follow the customer's contractual terms.
"""

from __future__ import annotations

import csv
import datetime as dt
import html
import json
import random
import shutil
import unicodedata
from collections import Counter, defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SEED = 20240917
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "lakeplanner" / "sample_lake"
AS_OF = dt.date(2025, 10, 31)  # "today" for invoice statuses
PROVIDER = "Lumen Lakeworks Ltd."
CENT = Decimal("0.01")


def q2(x: Decimal) -> Decimal:
    return x.quantize(CENT, rounding=ROUND_HALF_UP)


def money(x: Decimal) -> str:
    return f"{x:,.2f}"


def d(s: str) -> dt.date:
    return dt.date.fromisoformat(s)


# --------------------------------------------------------------------------- #
# reference data
# --------------------------------------------------------------------------- #
CUSTOMERS = [
    ("Brightwater Logistics GmbH", "Enterprise", "Germany", "Hamburg"),
    ("Nordlicht Energie AG", "Enterprise", "Germany", "Munich"),
    ("Kessler & Vogt Maschinenbau", "SMB", "Germany", "Frankfurt"),
    ("Verkehrsverbund Berlin-Süd", "Public", "Germany", "Berlin"),
    ("Atelier Lumière SARL", "SMB", "France", "Lyon"),
    ("Groupe Vasseur Distribution", "Enterprise", "France", "Paris"),
    ("Syndicat des Eaux de Lyon-Est", "Public", "France", "Lyon"),
    ("Van der Berg Agritech B.V.", "SMB", "Netherlands", "Rotterdam"),
    ("Zuidkust Havenbedrijf", "Public", "Netherlands", "Rotterdam"),
    ("Oranjeboom Retail Group", "Enterprise", "Netherlands", "Amsterdam"),
    ("Ibérica Solar Renovables S.L.", "SMB", "Spain", "Madrid"),
    ("Grupo Castellano de Seguros", "Enterprise", "Spain", "Madrid"),
    ("Consorci Digital Barcelona-Nord", "Public", "Spain", "Barcelona"),
    ("Liffey Analytics Ltd", "SMB", "Ireland", "Dublin"),
    ("Emerald Health Partners", "Enterprise", "Ireland", "Dublin"),
    ("Thamesview Capital plc", "Enterprise", "United Kingdom", "London"),
    ("Pennine Textiles Ltd", "SMB", "United Kingdom", "Manchester"),
    ("Caledonia Water Trust", "Public", "United Kingdom", "Edinburgh"),
    ("Whitcombe & Hale Solicitors", "SMB", "United Kingdom", "London"),
    ("Northern Rail Skills Council", "Public", "United Kingdom", "Manchester"),
    ("Hudson Peak Software Inc.", "Enterprise", "United States", "New York"),
    ("Lakeshore Medical Supply Co.", "SMB", "United States", "Chicago"),
    ("Lone Star Fabrication LLC", "SMB", "United States", "Austin"),
    ("Cascadia Timberworks Inc.", "Enterprise", "United States", "Seattle"),
    ("Bluebonnet County Library District", "Public", "United States", "Austin"),
    ("Evergreen Sound Transit Authority", "Public", "United States", "Seattle"),
    ("Meridian Biolabs Inc.", "Enterprise", "United States", "New York"),
    ("Prairie Grain Cooperative", "SMB", "United States", "Chicago"),
    ("Maple Ridge Outfitters Ltd.", "SMB", "Canada", "Toronto"),
    ("Ontario Northern Utilities Corp.", "Enterprise", "Canada", "Toronto"),
    ("Alpenblick Hotels GmbH", "SMB", "Germany", "Munich"),
    ("Rheinufer Chemie GmbH", "Enterprise", "Germany", "Frankfurt"),
    ("Stadtwerke Havelland Digital", "Public", "Germany", "Berlin"),
    ("Maison Duret Cosmétiques", "SMB", "France", "Paris"),
    ("Amstel Precision Optics B.V.", "SMB", "Netherlands", "Amsterdam"),
    ("Costa Brava Hospitality S.A.", "Enterprise", "Spain", "Barcelona"),
    ("Kilkenny Craft Brewers Ltd", "SMB", "Ireland", "Dublin"),
    ("Harbourside Fintech Ltd", "Enterprise", "United Kingdom", "London"),
    ("Empire Line Robotics Inc.", "SMB", "United States", "New York"),
    ("Windy City Events LLC", "SMB", "United States", "Chicago"),
]
NO_CONTRACT = {"C017", "C029", "C040"}  # customers without a master agreement

COUNTRY = {
    "Germany": ("EUR", "de"),
    "France": ("EUR", "fr"),
    "Netherlands": ("EUR", "nl"),
    "Spain": ("EUR", "es"),
    "Ireland": ("EUR", "ie"),
    "United Kingdom": ("GBP", "co.uk"),
    "United States": ("USD", "com"),
    "Canada": ("USD", "ca"),
}
FX = {"EUR": Decimal("1.00"), "USD": Decimal("1.08"), "GBP": Decimal("0.86")}

PEOPLE = {
    "Germany": (["Anna", "Jonas", "Katrin", "Lukas", "Miriam", "Stefan", "Ulrike", "Tobias"],
                ["Schmidt", "Becker", "Hoffmann", "Krüger", "Wagner", "Lehmann", "Brandt", "Vogel"]),
    "France": (["Camille", "Julien", "Élodie", "Mathieu", "Claire", "Antoine"],
               ["Moreau", "Lefèvre", "Girard", "Dubois", "Roux", "Fontaine"]),
    "Netherlands": (["Sanne", "Daan", "Femke", "Joris", "Lotte", "Bram"],
                    ["de Vries", "Jansen", "Bakker", "Visser", "Smit", "Mulder"]),
    "Spain": (["Lucía", "Javier", "Marta", "Pablo", "Carmen", "Diego"],
              ["García", "Fernández", "López", "Martín", "Navarro", "Ruiz"]),
    "Ireland": (["Aoife", "Ciarán", "Niamh", "Declan", "Siobhán", "Eoin"],
                ["Murphy", "O'Brien", "Kelly", "Byrne", "Walsh", "Doyle"]),
    "United Kingdom": (["Oliver", "Amelia", "Harry", "Charlotte", "George", "Priya"],
                       ["Thompson", "Clarke", "Hughes", "Patel", "Wright", "Evans"]),
    "United States": (["Emily", "Marcus", "Rachel", "Daniel", "Sofia", "Kevin", "Hannah", "Tyrone"],
                      ["Johnson", "Reyes", "Carter", "Nguyen", "Brooks", "Kim", "Sullivan", "Foster"]),
    "Canada": (["Olivia", "Liam", "Chloé", "Ethan"],
               ["Tremblay", "MacDonald", "Singh", "Roy"]),
}

# sku, name, category, list price (EUR)
PRODUCTS = [
    ("SW-100", "Lakehouse Platform Standard Seat (annual)", "Software", "1200.00"),
    ("SW-110", "Lakehouse Platform Premium Seat (annual)", "Software", "2100.00"),
    ("SW-120", "Data Catalog Add-on (annual, per seat)", "Software", "649.90"),
    ("SW-130", "Vector Search Add-on (annual, per seat)", "Software", "900.00"),
    ("SW-140", "Governance & Lineage Module (annual)", "Software", "1500.00"),
    ("SW-150", "Connector Pack, 50 sources (annual)", "Software", "4800.00"),
    ("HW-200", "Edge Ingestion Appliance E1", "Hardware", "3950.00"),
    ("HW-210", "Edge Ingestion Appliance E2 Pro", "Hardware", "7400.00"),
    ("HW-220", "Rack Storage Node 48 TB", "Hardware", "11800.00"),
    ("HW-230", "10GbE Network Switch, 24 port", "Hardware", "1347.60"),
    ("HW-240", "Replacement NVMe SSD 3.84 TB", "Hardware", "419.95"),
    ("PS-300", "Implementation Day, Senior Consultant", "Professional Services", "1450.00"),
    ("PS-310", "Implementation Day, Consultant", "Professional Services", "980.00"),
    ("PS-320", "Data Migration Package (up to 5 TB)", "Professional Services", "8500.00"),
    ("PS-330", "Schema & Key Discovery Workshop", "Professional Services", "3200.00"),
    ("PS-340", "Custom Connector Development", "Professional Services", "5600.00"),
    ("SUP-400", "Standard Support (monthly)", "Support", "349.99"),
    ("SUP-410", "Premium Support 24/7 (monthly)", "Support", "990.00"),
    ("SUP-420", "Extended Hardware Warranty (1 year)", "Support", "610.00"),
    ("SUP-430", "Technical Account Manager (monthly)", "Support", "2400.00"),
    ("TR-500", "Analyst Bootcamp (per attendee)", "Training", "785.00"),
    ("TR-510", "Administrator Certification (per attendee)", "Training", "1150.00"),
    ("TR-520", "On-site Training Day", "Training", "2600.00"),
    ("TR-530", "E-learning Library (annual, per user)", "Training", "189.50"),
    ("TR-540", "Executive Briefing Session", "Training", "1800.00"),
]
QTY_RANGE = {
    "Software": (1, 40),
    "Hardware": (1, 4),
    "Professional Services": (1, 15),
    "Support": (1, 12),
    "Training": (1, 12),
}
# products that are bought as one-off packages: quantity 1-2
PACKAGE_SKUS = {"SW-140", "SW-150", "PS-320", "PS-330", "TR-520", "TR-540", "HW-220"}

# payment-term families: (label, net days, discount pct, discount days)
TERMS = [
    ("Net 30", 30, None, None),
    ("Net 45", 45, None, None),
    ("Net 60", 60, None, None),
    ("2/10 Net 30", 30, Decimal("2"), 10),
    ("1/15 Net 45", 45, Decimal("1"), 15),
]
DEFAULT_TERMS = ("Net 30", 30, None, None)


def ascii_slug(s: str) -> str:
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()
    return "".join(ch for ch in s.lower() if ch.isalnum())


def domain_for(name: str, tld: str) -> str:
    stop = {"gmbh", "ag", "sarl", "bv", "sl", "sa", "ltd", "plc", "inc", "llc", "co", "corp",
            "&", "de", "der", "des", "van", "group", "groupe", "grupo"}
    words = [ascii_slug(w) for w in name.replace("-", " ").split()]
    words = [w for w in words if w and w not in stop]
    return "-".join(words[:2]) + "." + tld


# --------------------------------------------------------------------------- #
# generation
# --------------------------------------------------------------------------- #
def build(rng: random.Random):
    # ---- products --------------------------------------------------------
    products = {sku: {"sku": sku, "product_name": n, "category": c, "list_price": Decimal(p)}
                for sku, n, c, p in PRODUCTS}

    # ---- customers -------------------------------------------------------
    customers = []
    offsets = rng.sample(range(173), len(CUSTOMERS))  # distinct signup dates
    for i, (name, seg, country, city) in enumerate(CUSTOMERS, start=1):
        cid = f"C{i:03d}"
        currency, tld = COUNTRY[country]
        signup = dt.date(2024, 1, 8) + dt.timedelta(days=offsets[i - 1])
        firsts, lasts = PEOPLE[country]
        contacts = []
        for _ in range(1 if rng.random() < 0.6 else 2):
            while True:
                person = f"{rng.choice(firsts)} {rng.choice(lasts)}"
                if person not in [c[0] for c in contacts]:
                    break
            local = ".".join(ascii_slug(p) for p in person.split(" ", 1))
            contacts.append((person, f"{local}@{domain_for(name, tld)}"))
        has_contract = cid not in NO_CONTRACT
        terms = rng.choice(TERMS) if has_contract else DEFAULT_TERMS
        customers.append({
            "customer_id": cid,
            "name": name,
            "segment": seg,
            "country": country,
            "city": city,
            "signup_date": signup,
            "contract_document_id": f"CTR-{cid}" if has_contract else "",
            # private attributes (drive documents, not written to CSV)
            "_currency": currency,
            "_contacts": contacts,
            "_terms": terms,
            "_late_fee": rng.choice([Decimal("1.0"), Decimal("1.5"), Decimal("2.0"), Decimal("0.75")]),
            "_discount": rng.choice([Decimal("0"), Decimal("5"), Decimal("10"), Decimal("12.5")]),
            "_term_months": rng.choice([12, 24, 36]),
            "_auto_renew": rng.random() < 0.6,
            "_notice_days": rng.choice([30, 60, 90]),
            "_uptime": rng.choice(["99.5", "99.9", "99.95"]),
            "_p1_hours": rng.choice([1, 2, 4]),
            "_credit_pct": rng.choice([5, 10, 15]),
        })
    by_cid = {c["customer_id"]: c for c in customers}
    assert len({c["name"] for c in customers}) == len(customers)
    earliest = min(customers, key=lambda c: c["signup_date"])
    assert earliest["contract_document_id"], "earliest customer must have a contract"
    assert sum(c["signup_date"] == earliest["signup_date"] for c in customers) == 1

    # ---- invoices --------------------------------------------------------
    weights = {"Enterprise": 3.0, "SMB": 1.0, "Public": 1.6}
    counts = Counter({c["customer_id"]: 2 for c in customers})
    pool = [c["customer_id"] for c in customers]
    w = [weights[c["segment"]] for c in customers]
    for cid in rng.choices(pool, weights=w, k=150 - 2 * len(customers)):
        counts[cid] += 1
    raw = []
    for cid, n in counts.items():
        c = by_cid[cid]
        start = c["signup_date"] + dt.timedelta(days=7)
        span = (dt.date(2025, 10, 20) - start).days
        for _ in range(n):
            raw.append((start + dt.timedelta(days=rng.randint(0, span)), cid))
    raw.sort()
    invoices = []
    for k, (issue, cid) in enumerate(raw):
        c = by_cid[cid]
        contact, email = rng.choice(c["_contacts"])
        due = issue + dt.timedelta(days=c["_terms"][1])
        if due > AS_OF:
            status = "open"
        else:
            status = "overdue" if rng.random() < 0.15 else "paid"
        invoices.append({
            "invoice_id": f"INV-{1001 + k}",
            "customer_id": cid,
            "issue_date": issue,
            "due_date": due,
            "status": status,
            "currency": c["_currency"],
            "total_amount": None,
            "document_id": None,
            "billing": {"contact": contact, "email": email},
        })
    by_inv = {i["invoice_id"]: i for i in invoices}

    # ---- line items ------------------------------------------------------
    skus = list(products)
    lines = []
    lines_by_inv = defaultdict(list)
    for inv in invoices:
        c = by_cid[inv["customer_id"]]
        n = rng.choices([1, 2, 3, 4, 5, 6], weights=[16, 22, 24, 18, 12, 8])[0]
        chosen = rng.sample(skus, n)
        for sku in chosen:
            p = products[sku]
            lo, hi = QTY_RANGE[p["category"]]
            qty = rng.randint(1, 2) if sku in PACKAGE_SKUS else rng.randint(lo, hi)
            unit = q2(p["list_price"] * FX[inv["currency"]] * (1 - c["_discount"] / 100))
            li = {"line_id": f"L{len(lines) + 1:05d}", "invoice_id": inv["invoice_id"],
                  "sku": sku, "quantity": qty, "unit_price": unit}
            lines.append(li)
            lines_by_inv[inv["invoice_id"]].append(li)
        inv["total_amount"] = q2(sum(li["quantity"] * li["unit_price"] for li in lines_by_inv[inv["invoice_id"]]))

    return products, customers, by_cid, invoices, by_inv, lines, lines_by_inv


# --------------------------------------------------------------------------- #
# contract documents
# --------------------------------------------------------------------------- #
def terms_sentences(c, rng) -> list[str]:
    label, net, disc, disc_days = c["_terms"]
    cur = c["_currency"]
    fee = c["_late_fee"]
    out = []
    out.append(rng.choice([
        f"Invoices are payable on **{label}** terms, i.e. within {net} days of the invoice date.",
        f"The Customer shall pay each undisputed invoice within {net} calendar days of its date "
        f"(**{label}**).",
        f"Payment terms are **{label}**: the full amount falls due {net} days after the date of invoice.",
    ]))
    if disc is not None:
        out.append(rng.choice([
            f"An early-payment discount of {disc}% may be deducted where payment is received within "
            f"{disc_days} days of the invoice date.",
            f"If the Customer settles an invoice within {disc_days} days, it is entitled to a prompt-payment "
            f"discount of {disc}% of the invoiced amount.",
        ]))
    else:
        out.append(rng.choice([
            "No early-payment discount applies.",
            "Prompt-payment discounts are not offered under this Agreement.",
            "The parties have agreed that no discount is available for early settlement.",
        ]))
    out.append(rng.choice([
        f"All amounts are invoiced and payable in {cur}.",
        f"The contract currency is {cur}; bank charges are borne by the paying party.",
        f"Invoices are issued in {cur} and must be paid by bank transfer in the same currency.",
    ]))
    out.append(rng.choice([
        f"Overdue amounts accrue a late fee of {fee}% per month, calculated on the outstanding balance.",
        f"Late payment interest of {fee}% per month (or part month) is charged on any sum not paid by "
        "its due date.",
        f"If payment is late, {PROVIDER} may charge {fee}% per month on the overdue amount and, after "
        "a written reminder, suspend non-critical services.",
    ]))
    out.append(rng.choice([
        "Disputed items must be notified in writing within 14 days of receipt of the invoice; the "
        "undisputed portion remains payable on time.",
        "The Customer shall raise any billing dispute within fifteen business days, stating the "
        "reasons in reasonable detail.",
        "",
    ]))
    return [s for s in out if s]


def contract_md(c, rng) -> str:
    name, cid = c["name"], c["customer_id"]
    eff = c["signup_date"].isoformat()
    renew = ("automatically renews for successive twelve-month periods"
             if c["_auto_renew"] else "expires at the end of the initial term unless renewed in writing")
    parties = rng.choice([
        f"This Master Services Agreement (the \"Agreement\") is entered into by {PROVIDER}, a company "
        f"registered in England and Wales (the \"Provider\"), and {name}, with its principal place of "
        f"business in {c['city']}, {c['country']} (the \"Customer\", account {cid}).",
        f"{PROVIDER} (\"Provider\") and {name} of {c['city']} (\"Customer\"; customer number {cid}) "
        "agree to the terms set out below.",
        f"The parties to this Agreement are {name} ({c['city']}, {c['country']}), referred to as the "
        f"Customer, and {PROVIDER}, referred to as the Provider. The Customer's account reference is {cid}.",
    ])
    extra_party = rng.choice([
        "Each party warrants that the person signing has authority to bind it.",
        "Affiliates of the Customer may order services under this Agreement by signing an order form.",
        "",
    ])
    term = rng.choice([
        f"The Agreement starts on {eff} and has an initial term of {c['_term_months']} months. "
        f"Thereafter it {renew}.",
        f"Initial term: {c['_term_months']} months from the effective date ({eff}). The Agreement "
        f"{renew}.",
    ])
    notice = rng.choice([
        f"Either party may terminate for convenience by giving {c['_notice_days']} days' written notice.",
        f"A notice period of {c['_notice_days']} days applies to termination for convenience by either party.",
        f"Termination for convenience requires at least {c['_notice_days']} days' prior written notice.",
    ])
    breach = rng.choice([
        "Either party may terminate immediately if the other commits a material breach that is not "
        "remedied within 30 days of notice.",
        "Material breach not cured within thirty days entitles the other party to terminate with "
        "immediate effect.",
    ])
    sla = rng.choice([
        f"The Provider guarantees monthly platform availability of {c['_uptime']}%, excluding announced "
        "maintenance windows.",
        f"Availability target: {c['_uptime']}% per calendar month, measured at the Provider's edge.",
        f"The hosted lake services will be available at least {c['_uptime']}% of each month.",
    ])
    resp = rng.choice([
        f"Priority 1 incidents receive a first response within {c['_p1_hours']} hour"
        f"{'s' if c['_p1_hours'] > 1 else ''}, around the clock.",
        f"Critical (P1) tickets are acknowledged within {c['_p1_hours']} "
        f"hour{'s' if c['_p1_hours'] > 1 else ''}; P2 tickets within one business day.",
    ])
    credit = rng.choice([
        f"For each full 0.1% below the target, the Customer receives a service credit of "
        f"{c['_credit_pct']}% of the monthly fee, capped at 50%.",
        f"Missed availability targets entitle the Customer to service credits of {c['_credit_pct']}% of "
        "that month's fees per 0.1% shortfall. Service credits are the sole remedy for unavailability.",
    ])
    body = [
        f"# Master Services Agreement — {name}",
        f"Document ID: CTR-{cid} · Customer ID: {cid} · Effective date: {eff}",
        "",
        "## Parties",
        "",
        " ".join(s for s in (parties, extra_party) if s),
        "",
        "## Payment terms",
        "",
        " ".join(terms_sentences(c, rng)),
        "",
        "## Term and termination",
        "",
        f"{term} {notice} {breach}",
        "",
        "## Service levels",
        "",
        f"{sla} {resp} {credit}",
        "",
    ]
    return "\n".join(body)


def terms_summary(c) -> str:
    label, net, disc, disc_days = c["_terms"]
    if not c["contract_document_id"]:
        return ("Net 30 (standard terms; no master services agreement on file). "
                "Please pay by bank transfer quoting the invoice number.")
    s = f"{label} as agreed in Master Services Agreement {c['contract_document_id']}"
    if disc is not None:
        s += f"; {disc}% discount if paid within {disc_days} days"
    s += f". Late payments accrue {c['_late_fee']}% per month."
    return s


# --------------------------------------------------------------------------- #
# invoice documents and memo
# --------------------------------------------------------------------------- #
def pick_doc_invoices(rng, customers, by_cid, invoices, lines_by_inv, products, memo_ids):
    """Choose ~30 invoices with documents and the note each carries."""
    notes: dict[str, str] = {}
    facts: dict[str, dict] = {}
    avail = [i for i in invoices if i["invoice_id"] not in memo_ids]
    memo_cids = {i["customer_id"] for i in invoices if i["invoice_id"] in memo_ids}

    def take(pred):
        cands = [i for i in avail if pred(i) and i["invoice_id"] not in notes]
        assert cands, "no candidate"
        return rng.choice(cands)

    def has_cat(inv, cat):
        return [li for li in lines_by_inv[inv["invoice_id"]] if products[li["sku"]]["category"] == cat]

    # 1. disputed: late delivery (hardware)
    inv = take(lambda i: i["status"] == "overdue" and has_cat(i, "Hardware")
               and by_cid[i["customer_id"]]["contract_document_id"] and i["customer_id"] not in memo_cids)
    li = has_cat(inv, "Hardware")[0]
    promised = inv["issue_date"] - dt.timedelta(days=5)
    delivered = promised + dt.timedelta(days=23)
    notes[inv["invoice_id"]] = (
        f"Disputed on {(inv['issue_date'] + dt.timedelta(days=19)).isoformat()}: the customer reports that "
        f"the {products[li['sku']]['product_name']} ({li['sku']}) arrived on {delivered.isoformat()}, "
        f"23 days after the agreed delivery date of {promised.isoformat()}, which pushed back their "
        "go-live. Payment of the whole invoice is being withheld until the late delivery is resolved; "
        "the account manager has proposed a 10% goodwill credit.")
    facts["late_delivery"] = inv["invoice_id"]
    by_inv_late = inv

    # 2. disputed: quantity discrepancy
    earliest = min(customers, key=lambda c: c["signup_date"])["customer_id"]
    inv = take(lambda i: i["status"] == "overdue" and any(li["quantity"] >= 4 for li in lines_by_inv[i["invoice_id"]])
               and by_cid[i["customer_id"]]["contract_document_id"] and i["customer_id"] != earliest
               and i["customer_id"] != by_inv_late["customer_id"] and i["customer_id"] not in memo_cids)
    li = max(lines_by_inv[inv["invoice_id"]], key=lambda x: x["quantity"])
    got = li["quantity"] - 2
    disputed = q2(2 * li["unit_price"])
    notes[inv["invoice_id"]] = (
        f"Quantity discrepancy: {li['quantity']} × {products[li['sku']]['product_name']} ({li['sku']}) were "
        f"billed, but the customer's goods-receipt record shows only {got} received. The customer disputes "
        f"{money(disputed)} {inv['currency']} and has asked for a corrected invoice; the remaining "
        "lines are not contested.")
    facts["quantity"] = inv["invoice_id"]
    facts["quantity_disputed"] = disputed

    # 3. partial payment
    inv = take(lambda i: i["status"] in ("open", "overdue") and i["total_amount"] > 2000)
    part = q2(inv["total_amount"] * Decimal("0.4"))
    paid_on = inv["issue_date"] + dt.timedelta(days=12)
    notes[inv["invoice_id"]] = (
        f"Partial payment of {money(part)} {inv['currency']} (40%) received on {paid_on.isoformat()}, "
        f"bank reference PMT-{inv['invoice_id'][4:]}-A. The balance of "
        f"{money(inv['total_amount'] - part)} {inv['currency']} remains outstanding; the customer cited "
        "budget approval for the remaining amount in the next quarter.")
    facts["partial"] = inv["invoice_id"]

    # 4. early-payment discount taken
    inv = take(lambda i: i["status"] == "paid" and by_cid[i["customer_id"]]["_terms"][2] is not None)
    c = by_cid[inv["customer_id"]]
    disc, dd = c["_terms"][2], c["_terms"][3]
    paid_amt = q2(inv["total_amount"] * (1 - disc / 100))
    notes[inv["invoice_id"]] = (
        f"Paid on {(inv['issue_date'] + dt.timedelta(days=dd - 2)).isoformat()}, within the {dd}-day "
        f"discount window; the {disc}% early-payment discount was applied and {money(paid_amt)} "
        f"{inv['currency']} was received in full settlement.")
    facts["early_discount"] = inv["invoice_id"]

    # 5. credit note for damaged hardware
    inv = take(lambda i: i["status"] == "paid" and has_cat(i, "Hardware"))
    li = has_cat(inv, "Hardware")[0]
    notes[inv["invoice_id"]] = (
        f"One {products[li['sku']]['product_name']} was damaged in transit and returned. Credit note "
        f"CN-{inv['issue_date'].year}-{inv['invoice_id'][-3:]} for {money(li['unit_price'])} "
        f"{inv['currency']} was issued and offset against the customer's next invoice; this invoice "
        "itself was paid in full.")
    facts["credit_note"] = inv["invoice_id"]

    # 6. missing purchase order
    inv = take(lambda i: i["status"] == "open")
    notes[inv["invoice_id"]] = (
        "Customer procurement requires a purchase order number on every invoice. The PO is still awaiting "
        "internal approval at the customer; this invoice will be re-sent with the PO reference once it "
        "is issued. Delivery itself was completed without issues.")
    facts["po_missing"] = inv["invoice_id"]

    # 7. delivered to alternate site
    inv = take(lambda i: i["status"] == "paid" and has_cat(i, "Hardware"))
    notes[inv["invoice_id"]] = (
        "At the customer's request the hardware was delivered to their secondary data centre rather "
        "than the head office; the delivery was signed for by the site facilities manager. Paid in full.")
    facts["alt_site"] = inv["invoice_id"]

    # 8. reissued with corrected billing contact
    inv = take(lambda i: i["status"] == "paid")
    notes[inv["invoice_id"]] = (
        f"Reissued on {(inv['issue_date'] + dt.timedelta(days=3)).isoformat()} to correct the billing "
        f"contact to {inv['billing']['contact']}; the amount is unchanged. Paid in full.")
    facts["reissued"] = inv["invoice_id"]

    # generic notes for the rest
    rest = rng.sample([i for i in avail if i["invoice_id"] not in notes], 30 - len(notes))
    for inv in rest:
        iid = inv["invoice_id"]
        cats = {products[li["sku"]]["category"] for li in lines_by_inv[iid]}
        if inv["status"] == "paid":
            paid = inv["issue_date"] + dt.timedelta(days=rng.randint(5, (inv["due_date"] - inv["issue_date"]).days))
            what = rng.choice([
                "Services were delivered as scheduled.",
                "All items were delivered complete and on time.",
                "Training sessions took place as planned." if "Training" in cats else
                "The engagement was completed as planned.",
            ])
            notes[iid] = f"{what} Paid in full on {paid.isoformat()}."
        elif inv["status"] == "open":
            notes[iid] = rng.choice([
                "Not yet due. All items were delivered as ordered.",
                "Invoice sent by e-mail to the billing contact; no queries received so far.",
                "Consultancy days are billed as worked according to the approved timesheets. Not yet due.",
            ])
        else:
            r1 = inv["due_date"] + dt.timedelta(days=7)
            r2 = inv["due_date"] + dt.timedelta(days=28)
            notes[iid] = (f"Payment reminders were sent on {r1.isoformat()} and {r2.isoformat()}. "
                          "The customer has not raised any dispute but no payment has been received.")
    return notes, facts


def invoice_rows(inv, lines_by_inv, products):
    for li in lines_by_inv[inv["invoice_id"]]:
        amt = q2(li["quantity"] * li["unit_price"])
        yield li["sku"], products[li["sku"]]["product_name"], li["quantity"], li["unit_price"], amt


def invoice_md(inv, c, note, lines_by_inv, products) -> str:
    iid = inv["invoice_id"]
    out = [
        f"# Invoice {iid}",
        f"Document ID: {inv['document_id']}",
        "",
        f"- **Customer:** {c['name']} ({c['customer_id']})",
        f"- **Billing contact:** {inv['billing']['contact']} <{inv['billing']['email']}>",
        f"- **Issue date:** {inv['issue_date'].isoformat()}",
        f"- **Due date:** {inv['due_date'].isoformat()}",
        f"- **Amount:** {money(inv['total_amount'])} {inv['currency']}",
        "",
        "## Line items",
        "",
        "| SKU | Description | Qty | Unit price | Amount |",
        "|---|---|---:|---:|---:|",
    ]
    for sku, name, q, up, amt in invoice_rows(inv, lines_by_inv, products):
        out.append(f"| {sku} | {name} | {q} | {money(up)} | {money(amt)} |")
    out.append(f"| | **Total** | | | **{money(inv['total_amount'])} {inv['currency']}** |")
    out += ["", "## Notes", "", note, "", "## Payment terms", "", terms_summary(c), ""]
    return "\n".join(out)


def invoice_html(inv, c, note, lines_by_inv, products) -> str:
    def e(s: str) -> str:
        return html.escape(s, quote=False)

    iid = inv["invoice_id"]
    rows = "\n".join(
        f"      <tr><td>{sku}</td><td>{e(name)}</td><td>{q}</td><td>{money(up)}</td><td>{money(amt)}</td></tr>"
        for sku, name, q, up, amt in invoice_rows(inv, lines_by_inv, products))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Invoice {iid}</title>
</head>
<body>
  <h1>Invoice {iid}</h1>
  <p>Document ID: {inv['document_id']}</p>
  <p>Customer: {e(c['name'])} ({c['customer_id']})<br>
     Billing contact: {e(inv['billing']['contact'])} &lt;{e(inv['billing']['email'])}&gt;<br>
     Issue date: {inv['issue_date'].isoformat()}<br>
     Due date: {inv['due_date'].isoformat()}<br>
     Amount: {money(inv['total_amount'])} {inv['currency']}</p>
  <h2>Line items</h2>
  <table>
    <thead><tr><th>SKU</th><th>Description</th><th>Qty</th><th>Unit price</th><th>Amount</th></tr></thead>
    <tbody>
{rows}
    </tbody>
  </table>
  <h2>Notes</h2>
  <p>{e(note)}</p>
  <h2>Payment terms</h2>
  <p>{e(terms_summary(c))}</p>
</body>
</html>
"""


def choose_memo(rng, invoices, by_cid):
    """Pick invoices for the Q3 2024 collections memo and fix their statuses."""
    q3_start, q3_end = dt.date(2024, 7, 1), dt.date(2024, 9, 20)
    cands = [i for i in invoices if q3_start <= i["due_date"] <= q3_end]
    picked, seen = [], set()
    for inv in rng.sample(cands, len(cands)):
        if inv["customer_id"] not in seen:
            picked.append(inv)
            seen.add(inv["customer_id"])
        if len(picked) == 5:
            break
    assert len(picked) == 5
    roles = ["agency", "plan", "outstanding", "resolved", "resolved"]
    memo = dict(zip(roles[:3], picked[:3], strict=True))
    memo["resolved"] = picked[3:]
    memo["agency"]["status"] = "overdue"
    memo["outstanding"]["status"] = "paid"  # queued for payment in Oct 2024, paid since
    memo["plan"]["status"] = "paid"
    for inv in memo["resolved"]:
        inv["status"] = "paid"
    return memo


def memo_txt(memo, by_cid) -> str:
    def nm(inv):
        return by_cid[inv["customer_id"]]["name"]

    def amt(inv):
        return f"{money(inv['total_amount'])} {inv['currency']}"

    a, p, o = memo["agency"], memo["plan"], memo["outstanding"]
    r1, r2 = memo["resolved"]
    plan_inst = q2(p["total_amount"] / 3)
    return f"""INTERNAL MEMO - ACCOUNTS RECEIVABLE
Subject: Collections review, Q3 2024
From: Finance Operations (credit control)
To: Regional account managers; CFO office
Date: 2024-10-04

Summary
-------
As of 30 September 2024 five invoices with due dates in the quarter were
past due and were reviewed at the monthly credit meeting. Two were settled
during the quarter after reminders; three remain open for follow-up.

Settled during the quarter
--------------------------
* {r1['invoice_id']} - {nm(r1)}, {amt(r1)}, due {r1['due_date'].isoformat()}. Paid after the second
  reminder; the delay was caused by a change of bank details on the customer side.
* {r2['invoice_id']} - {nm(r2)}, {amt(r2)}, due {r2['due_date'].isoformat()}. Paid in full once the
  billing contact ({r2['billing']['contact']}) returned from leave.

Still open
----------
* {p['invoice_id']} - {nm(p)}, {amt(p)}, due {p['due_date'].isoformat()}.
  The customer cited cash-flow pressure and agreed a payment plan: three
  monthly instalments of {money(plan_inst)} {p['currency']} (rounded), the first on 2024-10-15.
  Late fees are waived for as long as the plan is honoured.
* {a['invoice_id']} - {nm(a)}, {amt(a)}, due {a['due_date'].isoformat()}.
  No response to three reminders or to a call with the finance director.
  Recommendation: refer to the external collections agency (Halbrook Credit
  Services) if nothing is received by 2024-10-31, and put further orders on
  credit hold.
* {o['invoice_id']} - {nm(o)}, {amt(o)}, due {o['due_date'].isoformat()}.
  Customer confirmed the invoice is approved and queued for their next
  payment run; no escalation for now.

Actions
-------
1. Credit control to confirm receipt of the first instalment from
   {nm(p)} on 2024-10-15.
2. Account manager for {nm(a)} to give final notice before agency referral.
3. Review again at the November credit meeting.
"""


# --------------------------------------------------------------------------- #
# questions
# --------------------------------------------------------------------------- #
def make_questions(rng, products, customers, by_cid, invoices, by_inv, lines, facts, memo, doc_ids):
    qs = []
    n_ent = sum(c["segment"] == "Enterprise" for c in customers)
    qs.append(("How many customers are in the Enterprise segment?", "sql", str(n_ent)))

    inv = by_inv["INV-1042"]
    qs.append((f"What is the billing contact's e-mail address on invoice {inv['invoice_id']}?", "sql",
               f"{inv['billing']['email']} ({inv['billing']['contact']})"))

    eur_out = q2(sum(i["total_amount"] for i in invoices
                     if i["currency"] == "EUR" and i["status"] in ("open", "overdue")))
    n_eur_out = sum(1 for i in invoices if i["currency"] == "EUR" and i["status"] in ("open", "overdue"))
    qs.append(("What is the total amount of EUR invoices that are not yet paid (status open or overdue)?",
               "aggregate", f"{money(eur_out)} EUR across {n_eur_out} invoices"))

    qty = Counter()
    for li in lines:
        qty[li["sku"]] += li["quantity"]
    (top, topq), (_, secq) = qty.most_common(2)
    assert topq > secq
    qs.append(("Which product was sold in the largest total quantity across all invoice line items, "
               "and how many units?", "aggregate",
               f"{products[top]['product_name']} ({top}), {topq} units"))

    # sql -> document: payment terms of an invoice's customer (invoice without its own document)
    used = {by_inv[facts["late_delivery"]]["customer_id"], by_inv[facts["quantity"]]["customer_id"],
            memo["plan"]["customer_id"], min(customers, key=lambda c: c["signup_date"])["customer_id"]}
    cands = [i for i in invoices if i["document_id"] is None and i["customer_id"] not in used
             and by_cid[i["customer_id"]]["contract_document_id"]
             and by_cid[i["customer_id"]]["_terms"][2] is not None]
    inv = cands[len(cands) // 2]
    c = by_cid[inv["customer_id"]]
    label, net, disc, dd = c["_terms"]
    qs.append((f"What payment terms apply to invoice {inv['invoice_id']} under the customer's master "
               "services agreement, including any early-payment discount and late fee?", "sql->document",
               f"{label} ({c['name']}, contract {c['contract_document_id']}): due within {net} days, "
               f"{disc}% discount if paid within {dd} days, late fee {c['_late_fee']}% per month"))

    e = min(customers, key=lambda c: c["signup_date"])
    qs.append(("What monthly availability (uptime) does the contract of the customer that signed up "
               "earliest guarantee?", "sql->document",
               f"{e['_uptime']}% ({e['name']}, signed up {e['signup_date'].isoformat()}, "
               f"contract {e['contract_document_id']})"))

    inv = by_inv[facts["late_delivery"]]
    qs.append(("Which invoice was disputed because of a late delivery, and what is its total amount?",
               "document->sql",
               f"{inv['invoice_id']} ({by_cid[inv['customer_id']]['name']}), "
               f"{money(inv['total_amount'])} {inv['currency']}"))

    p = memo["plan"]
    pc = by_cid[p["customer_id"]]
    n_inv = sum(1 for i in invoices if i["customer_id"] == pc["customer_id"])
    qs.append(("According to the Q3 2024 collections memo, which customer agreed to a payment plan, and how "
               "many invoices has that customer been issued in total?", "document->sql",
               f"{pc['name']} ({pc['customer_id']}); {n_inv} invoices"))

    inv = by_inv[facts["quantity"]]
    c = by_cid[inv["customer_id"]]
    qs.append(("One invoice was disputed because fewer units were received than billed. What notice "
               "period for termination for convenience does that customer's contract specify?",
               "document->sql->document",
               f"{c['_notice_days']} days ({inv['invoice_id']}, {c['name']}, contract "
               f"{c['contract_document_id']})"))

    qs.append(("What is the phone number of the billing contact for invoice INV-1001?", "unanswerable",
               "Unanswerable: the lake stores billing contact names and e-mail addresses but no phone numbers."))
    return [{"question": q, "kind": k, "answer": a} for q, k, a in qs]


# --------------------------------------------------------------------------- #
# main
# --------------------------------------------------------------------------- #
def main() -> None:
    rng = random.Random(SEED)
    products, customers, by_cid, invoices, by_inv, lines, lines_by_inv = build(rng)

    memo = choose_memo(rng, invoices, by_cid)
    memo_ids = {memo["agency"]["invoice_id"], memo["plan"]["invoice_id"],
                memo["outstanding"]["invoice_id"]} | {i["invoice_id"] for i in memo["resolved"]}
    notes, facts = pick_doc_invoices(rng, customers, by_cid, invoices, lines_by_inv, products, memo_ids)

    # document formats: five HTML invoices (incl. the quantity dispute), rest markdown
    doc_ids = sorted(notes)
    html_ids = {facts["quantity"]} | set(rng.sample([i for i in doc_ids if i != facts["quantity"]], 4))
    for iid in doc_ids:
        by_inv[iid]["document_id"] = f"DOC-{iid}"

    # ---- write -----------------------------------------------------------
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("customers.csv", "invoices.json", "line_items.jsonl", "products.parquet",
                 "README.md", "questions.json"):
        (OUT / name).unlink(missing_ok=True)
    shutil.rmtree(OUT / "documents", ignore_errors=True)
    (OUT / "documents" / "contracts").mkdir(parents=True)
    (OUT / "documents" / "invoices").mkdir(parents=True)

    with open(OUT / "customers.csv", "w", newline="", encoding="utf-8") as f:
        cols = ["customer_id", "name", "segment", "country", "city", "signup_date", "contract_document_id"]
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(cols)
        for c in customers:
            wr.writerow([c[k].isoformat() if isinstance(c[k], dt.date) else c[k] for k in cols])

    def jnum(x: Decimal) -> float:
        return float(x)

    inv_out = [{
        "invoice_id": i["invoice_id"], "customer_id": i["customer_id"],
        "issue_date": i["issue_date"].isoformat(), "due_date": i["due_date"].isoformat(),
        "status": i["status"], "currency": i["currency"], "total_amount": jnum(i["total_amount"]),
        "document_id": i["document_id"], "billing": i["billing"],
    } for i in invoices]
    (OUT / "invoices.json").write_text(json.dumps(inv_out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    with open(OUT / "line_items.jsonl", "w", encoding="utf-8") as f:
        for li in lines:
            f.write(json.dumps({**li, "unit_price": jnum(li["unit_price"])}) + "\n")

    table = pa.table({
        "sku": pa.array([p["sku"] for p in products.values()], pa.string()),
        "product_name": pa.array([p["product_name"] for p in products.values()], pa.string()),
        "category": pa.array([p["category"] for p in products.values()], pa.string()),
        "list_price": pa.array([float(p["list_price"]) for p in products.values()], pa.float64()),
    })
    pq.write_table(table, OUT / "products.parquet", compression="snappy")

    words = []
    for c in customers:
        if c["contract_document_id"]:
            text = contract_md(c, rng)
            n = len(text.split())
            words.append(n)
            assert 150 <= n <= 400, (c["customer_id"], n)
            (OUT / "documents" / "contracts" / f"{c['contract_document_id']}.md").write_text(text, encoding="utf-8")

    for iid in doc_ids:
        inv = by_inv[iid]
        c = by_cid[inv["customer_id"]]
        if iid in html_ids:
            p = OUT / "documents" / "invoices" / f"{inv['document_id']}.html"
            p.write_text(invoice_html(inv, c, notes[iid], lines_by_inv, products), encoding="utf-8")
        else:
            p = OUT / "documents" / "invoices" / f"{inv['document_id']}.md"
            p.write_text(invoice_md(inv, c, notes[iid], lines_by_inv, products), encoding="utf-8")

    (OUT / "documents" / "memo-collections-2024Q3.txt").write_text(memo_txt(memo, by_cid), encoding="utf-8")

    questions = make_questions(rng, products, customers, by_cid, invoices, by_inv, lines, facts, memo, doc_ids)
    (OUT / "questions.json").write_text(json.dumps(questions, indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    (OUT / "README.md").write_text(readme(customers, invoices, lines, doc_ids, html_ids, questions, words),
                                   encoding="utf-8")
    verify()
    print(f"wrote {OUT}: {len(customers)} customers, {len(invoices)} invoices, {len(lines)} line items, "
          f"{len(products)} products, {sum(1 for c in customers if c['contract_document_id'])} contracts "
          f"({min(words)}-{max(words)} words), {len(doc_ids)} invoice documents ({len(html_ids)} HTML)")


def readme(customers, invoices, lines, doc_ids, html_ids, questions, words) -> str:
    st = Counter(i["status"] for i in invoices)
    cur = Counter(i["currency"] for i in invoices)
    no_ctr = [c["customer_id"] for c in customers if not c["contract_document_id"]]
    qlines = "\n".join(
        f"{k}. **[{q['kind']}]** {q['question']}  \n   *Answer:* {q['answer']}"
        for k, q in enumerate(questions, start=1))
    return f"""# Sample lake

A small, self-consistent enterprise data lake in the spirit of Figure 1 of the
A.DOT paper: structured sales data (customers, invoices, line items, products)
next to unstructured documents (contracts, invoices, a collections memo) that are
linked to the tables through document ids. It is generated deterministically by
`tests/data/make_sample_lake.py` (not shipped); edit the script and re-run it
rather than editing these files by hand.

## Tables

| File | Format | Rows | Key | Links |
|---|---|---:|---|---|
| `customers.csv` | CSV, UTF-8, header | {len(customers)} | `customer_id` (C001..) | `contract_document_id` → `documents/contracts/<id>.md` (empty for {", ".join(no_ctr)}) |
| `invoices.json` | JSON array of objects | {len(invoices)} | `invoice_id` (INV-1001..) | `customer_id` → customers; `document_id` → `documents/invoices/<id>.md\\|.html` (null when the invoice has no document) |
| `line_items.jsonl` | JSON Lines | {len(lines)} | `line_id` (L00001..) | `invoice_id` → invoices; `sku` → products |
| `products.parquet` | Parquet | 25 | `sku` | — |

Column notes:

* `customers.csv`: `customer_id, name, segment (Enterprise/SMB/Public), country, city, signup_date, contract_document_id`.
  Names are unique; some contain non-ASCII characters (ü, è, é) or an ampersand.
* `invoices.json`: `invoice_id, customer_id, issue_date, due_date, status, currency, total_amount, document_id,
  billing{{contact, email}}` — `billing` is a nested object. `total_amount` equals the sum of
  `quantity * unit_price` over the invoice's line items, rounded to 2 decimals. `due_date` is the
  issue date plus the net days of the customer's contractual payment terms (Net 30 when there is no contract).
  Status is as of {AS_OF.isoformat()}: {st['paid']} paid, {st['open']} open, {st['overdue']} overdue.
  Currency follows the customer's country: {cur['EUR']} EUR, {cur['USD']} USD, {cur['GBP']} GBP.
* `line_items.jsonl`: `line_id, invoice_id, sku, quantity (int), unit_price` — unit prices are in the
  invoice currency (list price × FX × the customer's negotiated discount).
* `products.parquet`: `sku, product_name, category, list_price (float64, EUR)`.

All dates are ISO `YYYY-MM-DD` in 2024–2025.

## Documents

* `documents/contracts/CTR-Cnnn.md` — {len(words)} master services agreements, {min(words)}–{max(words)} words
  each, with sections *Parties*, *Payment terms* (Net 30/45/60, 2/10 Net 30, 1/15 Net 45; late fees;
  currency), *Term and termination* and *Service levels*. Line 2 carries `Document ID: CTR-Cnnn`.
* `documents/invoices/DOC-INV-nnnn.(md|html)` — {len(doc_ids)} invoice documents ({len(doc_ids) - len(html_ids)}
  markdown, {len(html_ids)} HTML) with the line items, a **Notes** paragraph and the payment terms. The notes
  hold facts that exist only in the documents (disputes, partial payments, credit notes, missing purchase
  orders, reissues, delivery remarks).
* `documents/memo-collections-2024Q3.txt` — a plain-text credit-control memo that mentions five invoices
  and their customers by name (payment plan, collections-agency referral, settled invoices).

## Example questions

The same questions, with their kinds and expected answers, are in `questions.json`.
Kinds: `sql` (single hop over the tables), `aggregate`, `sql->document` (find the row, then read the linked
document), `document->sql` (a fact in a document identifies rows), `document->sql->document`, and
`unanswerable` (the lake does not contain the information).

{qlines}
"""


def verify() -> None:
    """Re-read the written files and check every consistency rule."""
    customers = list(csv.DictReader(open(OUT / "customers.csv", encoding="utf-8")))
    invoices = json.loads((OUT / "invoices.json").read_text(encoding="utf-8"))
    lines = [json.loads(x) for x in (OUT / "line_items.jsonl").read_text(encoding="utf-8").splitlines()]
    prods = pq.read_table(OUT / "products.parquet").to_pylist()
    cids = {c["customer_id"] for c in customers}
    skus = {p["sku"] for p in prods}
    iids = {i["invoice_id"] for i in invoices}
    docs = {p.stem: p for p in (OUT / "documents").rglob("*") if p.is_file()}
    assert len(cids) == len(customers) and len(iids) == len(invoices) and len(skus) == len(prods)
    for c in customers:
        if c["contract_document_id"]:
            p = docs[c["contract_document_id"]]
            lines_ = p.read_text(encoding="utf-8").splitlines()
            assert lines_[0] == f"# Master Services Agreement — {c['name']}"
            assert f"Document ID: {c['contract_document_id']}" in lines_[1]
    sums = defaultdict(Decimal)
    for li in lines:
        assert li["invoice_id"] in iids and li["sku"] in skus
        assert isinstance(li["quantity"], int) and li["quantity"] > 0
        sums[li["invoice_id"]] += li["quantity"] * Decimal(str(li["unit_price"]))
    float_sums = defaultdict(float)
    for li in lines:
        float_sums[li["invoice_id"]] += li["quantity"] * li["unit_price"]
    cust = {c["customer_id"]: c for c in customers}
    for i in invoices:
        assert i["customer_id"] in cids
        assert q2(sums[i["invoice_id"]]) == Decimal(str(i["total_amount"])), i["invoice_id"]
        assert round(float_sums[i["invoice_id"]], 2) == i["total_amount"], i["invoice_id"]
        assert d("2024-01-01") <= d(cust[i["customer_id"]]["signup_date"]) < d(i["issue_date"]) \
            < d(i["due_date"]) <= d("2025-12-31")
        if i["document_id"]:
            p = docs[i["document_id"]]
            assert f"Invoice {i['invoice_id']}" in p.read_text(encoding="utf-8")
    assert all(any(i["customer_id"] == c for i in invoices) for c in cids)
    linked = {c["contract_document_id"] for c in customers} | {i["document_id"] for i in invoices}
    assert set(docs) - linked == {"memo-collections-2024Q3"}, set(docs) - linked


if __name__ == "__main__":
    main()
