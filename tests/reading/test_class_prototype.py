"""A drug the book gives only a dose for, read through the prototype of its class: the prototype
found from the book's layout (a prototype table on the page of the drug's dosage row, the class
words shared), and the abstention that then says what the prototype lists — as the prototype's."""

import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.reading.class_prototype import class_words, find_prototypes, same_class

PROTO = "openstax-prototype:m00384#table-00003"
ROWS = "openstax-dosage-table:m00384#table-00002"


def test_class_words_are_each_classes_alternatives_in_their_forms():
    assert class_words("Second-Generation Antihistamines; Antihistamines") == [
        [(frozenset({"second", "generation", "antihistamine"}),)], [(frozenset({"antihistamine"}),)]]
    assert class_words("Statins and PCSK9 Inhibitors") == [
        [(frozenset({"statin"}),), (frozenset({"pcsk9", "inhibitor"}),)]]
    assert class_words("Angiotensin-converting enzyme (ACE) inhibitor") == [
        [(frozenset({"angiotensin", "converting", "enzyme", "inhibitor"}), frozenset({"ace", "inhibitor"}))]]
    assert class_words("") == []


def test_one_class_is_the_same_words_spelled_out_or_abbreviated_never_a_broader_one():
    def same(a, b):
        return same_class(class_words(a)[0][0], b)

    assert same("Selective Serotonin Reuptake Inhibitors", "Selective serotonin reuptake inhibitor")
    assert same("ACE Inhibitors", "Angiotensin-converting enzyme (ACE) inhibitor")
    assert same("Benzodiazepines", "Benzodiazepine (Schedule IV controlled substance)")
    assert not same("Opioid Agonists", "Opioid antagonist")
    assert not same("Biologic Psoriatic Drugs", "Psoriatic")  # coal tar is no model of a biologic
    assert not same("Antifungal Drugs", "Azole antifungal")  # nor an azole of every antifungal
    assert not same("Inhibitors", "Inhibitor")  # a generic head alone


def entries(*attrs):
    out = {}
    for a in attrs:
        out.setdefault(a.drug_id, []).append(a)
    return out


def test_the_prototype_is_the_page_table_of_the_drugs_class():
    drugs = {d.drug_id: d for d in [
        Drug("simvastatin", "simvastatin", [], "Statins and PCSK9 Inhibitors"),
        Drug("alirocumab", "alirocumab", [], "Statins and PCSK9 Inhibitors"),
        Drug("atorvastatin", "atorvastatin", [], "Statin"),
        Drug("evolocumab", "evolocumab", [], "PCSK9 inhibitor"),
        Drug("ezetimibe", "ezetimibe", [], "Cholesterol absorption inhibitor"),
        Drug("sertraline", "sertraline", [], "Selective Serotonin Reuptake Inhibitors"),
        Drug("fluoxetine", "fluoxetine", [], "Selective serotonin reuptake inhibitor"),
        Drug("codeine", "codeine", [], "Opioid Agonists"),
        Drug("naloxone", "naloxone", [], "Opioid antagonist")]}
    found = find_prototypes(drugs, entries(
        DrugAttribute("simvastatin", A.DOSAGE, "10-40 mg", ROWS),
        DrugAttribute("alirocumab", A.DOSAGE, "75 mg", ROWS),
        DrugAttribute("atorvastatin", A.DOSAGE, "10-80 mg", ROWS),
        DrugAttribute("atorvastatin", A.INTERACTIONS, "Grapefruit juice", PROTO),
        DrugAttribute("evolocumab", A.INTERACTIONS, "None", "openstax-prototype:m00384#table-00004"),
        DrugAttribute("ezetimibe", A.DOSAGE, "10 mg", "openstax-dosage-table:m00385#table-00001"),
        DrugAttribute("sertraline", A.DOSAGE, "50 mg", "openstax-dosage-table:m00266#table-00002"),
        DrugAttribute("fluoxetine", A.INTERACTIONS, "Tramadol", "openstax-prototype:m00266#table-00003"),
        DrugAttribute("codeine", A.DOSAGE, "30 mg", "openstax-dosage-table:m00300#table-00001"),
        DrugAttribute("naloxone", A.DOSAGE, "0.4 mg", "openstax-prototype:m00300#table-00002")))
    assert found["sertraline"] == "fluoxetine"
    # the caption joins two classes: the statin class for the drug whose name says statin, and
    # neither for a drug whose name holds no word of either (alirocumab is a PCSK9 inhibitor)
    assert found["simvastatin"] == "atorvastatin"
    assert "alirocumab" not in found
    assert "codeine" not in found  # an antagonist is not its class's prototype
    assert "ezetimibe" not in found  # no prototype table on its page
    assert "atorvastatin" not in found and "evolocumab" not in found  # prototypes themselves


def test_two_prototypes_of_one_class_give_the_pages_first():
    drugs = {d.drug_id: d for d in [
        Drug("candesartan", "candesartan", [], "Angiotensin receptor blockers (ARBs)"),
        Drug("losartan", "losartan", [], "Angiotensin II receptor blocker (ARB)"),
        Drug("valsartan", "valsartan", [], "Angiotensin II receptor blocker (ARB)")]}
    found = find_prototypes(drugs, entries(
        DrugAttribute("candesartan", A.DOSAGE, "8 mg", "openstax-dosage-table:m1#table-00001"),
        DrugAttribute("valsartan", A.DOSAGE, "80 mg", "openstax-prototype:m1#table-00005"),
        DrugAttribute("losartan", A.DOSAGE, "50 mg", "openstax-prototype:m1#table-00003")))
    assert found == {"candesartan": "losartan"}


@pytest.fixture(scope="module")
def reader(reader_over):
    catalog = DrugCatalog(
        [Drug("simvastatin", "simvastatin", ["Zocor"], "Statins"),
         Drug("atorvastatin", "atorvastatin", ["Lipitor"], "Statin"),
         Drug("sertraline", "sertraline", ["Zoloft"], "Selective Serotonin Reuptake Inhibitors"),
         Drug("fluoxetine", "fluoxetine", ["Prozac"], "Selective serotonin reuptake inhibitor"),
         Drug("citalopram", "citalopram", ["Celexa"], "Selective Serotonin Reuptake Inhibitors"),
         Drug("tramadol", "tramadol", ["Ultram"], "Opioid Agonists"),
         Drug("propranolol", "propranolol", ["Inderal"], "Beta-Adrenergic Blockers"),
         Drug("metoprolol", "metoprolol", ["Lopressor"], "Beta-adrenergic blocker")],
        [DrugAttribute("simvastatin", A.DOSAGE, "10-40 mg orally daily at bedtime.", ROWS),
         DrugAttribute("atorvastatin", A.DOSAGE, "10-80 mg orally once daily.", PROTO),
         DrugAttribute("atorvastatin", A.INTERACTIONS, "Rifampin\nOral contraceptives\nDigoxin", PROTO),
         DrugAttribute("atorvastatin", A.INTERACTIONS, "Grapefruit juice", PROTO),
         DrugAttribute("atorvastatin", A.ADVERSE_REACTIONS, "Myopathy\nDiarrhea", PROTO),
         DrugAttribute("sertraline", A.DOSAGE, "50 mg orally once daily.",
                       "openstax-dosage-table:m00266#table-00002"),
         DrugAttribute("fluoxetine", A.DOSAGE, "20 mg orally once daily.", "openstax-prototype:m00266#table-00003"),
         DrugAttribute("fluoxetine", A.INTERACTIONS, "Tramadol\nMAOIs\nWarfarin",
                       "openstax-prototype:m00266#table-00003"),
         DrugAttribute("citalopram", A.DOSAGE, "20 mg orally once daily.", "openstax-dosage-table:m00266#table-00002"),
         DrugAttribute("tramadol", A.DOSAGE, "50-100 mg orally every 4-6 hours.",
                       "openstax-dosage-table:m00300#table-00001"),
         DrugAttribute("propranolol", A.DOSAGE, "40 mg orally twice daily.", "openstax-dosage-table:m00280#table-00001"),
         DrugAttribute("metoprolol", A.CONTRAINDICATIONS, "AV block\nCardiogenic shock\nBradycardia",
                       "openstax-prototype:m00280#table-00002"),
         DrugAttribute("metoprolol", A.WARNINGS, "Thyroid impairment\nAsthma\nDiabetes mellitus",
                       "openstax-prototype:m00280#table-00002")])
    return reader_over(catalog)


def test_a_dose_only_drug_abstains_and_then_gives_its_class_prototypes_entry(reader):
    r = reader.reply(["I'm on simvastatin. My friend said I shouldn't drink grapefruit juice. Why?"], "simvastatin")
    assert r.outcome == "insufficient_evidence"  # no answer about simvastatin itself
    assert r.text.startswith("The medicine database has no entry on its interactions for Simvastatin")
    assert "Atorvastatin is the prototype of Simvastatin's class" in r.text
    assert "\u201cGrapefruit juice\u201d" in r.text and "Whether this holds for Simvastatin" in r.text
    assert [(c.chapter, c.section, c.text) for c in r.citations] == [("Atorvastatin", "interactions", "Grapefruit juice")]
    assert r.text.endswith("A pharmacist or the package leaflet can answer this.")


def test_a_prototype_entry_naming_nothing_asked_is_not_offered(reader):
    r = reader.reply(["I take sertraline. Is it safe with my thyroid tablets?"], "sertraline")
    assert r.outcome == "insufficient_evidence" and "prototype" not in r.text and r.citations == []


def test_off_it_abstains_as_before(reader):
    s = reader.settings
    reader.settings = s.model_copy(update={"class_prototype": False})
    try:
        r = reader.reply(["I'm on simvastatin. My friend said I shouldn't drink grapefruit juice. Why?"], "simvastatin")
    finally:
        reader.settings = s
    assert r.outcome == "insufficient_evidence" and r.citations == [] and "prototype" not in r.text


def test_a_drug_with_the_entry_is_answered_from_its_own(reader):
    r = reader.reply(["Can I have grapefruit juice with Lipitor?"], "atorvastatin")
    assert r.outcome == "answered" and r.citations[0].chapter == "Atorvastatin" and "prototype" not in r.text


def test_what_a_drug_is_for_or_how_it_works_is_never_read_from_its_class(reader):
    r = reader.reply(["How does simvastatin actually work?"], "simvastatin")
    assert r.outcome == "insufficient_evidence" and "prototype" not in r.text and r.citations == []


def test_either_drug_asked_about_may_bring_its_class_prototype(reader):
    # tramadol has no prototype; citalopram's, fluoxetine, lists tramadol itself
    r = reader.reply(["My doctor wants to add tramadol to my citalopram. Is that ok together?"], "tramadol",
                     ["citalopram"])
    assert r.outcome == "insufficient_evidence"
    assert "Fluoxetine is the prototype of Citalopram's class" in r.text and "include \u201cTramadol\u201d" in r.text


def test_a_condition_is_met_in_either_safety_entry_of_the_prototype(reader):
    r = reader.reply(["The doctor gave me propranolol for anxiety but I have asthma. Is that a problem?"],
                     "propranolol")
    assert r.outcome == "insufficient_evidence"
    assert "its warnings and precautions [1] include \u201cAsthma\u201d" in r.text
    assert r.citations[0].section == "warnings"

