"""A corpus of CSV dialects as exports write them: each is sniffed, read, typed and recorded in the contract."""

from datetime import date
from pathlib import Path

import pytest

from lakeplanner.config import LimitsConfig
from lakeplanner.contract.models import CsvDialect, ExclusionManifest
from lakeplanner.errors import BadSourceError
from lakeplanner.ingest.dialect import sniff_dialect
from lakeplanner.ingest.readers import read_table_file

LIMITS = LimitsConfig()

# name: (file text, the dialect it must sniff as, {column: the typed values it must read as})
CORPUS = {
    "comma_point": (
        "part,price,received\nP-1,1234.50,03/14/2024\nP-2,99.00,04/02/2024\n",
        CsvDialect(date_order="mdy"),
        {"price": [1234.5, 99.0], "received": [date(2024, 3, 14), date(2024, 4, 2)]},
    ),
    "comma_grouped_quoted": (
        'part,price\nP-1,"1,234.50"\nP-2,"12,000.00"\n',
        CsvDialect(),
        {"price": [1234.5, 12000.0]},
    ),
    "semicolon_decimal_comma": (
        "artikel;menge;preis;datum\nA-1;3;12,50;14.03.2024\nA-2;10;7,25;02.04.2024\n",
        CsvDialect(delimiter=";", decimal=",", thousands=".", date_order="dmy"),
        {"preis": [12.5, 7.25], "menge": [3, 10], "datum": [date(2024, 3, 14), date(2024, 4, 2)]},
    ),
    "semicolon_grouped_decimal_comma": (
        "konto;betrag\nK1;1.234,50\nK2;-12.000,00\nK3;7,10\n",
        CsvDialect(delimiter=";", decimal=",", thousands="."),
        {"betrag": [1234.5, -12000.0, 7.1]},
    ),
    "semicolon_currency": (
        "poste;montant\nloyer;€ 1 250,00\nfrais;€ 80,50\n",
        CsvDialect(delimiter=";", decimal=",", thousands=" "),
        {"montant": [1250.0, 80.5]},
    ),
    "french_no_break_space": (
        "ville;population\nLyon;522\u00a0250\nNice;342\u00a0669\n",
        CsvDialect(delimiter=";", thousands=" "),
        {"population": [522250, 342669]},
    ),
    "swiss_apostrophe": (
        "kanton|betrag\nZH|1'234.50\nBE|12'000.75\n",
        CsvDialect(delimiter="|", thousands="'"),
        {"betrag": [1234.5, 12000.75]},
    ),
    "tab_separated": (
        "id\tname\tamount\n1\tAda, Countess\t3.5\n2\tAlan\t4.25\n",
        CsvDialect(delimiter="\t"),
        {"amount": [3.5, 4.25], "name": ["Ada, Countess", "Alan"]},
    ),
    "semicolon_text_with_commas": (
        "code;note\nX1;late, but complete\nX2;on time, damaged\n",
        CsvDialect(delimiter=";"),
        {"note": ["late, but complete", "on time, damaged"]},
    ),
    "single_quoted": (
        "id,remark\n1,'yes, twice'\n2,'no, never'\n",
        CsvDialect(quote="'"),
        {"remark": ["yes, twice", "no, never"]},
    ),
    "ambiguous_dates_settled_by_another_column": (
        "lot;made;checked\nL1;03.04.2024;25.04.2024\nL2;05.06.2024;07.06.2024\n",
        CsvDialect(delimiter=";", date_order="dmy"),
        {"made": [date(2024, 4, 3), date(2024, 6, 5)], "checked": [date(2024, 4, 25), date(2024, 6, 7)]},
    ),
}


def read(tmp_path: Path, text: str, name: str = "export.csv"):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return read_table_file(tmp_path, name, "tsv" if name.endswith(".tsv") else "csv", "t", ExclusionManifest(), LIMITS)


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_each_dialect_is_sniffed_as_written(case):
    text, dialect, _ = CORPUS[case]
    sniffed = sniff_dialect(text)
    assert (sniffed.delimiter, sniffed.quote, sniffed.decimal, sniffed.date_order) == (
        dialect.delimiter,
        dialect.quote,
        dialect.decimal,
        dialect.date_order,
    )
    if any(mark in text for mark in ("'", " ", "\u00a0")) and dialect.thousands in ("'", " "):
        assert sniffed.thousands == dialect.thousands


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_each_dialect_reads_into_typed_columns(tmp_path, case):
    text, dialect, expected = CORPUS[case]
    [data] = read(tmp_path, text)
    assert data.dialect is not None and data.dialect.delimiter == dialect.delimiter
    for column, values in expected.items():
        assert data.table.column(column).to_pylist() == values, column


def test_a_decimal_comma_file_keeps_codes_as_text(tmp_path):
    [data] = read(tmp_path, "code;anteil\nA-01;0,5\nA-02;1,25\n")
    assert data.table.column("code").to_pylist() == ["A-01", "A-02"]
    assert data.table.column("anteil").to_pylist() == [0.5, 1.25]


def test_a_tsv_file_keeps_its_tab_and_sniffs_its_separators(tmp_path):
    [data] = read(tmp_path, "id\tbetrag\n1\t1.234,50\n2\t3,75\n", "amounts.tsv")
    assert data.dialect.delimiter == "\t" and data.dialect.decimal == ","
    assert data.table.column("betrag").to_pylist() == [1234.5, 3.75]


def test_a_one_column_file_reads_as_one_column(tmp_path):
    [data] = read(tmp_path, "name\nAda\nAlan\n")
    assert data.table.column("name").to_pylist() == ["Ada", "Alan"]


def test_a_ragged_semicolon_file_names_the_dialect_it_was_read_in(tmp_path):
    with pytest.raises(BadSourceError) as caught:
        read(tmp_path, "a;b;c\n1;2;3\n4;5\n6;7;8;9\n1;2;3\n")
    assert "semicolons" in caught.value.reason


def test_the_contract_records_each_table_files_dialect(tmp_path):
    from lakeplanner import Lake

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "ledger.csv").write_text("konto;betrag;gebucht\nK1;1.234,50;14.03.2024\nK2;7,10;02.04.2024\n")
    (raw / "people.csv").write_text("id,name\n1,Ada\n2,Alan\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(raw)
    specs = {s.name: s for s in lake.contract.sources}
    assert specs["ledger"].dialect == CsvDialect(delimiter=";", decimal=",", thousands=".", date_order="dmy")
    assert specs["people"].dialect == CsvDialect()
    total = lake.sql("SELECT sum(betrag) AS total, min(gebucht) AS first FROM ledger").to_pylist()
    assert total == [{"total": pytest.approx(1241.6), "first": date(2024, 3, 14)}]
