import pytest

from medground.corpus.drug_builders import CatalogBuilder, add_drug_list_table, add_prototype_table
from medground.corpus.abbreviations import long_form
from medground.corpus.drug_classes import caption_class, class_label, expand_abbreviation
from medground.corpus.readers_cnxml import CnxmlTable
from medground.drug_schema import AttributeType, NameLexicon


@pytest.mark.parametrize("caption, expected", [
    ("Drug Emphasis Table: Calcium Channel Blockers (source:; January et al., 2019)",
     "Calcium Channel Blockers"),
    ("Drug Emphasis Table: Bisphosphonates (sources:; Fink, 2019).", "Bisphosphonates"),
    ("Drug Emphasis Table: Other Anticonvulsants", "Anticonvulsants"),
    ("Drug Prototype Table: Anthracyclines/Antitumor Antibiotics",
     "Anthracyclines/Antitumor Antibiotics"),
    # what the drugs are used for, or no drug table at all: no class
    ("Drug Emphasis Table: Medications Used to Treat STIs", None),
    ("Common Recommended Vaccines (sources:;)", None),
    ("Types of Insulin", None),
])
def test_caption_class(caption, expected):
    assert caption_class(caption) == expected


def test_class_label_drops_vague_prefixes():
    assert class_label("Other  Anthracyclines") == "Anthracyclines"
    assert class_label("Miscellaneous Laxatives") == "Laxatives"


@pytest.mark.parametrize("short, before, expected", [
    ("PPIs", "Histamine blockers and proton-pump inhibitors", "proton-pump inhibitors"),
    ("COCs", "The combination oral contraceptives", "combination oral contraceptives"),
    # letters inside words, matched from the right (Schwartz & Hearst)
    ("SGLT2Is", "Sodium-Glucose Cotransporter 2 Inhibitors", "Sodium-Glucose Cotransporter 2 Inhibitors"),
    ("ARB", "drugs that lower blood pressure", None),
])
def test_long_form(short, before, expected):
    assert long_form(short, before) == expected


def test_expand_abbreviation_from_the_books_own_definition():
    texts = ["Unrelated (PPI) text.", "Patients take proton pump inhibitors (PPIs) daily."]
    assert expand_abbreviation("PPIs", texts) == "Proton pump inhibitors (PPIs)"
    assert expand_abbreviation("MRAs", texts) == "MRAs"  # nothing defines it: kept as written
    assert expand_abbreviation("Statins", texts) == "Statins"  # not an abbreviation


LEX = NameLexicon({"simvastatin": ["simvastatin"], "atorvastatin": ["atorvastatin"],
                   "amoxicillin": ["amoxicillin"]}, {})


def test_a_listed_drug_takes_its_tables_class_and_a_prototype_class_wins():
    b = CatalogBuilder(LEX)
    b.definition_texts.append("Statins, also called HMG-CoA reductase inhibitors (HMGs).")
    proto = CnxmlTable("m1", "Drug Prototype Table: Atorvastatin", "", [], [
        ["Drug Class\nStatin", "Indications\nHigh cholesterol"]])
    assert add_prototype_table(b, proto, "openstax-prototype:m1#t")
    table = CnxmlTable("m2", "Drug Emphasis Table: Statins (source:; X)", "",
                       ["Drug", "Routes and Dosage Ranges"], [
                           ["Simvastatin\n(Zocor)", "10 mg orally"],
                           ["Atorvastatin\n(Lipitor)", "20 mg orally"]])
    assert add_drug_list_table(b, table, "openstax-dosage-table:m2#t") == 2
    groups = CnxmlTable("m3", "Drug Emphasis Table: Antibiotics", "",
                        ["Drug", "Routes and Dosage Ranges"], [
                            ["Other Penicillins", ""], ["Amoxicillin\n(Amoxil)", "500 mg orally"]])
    assert add_drug_list_table(b, groups, "openstax-dosage-table:m3#t") == 1
    cat = b.finish()
    by_id = {d.drug_id: d for d in cat.drugs}
    assert by_id["atorvastatin"].drug_class == "Statin"  # its own prototype cell
    assert by_id["simvastatin"].drug_class == "Statins"
    assert by_id["amoxicillin"].drug_class == "Penicillins; Antibiotics"  # group row, then caption
    # a class, not an entry: only the prototype's own cell is a drug-class entry
    entries = [a for a in cat.attributes if a.type is AttributeType.DRUG_CLASS]
    assert [(a.drug_id, a.source) for a in entries] == [("atorvastatin", "openstax-prototype:m1#t")]
    assert cat.counts["drug_classes_from_tables"] == 2



def test_a_cell_naming_two_products_gives_the_drug_both_brands():
    b = CatalogBuilder(LEX)
    table = CnxmlTable("m4", "Drug Emphasis Table: Dopaminergics", "", ["Drug", "Routes and Dosage Ranges"], [
        ["Carbidopa/levodopa immediate-release tablet\n(Sinemet)\n\nCarbidopa/levodopa oral disintegrating "
         "tablet\n(Parcopa)", "Immediate-release tablet: 1 25–100 mg tablet 3 times daily."],
        ["Carbidopa/levodopa extended release\n(Rytary)", "1 50 mg/200 mg tablet twice daily."]])
    assert add_drug_list_table(b, table, "openstax-dosage-table:m4#t") == 2
    cat = b.finish()
    (drug,) = cat.drugs  # the products' forms are no part of the drug's name
    assert drug.drug_id == "carbidopa-levodopa"
    assert sorted(drug.brand_names) == ["Parcopa", "Rytary", "Sinemet"]
    assert len([a for a in cat.attributes if a.type is AttributeType.DOSAGE]) == 2
