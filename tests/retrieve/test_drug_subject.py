"""Subject-drug resolution, combination names, ordinary words that resemble names, learned typing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.store.drugs import DrugStore
from medground.retrieve.drug_subject import co_named, mentions, named_before, resolve_subjects
from medground.retrieve.drugs import DrugRetriever, DrugRetrieverSettings

SRC = "openstax-prototype:m1#t"


def _catalog() -> DrugCatalog:
    drugs = [Drug("ibuprofen", "ibuprofen", ["Advil"], "NSAID"),
             Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant"),
             Drug("levodopa", "levodopa", [], "Dopamine precursor"),
             Drug("carbidopa-levodopa", "carbidopa/levodopa", ["Sinemet"], "", [], ["carbidopa", "levodopa"]),
             Drug("epinephrine", "epinephrine", ["Twinject"], "Sympathomimetic")]
    attrs = [DrugAttribute("ibuprofen", A.DOSAGE, "200-400 mg orally every 4-6 hours", SRC),
             DrugAttribute("ibuprofen", A.INTERACTIONS, "Warfarin\nAspirin", SRC),
             DrugAttribute("ibuprofen", A.ADVERSE_REACTIONS, "Dyspepsia\nGI bleeding", SRC),
             DrugAttribute("warfarin", A.DOSAGE, "2-10 mg orally daily, adjusted to INR", SRC),
             DrugAttribute("levodopa", A.DOSAGE, "250 mg twice daily", SRC),
             DrugAttribute("carbidopa-levodopa", A.DOSAGE, "25/100 mg three times daily", SRC),
             DrugAttribute("epinephrine", A.DOSAGE, "0.3 mg intramuscular injection; inject into the thigh", SRC),
             DrugAttribute("epinephrine", A.WARNINGS, "Do not inject into the buttock; an injected dose may", SRC)]
    return DrugCatalog(drugs, attrs)


@pytest.fixture()
def retriever(tmp_path: Path) -> DrugRetriever:
    store = DrugStore(tmp_path / "d.sqlite")
    store.build(_catalog())
    return DrugRetriever(store, DrugRetrieverSettings(intent="cues"))


def _subject(retriever, turns):
    return [s.drug_id for s in resolve_subjects(retriever, turns)]


def test_someone_elses_medicine_loses_to_the_users_own(retriever):
    turns = ["My husband takes Coumadin for years.", "I take Advil for my back.", "what dose is safe?"]
    assert _subject(retriever, turns)[0] == "ibuprofen"


def test_a_medicine_being_started_is_the_patients_own(retriever):
    # "starting me on X. I already take Y — anything I should know?" asks about the new medicine
    turns = ["My doctor is starting me on Coumadin. I already take Advil for my back - anything I should know?"]
    assert _subject(retriever, turns)[0] == "warfarin"
    assert _subject(retriever, ["They put me on Coumadin and I take Advil too. Any problem?"])[0] == "warfarin"


def _new(retriever, turns, weight=1.0):
    return [s.drug_id for s in resolve_subjects(retriever, turns, new_weight=weight)]


def test_a_new_medicine_weighs_more_and_the_new_one_points_back_to_it(retriever):
    turns = ["My mum's prescriptions came and there's a new one in there called Coumadin.",
             "She's on Advil for her hips. So what's the new one actually for?"]
    assert _new(retriever, turns)[0] == "warfarin"
    assert _new(retriever, turns, weight=0.0)[0] == "ibuprofen"  # off: the drug named in the question
    # the new one named in the question itself is that one
    assert _new(retriever, ["I take Coumadin.", "They just added Advil. What is the new one for?"])[0] == "ibuprofen"


def test_a_drug_the_user_stopped_loses(retriever):
    turns = ["I was on Advil.", "I stopped taking Coumadin last year.", "how much should I take?"]
    assert _subject(retriever, turns)[0] == "ibuprofen"


def test_the_last_turn_wins_and_its_first_named_drug_breaks_ties(retriever):
    assert _subject(retriever, ["I take Advil.", "what is the dose of Coumadin?"])[0] == "warfarin"
    # Brand and generic are equally exact: the one named first is asked about, not the generic.
    assert _subject(retriever, ["does Advil interact with warfarin?"]) == ["ibuprofen", "warfarin"]


def test_a_combination_named_earlier_owns_a_later_component_mention(retriever):
    turns = ["I was prescribed Carbidopa/Levodopa a month ago.", "what is the highest dose of levodopa?"]
    assert _subject(retriever, turns)[0] == "carbidopa-levodopa"
    # Named alone, the component is its own drug.
    assert _subject(retriever, ["what is the highest dose of levodopa?"])[0] == "levodopa"


def test_slash_combination_is_one_name(retriever):
    (top, *_) = retriever.find_drugs("I was prescribed Carbidopa/Levodopa")
    assert top.drug_id == "carbidopa-levodopa" and top.how.startswith("exact generic")


def test_ordinary_words_are_not_fuzzy_names(retriever):
    # "inject" resembles "Twinject" (ratio 86) but is a word of the database's own text.
    assert retriever.find_drugs("how to inject it") == []
    assert retriever.find_drugs("ibuprofin dose")[0].drug_id == "ibuprofen"


def test_search_subject_ranks_the_given_drugs_records(retriever):
    hits = retriever.search_subject(["ibuprofen"], "what dose should I take", k=2)
    assert hits[0].drug.drug_id == "ibuprofen" and hits[0].attribute.type is A.DOSAGE


class _FixedTyper:
    def __init__(self, top):
        self._top = top

    def top(self, text, k=2):
        return self._top[:k]


def test_learned_typing_weights_the_top_two_types(tmp_path):
    store = DrugStore(tmp_path / "d.sqlite")
    store.build(_catalog())
    r = DrugRetriever(store, DrugRetrieverSettings(intent="learned"))
    r._typer = _FixedTyper([(A.INTERACTIONS, 0.6), (A.ADVERSE_REACTIONS, 0.3), (A.DOSAGE, 0.1)])
    assert r.intents("anything") == {A.INTERACTIONS: 1.0, A.ADVERSE_REACTIONS: 0.5}
    types = [h.attribute.type for h in r.search("ibuprofen", k=3)]
    assert types == [A.INTERACTIONS, A.ADVERSE_REACTIONS, A.DOSAGE]
    # "both": an explicit keyword cue still counts where the typer missed it.
    r.settings = DrugRetrieverSettings(intent="both")
    assert r.intents("ibuprofen dose")[A.DOSAGE] == 1.0


def test_intent_model_round_trip_and_training(tmp_path):
    from medground.retrieve.drug_intent import MEDICATION_QA_TYPES, IntentModel, train

    assert MEDICATION_QA_TYPES["Side effects"] is A.ADVERSE_REACTIONS and MEDICATION_QA_TYPES["Appearance"] is None
    rng = np.random.default_rng(0)
    centers = {A.DOSAGE: np.eye(4)[0], A.INTERACTIONS: np.eye(4)[1], A.STORAGE: np.eye(4)[2]}
    x, y = [], []
    for label, c in centers.items():
        for _ in range(10):
            x.append(c + 0.05 * rng.standard_normal(4))
            y.append(label)
    model = train(np.array(x), y, embedder="test")
    top = model.top(np.array([centers[A.INTERACTIONS]]), k=2)[0]
    assert top[0][0] is A.INTERACTIONS and top[0][1] > top[1][1]
    model.save(tmp_path / "m.npz")
    again = IntentModel.load(tmp_path / "m.npz")
    assert again.classes == model.classes and again.embedder == "test"
    assert np.allclose(again.probabilities(np.array(x)), model.probabilities(np.array(x)), atol=1e-5)


def test_co_named_drugs_are_the_questions_own_never_a_relatives(retriever):
    # Asked together: both drugs are the patient's.
    assert co_named(retriever, ["can I take Advil with my Coumadin?"], "ibuprofen") == ["warfarin"]
    # A relative's medicine in the same turn is context, not part of the question.
    turns = ["My wife is on warfarin, but I take Advil. I forgot my morning dose, do I take it now?"]
    assert resolve_subjects(retriever, turns)[0].drug_id == "ibuprofen"
    assert co_named(retriever, turns, "ibuprofen") == []
    # One the patient stopped is not taken together either; an earlier turn's drug is not the question's.
    assert co_named(retriever, ["I stopped taking warfarin last year. Is Advil safe?"], "ibuprofen") == []
    assert co_named(retriever, ["I take Coumadin.", "is Advil ok for a headache?"], "ibuprofen") == []
    # Two medicines of the same relative are asked about together.
    turns = ["My dad takes Coumadin and his dentist wants him to take Advil too. Is that safe together?"]
    subject = resolve_subjects(retriever, turns)[0].drug_id
    assert sorted([subject, *co_named(retriever, turns, subject)]) == ["ibuprofen", "warfarin"]
    # ... whatever the relative is called: "my mum" was read as the patient's own until session 23,
    # so "her" Advil, told in another sentence, was not asked about with "her" Coumadin
    for who in ("mum", "nan", "stepdad", "teenager"):
        turns = [f"My {who} takes Coumadin for a clot. The doctor said they can take Advil for the pain. "
                 "Is that ok with the Coumadin?"]
        assert sorted(["warfarin", *co_named(retriever, turns, "warfarin")]) == ["ibuprofen", "warfarin"], who
    # ... and when the second is told in the same sentence without its owner ("and was just
    # prescribed"): far from "husband", it is still his
    turns = ["My husband takes Coumadin every evening and was just prescribed Advil, is that combo ok?"]
    subject = resolve_subjects(retriever, turns)[0].drug_id
    assert sorted([subject, *co_named(retriever, turns, subject)]) == ["ibuprofen", "warfarin"]


def test_drugs_named_before_are_the_patients_own_and_not_left(retriever):
    from medground.retrieve.drug_subject import named_before

    # the patient's earlier drug is what "while I take this?" may point back to
    assert named_before(retriever, ["Yes, it's Coumadin.", "Only Advil. Is it alright while I take this?"],
                        "ibuprofen") == ["warfarin"]
    # not one stopped, not a relative's, not the subject itself
    assert named_before(retriever, ["I stopped taking warfarin last year.", "Is Advil safe with it?"], "ibuprofen") == []
    assert named_before(retriever, ["My husband takes Coumadin.", "Is Advil safe with it?"], "ibuprofen") == []
    assert named_before(retriever, ["I take Advil.", "Is Advil safe?"], "ibuprofen") == []


def test_a_second_drug_is_named_not_guessed(retriever):
    """A misspelt second drug counts; a loose match under the floor is no second drug."""
    from medground.retrieve.drug_subject import SECOND_DRUG_MIN_MATCH, mentions

    assert co_named(retriever, ["can I take Advil with wafarin?"], "ibuprofen") == ["warfarin"]
    turn = ["can I take Advil with epinephron?"]
    loose = next(m for m in mentions(retriever, turn) if m.drug_id == "epinephrine")
    assert loose.match_score < SECOND_DRUG_MIN_MATCH and co_named(retriever, turn, "ibuprofen") == []


@pytest.mark.parametrize("turns", [
    ["My wife has a bottle of Advil in the cupboard. Can I take a couple of those with my Coumadin?"],
    ["My husband takes Advil for his knees.", "Is it okay for me to take some of his? I'm on Coumadin."],
])
def test_a_relatives_medicine_the_patient_means_to_take_is_the_patients(retriever, turns):
    subject = _subject(retriever, turns)[0]
    other = "ibuprofen" if subject == "warfarin" else "warfarin"
    assert co_named(retriever, turns, subject) == [other] or other in named_before(retriever, turns, subject)


def test_a_relatives_medicine_stays_theirs_when_the_patient_takes_their_own(retriever):
    turns = ["My wife takes Coumadin every day.", "Can I take Advil for my headache?"]
    assert _subject(retriever, turns)[0] == "ibuprofen"
    assert named_before(retriever, turns, "ibuprofen") == []
    # "it" is the patient's own drug named last, not the relative's named before it
    turn = ["My wife is on Coumadin, but I take Advil twice a day. Should I take it now or wait?"]
    assert _subject(retriever, turn)[0] == "ibuprofen" and co_named(retriever, turn, "ibuprofen") == []


def test_a_guess_never_outranks_a_drug_named_outright(retriever, monkeypatch):
    from medground.retrieve import drug_subject
    from medground.retrieve.drug_subject import Mention

    guessed = [Mention("epinephrine", 0, 14, "cover", 0.65, own=True), Mention("warfarin", 0, 30, "coumadin", 1.0)]
    monkeypatch.setattr(drug_subject, "mentions", lambda *_: guessed)
    assert _subject(retriever, ["Will my plan cover Coumadin?"]) == ["warfarin"]
    monkeypatch.setattr(drug_subject, "mentions", lambda *_: guessed[:1])  # the guess alone still counts
    assert _subject(retriever, ["Will my plan cover it?"]) == ["epinephrine"]
    # and so does a guess in a turn of its own, after another drug named outright
    earlier = [Mention("warfarin", 0, 9, "coumadin", 1.0), Mention("epinephrine", 1, 0, "twinjct", 0.67)]
    monkeypatch.setattr(drug_subject, "mentions", lambda *_: earlier)
    assert _subject(retriever, ["I was on Coumadin.", "Twinjct now. Is that normal?"])[0] == "epinephrine"


def test_the_drug_the_question_sentence_names_is_the_subject(retriever):
    from medground.corpus.sentences import questions

    turn = "I take my Coumadin every night, and the dentist gave me Advil. How much Advil can I take? thanks"
    assert questions(turn) == ["How much Advil can I take?"]
    plain = "no question here. the last one"
    assert questions(plain) == ["the last one"]
    # "my Coumadin" (the patient's own) outweighs Advil named later, unless the question names Advil
    assert resolve_subjects(retriever, [turn], asked_weight=0.0)[0].drug_id == "warfarin"
    assert resolve_subjects(retriever, [turn])[0].drug_id == "ibuprofen"


def test_a_subject_found_only_through_a_misspelling_says_what_it_was_read_as():
    from medground.retrieve.drug_subject import Mention, Subject, read_as

    fuzzy = Mention("meperidine", 0, 10, "dilantin", 0.63, how="fuzzy 'dilantin'→'dolantin' (88)")
    exact = Mention("meperidine", 1, 0, "demerol", 1.0, how="exact brand 'demerol'")
    assert read_as(Subject("meperidine", 1.0, [fuzzy])) == ("dilantin", "dolantin")
    assert read_as(Subject("meperidine", 1.0, [fuzzy, exact])) is None  # named outright once: no note
    assert read_as(Subject("meperidine", 1.0, [])) is None


def test_the_note_names_what_was_written_and_the_drug_it_was_read_as():
    from medground.retrieve.drug_subject import Mention, Subject, read_as_note

    meperidine = Drug("meperidine", "meperidine", ["Demerol"], "Opioid")
    fuzzy = Mention("meperidine", 0, 10, "dilantin", 0.63, how="fuzzy 'dilantin'→'dolantin' (88)")
    assert read_as_note(Subject("meperidine", 1.0, [fuzzy]), meperidine) == \
        " (I read “dilantin” as Dolantin, a name of Meperidine.)"
    generic = Mention("meperidine", 0, 0, "meperidin", 0.9, how="fuzzy 'meperidin'→'meperidine' (95)")
    assert read_as_note(Subject("meperidine", 1.0, [generic]), meperidine) == " (I read “meperidin” as Meperidine.)"
    exact = Mention("meperidine", 0, 0, "demerol", 1.0, how="exact brand 'demerol'")
    assert read_as_note(Subject("meperidine", 1.0, [exact]), meperidine) == ""


def test_a_person_noun_right_before_the_name_names_the_product_not_its_owner(retriever):
    # "a baby aspirin" is low-dose aspirin, the patient's own; "her Advil" stays hers
    assert co_named(retriever, ["I'm on Coumadin and take a baby Advil daily. Is that ok?"], "warfarin") == ["ibuprofen"]
    assert co_named(retriever, ["I'm on Coumadin. My wife takes her Advil daily, is that ok?"], "warfarin") == []
    assert co_named(retriever, ["I'm on Coumadin and my baby takes Advil. Is that ok?"], "warfarin") == []


def test_a_drug_the_lexicon_knows_is_never_read_as_the_nearest_name_of_another(retriever, monkeypatch):
    from medground.drug_schema import NameLexicon
    from medground.retrieve import drugs as drug_retrieval

    lexicon = NameLexicon({"warfarine": ["warfarin"], "warfarinol": ["warfarinol"]}, set())
    monkeypatch.setattr(drug_retrieval, "_drug_name_lexicon", lambda: lexicon)
    assert retriever.names_another_drug("warfarinol", "warfarin")  # a drug of its own the database lacks
    assert not retriever.names_another_drug("warfarine", "warfarin")  # the lexicon's variant of the same drug
    assert not retriever.names_another_drug("warfarn", "warfarin")  # a misspelling the lexicon does not know
    assert [m.drug_id for m in retriever.find_drugs("can I take warfarinol?")] == []
    assert [m.drug_id for m in retriever.find_drugs("can I take warfarn?")] == ["warfarin"]


def test_a_combinations_components_named_one_by_one_name_the_combination(retriever):
    # the database holds carbidopa/levodopa as one product; "levodopa carbidopa" names it
    assert _subject(retriever, ["levodopa carbidopa what will these drugs do to me if i take alcohol"])[0] == \
        "carbidopa-levodopa"
    assert _subject(retriever, ["I take levodopa. Can I drink alcohol?"])[0] == "levodopa"  # one part: that part


def test_the_drug_the_pharmacist_asks_about_needs_the_patients_yes(retriever):
    from medground.retrieve.drug_subject import staff_named

    named = staff_named(retriever, "Patient: My painkiller upsets me.\nPharmacist: Is that the Advil?\n"
                                   "Patient: Yes, that one. Is it the tablets?")
    assert named is not None and named[0].drug_id == "ibuprofen" and named[1]
    assert staff_named(retriever, "Patient: My pill.\nPharmacist: Is that the Advil?\nPatient: No, the other one.") is None
    # a statement naming it counts; an alternative offered does not; two drugs are no answer either
    assert staff_named(retriever, "Patient: Numbing drops.\nPharmacist: Those would have been Advil, probably.\n"
                                  "Patient: Can I buy those?")[0].drug_id == "ibuprofen"
    assert staff_named(retriever, "Patient: Headaches.\nPharmacist: You could try Advil instead.\n"
                                  "Patient: Could my own tablets cause them?") is None
    assert staff_named(retriever, "Patient: A blood thinner.\nPharmacist: Is it Coumadin or Advil?\n"
                                  "Patient: The second one.") is None


def test_they_who_prescribe_are_not_someone_elses_medicine(retriever):
    found = {m.drug_id: m for m in mentions(
        retriever, ["After my stent they started me on Coumadin, and the next week they added Advil."])}
    assert not found["warfarin"].third_party and not found["ibuprofen"].third_party and found["ibuprofen"].new
    # a relative's "they" still is someone else's
    mine = mentions(retriever, ["My parents are old now and they take Coumadin."])
    assert mine[0].third_party


def test_a_name_met_through_one_ordinary_word_gives_way_to_a_name_the_database_lacks(tmp_path: Path):
    from medground.retrieve.drug_subject import partial_only
    from medground.retrieve.drugs import PARTIAL_NAME

    drugs = [Drug("mannitol", "mannitol", ["Osmitrol"], "Osmotic diuretic", ["manna sugar"]),
             Drug("sitagliptin", "sitagliptin", ["Januvia"], "DPP-4 inhibitor")]
    attrs = [DrugAttribute("mannitol", A.ADVERSE_REACTIONS, "Headache", SRC),
             DrugAttribute("sitagliptin", A.DOSAGE, "100 mg orally once daily", SRC)]
    store = DrugStore(tmp_path / "d.sqlite")
    store.build(DrugCatalog(drugs, attrs))
    retriever = DrugRetriever(store, DrugRetrieverSettings(intent="cues"))
    said = "Hi, I started Janewvia for my sugar about six weeks ago. Could the pill be doing this?"
    found = resolve_subjects(retriever, [said])
    assert [s.drug_id for s in found] == ["mannitol"] and partial_only(found)  # "sugar" of "manna sugar"
    assert retriever.unknown_names(said) == {}  # a drug was recognised
    assert "janewvia" in retriever.unknown_names(said, beside=PARTIAL_NAME)
    assert "aren't" not in retriever.unknown_names("they aren't helping", beside=PARTIAL_NAME)
    named = resolve_subjects(retriever, ["I take Januvia. Is headache from it?"])
    assert not partial_only(named) and not partial_only([])
