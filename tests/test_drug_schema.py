from __future__ import annotations

import json
from pathlib import Path

import pytest

from medground.corpus.base import BadInputError
from medground.drug_schema import (
    AttributeType as A,
)
from medground.corpus.drug_builders import (
    CatalogBuilder,
    add_drug_list_table,
    add_fda_labels,
    add_prototype_table,
    build_catalog,
    link_brand,
    split_cell,
)
from medground.drug_schema import (
    NameLexicon,
    attribute_for_heading,
    parse_drug_name,
    parse_name_with_brands,
    strip_salt,
)
from medground.corpus.openstax import CnxmlTable

LEX = NameLexicon({
    "ibuprofen": ["ibuprofen"], "advil": ["ibuprofen"], "buprenorphine": ["buprenorphine"],
    "naloxone": ["naloxone"], "pembrolizumab": ["pembrolizumab"], "keytruda": ["pembrolizumab"],
    "metoprolol tartrate": ["metoprolol"], "metoprolol": ["metoprolol"],
}, brands={"advil"})


@pytest.mark.parametrize("heading, expected", [
    ("Drug and Food Interactions", A.INTERACTIONS),
    ("Food Interactions", A.INTERACTIONS),
    ("Adverse Effects", A.ADVERSE_REACTIONS),
    ("Adverse Effects (Birthing Parent)", A.ADVERSE_REACTIONS),
    ("warnings and precautions", A.WARNINGS),
    ("boxed warnings", A.BOXED_WARNING),
    ("Mechanism of Action:", A.MECHANISM),
    ("Drug Dosing", A.DOSAGE),
    ("Routes and Dosage Ranges", A.DOSAGE),
    ("Caution:", A.WARNINGS),
    ("Tablet:", None),
])
def test_heading_table(heading, expected):
    assert attribute_for_heading(heading) is expected


def test_split_cell_keeps_unknown_groups_with_previous_and_reports_them():
    unknown = []
    cell = ("Contraindications\nHypersensitivity\nPregnancy\n\nCaution:\nMonitor closely\n\n"
            "Tablet:\n5 mg daily")
    parts = split_cell(cell, "src", unknown)
    assert [(h, t) for h, t, _ in parts] == [("Contraindications", A.CONTRAINDICATIONS),
                                             ("Caution", A.WARNINGS)]
    assert parts[0][2] == "Hypersensitivity\nPregnancy"
    assert parts[1][2] == "Monitor closely\n\nTablet:\n5 mg daily"
    assert [(u.source, u.heading) for u in unknown] == [("src", "Tablet:")]


def test_split_cell_inline_heading():
    (h, t, text), = split_cell("Caution: Renal impairment", "s", [])
    assert (h, t, text) == ("Caution", A.WARNINGS, "Renal impairment")


@pytest.mark.parametrize("caption, generic, components, synonyms", [
    ("Drug Prototype Table: Dolutegravir/Rilpivirine", "dolutegravir/rilpivirine",
     ["dolutegravir", "rilpivirine"], []),
    ("Drug Prototype Table: Trimethoprim and Sulfamethoxazole (TMP/SMX)",
     "trimethoprim/sulfamethoxazole", ["trimethoprim", "sulfamethoxazole"],
     ["trimethoprim and sulfamethoxazole (tmp/smx)", "tmp/smx"]),
    ("Drug Prototype Table: Lidocaine (sources:; Al-Khatib et al., 2018)", "lidocaine", [], []),
    ("Drug Prototype Table: Metoprolol Tartrate", "metoprolol", [], ["metoprolol tartrate"]),
    ("Drug Prototype Table: Magnesium Sulfate", "magnesium sulfate", [], []),
    ("Drug Prototype Table: Buprenorphine-Naloxone", "buprenorphine/naloxone",
     ["buprenorphine", "naloxone"], ["buprenorphine-naloxone"]),
    ("Drug Prototype Table: Neomycin and Polymyxin B Sulfates, and Hydrocortisone Otic Solution",
     "neomycin/polymyxin b/hydrocortisone", ["neomycin", "polymyxin b", "hydrocortisone"],
     ["neomycin and polymyxin b sulfates, and hydrocortisone otic solution"]),
    ("Drug Prototype Table: Diclofenac 0.1% Ophthalmic Solution", "diclofenac", [],
     ["diclofenac 0.1% ophthalmic solution"]),
    ("Drug Prototype: Valproic Acid", "valproic acid", [], []),
])
def test_parse_caption(caption, generic, components, synonyms):
    p = parse_drug_name(caption, LEX)
    assert (p.generic, p.components, p.synonyms) == (generic, components, synonyms)


def test_hyphen_is_not_split_without_known_components():
    assert parse_drug_name("17-Beta-Estradiol", LEX).generic == "17-beta-estradiol"


def test_parse_name_with_brands():
    assert parse_name_with_brands("Doxorubicin\n(Adriamycin, Doxil)") == (
        "Doxorubicin", ["Adriamycin", "Doxil"])
    assert parse_name_with_brands("Other Anthracyclines") is None
    assert strip_salt("cromolyn sodium") == "cromolyn"


def test_link_brand_by_lexicon_then_label_text():
    assert link_brand("KEYTRUDA", "", LEX) == ("pembrolizumab", "lexicon")
    text = "Patients given ANORO ELLIPTA (ibuprofen/naloxone 62.5 mcg/25 mcg) had"
    assert link_brand("Anoro", text, LEX) == ("ibuprofen/naloxone", "label text")
    assert link_brand("Kit", "no generic here (n = 3)", LEX) is None


def _prototype() -> CnxmlTable:
    return CnxmlTable("m1", "Drug Prototype Table: Ibuprofen", "", [], [
        ["Drug Class\nNSAID\n\nMechanism of Action\nInhibits COX", "Drug Dosage\n200 mg"],
        ["Indications\nPain", "Drug Interactions\nWarfarin\n\nFood Interactions\nAlcohol"],
        ["Adverse Effects\nGI bleeding", "Contraindications\nAspirin allergy"]])


def test_sources_merge_into_one_drug_by_generic(tmp_path: Path):
    b = CatalogBuilder(LEX)
    assert add_prototype_table(b, _prototype(), "openstax-prototype:m1#t1")
    dose = CnxmlTable("m2", "Table", "", ["Drug", "Routes and Dosage Ranges"], [
        ["Ibuprofen\n(Advil, Motrin)", "400 mg orally"], ["Other NSAIDs", ""],
        ["Mystery row with many words in it", "x"]])
    assert add_drug_list_table(b, dose, "openstax-dosage-table:m2#t") == 1
    labels = tmp_path / "fda"
    labels.mkdir()
    (labels / "train.json").write_text(json.dumps([
        {"label_id": "Advil", "section_name": "boxed warnings", "section_text": "  GI   risk "}]))
    add_fda_labels(b, labels)
    cat = b.finish()
    assert [d.drug_id for d in cat.drugs] == ["ibuprofen"]
    d = cat.drugs[0]
    assert d.brand_names == ["Advil", "Motrin"]
    assert d.drug_class == "NSAID"
    assert d.sources == ["openstax-prototype", "openstax-dosage-table", "fda-tac2017"]
    types = [a.type for a in cat.attributes]
    assert types.count(A.INTERACTIONS) == 2 and types.count(A.DOSAGE) == 2
    assert cat.attributes[-1].text == "GI risk"
    assert cat.attributes[-1].source == "fda-tac2017:train/Advil"
    assert cat.counts["fda_linked_by_lexicon"] == 1


def test_bad_fda_record_names_the_field(tmp_path: Path):
    labels = tmp_path / "fda"
    labels.mkdir()
    (labels / "x.json").write_text(json.dumps([{"label_id": "A", "section_name": 3}]))
    with pytest.raises(BadInputError, match="record 0 field 'section_name'"):
        add_fda_labels(CatalogBuilder(LEX), labels)


def test_real_catalog(shared_data: Path):
    pytest.importorskip("drug_named_entity_recognition", reason="extra [drugs] links brands")
    cat = build_catalog(shared_data)
    # 209 captions: the blank "Sample" template is skipped and the Anthracyclines table
    # (a header + one drug per row) is read as a drug list.
    assert cat.counts["prototype_tables"] == 207
    assert cat.counts["fda_labels"] == 200
    assert cat.counts["dosage_tables"] >= 140
    assert len(cat.drugs) >= 700
    by_id = {d.drug_id: d for d in cat.drugs}
    assert "Celebrex" in by_id["celecoxib"].brand_names
    assert by_id["pembrolizumab"].sources == [
        "openstax-dosage-table", "openstax-prototype", "fda-tac2017"]
    assert "Doxil" in by_id["doxorubicin"].brand_names
    # Deterministic: a second build gives the same drugs and attributes.
    again = build_catalog(shared_data)
    assert [d.drug_id for d in again.drugs] == [d.drug_id for d in cat.drugs]
    assert len(again.attributes) == len(cat.attributes)
