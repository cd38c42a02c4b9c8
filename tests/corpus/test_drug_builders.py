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
    assert by_id["bupropion"].brand_names == ["Wellbutrin", "Zyban"]  # Aplenzin: no name the lexicon links
    assert "wellbutrin" not in by_id["bupropion"].synonyms
    assert by_id["ezetimibe"].brand_names == ["Zetia"]
    # a salt of the generic is no brand, and a brand before the generic is not read this way
    assert by_id["cromolyn"].brand_names == [] and "cromolyn sodium" in by_id["cromolyn"].synonyms
