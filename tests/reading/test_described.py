"""A second medicine named by what it is ("a water pill for her swollen legs"): grammar first,
then the reader's choice with the real bundled MiniLM and typer over a small database."""

import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.reading.described import Description, SecondMedicine, descriptions, masked_for

SRC = "openstax-prototype:m1#t"
LITHIUM_WATER_PILL = ("my mom is on lithium for years. her GP just started her on a water pill for her swollen "
                      "legs. could that cause problems with the lithium?")


def test_a_description_is_the_content_words_before_a_referent_noun_and_its_purpose_follows_for():
    assert descriptions(LITHIUM_WATER_PILL) == [Description("water pill", "pill", frozenset({"swollen", "legs"}))]
    assert [d.text for d in descriptions("She takes her blood pressure pills at night.")] == ["blood pressure pills"]
    # the purpose stops at a conjunction or an auxiliary: the question after it is not why it is taken
    got = descriptions("a heart pill for palpitations and could it hurt my kidneys?")
    assert got == [Description("heart pill", "pill", frozenset({"palpitations"}))]
    assert descriptions("I take the pills every day") == []  # no describing word
    assert descriptions("my calcium tablets", substances=frozenset({"calcium"})) == []  # a substance: kept as it is
    assert descriptions("water, pill") == []  # never across a clause


def test_only_interactions_entries_meet_the_description_and_its_purpose():
    second = SecondMedicine("water pill", "Diuretics", 0.76, frozenset({"swollen", "legs"}))
    phrases = [("water pill", 1.0), ("swollen legs", 1.0), ("started swollen legs", 1.0), ("tremor", 1.0)]
    assert masked_for(A.INTERACTIONS, phrases, second).tolist() == [1, 1, 1, 1]
    assert masked_for(A.ADVERSE_REACTIONS, phrases, second).tolist() == [0, 0, 0, 1]


@pytest.fixture(scope="module")
def reader(reader_over):
    from medground.corpus.lay_vocabulary import LayVocabulary

    catalog = DrugCatalog(
        [Drug("lithium", "lithium", ["Lithobid"], "Mood stabilizer"),
         Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant"),
         Drug("lisinopril", "lisinopril", ["Zestril"], "Angiotensin-converting enzyme (ACE) inhibitor")],
        [DrugAttribute("lithium", A.INTERACTIONS, "Diuretics\nCarbamazepine\nTheophylline", SRC),
         DrugAttribute("lithium", A.ADVERSE_REACTIONS, "Tremor\nEdema\nPolyuria\nNausea", SRC),
         DrugAttribute("lithium", A.INDICATIONS, "Treatment of active manic episodes", SRC),
         DrugAttribute("warfarin", A.INTERACTIONS, "Many antibiotics and antifungals\nAlcohol\nGrapefruit juice", SRC),
         DrugAttribute("warfarin", A.CONTRAINDICATIONS, "Hypersensitivity\nPregnancy\nHemorrhagic tendencies", SRC),
         DrugAttribute("lisinopril", A.INTERACTIONS, "Diuretics\nPotassium supplements\nLithium", SRC),
         DrugAttribute("lisinopril", A.ADVERSE_REACTIONS, "Cough\nDizziness\nHyperkalemia", SRC),
         DrugAttribute("lisinopril", A.INDICATIONS, "Hypertension\nHeart failure", SRC)])
    vocabulary = LayVocabulary()  # what consumer pages pair (corpus/lay_vocabulary.py mines it)
    vocabulary.add("diuretics", "water pills", 3)
    vocabulary.add("edema", "swelling", 5)
    return reader_over(catalog, lay_vocabulary=vocabulary)


def test_a_water_pill_beside_lithium_is_the_diuretic_interaction_not_a_side_effect(reader):
    r = reader.reply([LITHIUM_WATER_PILL], "lithium")
    assert r.chosen.attribute.type is A.INTERACTIONS and "Diuretics" in r.matched
    assert r.first_sentence.startswith("Caution — Lithium's listed interactions include Diuretics")
    off = reader.settings.model_copy(update={"described_medicines": False})
    from medground.reading.consult import ConsultReader

    before = ConsultReader(reader.drugs, reader.typer, reader.embedder, off,
                           lay_vocabulary=reader.space._lay).reply([LITHIUM_WATER_PILL], "lithium")
    assert before.chosen.attribute.type is A.ADVERSE_REACTIONS  # the premise: "swollen legs" met "Edema"


def test_a_description_of_the_subject_itself_is_no_second_medicine(reader):
    # "my blood pressure pill" said of lisinopril is lisinopril (near its indications): still a
    # side-effect question, though lisinopril's interactions list diuretics too
    r = reader.reply(["My blood pressure pill, lisinopril, gives me a dry cough. Is that from it?"], "lisinopril")
    assert r.chosen.attribute.type is A.ADVERSE_REACTIONS and "Cough" in r.matched


def test_a_description_met_through_its_describing_word_alone_is_named_as_asked(reader):
    # "antibiotic" said only before "pill" is otherwise a modifier (reading/siblings.py) that
    # names nothing asked; as the second medicine's name it is what was asked
    r = reader.reply(["I'm on warfarin. The dentist gave me an antibiotic pill before my tooth was pulled. "
                      "Is that ok with the warfarin?"], "warfarin")
    assert r.chosen.attribute.type is A.INTERACTIONS and r.matched == ["Many antibiotics and antifungals"]
    assert r.first_sentence.startswith("Caution — Warfarin's listed interactions include Many antibiotics")


def test_a_description_in_an_earlier_turn_counts_when_the_last_asks_about_taking_them_together(reader):
    turns = ["Her GP just started her on a water pill for her swollen legs.",
             "She's been on lithium for years. Is it safe to take them together?"]
    r = reader.reply(turns, "lithium")
    assert r.chosen.attribute.type is A.INTERACTIONS and "Diuretics" in r.matched
    # a last turn about something else keeps to it
    r = reader.reply(["I had a water pill before but stopped it.",
                      "I'm on lithium now and my hands shake a lot. Is that the lithium?"], "lithium")
    assert r.chosen.attribute.type is A.ADVERSE_REACTIONS


def test_a_second_medicine_only_mentioned_beside_a_side_effect_question_leaves_it_one(reader):
    r = reader.reply(["I'm on lithium and also a water pill. My hands have started shaking a bit, is that a "
                      "side effect of the lithium?"], "lithium")
    assert r.chosen.attribute.type is A.ADVERSE_REACTIONS and "Tremor" in r.matched
