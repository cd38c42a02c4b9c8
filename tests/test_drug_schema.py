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
    assert strip_salt("quetiapine fumarate") == "quetiapine"
    # without its salt word the rest is a chemical group, not a drug (Tecfidera was "dimethyl")
    assert strip_salt("dimethyl fumarate") == "dimethyl fumarate"
    assert strip_salt("magnesium sulfate") == "magnesium sulfate"


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
    # Classes: a prototype cell first, else the captions of the tables that list the drug.
    assert by_id["atorvastatin"].drug_class == "Statin"
    assert "Statins" in by_id["simvastatin"].drug_class
    assert by_id["pantoprazole"].drug_class.startswith("Proton-pump inhibitors (PPIs)")
    assert by_id["doxycycline"].drug_class.startswith("Tetracycline")
    assert sum(bool(d.drug_class) for d in cat.drugs) >= 500
    # Deterministic: a second build gives the same drugs and attributes.
    again = build_catalog(shared_data)
    assert [d.drug_id for d in again.drugs] == [d.drug_id for d in cat.drugs]
    assert len(again.attributes) == len(cat.attributes)


# ---------------------------------------------------------------- the consultation's answer detail


def _consult(**more):
    from medground.drug_schema import ConsultDetail, SearchCall, ToolCall

    search = SearchCall("coumadin spinach")
    return ConsultDetail(search=search, candidates=["warfarin"], tool_call=ToolCall(search), **more)


def test_a_consultation_detail_says_exactly_the_keys_the_json_face_always_had():
    from medground.drug_schema import ConsultDetail, SupportCheck

    head = {"search": {"keywords": "coumadin spinach"}, "distill_failure": None, "candidates": ["warfarin"],
            "tool_call": {"name": "search_engine", "arguments": {"keywords": "coumadin spinach"}}}
    face = _consult().to_metadata()
    assert face == head and list(face) == list(head)  # distill_failure said as null, in its place
    quoted = _consult(dropped_turns=3, support_check=SupportCheck(0.93, 2), address_moved_to=1, extractive=True,
                      quoted="Foods rich in vitamin K").to_metadata()
    assert list(quoted) == [*head, "dropped_turns", "support", "supporting_entry", "address_moved_to", "extractive",
                            "quoted"]
    assert (quoted["support"], quoted["supporting_entry"], quoted["quoted"]) == (0.93, 2, "Foods rich in vitamin K")
    # the support pass ran without a usable score: both keys said, both null
    gated = _consult(support_check=SupportCheck(None, None), unaddressed=["rash"]).to_metadata()
    assert {k: gated[k] for k in ("support", "supporting_entry", "unaddressed")} == {
        "support": None, "supporting_entry": None, "unaddressed": ["rash"]}
    assert _consult(support_check=SupportCheck(0.7, 1), uncited=True).to_metadata()["uncited"] is True
    # an unknown drug's names come first; the subject mode has no tool call; a repaired call says what it was
    unknown = _consult(unknown_drugs={"coumadex": ["Warfarin"]}).to_metadata()
    assert list(unknown)[0] == "unknown_drugs" and unknown["unknown_drugs"] == {"coumadex": ["Warfarin"]}
    subject = ConsultDetail(search=_consult().search, distill_failure="no tool call", candidates=[],
                            query_mode="subject").to_metadata()
    assert subject == {"search": {"keywords": "coumadin spinach"}, "distill_failure": "no tool call",
                       "candidates": [], "query_mode": "subject"}
    repaired = _consult(repaired="subject drug missing from the call", model_keywords="spinach").to_metadata()
    assert list(repaired)[3:6] == ["repaired", "model_keywords", "tool_call"]
    assert ConsultDetail().to_metadata() == {}  # nothing said: no key, not even the nulls
    json.dumps(quoted)


def test_the_reply_mode_detail_is_plain_json_with_the_entries_it_weighed():
    from medground.drug_schema import ConsultReply, RankedEntry

    reply = ConsultReply("Yes — Cough is listed among Lisinopril's side effects [1].", ["Cough"], ["Cough"], 0.0123,
                         "item", [RankedEntry("lisinopril", A.ADVERSE_REACTIONS, 0.91, "Cough", 0.88, 1.2),
                                  RankedEntry("lisinopril", A.WARNINGS, 0.05, None, None, 0.1)])
    face = _consult(reply=reply).to_metadata()
    assert face["reply"] == {
        "first_sentence": "Yes — Cough is listed among Lisinopril's side effects [1].", "matched": ["Cough"],
        "quotes": ["Cough"], "p_none": 0.0123, "reason": "item",
        "ranked": [{"drug": "lisinopril", "type": "adverse_reactions", "p_type": 0.91, "best_item": "Cough",
                    "similarity": 0.88, "score": 1.2},
                   {"drug": "lisinopril", "type": "warnings", "p_type": 0.05, "best_item": None, "similarity": None,
                    "score": 0.1}]}
    assert type(face["reply"]["ranked"][0]["type"]) is str and list(face)[-1] == "reply"
    json.dumps(face)
    pregnant = ConsultReply("The closest item …", condition="pregnant")
    assert _consult(reply=pregnant).to_metadata()["reply"]["condition"] == "pregnant"


def test_a_multiple_choice_consultation_is_a_choice_detail_with_a_flat_face():
    from medground.drug_schema import ConsultChoiceDetail, consult_detail
    from medground.schema import Answer, ChoiceDetail

    consult = _consult()
    read = ConsultChoiceDetail(scoring="logprob", letter_logprobs={"A": -0.1}, consult=consult)
    assert isinstance(read, ChoiceDetail) and consult_detail(read) is consult and consult_detail(consult) is consult
    assert consult_detail(ChoiceDetail()) is None and consult_detail(None) is None
    face = read.to_metadata()
    assert list(face) == ["scoring", "letter_logprobs", "search", "distill_failure", "candidates", "tool_call"]
    assert ConsultChoiceDetail(parse_failure="no letter").to_metadata() == {"parse_failure": "no letter"}
    answer = Answer(outcome="answered", choice="A", detail=read)
    assert answer.metadata == face and "consult" not in answer.metadata
