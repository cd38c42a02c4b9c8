"""The consultation reader: the entry chosen by question type and item match in meaning, a reply
that answers in its first sentence, abstention only when no entry relates, a question back when
no medicine is named. Real bundled MiniLM and the shipped typer; a small database."""

import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.store.drugs import DrugStore
from medground.reading.consult import ConsultReader
from medground.reading.consult_text import content_phrases, is_yes_no, split_items
from medground.reading.splits import medication_qa_split, split_of
from medground.retrieve.drugs import DrugRetriever

SRC = "openstax-prototype:m1#t"


@pytest.fixture(scope="module")
def reader(reader_over):
    catalog = DrugCatalog(
        [Drug("lisinopril", "lisinopril", ["Zestril"], "ACE inhibitor"),
         Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant"),
         Drug("ibuprofen", "ibuprofen", ["Advil"], "Nonsteroidal anti-inflammatory drug"),
         Drug("fluconazole", "fluconazole", ["Diflucan"], "Azole antifungal"),
         Drug("simvastatin", "simvastatin", ["Zocor"], ""),
         Drug("atorvastatin", "atorvastatin", ["Lipitor"], "Statins and PCSK9 Inhibitors"),
         Drug("amiodarone", "amiodarone", ["Pacerone"], "Class III antidysrhythmic"),
         Drug("levothyroxine", "levothyroxine", ["Synthroid"], "Thyroid hormone")],
        [DrugAttribute("lisinopril", A.DOSAGE, "10-40 mg orally daily.", SRC),
         DrugAttribute("lisinopril", A.INDICATIONS, "Hypertension\nHeart failure", SRC),
         DrugAttribute("lisinopril", A.ADVERSE_REACTIONS, "Angioedema\nHyperkalemia\nHeadache\nCough\nRash", SRC),
         DrugAttribute("lisinopril", A.CONTRAINDICATIONS, "History of angioedema\nPregnancy (fetal toxicity)", SRC),
         DrugAttribute("warfarin", A.INTERACTIONS, "Nonsteroidal anti-inflammatory drugs\nAmiodarone", SRC),
         DrugAttribute("warfarin", A.BOXED_WARNING, "May cause major or fatal bleeding.", SRC),
         DrugAttribute("warfarin", A.DOSAGE, "2-10 mg orally daily, adjusted to INR", SRC),
         DrugAttribute("ibuprofen", A.DOSAGE, "200-400 mg orally every 4-6 hours", SRC),
         DrugAttribute("fluconazole", A.INTERACTIONS, "CYP3A4 substrates\nAmiodarone\nCarvedilol", SRC),
         DrugAttribute("fluconazole", A.DOSAGE, "150 mg orally once.", SRC),
         DrugAttribute("simvastatin", A.DOSAGE, "10-40 mg orally daily at bedtime.", SRC),
         DrugAttribute("atorvastatin", A.DOSAGE, "10-80 mg orally daily.", SRC),
         DrugAttribute("amiodarone", A.INTERACTIONS, "Digoxin (increases effect)\nWarfarin (increases effect)\n"
                       "HMG-CoA reductase inhibitors/statin drugs (increases effect; risk of myopathy)", SRC),
         DrugAttribute("amiodarone", A.DOSAGE, "400 mg orally daily.", SRC),
         DrugAttribute("levothyroxine", A.INTERACTIONS, "Calcium\nIron\nSoy", SRC),
         DrugAttribute("levothyroxine", A.DOSAGE, "25-200 mcg orally daily.", SRC)])
    return reader_over(catalog)


def test_a_label_table_row_or_cross_reference_is_read_as_what_it_names():
    label = ("* Flushing [see Warnings and Precautions ( 5.4 )].\nErythema 5 1\nDyspnea 13.8 7.8\nDyspnea 14.2 5.5\n"
             "Bleed at critical site 1 (0.04%) 2 (0.13%)\nChronic kidney disease stage 4\n25-150 mg orally daily.")
    items = split_items(label)
    assert items == ["Flushing", "Erythema", "Dyspnea", "Bleed at critical site", "Chronic kidney disease stage 4",
                     "25-150 mg orally daily."]
    assert all(item in label for item in items)  # a quote of an item is still the record's own words


def test_items_phrases_and_question_form():
    assert split_items("Cough\nRash") == ["Cough", "Rash"]
    assert split_items("Dyspepsia, GI bleeding, rash") == ["Dyspepsia", "GI bleeding", "rash"]
    # a comma inside parentheses separates no items: the reply quoted "thought" and
    # "Enhances cognitive function (memory" for Aricept before session 31
    assert split_items("Enhances cognitive function (memory, thought, reasoning)") == [
        "Enhances cognitive function (memory, thought, reasoning)"]
    assert split_items("Nausea, vomiting (severe, rare), rash") == ["Nausea", "vomiting (severe, rare)", "rash"]
    assert split_items("Take 10 mg daily, with food.") == ["Take 10 mg daily, with food."]
    assert split_items("Take it with food. Avoid alcohol.") == ["Take it with food.", "Avoid alcohol."]
    phrases = content_phrases("Could this dry cough be from Zestril?", exclude=["Zestril"])
    assert "dry cough" in phrases and "cough" in phrases and not any("zestril" in p.lower() for p in phrases)
    assert not any(p.lower() in {"could", "this", "from"} for p in phrases)  # stop words are never "asked"
    assert is_yes_no("I have a cough. Could it be the pill?") and is_yes_no("So, can I take it with food?")
    assert not is_yes_no("What is it for?")


def test_splits_are_stable_and_seeded():
    assert split_of("x", seed=1) == split_of("x", seed=1)
    assert {split_of(str(i)) for i in range(50)} == {"dev", "test"}
    share = sum(medication_qa_split(f"{i:03d}") == "test" for i in range(690)) / 690
    assert 0.25 < share < 0.35


def test_a_described_symptom_picks_the_item_of_the_right_entry(reader):
    r = reader.reply(["I started Zestril last month.", "Now I have this dry cough at night. Could it be from the pill?"],
                     "lisinopril")
    assert r.outcome == "answered"
    assert r.citations[0].section == "adverse_reactions" and r.citations[0].chapter == "Lisinopril"
    assert r.first_sentence.startswith("Yes") and "Cough" in r.first_sentence
    assert r.quotes == ["Cough"]  # the matched item, not the whole list
    assert all(q in r.citations[0].text for q in r.quotes)


def test_a_drug_of_an_earlier_turn_is_the_second_drug_of_an_interaction_question(reader):
    turns = ["Yes, it's Diflucan for a yeast infection. Just the one tablet.",
             "Only simvastatin for cholesterol, 40 mg at night. Is it alright to keep taking that while I take this?"]
    # without the earlier drug the statin's only entry is its dose: nothing relates
    assert reader.reply(turns, "simvastatin").outcome == "insufficient_evidence"
    # two drugs without interactions entries: the abstention names both
    both = reader.reply(["I take Zocor. Can I take Advil with it?"], "simvastatin", ["ibuprofen"])
    assert both.outcome == "insufficient_evidence"
    assert both.text.startswith("The medicine database has no entry on the interactions of Simvastatin or Ibuprofen")
    r = reader.reply(turns, "simvastatin", [], ["fluconazole"])
    assert r.outcome == "answered" and (r.citations[0].chapter, r.citations[0].section) == ("Fluconazole",
                                                                                             "interactions")
    # the database knows no class for this simvastatin: its absence from a list of groups
    # ("CYP3A4 substrates") is no "not listed"
    assert r.first_sentence.startswith("Fluconazole's interactions [1] do not name Simvastatin; they list: "
                                       "CYP3A4 substrates")
    assert "does not list" not in r.first_sentence and "for your pharmacist or doctor" in r.first_sentence
    # a drug of known class that a list of single drugs and foods does not name, by name or
    # class: it says so and shows what it lists, never a "closest item" guess
    flat = reader.reply(["I take Synthroid every morning. Is it fine with my Zestril?"], "levothyroxine",
                        ["lisinopril"])
    assert flat.first_sentence == ("The database does not list Lisinopril (ACE inhibitor) among Levothyroxine's "
                                   "interactions [1]; it lists: Calcium; Iron; Soy.")
    # a list that names groups ("CYP3A4 substrates") may hold it under no class the database
    # knows: not named, and whether it belongs is for a pharmacist
    ace = reader.reply(["I take Zestril every day. Can I take a Diflucan tablet with it?"], "lisinopril",
                       ["fluconazole"])
    assert ace.first_sentence.startswith("Fluconazole's interactions [1] do not name Lisinopril (ACE inhibitor); "
                                         "they list: CYP3A4 substrates")
    assert "does not list" not in ace.first_sentence and "for your pharmacist or doctor" in ace.first_sentence
    # an earlier drug is not a second drug when the question is not about an interaction
    dose = reader.reply(["Yes, it's Diflucan.", "How much simvastatin should I take?"], "simvastatin", [],
                        ["fluconazole"])
    assert dose.citations[0].chapter == "Simvastatin" and dose.citations[0].section == "dosage"




def test_another_named_drugs_entry_answers_only_about_the_subject(reader):
    # on Zestril, "ok with soy milk?" is not answered by Synthroid's "Soy": that entry would say what
    # Synthroid does with soy, not Zestril
    turns = ["I take Synthroid every morning.", "My doctor just added Zestril. Is the new one ok with soy milk?"]
    r = reader.reply(turns, "lisinopril", [], ["levothyroxine"])
    assert "Soy" not in r.matched and r.first_sentence.startswith("The database does not list Lisinopril")
    loose = reader.__class__(reader.drugs, reader.typer, reader.embedder,
                             reader.settings.model_copy(update={"partner_reads_subject": False}))
    assert "Soy" in loose.reply(turns, "lisinopril", [], ["levothyroxine"]).matched


def test_two_drugs_neither_listing_the_other_show_both_lists(reader):
    r = reader.reply(["I'm on Coumadin. Is Diflucan okay with it?"], "fluconazole", ["warfarin"])
    assert r.outcome == "answered" and "do not name Warfarin" in r.first_sentence
    assert [(c.chapter, c.section) for c in r.citations] == [("Fluconazole", "interactions"),
                                                             ("Warfarin", "interactions")]
    assert r.first_sentence.startswith("Fluconazole's interactions [1] do not name Warfarin (Anticoagulant)")
    assert "Warfarin's interactions list: Nonsteroidal anti-inflammatory drugs; Amiodarone [2]." in r.text


def test_an_item_naming_the_other_drugs_class_is_a_match(reader):
    """"statin drugs" names atorvastatin's class (Statins) though no embedding says so."""
    r = reader.reply(["I started amiodarone last week. I've been on Lipitor for years. Is it okay to take both?"],
                     "amiodarone", ["atorvastatin"])
    assert r.outcome == "answered" and (r.citations[0].chapter, r.citations[0].section) == ("Amiodarone",
                                                                                             "interactions")
    assert r.first_sentence.startswith("Caution \u2014 Amiodarone's listed interactions include HMG-CoA reductase "
                                       "inhibitors/statin drugs")
    assert "(Atorvastatin's class in the database: Statins)" in r.first_sentence
    assert "does not list" not in r.first_sentence


def test_two_drugs_answer_from_the_interactions_and_the_boxed_warning_is_added(reader):
    r = reader.reply(["Can I take Advil for my back while I'm on Coumadin?"], "warfarin", ["ibuprofen"])
    assert r.outcome == "answered" and r.citations[0].section == "interactions"
    assert "Nonsteroidal anti-inflammatory drugs" in r.first_sentence
    assert any(c.section == "boxed_warning" for c in r.citations) and "boxed warning" in r.text


def test_a_plain_what_question_answers_from_the_typed_entry(reader):
    r = reader.reply(["What is lisinopril used for?"], "lisinopril")
    assert r.outcome == "answered" and r.citations[0].section == "indications"
    assert "Hypertension" in r.first_sentence


def test_ordinary_words_never_make_it_abstain(reader):
    r = reader.reply(["I want to know something serious: is it right away that the mood change happens, "
                      "or could the headache be from lisinopril?"], "lisinopril")
    assert r.outcome == "answered"


def test_no_entry_relates_abstains_in_plain_words(reader):
    r = reader.reply(["What colour is the Zestril tablet and how much does a box cost?"], "lisinopril")
    assert r.outcome == "insufficient_evidence"
    assert "no entry" in r.text and "Lisinopril" in r.text and r.citations == []


def test_no_medicine_named_asks_which_one(reader):
    r = reader.reply(["My blood pressure pill makes me dizzy, is that normal?"], None)
    assert r.outcome == "needs_clarification" and "Which medicine" in r.text


def test_fit_picks_the_grid_point_that_gets_the_dev_examples_right(reader):
    from medground.reading.consult_fit import FitExample, fit, outcome

    examples = [FitExample(["Could this dry cough come from Zestril?"], "lisinopril", [], "adverse_reactions"),
                FitExample(["What is lisinopril used for?"], "lisinopril", [], "indications"),
                FitExample(["What colour is the Zestril pill and what does a box cost?"], "lisinopril", [], None)]
    grid = {"item_weight": [0.0, 4.0], "item_floor": [0.5], "match_at": [0.65], "none_above": [0.3, 1.0]}
    result = fit(reader, examples, grid=grid)
    assert result.objective == 1.0
    assert result.settings.none_above == 0.3  # 1.0 never abstains: the price question would be answered
    assert result.per_value["none_above"]["1.0"] < 1.0
    assert result.settings.item_weight == 0.0  # ties go to the first (simplest) grid point
    for ex, sig in zip(examples, result.signals):  # the fitted rule is the reader's own
        drug, typ, abstained = outcome(sig, result.settings)
        r = reader.__class__(reader.drugs, reader.typer, reader.embedder, result.settings).reply(ex.turns, ex.subject)
        assert abstained == (r.outcome != "answered")
        if not abstained:
            assert (drug, typ) == ("lisinopril", r.citations[0].section)


def test_an_item_naming_several_things_is_matched_by_its_parts():
    from medground.reading.consult_text import with_parts

    assert with_parts(["Nausea/vomiting/diarrhea", "Cough"]) == ["Nausea/vomiting/diarrhea", "Nausea", "vomiting",
                                                                 "diarrhea", "Cough"]
    assert with_parts(["Carbidopa/levodopa 25/100 mg"]) == ["Carbidopa/levodopa 25/100 mg"]  # a dose stays whole


def test_the_llm_item_check_turns_lay_words_into_the_listed_item(reader):
    """A described symptom MiniLM cannot place ("my throat tickles all day") is matched when the
    LLM affirms the item; items it denies earn nothing, and only the closest few are asked."""
    turns = ["On Zestril since May. My throat tickles all day and I keep hacking. Is that the pill?"]
    asked: list[list[str]] = []

    def checker(said, items):
        asked.append(items)
        assert said == turns[-1]
        return [0.93 if i == "Cough" else 0.1 for i in items]

    plain = ConsultReader(reader.drugs, reader.typer, reader.embedder)
    checked = ConsultReader(reader.drugs, reader.typer, reader.embedder,
                            plain.settings.model_copy(update={"item_check": 3, "item_check_floor": 0.0}),
                            item_checker=checker)
    r = checked.reply(turns, "lisinopril")
    assert len(asked) == 1 and len(asked[0]) == 3 and "Cough" in asked[0]
    assert r.citations[0].section == "adverse_reactions" and r.matched == ["Cough"]
    assert r.first_sentence.startswith("Yes") and r.chosen.checked["Cough"] == 0.93
    assert all(m.similarity <= plain.settings.item_floor for m in r.chosen.items[1:] if m.text in asked[0])
    # Off by default: no checker call, and the reply does not depend on one.
    assert plain.settings.item_check == 0 and plain.reply(turns, "lisinopril").chosen.checked == {}



def test_a_question_about_an_entry_the_drug_lacks_is_not_answered_with_another(reader):
    """Ibuprofen has only a dosage entry here: an ache it might cause is not answered with its dose."""
    r = reader.reply(["I've taken Advil every day for a month and now my stomach burns. Could the pills do that?"],
                     "ibuprofen")
    assert r.outcome == "insufficient_evidence" and "side effects" in r.text and "dosage" in r.text
    assert reader.reply(["How much Advil can I take for a headache?"], "ibuprofen").citations[0].section == "dosage"


def test_the_typer_can_read_the_question_apart_from_its_context(reader):
    from medground.reading.consult_text import questions

    turn = "Yes, 10 mg a day. I know what a statin does. How does this one bring cholesterol down?"
    assert questions(turn) == ["How does this one bring cholesterol down?"]
    assert questions("Tell me about the dose") == ["Tell me about the dose"]

    class Recording:
        def __init__(self):
            self.seen = []

        def attribute_probabilities(self, text, names=()):
            self.seen.append(text)
            return ({A.MECHANISM: 0.8, A.DOSAGE: 0.2} if "How" in text and "mg" not in text
                    else {A.MECHANISM: 0.2, A.DOSAGE: 0.8}), 0.0

    for mode, seen, p_mech in [("turn", [turn], 0.2), ("question", [questions(turn)[0]], 0.8),
                               ("both", [turn, questions(turn)[0]], 0.5)]:
        typer = Recording()
        r = ConsultReader(reader.drugs, typer, reader.embedder,
                          reader.settings.model_copy(update={"typer_reads": mode}))
        p_type, _ = r.type_probabilities(turn)
        assert typer.seen == seen and p_type[A.MECHANISM] == pytest.approx(p_mech)


def test_a_bare_is_that_from_the_pill_is_typed_as_the_question_it_asks(reader):
    """The typer learned from questions that say what they ask: "My ankles are swollen. Is that
    the lisinopril?" reads to it as a drug-class question; whole, it asks whether the drug causes it."""
    from medground.reading.consult_reframe import attribution_question

    assert (attribution_question("I'm on lisinopril and my ankles are swollen. Is that the lisinopril?",
                                 ["lisinopril"]) == "Can this medicine cause this: I'm on lisinopril and my ankles are swollen?")
    assert (attribution_question("I take amlodipine and my ankles swelled up, is that the medicine?")
            == "Can this medicine cause this: I take amlodipine and my ankles swelled up?")
    assert attribution_question("He is snappy and weepy. Could the medicine be causing that?") is not None
    # a question with words of its own asks something else; one with nothing before it has nothing to tie
    assert attribution_question("My doctor switched me to Norvasc. Is that the same as amlodipine?",
                                ["Norvasc", "amlodipine"]) is None
    assert attribution_question("I want ibuprofen. Is that ok with the lisinopril?", ["lisinopril"]) is None
    assert attribution_question("I take warfarin. Is it safe?", ["warfarin"]) is None
    assert attribution_question("Is that from the pill?") is None
    # a sentence after the question is no description: "The bottle says Toprol XL …" asks which drug
    assert attribution_question("Is that the metoprolol? The bottle says Toprol XL but my old one said Lopressor.",
                                ["metoprolol", "Toprol XL", "Lopressor"]) is None
    assert attribution_question("My ankles are swollen. ??") is None  # a question mark alone
    # the medicine named by its kind or by what it is for; its class asked for is no such question
    kinds = ["Corticosteroid", "prednisone"]
    assert attribution_question("My sugars are high. Is it the steroid?", [], kinds) is not None
    assert attribution_question("My legs ache. Is that the cholesterol pill?") is not None
    assert attribution_question("I'm on Lipitor. Is that a statin?", ["Lipitor"], ["Statins", "atorvastatin"]) is None

    turn = "My ankles are swollen. Is that the Zestril?"
    off = ConsultReader(reader.drugs, reader.typer, reader.embedder,
                        reader.settings.model_copy(update={"typer_attribution": False}))
    on = ConsultReader(reader.drugs, reader.typer, reader.embedder,
                       reader.settings.model_copy(update={"typer_attribution": True}))
    (p_off, _), (p_on, _) = off.type_probabilities(turn, ["Zestril"]), on.type_probabilities(turn, ["Zestril"])
    # the word-gram typer (session 31) already reads the bare turn as a side-effect question more
    # often than not; read whole, it is surer still
    assert p_on[A.ADVERSE_REACTIONS] > max(0.5, p_off[A.ADVERSE_REACTIONS])


def test_an_entry_is_matched_against_the_other_drugs_names_never_its_own(reader, tmp_path):
    """Amoxicillin's interactions list other drugs: matching them against "Aminopenicillin" (its own
    class) found "Aminoglycosides"; they are matched against warfarin's names and class instead."""
    catalog = DrugCatalog(
        [Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant"),
         Drug("amoxicillin", "amoxicillin", ["Amoxil"], "Aminopenicillin")],
        [DrugAttribute("warfarin", A.INTERACTIONS, "Many antibiotics and antifungals\nAlcohol", SRC),
         DrugAttribute("amoxicillin", A.INTERACTIONS, "Aminoglycosides\nMethotrexate", SRC)])
    store = DrugStore(tmp_path / "d.sqlite")
    store.build(catalog)
    r = ConsultReader(DrugRetriever(store), reader.typer, reader.embedder)
    turns = ["My dad takes Coumadin and his dentist wants him on amoxicillin. Are those two OK together?"]
    choices = r.choose(turns, "warfarin", ["amoxicillin"]).choices
    amox = next(c for c in choices if c.drug.drug_id == "amoxicillin")
    assert all(m.phrase.lower() not in {"amoxicillin", "aminopenicillin"} for m in amox.items)
    war = next(c for c in choices if c.drug.drug_id == "warfarin")
    assert war.best.text == "Many antibiotics and antifungals" and war.best.phrase in {"amoxicillin", "Aminopenicillin"}


def test_mined_plain_phrases_reach_the_clinical_item(reader):
    """"My lips swelled" is far from "Angioedema" in MiniLM's space; the phrase consumer pages pair
    with it ("severe swelling (angioedema)") is not."""
    from medground.corpus.lay_vocabulary import mine
    from medground.reading.consult_settings import ConsultReplySettings

    vocab = mine(["It is characterized by recurrent episodes of severe swelling (angioedema)."])
    turns = ["I'm on Zestril. My lips swelled up this morning and my tongue feels thick. Is this from the pill?"]
    lay = ConsultReader(reader.drugs, reader.typer, reader.embedder, ConsultReplySettings(lay_synonyms=2),
                        lay_vocabulary=vocab)
    r = lay.reply(turns, "lisinopril")
    assert r.outcome == "answered" and r.citations[0].section == "adverse_reactions"
    assert r.matched[0] == "Angioedema" and r.first_sentence.startswith("Yes")
    plain = ConsultReader(reader.drugs, reader.typer, reader.embedder, ConsultReplySettings(lay_synonyms=0),
                          lay_vocabulary=vocab)
    assert "Angioedema" not in plain.reply(turns, "lisinopril").matched


def test_a_long_list_of_short_items_stays_a_list(tmp_path):
    """Thirty one-word effects are a list: the reply names the matched item, never the "closest
    lines" of a section, and a list shown whole is cut with a count."""
    pytest.importorskip("onnxruntime")
    from medground.reading.consult_typer import load_consult_typer

    effects = ["Cough", *(f"Effect{i}" for i in range(29))]
    catalog = DrugCatalog([Drug("lisinopril", "lisinopril", ["Zestril"], "ACE inhibitor")],
                          [DrugAttribute("lisinopril", A.ADVERSE_REACTIONS, "\n".join(effects), SRC),
                           DrugAttribute("lisinopril", A.DOSAGE, "10-40 mg orally daily.", SRC)])
    store = DrugStore(tmp_path / "drugs.sqlite")
    store.build(catalog)
    typer = load_consult_typer()
    long_list = ConsultReader(DrugRetriever(store), typer, typer.embedder)
    r = long_list.reply(["Could my dry cough be from Zestril?"], "lisinopril")
    assert r.matched == ["Cough"] and "closest to your question" not in r.text
    r = long_list.reply(["Does Zestril cause my toes to glow purple?"], "lisinopril")
    if r.outcome == "answered" and "does not list" in r.first_sentence:
        assert "and 18 more" in r.first_sentence


def test_the_typer_reads_drug_names_as_this_medicine_when_it_learned_so(tmp_path):
    import numpy as np

    from medground.reading.consult_typer import ConsultTyperModel, mask_names

    assert mask_names("What's Tagamet HB for? Is tagamet safe?", ["Tagamet HB", "Tagamet"]) == \
        "What's this medicine for? Is this medicine safe?"
    assert mask_names("non-Tagamet", ["Tagamet"]) == "non-Tagamet"  # whole names only
    model = ConsultTyperModel(["dosage", "none"], np.ones((2, 3), np.float32), np.zeros(2, np.float32), "minilm",
                              masks_names=True)
    model.save(tmp_path / "t.npz")
    again = ConsultTyperModel.load(tmp_path / "t.npz")
    assert again.masks_names and again.classes == ["dosage", "none"]


def test_a_near_item_is_named_only_from_hedge_at(reader):
    """Below a real match the nearest item is named as a hedge only when it is near enough;
    otherwise the reply says the entry does not list it in those words and shows the list."""
    from medground.reading.consult import ConsultReader

    turns = ["I've been on Zestril a month and I keep getting dizzy spells. Could it be the pill?"]
    r = reader.reply(turns, "lisinopril")
    near = r.chosen.best.similarity
    assert reader.settings.item_floor <= near < reader.settings.match_at  # a near item, not a match

    def with_hedge_at(value: float) -> ConsultReader:
        return ConsultReader(reader.drugs, reader.typer, reader.embedder,
                             reader.settings.model_copy(update={"hedge_at": value}))

    named = with_hedge_at(0.0).reply(turns, "lisinopril")
    assert named.first_sentence.startswith("The closest item listed among Lisinopril's")
    listed = with_hedge_at(1.01).reply(turns, "lisinopril")
    assert "does not list what you describe, in those words" in listed.first_sentence
    assert all(i in listed.first_sentence for i in ("Angioedema", "Cough", "Rash"))  # the list, to judge
    # nothing even near (under item_floor) is no flat "not listed": far from an item in MiniLM's
    # space is not far in meaning ("everything looks blue" / "Abnormal vision")
    far = ConsultReader(reader.drugs, reader.typer, reader.embedder,
                        reader.settings.model_copy(update={"hedge_at": 1.01, "item_floor": 0.99})).reply(turns, "lisinopril")
    assert "in those words" in far.first_sentence and "for your pharmacist or doctor to judge" in far.first_sentence


def test_a_rare_word_said_in_passing_never_picks_the_indications(reader):
    """"for my heart" says what the drug is for, not what is asked: the rare-word match (a word
    of the patient's standing in an item) does not reach indications items."""
    from medground.reading.consult import ConsultReader

    turns = ["I take Zestril for my heart. Is a rash something it can cause?"]
    every_word_rare = reader.settings.model_copy(update={"rare_share": 1.0})

    def indications_match(**update) -> tuple[float, str]:
        settings = every_word_rare.model_copy(update=update)
        r = ConsultReader(reader.drugs, reader.typer, reader.embedder, settings).reply(turns, "lisinopril")
        entry = next(c for c in r.ranked if c.attribute.type is A.INDICATIONS)
        return entry.best.similarity, r.citations[0].section

    # (the purpose rule, told before the question, would keep it out as well: read the whole turn)
    allowed, _ = indications_match(rare_in_indications=True, purpose_entries_from="turn")
    assert allowed >= every_word_rare.lexical_match  # "heart" stands in "Heart failure"
    kept_out, section = indications_match()
    assert kept_out < every_word_rare.lexical_match and section == "adverse_reactions"


def test_a_question_without_its_auxiliary_is_still_a_yes_no_question():
    assert is_yes_no("Flagyl making everything taste like metal? normal?")
    assert is_yes_no("Side effects of this with alcohol?")
    assert not is_yes_no("How long does it take to work?") and not is_yes_no("Which dose for a child?")
    assert not is_yes_no("I take it daily. Tell me the dose.")  # no question at all


def test_a_long_item_is_named_by_its_opening_words():
    from medground.reading.consult_sentences import brief

    item = ("* Bipolar depression: akathisia, extrapyramidal symptoms, and somnolence, The information "
            "below is derived from an integrated clinical study database")
    short = brief(item, 80)
    assert len(short) <= 82 and short.endswith("\u2026") and item.startswith(short[:-2])
    assert brief("Cough", 80) == "Cough"


def test_the_patients_words_in_medical_terms_reach_the_listed_item(reader):
    """Lay words no embedding links to the record ("a frog in my throat and I keep hacking") are
    matched through the LLM's medical terms; "unmatched" asks only when nothing matched, and the
    named medicines' names never become terms."""
    turns = ["Been on Zestril since May.", "There's a frog in my throat and I keep hacking. Could the pill be doing that?"]
    said: list[str] = []

    def writer(text):
        said.append(text)
        return "Zestril, cough"

    plain = ConsultReader(reader.drugs, reader.typer, reader.embedder)
    before = plain.reply(turns, "lisinopril")
    assert "Cough" not in before.matched  # the premise: MiniLM alone does not place it
    termed = ConsultReader(reader.drugs, reader.typer, reader.embedder,
                           plain.settings.model_copy(update={"clinical_terms": "unmatched"}), term_writer=writer)
    r = termed.reply(turns, "lisinopril")
    assert said == [" ".join(turns)] and r.terms == ["cough"]
    assert r.citations[0].section == "adverse_reactions" and r.matched == ["Cough"]
    assert "Cough is listed among Lisinopril's side effects" in r.first_sentence
    # A question whose own words already match an item is answered without the LLM, and so is
    # one about what the drug is for (the terms would name the condition it treats).
    said.clear()
    termed.reply(["Could this dry cough be from Zestril?"], "lisinopril")
    termed.reply(["What is Zestril used for?"], "lisinopril")
    assert said == []
    # Off by default.
    assert plain.settings.clinical_terms == "off" and before.terms == []


def test_clinical_terms_are_read_from_the_llms_list():
    from medground.reading.consult_text import clinical_terms

    assert clinical_terms("diarrhea, nausea") == ["diarrhea", "nausea"]
    assert clinical_terms("heartburn, Plavix, Prilosec.", ["Plavix", "Prilosec"]) == ["heartburn"]
    assert clinical_terms("nausea and vomiting; rash\nitch", limit=3) == ["nausea", "vomiting", "rash"]
    assert clinical_terms("Here is a list of the terms the patient uses in this message") == []
    assert clinical_terms("") == [] and clinical_terms("the, of") == []
    assert clinical_terms("none") == []  # the prompt's answer when nothing is described


def test_a_word_with_digits_after_its_letters_is_one_word():
    # "B12" of "my B12 is low" meets "Vitamin B12 deficiency"; a dose never starts a word
    assert "B12" in content_phrases("My doctor says my B12 is low.")
    assert not any(p.startswith("10") for p in content_phrases("I take 10mg daily."))


def test_neither_entry_naming_the_other_is_no_no_when_the_others_list_holds_groups():
    """"The database does not list Clopidogrel among Omeprazole's interactions" read as a no,
    while clopidogrel's "CYP2C19 inhibitors" may hold omeprazole: the reply says so first."""
    from types import SimpleNamespace

    from medground.reading.consult_sentences import groups_sentence

    def entry(drug: str, text: str):
        return SimpleNamespace(drug=Drug(drug, drug, [], ""), attribute=DrugAttribute(drug, A.INTERACTIONS, text, SRC))

    omeprazole = entry("omeprazole", "Amoxicillin\nDiazepam\nPhenytoin\nWarfarin")
    clopidogrel = entry("clopidogrel", "CYP2C19 inhibitors\nNSAIDs\nRepaglinide")
    assert groups_sentence(omeprazole, clopidogrel, 2) == (
        "Omeprazole's interactions [1] do not name Clopidogrel, but Clopidogrel's interactions [2] list groups "
        "of drugs (CYP2C19 inhibitors and NSAIDs); whether Omeprazole belongs to one of them is for your "
        "pharmacist or doctor to judge.")
    # the other's list of single drugs, or a chosen entry with groups of its own: none (first_sentence hedges)
    assert groups_sentence(clopidogrel, omeprazole, 2) is None
    assert groups_sentence(omeprazole, entry("x", "Warfarin\nDigoxin"), 2) is None


def test_why_the_patient_takes_it_is_never_one_of_its_side_effects(reader_over):
    """"put me on HCTZ for blood pressure and now I have gout" was "Yes — Hypotension is listed":
    the words after "for" say what the drug is for, never what it did to them."""
    from medground.reading.consult import ConsultReader
    from medground.reading.consult_text import purpose_words

    t = "My doctor put me on HCTZ for blood pressure and now I have gout. Could it be the hydrochlorothiazide?"
    assert purpose_words(t, ["hydrochlorothiazide"]) == {"blood", "pressure"}  # "on X for", a name it lacks
    assert purpose_words("I take it for my thyroid but my hair is falling out") == {"thyroid"}
    assert purpose_words("I have had a headache for two days. I take Tylenol.", ["Tylenol"]) == frozenset()
    # a time adjunct may stand between the medicine and its "for"; other words may not
    when = "my doctor put me on amlodipine last month for blood pressure. my gums bleed"
    assert purpose_words(when, ["amlodipine"]) == {"blood", "pressure"}
    assert purpose_words("Is amlodipine okay for someone with gout?", ["amlodipine"]) == frozenset()

    catalog = DrugCatalog(
        [Drug("hydrochlorothiazide", "hydrochlorothiazide", ["Microzide"], "Thiazide diuretic")],
        [DrugAttribute("hydrochlorothiazide", A.INDICATIONS, "Hypertension\nEdema", SRC),
         DrugAttribute("hydrochlorothiazide", A.ADVERSE_REACTIONS, "Hypotension\nHyperuricemia\nDizziness", SRC)])
    base = reader_over(catalog)
    on = base.reply([t], "hydrochlorothiazide")
    off = ConsultReader(base.drugs, base.typer, base.embedder,
                        base.settings.model_copy(update={"purpose_not_effect": False})).reply([t], "hydrochlorothiazide")
    assert off.first_sentence.startswith("Yes — Hypotension")  # what the patient said it is for
    assert "Hyperuricemia" in on.first_sentence and "Hypotension" not in on.first_sentence  # gout, in meaning
    # said again outside the purpose, the words are what is asked: "for my blood pressure, and now
    # my blood pressure is really low" is about hypotension
    again = "I'm on hydrochlorothiazide for blood pressure and now my blood pressure is really low. Is that the pill?"
    from medground.reading.consult_text import purpose_phrases

    assert "blood pressure" not in purpose_phrases(again, ["hydrochlorothiazide"])
    assert purpose_phrases(t, ["hydrochlorothiazide"]) >= {"blood pressure"}
    assert "Hypotension" in base.reply([again], "hydrochlorothiazide").first_sentence


def test_why_the_patient_takes_it_is_no_second_substance(reader_over):
    """"on amoxicillin for a chest infection … also on the combined pill" was "Caution —
    Amoxicillin's listed interactions include Aminoglycosides": "infection" met the antibiotic
    class. The stated purpose is neither an effect nor something taken with the drug."""
    from medground.reading.consult import ConsultReader

    catalog = DrugCatalog(
        [Drug("amoxicillin", "amoxicillin", ["Amoxil"], "Aminopenicillin")],
        [DrugAttribute("amoxicillin", A.INTERACTIONS, "Aminoglycosides\nMethotrexate\nProbenecid", SRC),
         DrugAttribute("amoxicillin", A.DOSAGE, "500 mg orally every 12 hours", SRC)])
    base = reader_over(catalog)
    t = "I'm on amoxicillin for a bacterial infection. Is it ok with my other tablets?"
    on = base.choose([t], "amoxicillin").choices
    off = ConsultReader(base.drugs, base.typer, base.embedder,
                        base.settings.model_copy(update={"purpose_not_effect": False})).choose([t], "amoxicillin").choices
    def aminoglycosides(choices):
        entry = next(c for c in choices if c.attribute.type is A.INTERACTIONS)
        return next(m for m in entry.items if m.text == "Aminoglycosides")

    assert "infection" in aminoglycosides(off).phrase  # without the rule the purpose is its best match
    assert "infection" not in aminoglycosides(on).phrase  # the purpose meets no item of its interactions


def test_two_substances_of_the_database_are_never_one_thing(reader_over):
    """"potassium pills" beside lisinopril was "The closest item … is Lithium": two substances the
    database names (words of its generic names) may sit close in MiniLM's space; neither is the
    other, so the match is no answer and no hedge. A plain name that says only "a medicine"
    ("certain medications", mined for Lithium) names nothing and is not matched."""
    from medground.reading.consult_items import names_a_thing

    assert not names_a_thing("certain medications") and not names_a_thing("pills")
    assert names_a_thing("water pills") and names_a_thing("steroid injections")

    catalog = DrugCatalog(
        [Drug("lisinopril", "lisinopril", ["Zestril"], "ACE inhibitor"),
         Drug("lithium", "lithium carbonate", ["Lithobid"], "Mood stabilizer"),
         Drug("potassium chloride", "potassium chloride", ["K-Dur"], "Electrolyte")],
        [DrugAttribute("lisinopril", A.INTERACTIONS, "Lithium\nAliskiren", SRC),
         DrugAttribute("lisinopril", A.DOSAGE, "10-40 mg orally daily.", SRC)])
    reader = reader_over(catalog)
    turns = ["I take lisinopril and my doctor wants me on potassium pills. Do they mix?"]
    r = reader.reply(turns, "lisinopril")
    lithium = next(m for m in r.chosen.items if m.text == "Lithium")
    assert lithium.other_substance and not lithium.answers(0.0) and lithium.names_something_else
    assert "closest" not in r.first_sentence and not r.first_sentence.startswith(("Yes", "Caution"))


def test_why_it_is_taken_told_before_the_question_never_answers_it(reader_over):
    """"Remeron at night for depression … Is the pill making me this hungry?" was answered with its
    indication "Major depressive disorder" (an exact match) over the side effect asked about."""
    from medground.reading.consult import ConsultReader

    catalog = DrugCatalog(
        [Drug("mirtazapine", "mirtazapine", ["Remeron"], "Antidepressant")],
        [DrugAttribute("mirtazapine", A.INDICATIONS, "Depression\nInsomnia", SRC),
         DrugAttribute("mirtazapine", A.ADVERSE_REACTIONS, "Increased appetite\nWeight gain\nDry mouth", SRC)])
    base = reader_over(catalog)
    t = ("Remeron 15 at night for depression + sleep. Sleep is way better, but I'm raiding the fridge at 2am "
         "and I've put on 4 kg in a month. Is the pill making me this hungry?")
    asked = base.reply([t], "mirtazapine")
    assert asked.chosen.attribute.type is A.ADVERSE_REACTIONS
    turn = ConsultReader(base.drugs, base.typer, base.embedder,
                         base.settings.model_copy(update={"purpose_entries_from": "turn"})).reply([t], "mirtazapine")
    def entry(reply, kind):
        return next(c for c in reply.ranked if c.attribute.type is kind)

    # the whole turn: its purpose meets the indication outright (with session 29's typer it then
    # outweighed the question; the three-bank typer reads the question surely enough)
    assert entry(turn, A.INDICATIONS).best.similarity > 0.9 > entry(asked, A.INDICATIONS).best.similarity
    # the same for what its therapeutic effects say it does
    effects = DrugCatalog(
        [Drug("semaglutide", "semaglutide", ["Wegovy"], "GLP-1 receptor agonist")],
        [DrugAttribute("semaglutide", A.THERAPEUTIC_EFFECTS, "Weight loss\nLowers blood glucose", SRC),
         DrugAttribute("semaglutide", A.DOSAGE, "0.25 mg subcutaneously once a week for 4 weeks.", SRC)])
    glp = reader_over(effects)
    shot = ["Just got approved for Wegovy for weight loss!! The pharmacy gave me the 0.25 pens. How often do I inject it?"]
    assert glp.reply(shot, "semaglutide").chosen.attribute.type is A.DOSAGE
    whole = ConsultReader(glp.drugs, glp.typer, glp.embedder, glp.settings.model_copy(update={"purpose_entries_from": "turn"}))
    assert (entry(whole.reply(shot, "semaglutide"), A.THERAPEUTIC_EFFECTS).best.similarity
            > entry(glp.reply(shot, "semaglutide"), A.THERAPEUTIC_EFFECTS).best.similarity)
    # asked in the question itself, an indication still answers
    used = base.reply(["Is Remeron used for depression?"], "mirtazapine")
    assert used.chosen.attribute.type is A.INDICATIONS and "Depression" in used.first_sentence


def test_a_kind_neither_named_drug_holds_says_what_each_holds(reader):
    r = reader.reply(["I take Synthroid and Advil. Should I keep both of them in the fridge or at room temperature?"],
                     "levothyroxine", ["ibuprofen"])
    assert r.outcome == "insufficient_evidence" and r.citations == []
    assert "Levothyroxine's entries cover dosage, interactions" in r.text
    assert "Ibuprofen's cover dosage." in r.text

    # an entry of the kind asked that the other drug holds is never called missing
    r = reader.reply(["I take Zestril. What is Advil used for?"], "ibuprofen", ["lisinopril"])
    assert r.outcome == "insufficient_evidence", r.text
    assert "no entry on the uses (indications) of Ibuprofen;" in r.text
    assert "Lisinopril's cover contraindications (when it should not be used), dosage" in r.text


def test_a_long_side_effects_sentence_is_not_met_through_one_rare_word(reader_over):
    """Session 37: "after my stent" met a label's study sentence that names stents among its
    subgroups; with ``rare_item_words`` a side-effects item that long is matched in meaning only,
    while a warnings sentence (the warning itself) is still read."""
    from medground.reading.consult import ConsultReader

    study = ("The bleeding profile of BRILINTA compared to aspirin alone was consistent across subgroups by age, "
             "gender, weight, race, region, concurrent conditions, concomitant therapy, stent, and medical history.")
    warning = ("Patients should not stop BRILINTA during the first month after an acute coronary syndrome because "
               "of a higher risk of heart attack and death than with continued use of the medicine.")
    catalog = DrugCatalog([Drug("ticagrelor", "ticagrelor", ["Brilinta"], "P2Y12 inhibitor")],
                          [DrugAttribute("ticagrelor", A.ADVERSE_REACTIONS, f"Dyspnea\n{study}", SRC),
                           DrugAttribute("ticagrelor", A.WARNINGS, warning, SRC)])
    base = reader_over(catalog)
    turns = ["I had a stent put in last month. Now I get short of breath on the stairs. Could it be the Brilinta?"]

    def best_of(kind: A, **update) -> dict[str, float]:
        settings = base.settings.model_copy(update={"rare_share": 1.0, **update})
        r = ConsultReader(base.drugs, base.typer, base.embedder, settings).reply(turns, "ticagrelor")
        entry = next(c for c in r.ranked if c.attribute.type is kind)
        return {m.text: m.similarity for m in entry.items}

    at = base.settings.lexical_match
    assert best_of(A.ADVERSE_REACTIONS, rare_item_words=None)[study] >= at  # every item read: it "names" the stent
    assert best_of(A.ADVERSE_REACTIONS)[study] < at  # shipped: 25 words at most
    assert best_of(A.WARNINGS, rare_item_words=25)[warning] >= at
