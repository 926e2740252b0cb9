import pyarrow as pa

from lakeplanner.config import StructureConfig
from lakeplanner.contract.keys import KeyedTable, foreign_keys, identity_keys, key_confidence, without_rejected

CONFIG = StructureConfig()


def test_identity_key_needs_uniqueness_and_is_scored_by_eq5():
    table = pa.table({"order_id": [f"O{i}" for i in range(20)], "status": ["a", "b", "c", "d"] * 5})
    keys = identity_keys("orders", table, CONFIG)
    assert [(k.columns, k.identifier, k.confidence) for k in keys] == [(["order_id"], True, 0.95)]


def test_id_like_name_lowers_the_bar_to_080():
    ids = [f"T{i}" for i in range(17)] + ["T0", "T1", "T2"]  # 17/20 = 0.85 unique
    table = pa.table({"ticker": ids, "label": ids})
    keys = identity_keys("t", table, CONFIG)
    assert [k.columns for k in keys] == [["ticker"]]
    assert keys[0].confidence == key_confidence(0.85) == 0.95  # min(0.95, 0.7 + 0.3 * 0.85)
    assert not keys[0].identifier


def test_few_values_and_binary_columns_are_never_keys():
    assert identity_keys("t", pa.table({"id": [1, 2, 3, 4]}), CONFIG) == []
    assert identity_keys("t", pa.table({"flag_id": [1, 2] * 10}), CONFIG) == []


def test_composite_key_when_no_single_field_is_unique():
    table = pa.table(
        {"ticker": ["A", "A", "B", "B", "C", "C"] * 2, "quarter": ["Q1", "Q2"] * 6, "year": [2023] * 6 + [2024] * 6}
    )
    keys = identity_keys("prices", table, CONFIG)
    assert keys == []  # no pair reaches 0.95 combined uniqueness
    table = pa.table({"ticker": ["A", "A", "B", "B", "C", "C"], "quarter": ["Q1", "Q2"] * 3})
    keys = identity_keys("prices", table, CONFIG)
    assert [(k.columns, k.identifier) for k in keys] == [(["ticker", "quarter"], True)]


def keyed(name, table):
    return KeyedTable(name, table, identity_keys(name, table, CONFIG))


def test_foreign_key_overlap_confidence_and_cardinality():
    customers = keyed("customers", pa.table({"customer_id": [f"C{i}" for i in range(10)]}))
    invoices = keyed(
        "invoices",
        pa.table({"invoice_id": [f"I{i}" for i in range(30)], "customer_id": [f"C{i % 5}" for i in range(30)]}),
    )
    [fk] = foreign_keys([customers, invoices], CONFIG)
    assert (fk.source, fk.column, fk.target, fk.target_column) == (
        "invoices",
        "customer_id",
        "customers",
        "customer_id",
    )
    assert fk.overlap == 0.5  # 5 shared values / max(5, 10)
    assert fk.confidence == round(min(0.95, 0.5 + 0.3 * 0.5 + 0.15), 4)
    assert fk.cardinality == "N:1"


def test_semantic_name_match_and_one_to_one():
    users = keyed("users", pa.table({"id": [f"U{i}" for i in range(10)]}))
    profiles = keyed(
        "profiles", pa.table({"user_id": [f"U{i}" for i in range(10)], "bio": [f"b{i}" for i in range(10)]})
    )
    [fk] = foreign_keys([users, profiles], CONFIG)
    assert (fk.source, fk.column, fk.target, fk.target_column) == ("profiles", "user_id", "users", "id")
    assert fk.cardinality == "1:1" and fk.confidence == 0.95  # overlap 1, names related (similarity 1)


def test_no_foreign_key_without_overlap_or_key_target():
    a = keyed("a", pa.table({"code": [f"X{i}" for i in range(10)]}))
    b = keyed("b", pa.table({"code": [f"Y{i}" for i in range(10)]}))
    assert foreign_keys([a, b], CONFIG) == []


# ---------------------------------------------------------------- keys by values, whatever the names


def code_tables():
    carriers = keyed("carriers", pa.table({"carrier_code": ["NRTH", "BLTX", "RHNL", "ALPR", "SKYW"]}))
    staff = keyed(
        "staff",
        pa.table(
            {
                "staff_id": [f"E{1000 + i}" for i in range(12)],
                "supervisor": [None, "E1000", "E1000", "E1001", "E1001", "E1002"] * 2,
            }
        ),
    )
    shipments = keyed(
        "shipments",
        pa.table(
            {
                "shipment_id": [f"SHP-{20000 + i}" for i in range(20)],
                "carrier": ["NRTH", "BLTX", "RHNL", "NRTH"] * 5,
                "placed_by": [f"E{1000 + i % 6}" for i in range(20)],
                "pallets": [i % 12 + 1 for i in range(20)],
                "year": [2023, 2024] * 10,
            }
        ),
    )
    return carriers, staff, shipments


def test_foreign_keys_are_found_by_values_when_names_differ():
    fks = {(fk.source, fk.column, fk.target, fk.target_column): fk for fk in foreign_keys(list(code_tables()), CONFIG)}
    carrier = fks[("shipments", "carrier", "carriers", "carrier_code")]
    assert carrier.evidence == "values" and carrier.containment == 1.0 and carrier.cardinality == "N:1"
    assert carrier.name_similarity == 1.0  # 'carrier' names the target table
    placed = fks[("shipments", "placed_by", "staff", "staff_id")]
    assert placed.name_similarity == 0.0 and placed.confidence < carrier.confidence
    assert ("staff", "supervisor", "staff", "staff_id") in fks  # a reference within one table


def test_values_that_overlap_by_accident_are_not_keys():
    fks = foreign_keys(list(code_tables()), CONFIG)
    columns = {fk.column for fk in fks}
    assert "pallets" not in columns and "year" not in columns  # small integers, years
    numbered = keyed("numbered", pa.table({"n": list(range(1, 40))}))
    counts = keyed("counts", pa.table({"qty": [1, 2, 3, 4, 5] * 4}))
    assert foreign_keys([numbered, counts], CONFIG) == []
    flags = keyed("flags", pa.table({"code": ["Y", "N", "Y"] * 3, "ref": [f"R{i}" for i in range(9)]}))
    yes_no = keyed("yes_no", pa.table({"answer": ["Y", "N"] * 5, "id": [f"A{i}" for i in range(10)]}))
    assert foreign_keys([flags, yes_no], CONFIG) == []  # two distinct values prove nothing


def test_names_and_spaces_are_not_matched_by_value_alone():
    cities = keyed("cities", pa.table({"city": ["New York", "Paris", "Lyon", "Berlin", "Rome"]}))
    trips = keyed("trips", pa.table({"trip_id": [f"T{i}" for i in range(8)], "to": ["Paris", "Lyon"] * 4}))
    assert foreign_keys([cities, trips], CONFIG) == []


def test_a_rejected_key_is_left_out():
    fks = foreign_keys(list(code_tables()), CONFIG)
    kept = without_rejected(fks, ["shipments.carrier -> carriers.carrier_code"])
    assert len(kept) == len(fks) - 1 and all(fk.column != "carrier" for fk in kept)


def test_dates_are_identity_keys_only_when_nothing_else_is():
    import datetime as dt

    days = [dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in range(10)]
    staff = pa.table({"staff_id": [f"E{i}" for i in range(10)], "hire_date": days})
    assert [k.columns for k in identity_keys("staff", staff, CONFIG)] == [["staff_id"]]
    readings = pa.table({"day": days, "value": [1.5] * 10})
    assert [(k.columns, k.identifier) for k in identity_keys("readings", readings, CONFIG)] == [(["day"], True)]


def test_key_names_that_differ_only_in_their_key_word_match_by_name():
    from lakeplanner.contract.keys import name_match, same_words

    assert same_words("part_code", "part_id") and same_words("lender_no", "lender_ref")
    assert not same_words("part", "part_code")  # a bare noun: the values decide
    assert not same_words("part_code", "bin_code")
    parts = keyed("parts", pa.table({"part_code": ["P1", "P2", "P3"]}))
    lines = keyed("lines", pa.table({"part_id": ["P1", "P2"]}))
    assert name_match(lines, "part_id", parts, "part_code") == "semantic"
