import pyarrow as pa

from lakeplanner.config import StructureConfig
from lakeplanner.contract.keys import KeyedTable, foreign_keys, identity_keys, key_confidence

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
    assert fk.cardinality == "1:1" and fk.confidence == 0.8  # overlap 1, no exact-name bonus


def test_no_foreign_key_without_overlap_or_key_target():
    a = keyed("a", pa.table({"code": [f"X{i}" for i in range(10)]}))
    b = keyed("b", pa.table({"code": [f"Y{i}" for i in range(10)]}))
    assert foreign_keys([a, b], CONFIG) == []
