"""The medicine database's builder (corpus/drug_builders.py): brands the book itself links."""

from medground.corpus.drug_builders import CatalogBuilder, add_drug_list_table, with_header_row
from medground.corpus.readers_cnxml import CnxmlTable
from medground.drug_schema import NameLexicon, ParsedName

LEX = NameLexicon({"albuterol": ["albuterol"], "ventolin": ["albuterol"], "bupropion": ["bupropion"],
                   "wellbutrin": ["bupropion"], "zyban": ["bupropion"], "ezetimibe": ["ezetimibe"],
                   "zetia": ["ezetimibe"], "cromolyn sodium": ["cromolyn"], "cromolyn": ["cromolyn"],
                   "intal": ["cromolyn"]}, {"zyban"})


def test_a_table_whose_first_row_is_its_header_is_read_as_a_drug_table():
    table = CnxmlTable("m1", "Drug Emphasis Table: Beta Adrenergics", "", [], [
        ["Drug", "Routes and Dosage Ranges"], ["Albuterol\n(Accuneb, Proventil, Ventolin)", "2 inhalations"]])
    read = with_header_row(table)
    assert read.header == ["Drug", "Routes and Dosage Ranges"] and len(read.rows) == 1
    b = CatalogBuilder(LEX)
    assert add_drug_list_table(b, read, "openstax-dosage-table:m1#t") == 1
    (drug,) = b.finish().drugs
    assert drug.brand_names == ["Accuneb", "Proventil", "Ventolin"] and "ventolin" not in drug.synonyms
    prototype = CnxmlTable("m2", "Drug Prototype Table: Albuterol", "", [], [["Drug Class\nBeta agonist"]])
    assert with_header_row(prototype) is prototype  # no drug column: left as it is


def test_a_synonym_the_books_prose_names_as_a_brand_becomes_one():
    b = CatalogBuilder(LEX)
    for generic in ("bupropion", "ezetimibe", "cromolyn"):
        b.drug(ParsedName(generic, [], []), "openstax-prototype")
    b.definition_texts.append(
        "The most common drug in this class is bupropion hydrochloride (Aplenzin, Wellbutrin, Zyban). "
        "Ezetimibe is available as a single-drug tablet with the brand name Zetia. "
        "A prototype table features Intal (cromolyn sodium).")
    by_id = {d.drug_id: d for d in b.finish().drugs}
    # Aplenzin, which no lexicon links, follows the generic's salt ("bupropion hydrochloride"): its brand too
    assert by_id["bupropion"].brand_names == ["Aplenzin", "Wellbutrin", "Zyban"]
    assert "wellbutrin" not in by_id["bupropion"].synonyms
    assert by_id["ezetimibe"].brand_names == ["Zetia"]
    # a salt of the generic is no brand, and a brand before the generic is not read this way
    assert by_id["cromolyn"].brand_names == [] and "cromolyn sodium" in by_id["cromolyn"].synonyms


def test_a_name_no_source_links_becomes_a_brand_only_in_parentheses_right_after_one_generic():
    b = CatalogBuilder(LEX)
    for generic in ("phenytoin", "valsartan", "sacubitril", "bupropion", "naltrexone", "insulin", "spironolactone"):
        b.drug(ParsedName(generic, [], []), "openstax-prototype")
    b.definition_texts.append(
        "Phenytoin (Dilantin) is the most prescribed hydantoin. "
        "Sacubitril and valsartan (Entresto) treat heart failure. "
        "Bupropion naltrexone (Contrave) is a combination. "
        "Insulin (DailyMed, 2023) lowers glucose. "
        "Spironolactone (Aldactone, 25 mg) is a diuretic. "
        "Valsartan (Diovan) and valsartan (tablets) are listed.")
    by_id = {d.drug_id: d for d in b.finish().drugs}
    assert by_id["phenytoin"].brand_names == ["Dilantin"]
    assert by_id["valsartan"].brand_names == ["Diovan"]  # "tablets": an English word, no brand
    assert by_id["sacubitril"].brand_names == [] and by_id["naltrexone"].brand_names == []  # combinations'
    assert by_id["insulin"].brand_names == []  # a citation
    assert by_id["spironolactone"].brand_names == ["Aldactone"]  # the dose beside it is no name


def test_a_combinations_brand_named_after_its_two_components_is_the_combinations():
    b = CatalogBuilder(LEX)
    for generic in ("valsartan", "sacubitril", "naltrexone", "bupropion"):
        b.drug(ParsedName(generic, [], []), "openstax-prototype")
    b.drug(ParsedName("sacubitril/valsartan", ["sacubitril", "valsartan"], []), "openstax-prototype")
    b.drug(ParsedName("hydralazine/isosorbide dinitrate", ["hydralazine", "isosorbide dinitrate"], []),
           "openstax-prototype")
    b.definition_texts.append(
        "There is only one medication in the ARNI class: sacubitril/valsartan (Entresto). "
        "Hydralazine and isosorbide dinitrate (BiDil) are given together. "
        "Bupropion naltrexone (Contrave) is a combination.")
    by_id = {d.drug_id: d for d in b.finish().drugs}
    assert by_id["sacubitril-valsartan"].brand_names == ["Entresto"]
    assert by_id["hydralazine-isosorbide-dinitrate"].brand_names == ["BiDil"]
    assert by_id["valsartan"].brand_names == [] and by_id["naltrexone"].brand_names == []
    assert "Contrave" not in by_id["bupropion"].brand_names  # no combination record: Contrave is nobody's


def test_a_salts_brand_is_the_generics_but_a_capitalised_descriptor_is_no_brand():
    b = CatalogBuilder(LEX)
    for generic in ("ergotamine", "timolol"):
        b.drug(ParsedName(generic, [], []), "openstax-prototype")
    b.definition_texts.append("The most common ergot alkaloid is ergotamine tartrate (Cafergot).")
    # a title's descriptor, written in lower case in the prose: never a brand
    b.definition_texts.append("Timolol Hydrochloride (Nonselective). Timolol is a nonselective beta blocker.")
    by_id = {d.drug_id: d for d in b.finish().drugs}
    assert by_id["ergotamine"].brand_names == ["Cafergot"]
    assert by_id["timolol"].brand_names == []
