"""A patient's compound that names another thing of an item's kind ("cranberry juice" against
"Grapefruit juice") is not what the item lists: grammar (a compound's head is its last word),
then the reader's reply with the real bundled MiniLM and typer."""

import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.reading.siblings import compounds, item_heads, sibling, sibling_candidates

SRC = "openstax-prototype:m1#t"


def test_compounds_are_adjacent_content_words_within_a_clause():
    pairs = compounds("My friend said I shouldn't have cranberry juice, is that true? I take Coumadin daily.",
                      exclude=["Coumadin"])
    assert ("cranberry", "juice") in pairs and ("friend", "said") in pairs
    assert not any("coumadin" in p for p in pairs)  # a named drug is neither modifier nor head
    assert ("juice", "true") not in pairs  # never across a clause boundary
    assert compounds("a glass of wine") == []  # never across a stop word


def test_a_sibling_shares_the_head_under_another_modifier():
    assert item_heads("Grapefruit juice (large amounts)") == ("juice", frozenset({"grapefruit"}))
    assert item_heads("Cough") is None  # no modifier: what a "dry cough" is a kind of
    assert item_heads("weakness of the skeletal muscles") is None  # its head is not its last word
    assert sibling_candidates([("cranberry", "juice")], ["Grapefruit juice"]) == [
        ("cranberry juice", "cranberry", frozenset({"grapefruit"}))]
    # through a plain name of the item: "chest pain" is no "muscle pain"
    assert [c[0] for c in sibling_candidates([("chest", "pain")], ["myalgia", "muscle pain"])] == ["chest pain"]
    # a kind of the item, the item itself, or its modifier said in the compound: no sibling
    assert sibling_candidates([("dry", "cough")], ["Cough"]) == []
    assert sibling_candidates([("muscle", "pains")], ["myalgia", "muscle pain"]) == []
    assert sibling_candidates([("blood", "pressure")], ["Elevated blood pressure"]) == []
    assert sibling_candidates([("read", "potassium")], ["Potassium salt substitutes"]) == []  # head: "substitutes"


@pytest.fixture(scope="module")
def reader(reader_over):
    catalog = DrugCatalog(
        [Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant")],
        [DrugAttribute("warfarin", A.INTERACTIONS, "Nonsteroidal anti-inflammatory drugs\nGrapefruit juice\nAlcohol",
                       SRC),
         DrugAttribute("warfarin", A.DOSAGE, "2-10 mg orally daily, adjusted to INR", SRC)])
    return reader_over(catalog)


def test_a_sibling_is_named_as_not_listed_and_the_item_itself_still_matches(reader):
    from medground.reading.consult import ConsultReader

    turns = ["I'm on Coumadin. My friend said I shouldn't have cranberry juice. Is that true?"]
    r = reader.reply(turns, "warfarin")
    grapefruit = next(m for m in r.chosen.items if m.text == "Grapefruit juice")
    # the premise: MiniLM alone calls it a match ("juice" meets "Grapefruit juice")
    assert reader.settings.match_at <= grapefruit.similarity < reader.settings.sibling_until
    assert grapefruit.sibling == "cranberry juice" and "Grapefruit juice" not in r.matched
    assert r.first_sentence.startswith("The database does not list cranberry juice among Warfarin's interactions [1]")
    assert "\u201cGrapefruit juice\u201d, which is not the same thing" in r.first_sentence
    off = ConsultReader(reader.drugs, reader.typer, reader.embedder,
                        reader.settings.model_copy(update={"sibling_until": 0.0})).reply(turns, "warfarin")
    assert off.first_sentence.startswith("Caution") and "Grapefruit juice" in off.matched
    # a verb before the head is no modifier of a kind: "got" is not "grapefruit"
    assert sibling([("got", "juice")], ["Grapefruit juice"], reader.embedder, reader.settings.sibling_kin) == ""
    assert sibling([("cranberry", "juice")], ["Grapefruit juice"], reader.embedder,
                   reader.settings.sibling_kin) == "cranberry juice"
    same = reader.reply(["I'm on Coumadin. Can I still have grapefruit juice at breakfast?"], "warfarin")
    assert same.first_sentence.startswith("Caution") and "Grapefruit juice" in same.matched


def test_a_word_said_only_as_a_modifier_names_nothing_asked(reader):
    from medground.reading.consult import ConsultReader
    from medground.reading.siblings import modifiers_only

    assert modifiers_only("Is it okay to drink green tea with it?") == {"drink", "green"}
    assert modifiers_only("Can I have a drink with it?") == set()  # said alone: what is asked
    # a phrasal verb's verb before its object: "coughing up blood" is no cough
    assert "coughing" in modifiers_only("Lately I've been coughing up blood.")
    assert modifiers_only("I keep throwing up.") == set()
    # ... and past determiners to its object: he drinks coffee, not alcohol
    assert "drinks" in modifiers_only("he drinks a lot of coffee, is that ok?")
    assert modifiers_only("Is it ok to drink?") == set()
    # before one who takes something in, or the taking: what is taken, as an object would be
    assert "coffee" not in modifiers_only("I'm a big coffee drinker, could that be it?")
    assert "salt" not in modifiers_only("Does my salt intake matter?")
    assert "coffee" in modifiers_only("I had a coffee cake with it.")
    turns = ["I'm on Coumadin. Can I drink green tea in the morning?"]
    r = reader.reply(turns, "warfarin")
    alcohol = next(m for m in r.chosen.items if m.text == "Alcohol")
    assert alcohol.phrase == "drink" and alcohol.modifier and "Alcohol" not in r.matched
    assert r.first_sentence.startswith("The database does not list what you describe, in those words, among "
                                       "Warfarin's interactions [1]")
    on = ConsultReader(reader.drugs, reader.typer, reader.embedder,
                       reader.settings.model_copy(update={"modifiers_alone": "on"})).reply(turns, "warfarin")
    assert on.matched == ["Alcohol"]
    assert reader.reply(["I'm on Coumadin. Is it okay to have a drink at the weekend?"], "warfarin").matched == ["Alcohol"]
