"""The planner's examples: the lake's shape chooses them, a pack the contract switches on gives a lake
of reference entries its own; reference entries are told apart from other documents at ingest."""

import json

import pytest

from lakeplanner.contract.models import (
    Contract,
    CrossLink,
    FieldEntry,
    FieldType,
    ForeignKey,
    IdentityKey,
    SourceKind,
    SourceSpec,
    field_id,
)
from lakeplanner.contract.profile import are_reference_entries, opens_with_its_subject
from lakeplanner.lake import Lake
from lakeplanner.plan.examples import MIXED_EXAMPLES, plan_examples
from lakeplanner.plan.generate import plan_messages
from lakeplanner.question.lexicon import lexicon, packs_for


def table(name: str, **columns: str) -> tuple[SourceSpec, list[FieldEntry]]:
    spec = SourceSpec(name=name, kind=SourceKind.table, format="csv", files=[f"{name}.csv"], table=f"lake.{name}")
    fields = [
        FieldEntry(
            id=field_id(name, c),
            source=name,
            path=c,
            column=c,
            type=FieldType.string,
            null_rate=0,
            cardinality=3,
            examples=[e],
        )
        for c, e in columns.items()
    ]
    return spec, fields


def collection(name: str, entries: bool = False) -> SourceSpec:
    return SourceSpec(
        name=name, kind=SourceKind.documents, format="documents", files=[], collection=name, entries=entries
    )


def clinic_lake() -> Contract:
    visits, visit_fields = table("visits", visit_no="V-0042", patient_ref="P-7")
    patients, patient_fields = table("patients", patient_ref="P-7", full_name="Ada Moss", consent_doc="CF-1")
    patients = patients.model_copy(update={"label": "full_name"})
    return Contract(
        sources=[visits, patients, collection("consent_forms")],
        fields=visit_fields + patient_fields,
        identity_keys=[
            IdentityKey(source="visits", columns=["visit_no"], uniqueness=1, confidence=1, identifier=True),
            IdentityKey(source="patients", columns=["patient_ref"], uniqueness=1, confidence=1, identifier=True),
        ],
        foreign_keys=[
            ForeignKey(
                source="visits",
                column="patient_ref",
                target="patients",
                target_column="patient_ref",
                overlap=1,
                confidence=1,
                cardinality="N:1",
            )
        ],
        links=[
            CrossLink(
                source="patients",
                column="consent_doc",
                collection="consent_forms",
                match="document_id",
                match_rate=1,
                confidence=1,
                documents=3,
            )
        ],
    )


def steps_of(examples: str) -> list[list[dict]]:
    joined = examples.replace("\\\n", "")
    return [json.loads(line) for line in joined.splitlines() if line.startswith("[")]


def test_a_lake_with_tables_is_shown_the_hop_between_rows_and_documents():
    assert plan_examples(clinic_lake()) == MIXED_EXAMPLES
    to_documents, to_row = steps_of(MIXED_EXAMPLES)
    assert [s["tool"] for s in to_documents] == ["sql", "vector"] and [s["tool"] for s in to_row] == ["vector", "sql"]
    assert "$var_1." in to_documents[1]["question"] and "$var_1.document_id" in to_row[1]["question"]


def test_a_lake_of_documents_is_shown_its_pack_s_examples_or_made_up_ones():
    plain = Contract(sources=[collection("notes")])
    entries = Contract(sources=[collection("articles", entries=True)])
    assert packs_for(plain) == () and packs_for(entries) == ("reference_entries",)
    assert "Ashford Bridge" in plan_examples(plain) and '"source": "notes"' in plan_examples(plain)
    assert "Ashford Bridge" not in plan_examples(entries) and '"source": "articles"' in plan_examples(entries)
    assert "{collection}" not in plan_examples(entries) + plan_examples(plain)
    for contract in (plain, entries):
        for steps in steps_of(plan_examples(contract)):
            assert all(s["tool"] == "vector" for s in steps)
    assert lexicon(("reference_entries",)) == lexicon()  # the pack holds examples, no words


def test_the_planner_prompt_carries_the_lake_s_examples():
    contract = clinic_lake()
    prompt = plan_messages("How many visits?", contract, ["visits", "patients"])[0].content
    assert plan_examples(contract) in prompt


@pytest.mark.parametrize(
    "title, text, opens",
    [
        ("Ashford Bridge (Kent)", "# Ashford Bridge (Kent)\n\nThe Ashford Bridge is a road bridge.", True),
        ("Marlow Tunnel", "Marlow Tunnel\nMarlow Tunnel, opened in 1911, carries ...", True),
        ("Quarterly memo", "# Quarterly memo\n\nTo all staff: the canteen closes early.", False),
        ("Service terms", "Document ID: ST-1\n\nThese service terms apply ...", False),
    ],
)
def test_an_entry_opens_by_naming_its_subject(title, text, opens):
    assert opens_with_its_subject(title, text) is opens


def test_a_collection_is_of_reference_entries_when_most_documents_open_with_their_subject():
    entry = ("Kestrel Tunnel", "Kestrel Tunnel is a rail tunnel.")
    memo = ("Memo 4", "To all staff: read this.")
    assert are_reference_entries([entry, entry, memo])
    assert not are_reference_entries([entry, memo, memo])
    assert not are_reference_entries([])


def test_ingest_records_reference_entries_in_the_contract(tmp_path):
    folder = tmp_path / "raw"
    folder.mkdir()
    for name, opening in [
        ("Ashford Bridge", "The Ashford Bridge is a road bridge"),
        ("Kestrel Tunnel", "Kestrel Tunnel is a tunnel"),
    ]:
        (folder / f"{name}.md").write_text(f"# {name}\n\n{opening} built in 1900 by Hale and Sons.\n")
    lake = Lake.create(tmp_path / "lake")
    lake.ingest(folder)
    (collection_source,) = [s for s in lake.contract.sources if s.kind is SourceKind.documents]
    assert collection_source.entries and packs_for(lake.contract) == ("reference_entries",)
