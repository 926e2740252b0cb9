"""Query-time schema extension: sufficiency gate, query-scoped (reverts), persistent (monotonic, logged)."""

import json
import shutil

import pytest

from lakeplanner import Lake, sample_lake_path
from lakeplanner.contract.models import EntityAttribute, EntityType, Relationship
from lakeplanner.errors import ContractError
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.extension import (
    VERSION_LOG,
    Extension,
    Term,
    add_term,
    extend_persistently,
    extension_of,
    propose,
    query_scoped,
    version_log,
)
from lakeplanner.policy import Access
from lakeplanner.question.coverage import spellings, sufficiency


def small_lake(tmp_path) -> Lake:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(sample_lake_path() / "invoices.json", source / "invoices.json")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(source)
    return lake


def field(lake, column):
    return next(f.id for f in lake.contract.fields if f.column == column)


def test_sufficiency_gate_names_what_the_schema_lacks(tmp_path):
    lake = small_lake(tmp_path)
    assert sufficiency("What is the total amount of invoice INV-1010?", lake.contract).sufficient
    gate = sufficiency("Which warehouse shipped invoice INV-1010?", lake.contract)
    assert not gate.sufficient and gate.unresolved == ["warehouse", "shipped"]
    lake.close()


def test_a_hyphenated_term_names_the_joined_column(tmp_path):
    assert spellings("E-mails") == {"e-mail", "email"}
    lake = small_lake(tmp_path)
    assert sufficiency("What is the billing e-mail of invoice INV-1010?", lake.contract).sufficient
    lake.close()


def test_query_scoped_extension_reverts(tmp_path):
    lake = small_lake(tmp_path)
    extension = Extension(
        entities=[
            EntityType(
                name="Payer",
                source="query",
                attributes=[EntityAttribute(name="email", field_id=field(lake, "billing_email"))],
            )
        ]
    )
    before = (lake.path / "schema.yaml").read_text()
    with query_scoped(lake, extension) as extended:
        assert [e.name for e in lake.contract.entities] == ["Payer"] == [e.name for e in extended.entities]
    assert lake.contract.entities == [] and (lake.path / "schema.yaml").read_text() == before
    lake.close()


def test_persistent_extension_only_adds_and_is_logged(tmp_path):
    lake = small_lake(tmp_path)
    email, contact = field(lake, "billing_email"), field(lake, "billing_contact")
    first = Extension(
        entities=[EntityType(name="Payer", source="query", attributes=[EntityAttribute(name="email", field_id=email)])]
    )
    second = Extension(
        entities=[
            EntityType(
                name="Payer",
                source="query",
                description="changed",
                attributes=[
                    EntityAttribute(name="renamed", field_id=email),
                    EntityAttribute(name="contact", field_id=contact),
                ],
            )
        ],
        relationships=[Relationship(source_entity="Payer", target_entity="Payer", type="SAME_AS", source="query")],
    )
    revision = lake.contract.revision
    extend_persistently(lake, first, "question 1")
    added = extend_persistently(lake, second, "question 2").added
    assert [a.name for a in added.entities[0].attributes] == ["contact"]
    [payer] = lake.contract.entities
    assert payer.description == "" and [a.name for a in payer.attributes] == ["email", "contact"]
    assert lake.contract.revision == revision + 2
    log = [json.loads(line) for line in (lake.path / VERSION_LOG).read_text().splitlines()]
    assert [r["reason"] for r in log] == ["question 1", "question 2"]
    assert extend_persistently(lake, first) is None and lake.contract.revision == revision + 2
    lake.close()


def test_proposals_are_grounded_in_the_catalog(tmp_path):
    lake = small_lake(tmp_path)
    reply = {
        "entities": [
            {
                "name": "payer",
                "attributes": [{"name": "email", "field_id": "billing_email"}, {"name": "phone", "field_id": "f_nope"}],
            }
        ]
    }
    extension = propose(LLM(FakeBackend([json.dumps(reply)])), "Who pays INV-1010?", lake.contract, ["pays"])
    [payer] = extension.entities
    assert payer.name == "Payer" and [a.field_id for a in payer.attributes] == [field(lake, "billing_email")]
    lake.close()


def test_a_term_added_for_good_is_named_logged_and_never_changed(tmp_path):
    lake = small_lake(tmp_path)
    question = "Which warehouse shipped invoice INV-1010?"
    term = Term(name="warehouse", description="where goods leave from", field="currency")
    version = add_term(lake, term, by="dana")
    assert version.revision == lake.contract.revision and version.by == "dana"
    assert version.reason == "where goods leave from"
    [warehouse] = lake.contract.entities
    assert (warehouse.name, warehouse.source, warehouse.description) == ("Warehouse", "invoices", term.description)
    assert warehouse.attributes == [EntityAttribute(name="currency", field_id=field(lake, "currency"))]
    assert sufficiency(question, lake.contract).unresolved == ["shipped"]
    assert add_term(lake, term.model_copy(update={"description": "changed"})) is None
    attribute = Term(name="shipped", description="when it left", entity="warehouse", field="issue_date")
    add_term(lake, attribute, by="dana")
    assert [a.name for a in lake.contract.entities[0].attributes] == ["currency", "shipped"]
    assert lake.contract.entities[0].description == "where goods leave from"
    assert [(v.revision, v.by) for v in version_log(lake.path)] == [
        (version.revision, "dana"),
        (version.revision + 1, "dana"),
    ]
    assert sufficiency(question, lake.contract).sufficient
    lake.close()


def test_terms_for_one_query_name_no_field_and_leave_the_contract(tmp_path):
    lake = small_lake(tmp_path)
    extension = extension_of(
        lake.contract, [Term(name="e-mail", description="an address"), Term(name="depot", description="d")]
    )
    assert [(e.name, e.source, e.aliases) for e in extension.entities] == [
        ("EMail", "query", ["e-mail"]),
        ("Depot", "query", []),
    ]
    with query_scoped(lake, extension):
        assert sufficiency("Which depot has invoice INV-1010?", lake.contract).sufficient
    assert lake.contract.entities == [] and version_log(lake.path) == []
    lake.close()


def test_a_term_that_names_what_is_not_there_says_what_is(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(sample_lake_path() / "invoices.json", source / "invoices.json")
    (source / "depots.csv").write_text("depot_id,status\nD1,open\nD2,closed\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(source)
    contract = lake.contract

    def problem(**term) -> ContractError:
        with pytest.raises(ContractError) as raised:
            extension_of(contract, [Term(description="d", **term)])
        return raised.value

    assert "not one word" in problem(name="credit limit").message
    unknown = problem(name="payer", source="payers")
    assert "no source 'payers'" in unknown.message and "depots" in unknown.hint and "invoices" in unknown.hint
    missing = problem(name="payer", source="depots", field="email")
    assert "depots has no field 'email'" in missing.message and "depot_id, status" in missing.hint
    both = problem(name="state", field="status")
    assert "several sources" in both.message and "--source" in both.hint
    assert "names no field" in problem(name="state", entity="Depot").message
    orphan = problem(name="state", entity="Depot", source="depots", field="status")
    assert "no entity type 'Depot'" in orphan.message and "(none yet)" in orphan.hint
    lake.close()


def test_a_role_adds_terms_only_on_what_it_reads(tmp_path):
    lake = small_lake(tmp_path)
    narrow = Access(role="narrow", tables=frozenset())
    with pytest.raises(ContractError, match="no source 'invoices'"):
        add_term(lake, Term(name="payer", description="d", source="invoices"), access=narrow)
    assert version_log(lake.path) == []
    lake.close()


def test_the_version_log_reads_records_without_an_author_and_names_a_broken_line(tmp_path):
    record = {"revision": 2, "at": "2025-01-01T00:00:00+00:00", "reason": "q", "added": {"entities": []}}
    (tmp_path / VERSION_LOG).write_text(json.dumps(record) + "\n")
    [version] = version_log(tmp_path)
    assert (version.revision, version.by) == (2, "")
    (tmp_path / VERSION_LOG).write_text(json.dumps(record) + "\nnot json\n")
    with pytest.raises(ContractError, match="line 2 of"):
        version_log(tmp_path)
