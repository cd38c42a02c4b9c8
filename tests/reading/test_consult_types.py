"""The consultation reader's value types and shared rules (reading/consult_types.py)."""

from medground.drug_schema import Drug


def test_a_hyphenated_word_holds_its_parts():
    from medground.reading.consult_types import word_set

    assert {"reddish-orange", "reddish", "orange", "urine"} <= word_set("Reddish-orange color of saliva, tears, and urine")
    assert "x" not in word_set("X-ray")  # one-letter parts are no words


def test_a_combinations_own_component_is_no_second_drug():
    from medground.reading.consult_types import part_of

    combo = Drug("amoxicillin-clavulanate", "amoxicillin/clavulanate", ["Augmentin"], "", [],
                 ["amoxicillin", "clavulanate"])
    assert part_of(combo, Drug("amoxicillin", "amoxicillin", [], ""))
    assert part_of(Drug("amoxicillin", "amoxicillin", [], ""), combo)
    assert not part_of(combo, Drug("warfarin", "warfarin", [], ""))


def test_a_matched_part_stands_for_the_item_it_came_from():
    from medground.reading.consult_types import ItemMatch, distinct

    got = distinct([ItemMatch("diarrhea", 0.9, "loose stools"), ItemMatch("Nausea/vomiting/diarrhea", 0.8, "x"),
                    ItemMatch("Arthralgia/myalgia", 0.7, "y")])
    assert [m.text for m in got] == ["diarrhea", "Arthralgia/myalgia"]


def test_a_short_items_head_is_a_part_and_is_named_as_the_whole_item():
    from medground.reading.consult_types import ItemMatch, distinct
    from medground.reading.consult_text import with_parts

    assert with_parts(["Pregnancy (fetal toxicity)"]) == ["Pregnancy (fetal toxicity)", "Pregnancy"]
    table_row = "Hemorrhage (including hematoma) 67 (1.1)"
    assert with_parts([table_row]) == [table_row]  # a table row stays whole
    got = distinct([ItemMatch("Pregnancy", 0.94, "pregnant")], ["Pregnancy (fetal toxicity)", "Pregnancy"])
    assert [m.text for m in got] == ["Pregnancy (fetal toxicity)"]


def test_a_safety_entry_naming_nothing_said_yields_to_the_one_that_does():
    from medground.drug_schema import AttributeType as A, DrugAttribute
    from medground.reading.consult_types import EntryChoice, ItemMatch, safety_sibling_first

    drug = Drug("celecoxib", "celecoxib", ["Celebrex"], "NSAID")

    def entry(kind, best: float, sibling: str = "") -> EntryChoice:
        attr = DrugAttribute("celecoxib", kind, kind.value, "…", "book")
        return EntryChoice(drug, attr, 0.5, [ItemMatch("item", best, "heart bypass", sibling=sibling)], 0.0)

    warnings, contra, dose = entry(A.WARNINGS, 0.26), entry(A.CONTRAINDICATIONS, 0.6), entry(A.DOSAGE, 0.9)
    assert safety_sibling_first([warnings, dose, contra], 0.45) == [contra, warnings, dose]
    assert safety_sibling_first([entry(A.WARNINGS, 0.5), contra], 0.45)[1] is contra  # the first names it
    assert safety_sibling_first([warnings, entry(A.CONTRAINDICATIONS, 0.4)], 0.45)[0] is warnings  # neither does
    assert safety_sibling_first([warnings, entry(A.CONTRAINDICATIONS, 0.6, sibling="x")], 0.45)[0] is warnings
    assert safety_sibling_first([dose, contra], 0.45)[0] is dose  # only between the two safety entries
    # side effects and warnings, when asked for: a label files serious reactions under warnings
    from medground.reading.consult_types import EFFECT_PAIR, SAFETY_PAIR

    effects, label_warnings = entry(A.ADVERSE_REACTIONS, 0.3), entry(A.WARNINGS, 0.7)
    assert safety_sibling_first([effects, label_warnings], 0.45)[0] is effects  # not by default
    assert safety_sibling_first([effects, label_warnings], 0.45, (SAFETY_PAIR, EFFECT_PAIR))[0] is label_warnings


def test_an_entry_naming_what_the_question_says_answers_before_one_naming_nothing_near():
    from medground.drug_schema import AttributeType as A, DrugAttribute
    from medground.reading.consult_types import EntryChoice, ItemMatch, matched_entry_first

    drug = Drug("theophylline", "theophylline", ["Theo-24"], "Xanthine")
    turn = "I'm a big coffee drinker, five mugs before lunch. Could that be it?"

    def entry(kind, best: float, said: str, modifier: bool = False) -> EntryChoice:
        attr = DrugAttribute("theophylline", kind, kind.value, "…", "book")
        return EntryChoice(drug, attr, 0.5, [ItemMatch("item", best, said, modifier=modifier)], 0.0)

    effects, caffeine = entry(A.ADVERSE_REACTIONS, 0.38, "jittery"), entry(A.INTERACTIONS, 0.72, "coffee")
    copd = entry(A.WARNINGS, 0.8, "COPD")  # told in an earlier turn ("for my COPD")
    assert matched_entry_first([effects, copd, caffeine], 0.45, 0.65, turn) == [caffeine, effects, copd]
    assert matched_entry_first([effects, copd], 0.45, 0.65, turn) == [effects, copd]  # not this turn's words
    near = entry(A.ADVERSE_REACTIONS, 0.5, "jittery")
    assert matched_entry_first([near, caffeine], 0.45, 0.65, turn)[0] is near  # the first names something near
    through_modifier = entry(A.INTERACTIONS, 0.72, "coffee", modifier=True)
    assert matched_entry_first([effects, through_modifier], 0.45, 0.65, turn)[0] is effects
    assert matched_entry_first([effects, caffeine], 0.45, 0.65, turn, frozenset({A.WARNINGS}))[0] is effects
    other = EntryChoice(Drug("caffeine", "caffeine", [], ""), caffeine.attribute, 0.5, caffeine.items, 0.0)
    assert matched_entry_first([effects, other], 0.45, 0.65, turn)[0] is effects  # the subject's own entries


def test_a_missing_kind_abstains_unless_a_near_item_may_answer():
    from medground.drug_schema import AttributeType as A
    from medground.reading.consult_settings import ConsultReplySettings
    from medground.reading.consult_types import no_entry_relates

    held = {A.ADVERSE_REACTIONS, A.WARNINGS}
    shipped, near = ConsultReplySettings(), ConsultReplySettings(lacking_kind_near=True)
    assert no_entry_relates(0.01, A.INTERACTIONS, held, 0.9, shipped, nearest=0.53)  # the kind asked is missing
    assert not no_entry_relates(0.01, A.INTERACTIONS, held, 0.9, near, nearest=0.53)  # "5.7 Alcohol" may answer
    assert no_entry_relates(0.01, A.INTERACTIONS, held, 0.9, near, nearest=0.3)  # nothing near
    assert no_entry_relates(0.9, A.WARNINGS, held, 0.0, near, nearest=0.9)  # a kind no record answers


def test_a_record_with_one_safety_entry_answers_the_other_kind_of_safety_question():
    from medground.drug_schema import AttributeType as A, DrugAttribute
    from medground.reading.consult_types import EntryChoice, safety_stand_in

    drug = Drug("dalfampridine", "dalfampridine", ["Ampyra"], "")

    def entry(kind) -> EntryChoice:
        return EntryChoice(drug, DrugAttribute("dalfampridine", kind, kind.value, "…", "fda"), 0.1, [], 0.0)

    warnings, effects = entry(A.WARNINGS), entry(A.ADVERSE_REACTIONS)
    label = {A.WARNINGS, A.ADVERSE_REACTIONS}  # an FDA label: no contraindications entry
    assert safety_stand_in([effects, warnings], "dalfampridine", A.CONTRAINDICATIONS, label) is warnings
    # asked what the record holds, or something else, or about another drug's record: nothing stands in
    assert safety_stand_in([effects, warnings], "dalfampridine", A.WARNINGS, label) is None
    assert safety_stand_in([effects, warnings], "dalfampridine", A.DOSAGE, label) is None
    assert safety_stand_in([effects, warnings], "other", A.CONTRAINDICATIONS, label) is None


def test_a_warnings_entry_naming_what_was_said_clearly_nearer_answers_before_side_effects():
    from medground.drug_schema import AttributeType as A, DrugAttribute
    from medground.reading.consult_types import EntryChoice, ItemMatch, better_effect_first

    drug = Drug("alogliptin", "alogliptin", ["Nesina"], "DPP-4 inhibitor")

    def entry(kind, best: float, phrase: str = "knees and hands very painful") -> EntryChoice:
        attr = DrugAttribute("alogliptin", kind, kind.value, "…", "label")
        return EntryChoice(drug, attr, 0.5, [ItemMatch("item", best, phrase)], 0.0)

    effects, warnings = entry(A.ADVERSE_REACTIONS, 0.53), entry(A.WARNINGS, 0.66)
    assert better_effect_first([effects, warnings], 0.65, 0.1) == [warnings, effects]
    assert better_effect_first([effects, entry(A.WARNINGS, 0.6)], 0.65, 0.0)[0] is effects  # not a match
    assert better_effect_first([entry(A.ADVERSE_REACTIONS, 0.6), warnings], 0.65, 0.1)[0].attribute.type \
        is A.ADVERSE_REACTIONS  # not enough nearer
    # why the drug is taken is no effect ("on lisinopril for blood pressure" / "Orthostatic hypotension")
    assert better_effect_first([effects, entry(A.WARNINGS, 0.71, "blood pressure")], 0.65, 0.1,
                               {"blood pressure"})[0] is effects
    dose = entry(A.DOSAGE, 0.2)
    assert better_effect_first([dose, warnings], 0.65, 0.1)[0] is dose  # only between the two
    # one way only: a label's side-effects lines may be its studies' populations
    assert better_effect_first([entry(A.WARNINGS, 0.5), entry(A.ADVERSE_REACTIONS, 0.7)], 0.65, 0.1)[0] \
        .attribute.type is A.WARNINGS
    # only through the last turn's words ("I take Theo-24 for my COPD" was told before)
    assert better_effect_first([effects, warnings], 0.65, 0.1, (), "My knees and my hands are very painful now") \
        == [warnings, effects]
    assert better_effect_first([effects, warnings], 0.65, 0.1, (), "Could that be it?")[0] is effects
    named = entry(A.WARNINGS, 0.9)
    named.items[0].class_of = "Sacubitril/Valsartan"  # another named drug's class, not an effect
    assert better_effect_first([effects, named], 0.65, 0.1)[0] is effects


def test_the_first_sentence_names_short_items_and_quotes_a_parts_whole_item():
    from medground.drug_schema import AttributeType as A, DrugAttribute
    from medground.reading.consult_sentences import first_sentence
    from medground.reading.consult_settings import ConsultReplySettings
    from medground.reading.consult_types import EntryChoice, ItemMatch

    drug = Drug("febuxostat", "febuxostat", ["Uloric"], "Xanthine oxidase inhibitor")
    long = "After initiation of ULORIC, an increase in gout flares is frequently observed during the first months."
    attr = DrugAttribute("febuxostat", A.WARNINGS, f"Gout Flare\n{long}\nCardiovascular Events", "label")
    matched = [ItemMatch("Gout Flare", 0.9, "gout"), ItemMatch(long, 0.9, "gout")]
    choice = EntryChoice(drug, attr, 0.5, matched, 0.0)
    short = ConsultReplySettings(first_names_short=True)
    first, quotes = first_sentence("Is the tablet making the gout worse?", choice, matched, short)
    assert first == "Caution \u2014 Gout Flare is listed in Febuxostat's warnings and precautions [1]."
    assert quotes[0] == "Gout Flare" and quotes[1].startswith("After initiation of ULORIC")  # the sentence quoted
    assert "After initiation" in first_sentence("Is it the tablet?", choice, matched, ConsultReplySettings())[0]
    # a part is named, its whole item quoted
    effects = DrugAttribute("febuxostat", A.ADVERSE_REACTIONS, "Cramping/diarrhea\nRash", "book")
    part = [ItemMatch("Cramping", 0.8, "cramps", quote="Cramping/diarrhea")]
    first, quotes = first_sentence("Could it cause cramps?", EntryChoice(drug, effects, 0.9, part, 0.0), part,
                                   ConsultReplySettings(), {A.ADVERSE_REACTIONS: 0.9})
    assert first.startswith("Yes \u2014 Cramping is listed") and quotes == ["Cramping/diarrhea"]
