"""Query-time schema extension: sufficiency gate, query-scoped (reverts), persistent (monotonic, logged)."""

import json
import shutil

from lakeplanner import Lake, sample_lake_path
from lakeplanner.contract.models import EntityAttribute, EntityType, Relationship
from lakeplanner.llm import LLM
from lakeplanner.llm.fake import FakeBackend
from lakeplanner.plan.extension import (
    VERSION_LOG,
    Extension,
    extend_persistently,
    propose,
    query_scoped,
    spellings,
    sufficiency,
)


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
    added = extend_persistently(lake, second, "question 2")
    assert [a.name for a in added.entities[0].attributes] == ["contact"]
    [payer] = lake.contract.entities
    assert payer.description == "" and [a.name for a in payer.attributes] == ["email", "contact"]
    assert lake.contract.revision == revision + 2
    log = [json.loads(line) for line in (lake.path / VERSION_LOG).read_text().splitlines()]
    assert [r["reason"] for r in log] == ["question 1", "question 2"]
    assert extend_persistently(lake, first).empty and lake.contract.revision == revision + 2
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
