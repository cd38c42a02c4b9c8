"""A medicine named by its substance ("calcium tablets") is what the patient asks about, while one
named by what it is for ("my heart pills") is not: the words before a referent noun stay when they
are words of the database's generic names."""

import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.reading.consult_text import content_phrases

SRC = "openstax-prototype:m1#t"


def test_a_substance_before_a_referent_noun_stays_a_phrase():
    said = "My doctor put me on calcium tablets and my heart pills."
    plain = content_phrases(said)
    assert "calcium" not in plain and "heart" not in plain  # both read as naming a medicine
    kept = content_phrases(said, substances=frozenset({"calcium", "carbonate"}))
    assert "calcium" in kept and "heart" not in kept


@pytest.fixture(scope="module")
def reader(reader_over):
    catalog = DrugCatalog(
        [Drug("levothyroxine", "levothyroxine", ["Synthroid"], "Thyroid hormone"),
         Drug("calcium carbonate", "calcium carbonate", ["Tums"], "Antacid")],
        [DrugAttribute("levothyroxine", A.INTERACTIONS, "Lithium\nAmiodarone\nCalcium\nIron\nSoy", SRC),
         DrugAttribute("levothyroxine", A.DOSAGE, "25-200 mcg orally daily.", SRC),
         DrugAttribute("calcium carbonate", A.DOSAGE, "500 mg orally as needed.", SRC)])
    return reader_over(catalog)


def test_calcium_tablets_meet_the_listed_calcium(reader):
    assert "calcium" in reader.space.substance_words() and "tums" not in reader.space.substance_words()
    r = reader.reply(["I take levothyroxine and my doctor just put me on calcium tablets for my bones, "
                      "do they clash?"], "levothyroxine")
    assert r.citations[0].section == "interactions" and r.matched == ["Calcium"]
    assert r.first_sentence.startswith("Caution")
