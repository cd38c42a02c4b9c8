import pytest

from medground.reading.class_match import class_alternatives, named_class


@pytest.mark.parametrize("drug_class, item, expected", [
    ("Statins and PCSK9 Inhibitors", "HMG-CoA reductase inhibitors/statin drugs (risk of myopathy)", "Statins"),
    ("Nonsteroidal anti-inflammatory drug (NSAID)", "NSAIDs, warfarin, SSRIs, SNRIs", "NSAID"),
    ("Angiotensin-converting enzyme (ACE) inhibitor", "ACE inhibitors", "ACE inhibitor"),
    ("Proton-pump inhibitors (PPIs)", "proton pump inhibitors", "Proton-pump inhibitors"),
    ("Tetracycline; Antibiotics", "Antibiotics (reduced effect)", "Antibiotics"),
    # every word of one alternative must be there: a shared head noun is no match
    ("Proton-pump inhibitors (PPIs)", "CYP2C19 inhibitors", None),
    ("Calcium Channel Blockers", "Beta blockers", None),
    ("Angiotensin II receptor blocker (ARB)", "Angiotensin-converting enzyme inhibitors", None),
    ("Oral Diabetes Drugs", "Oral contraceptives", None),
    ("", "Anything", None),
    # "Beta-adrenergic blocker" is a beta blocker; an "e.g." parenthesis lists the item's members
    ("Beta-adrenergic blocker", "Drugs that slow heart rate or atrioventricular conduction (e.g., beta blockers, "
     "digoxin, diltiazem, or verapamil)", "Beta-adrenergic blocker"),
    ("Alpha-adrenergic blocker", "Beta-adrenergic blockers", None),
    ("Calcium channel blocker", "Drugs that slow heart rate (e.g., beta blockers, digoxin)", None),
    ("Beta-adrenergic blocker", "Digoxin (increases its effect; beta blockers)", None),  # a note, not examples
    # a prefix's hyphen forms one word: warfarin's "non-steroidal …" names ibuprofen's "Nonsteroidal …"
    ("Nonsteroidal anti-inflammatory drug (NSAID)", "Many drugs that further increase bleeding risk (e.g., "
     "non-steroidal anti-inflammatory drugs, antiplatelet drugs)", "Nonsteroidal anti-inflammatory drug"),
])
def test_named_class(drug_class, item, expected):
    assert named_class(drug_class, item) == expected


def test_a_head_noun_alone_is_no_alternative():
    assert [name for name, _ in class_alternatives("H2 receptor antagonist/blocker")] == ["H2 receptor antagonist"]


@pytest.mark.parametrize("item, group", [
    ("CYP3A4 substrates", True), ("Anticoagulants", True), ("MAOIs", True),
    ("NSAIDs, warfarin, SSRIs", True), ("Ketoconazole and similar drugs", True),
    ("Digoxin (increases effect)", False), ("Grapefruit juice", False), ("Lithium", False),
    ("Digitalis", False), ("St. John's wort", False), ("Alcohol", False),
])
def test_names_a_group(item, group):
    from medground.reading.class_match import names_a_group

    assert names_a_group(item) is group


@pytest.mark.parametrize("drug_class, item, expected", [
    # a class that is only a part of the item's name is not the item's group
    ("Anti-inflammatory, DMARDs, antineoplastic", "Nonsteroidal anti-inflammatory drugs", None),
    ("Anticoagulant", "Oral anticoagulants", "Anticoagulant"),
    ("Anticoagulants", "Other antiplatelet or anticoagulant agents", "Anticoagulants"),
    ("Monoamine oxidase inhibitors (MAOIs)", "Concomitant use of MAOIs or within 14 days of MAOI use", "MAOIs"),
    ("Angiotensin II receptor blocker (ARB)", "Angiotensin II receptor blockers (e.g., candesartan)",
     "Angiotensin II receptor blocker"),
])
def test_an_item_part_must_name_the_class_itself(drug_class, item, expected):
    assert named_class(drug_class, item) == expected


def test_a_labels_sentence_names_a_class_by_its_words():
    from medground.reading.class_match import mentions_class

    sentence = ("Concomitant use of drugs affecting hemostasis increases the risk of bleeding. These include "
                "aspirin and other antiplatelet agents, heparin, and nonsteroidal anti-inflammatory drugs (NSAIDs).")
    nsaid = "Propionic Acid Derivatives; Nonsteroidal Anti-inflammatory Drugs; Nonopioid Analgesics"
    assert mentions_class(nsaid, sentence) == "Nonsteroidal Anti-inflammatory Drugs"
    assert mentions_class("Selective Serotonin Reuptake Inhibitors", sentence) is None
    assert mentions_class("Anticoagulants", "other anticoagulants") is None  # one word: too loose in prose
