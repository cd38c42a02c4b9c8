"""Names and class questions answered from the drug record, where the reader had no entry to cite.
Real bundled MiniLM and the shipped typer; a small database."""

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.reading.record_facts import asks_sameness, names_said

SRC = "openstax-prototype:m1#t"
AMLODIPINE = Drug("amlodipine", "amlodipine", ["Norvasc", "Istin"], "Calcium channel blocker", ["norvasc"])
METOPROLOL = Drug("metoprolol", "metoprolol", ["Lopressor", "Toprol XL", "Toprol"], "Beta blocker")


def test_two_names_of_one_medicine_asked_as_one():
    turn = "Pharmacy gave me amlodipine instead of Norvasc, is it the same thing??"
    assert names_said(turn, AMLODIPINE) == ["amlodipine", "Norvasc"]  # a brand's spelling, said once
    assert asks_sameness(turn, AMLODIPINE) == ["amlodipine", "Norvasc"]
    assert asks_sameness("Is Norvasc amlodipine?", AMLODIPINE)  # nothing else asked
    assert names_said("Is Toprol XL the same as Lopressor?", METOPROLOL) == ["Toprol XL", "Lopressor"]
    # two names, something else asked; one name only
    assert not asks_sameness("Is Norvasc (amlodipine) safe in pregnancy?", AMLODIPINE)
    assert not asks_sameness("Is that the metoprolol? The bottle says Toprol XL.", METOPROLOL)


def test_the_record_answers_where_no_entry_does(reader_over):
    catalog = DrugCatalog(
        [AMLODIPINE, Drug("sertraline", "sertraline", ["Zoloft"], "Selective serotonin reuptake inhibitor")],
        [DrugAttribute("amlodipine", A.DOSAGE, "5-10 mg orally daily.", SRC),
         DrugAttribute("amlodipine", A.DRUG_CLASS, "Calcium channel blocker", SRC),
         DrugAttribute("sertraline", A.DOSAGE, "50-200 mg orally daily.", SRC)])
    reader = reader_over(catalog)
    r = reader.reply(["Pharmacy gave me amlodipine instead of Norvasc, is it the same thing??"], "amlodipine")
    assert r.outcome == "answered" and r.first_sentence.startswith("Yes — the medicine database lists Norvasc as "
                                                                   "a brand name of Amlodipine [1].")
    assert r.citations[0].section == "names and class" and "Norvasc" in r.citations[0].text
    assert reader.reply(["Is Zoloft an SSRI?"], "sertraline").outcome == "insufficient_evidence"  # the default
    on = reader.settings.model_copy(update={"record_class": True})
    saved, reader.settings = reader.settings, on
    try:
        cls = reader.reply(["Is Zoloft an SSRI?"], "sertraline")  # no class entry: the record's class
        assert cls.outcome == "answered" and "Selective serotonin reuptake inhibitor" in cls.first_sentence
    finally:
        reader.settings = saved
