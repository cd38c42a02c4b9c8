from __future__ import annotations

from medground.reading.entities import EntityDictionary, EntityGate, NameGroup, specific

GROUPS = [NameGroup(entry=("Shingles", "Herpes zoster"), also=("Zoster",)),
          NameGroup(entry=("Chickenpox",), also=("Varicella",)),
          NameGroup(entry=("Cocaine",), also=("Blow", "Coke")),
          NameGroup(entry=("Pain",)),
          NameGroup(entry=("warfarin", "Coumadin"), also=("Anticoagulant",))]
DF = {"shingles": 18, "herpes": 30, "zoster": 23, "chickenpox": 20, "varicella": 27, "cocaine": 40, "pain": 814,
      "warfarin": 43, "coumadin": 2}


def doc_freq(word: str) -> int:  # as an index counts a word (BM25Index.doc_freq)
    return DF.get(word.lower(), 0)


def gate(max_df: float = 0.01) -> EntityGate:
    return EntityGate(EntityDictionary(GROUPS), doc_freq, 15_000, max_df)


def test_find_takes_the_longest_name_and_keeps_the_questions_own_words():
    found = EntityDictionary(GROUPS).find("Is Herpes-zoster the same as herpes zoster pain?")
    assert [e.name for e in found] == ["herpes zoster", "pain"]


def test_one_word_also_called_names_never_open_an_entity_in_a_question():
    # "Blow" is a street name of cocaine in MedlinePlus; a blow to the abdomen is not cocaine
    assert EntityDictionary(GROUPS).find("Left shoulder pain after a blow to the abdomen") != []
    assert [e.name for e in EntityDictionary(GROUPS).find("a blow to the abdomen")] == []


def test_generic_names_are_not_specific():
    d = EntityDictionary(GROUPS)
    kept = specific(d.find("Shingles pain"), doc_freq, 15_000, 0.01)
    assert [e.name for e in kept] == ["Shingles"]  # pain is in 5 % of chunks


def test_a_near_miss_passage_is_caught_and_a_synonym_passes():
    g = gate()
    q = "At what age should one receive the shingles vaccine?"
    assert g.absent(q, ["Chickenpox (varicella) vaccine is given at 12 months."]) == ["shingles"]
    assert g.absent(q, ["The herpes zoster vaccine is recommended from age 50."]) == []
    assert g.absent(q, ["Reactivation of latent zoster causes pain."]) == []  # one-word names count in passages
    # a brand in the question, the class in the passage: one entity group
    assert g.absent("Does Coumadin interact with aspirin?", ["Anticoagulants such as these raise bleeding."]) == []


def test_with_no_specific_entity_nothing_is_ever_absent():
    assert gate().absent("What causes pain?", ["Something unrelated."]) == []


def test_typographic_apostrophes_match_typed_ones():
    g = EntityGate(EntityDictionary([NameGroup(entry=("Crohn's disease",))]), lambda t: 3, 15_000, 0.01)
    q = "What should someone with Crohn's disease eat during a flare?"
    assert g.absent(q, ["In ulcerative colitis or Crohn\u2019s disease, a low-residue diet is advised."]) == []
    assert g.absent("What should someone with Crohn\u2019s disease eat?", ["Crohn's disease: low residue."]) == []


def test_a_rare_name_no_dictionary_lists_is_an_entity_when_asked_for():
    counts = {"glimepiride": 1, "levomilnacipran": 2, "adult": 900, "reprocessing": 2}
    consumer = {"tummy": 2, "chemo": 1}  # consumer-health pages using the word
    g = EntityGate(EntityDictionary(GROUPS), lambda t: counts.get(t, 0), 15_000, 0.01, names_outside=True,
                   consumer_df=lambda w: consumer.get(w, 0))
    question = "What's the most glimepiride an adult can take in one day?"
    assert [e.name for e in g.entities(question)] == ["glimepiride"]
    assert g.absent(question, ["Drug: Levomilnacipran (Fetzima); maximum dose: 120 mg/day."]) == ["glimepiride"]
    assert g.absent(question, ["Glimepiride: 1-8 mg orally once daily."]) == []
    # the question's own alias in parentheses is not asked for apart from its name
    assert [e.name for e in g.entities("What is the most glimepiride (Amaryl) an adult can take?")] == ["glimepiride"]
    # ordinary English, and a word with an English stem, are no names; off by default
    names = [e.name for e in g.entities("Do semicritical endoscopes need reprocessing in adults?")]
    assert "reprocessing" not in names and "adults" not in names and "endoscopes" in names
    # two English words joined are English too: "bedtime" is no name
    assert "bedtime" not in [e.name for e in g.entities("Why take simvastatin at bedtime?")]
    # an English word with an adjective or noun ending is English: "causative" is no name to hold
    # against a passage on prions (a development question declined for it, session 36)
    asked = [e.name for e in g.entities("What is the causative agent of Creutzfeldt-Jakob disease made of?")]
    assert "causative" not in asked
    assert "confirmatory" not in [e.name for e in g.entities("Which confirmatory test follows the screen?")]
    # a patient's word that consumer pages use is no name, though WordPiece lacks it
    assert g.entities("How long does a tummy bug last after chemo?") == []
    # without consumer word counts the check keeps to its dictionary
    assert EntityGate(EntityDictionary(GROUPS), lambda t: 1, 15_000, 0.01, names_outside=True).entities(question) == []
    assert [e.name for e in gate().entities(question)] == []



def test_asking_only_holds_the_question_sentences_not_the_context_before_them():
    asking = EntityGate(EntityDictionary(GROUPS), doc_freq, 15_000, 0.01, asking_only=True)
    q = "My husband takes warfarin for his heart. How far down should I push when doing CPR?"
    cpr = ["Compress the chest at least 5 cm."]
    assert gate().absent(q, cpr) == ["warfarin"]  # the whole question: context withholds the answer
    assert asking.absent(q, cpr) == []
    # an entity of the question sentence is still held: a near miss stays caught
    near = "I had chickenpox as a child. At what age should one receive the shingles vaccine?"
    assert asking.absent(near, ["Chickenpox (varicella) vaccine is given at 12 months."]) == ["shingles"]


def test_a_drug_class_is_named_by_its_label_its_abbreviation_or_a_member():
    from types import SimpleNamespace as Drug

    from medground.reading.entities import class_groups, class_names

    assert class_names("Angiotensin-converting enzyme (ACE) inhibitor") == [
        "Angiotensin-converting enzyme inhibitor", "ACE inhibitor"]
    assert class_names("Proton-pump inhibitors (PPIs); Antisecretory") == ["Proton-pump inhibitors", "PPIs",
                                                                           "Antisecretory"]
    # a parenthesis that is no abbreviation is a qualifier: no class of its own
    assert class_names("Benzodiazepine (Schedule IV controlled substance)") == ["Benzodiazepine"]
    drugs = [Drug(generic_name="lisinopril", brand_names=["Zestril"],
                  drug_class="Angiotensin-converting enzyme (ACE) inhibitor"),
             Drug(generic_name="captopril", brand_names=[], drug_class="ACE Inhibitors"),
             Drug(generic_name="oxybutynin", brand_names=[], drug_class="Urinary antispasmodic")]
    groups = class_groups(drugs)
    ace = next(g for g in groups if "ACE inhibitor" in g.entry)
    # spelt out and abbreviated in one label: one class, whichever label its members carry
    assert {"ACE Inhibitors", "Angiotensin-converting enzyme inhibitor"} <= set(ace.entry)
    assert set(ace.also) == {"lisinopril", "Zestril", "captopril"}
    df = {"ace": 76, "inhibitor": 478, "angiotensin": 99}
    g = EntityGate(EntityDictionary(groups), lambda w: df.get(w.lower(), 0), 15_000, 0.01)
    q = "Why are people who have just started an ACE inhibitor told to get up slowly?"
    assert g.absent(q, ["Avoid getting up too fast: oxybutynin may cause dizziness."]) == ["ACE inhibitor"]
    assert g.absent(q, ["Lisinopril can cause orthostatic hypotension at first."]) == []
    assert g.absent(q, ["Angiotensin-converting enzyme inhibitors lower blood pressure."]) == []
