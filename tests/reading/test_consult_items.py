"""Entries' items in the embedding space (reading/consult_items.py): a list item is matched
through the members its parentheses name, and the reply names the whole item. Real bundled
MiniLM and the shipped typer; a small database."""

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.reading.consult import ConsultReader
from medground.reading.consult_text import members, sentence_phrases, with_parts

SRC = "openstax-prototype:m1#t"
TYRAMINE = ("Foods high in tyramine (milk, turkey, chicken, soy products, seafood, canned tuna, aged cheeses, "
            "whole-wheat bread)")


def with_settings(reader: ConsultReader, **update) -> ConsultReader:
    """The same reader (database, typer, embedder) with some reply settings changed."""
    return ConsultReader(reader.drugs, reader.typer, reader.embedder, reader.settings.model_copy(update=update))


def test_members_are_a_parenthesised_list_after_a_short_head():
    assert members("CNS depressants (antihistamines, kava, valerian)") == ["antihistamines", "kava", "valerian"]
    assert members("Foods that contain vitamin K (e.g., spinach, kale, broccoli)") == ["spinach", "kale", "broccoli"]
    assert members("Visual disturbances (yellow or green halo around lights)") == ["yellow", "green halo around lights"]
    assert members("Pregnancy (fetal toxicity)") == []  # one thing: the why, no list
    assert members("Hypotension or hypertension (resting BP <90/50 mm Hg, BP >170/110)") == []  # numbers
    assert members("In the pool of eight clinical trials, hypersensitivity-related adverse reactions "
                   "(rash, urticaria, angioedema) were reported") == []  # a label sentence's aside
    # parts only where asked, and a member that is an item of its own stays that item
    assert with_parts(["Opioids", "CNS depressants (opioids, kava)"]) == ["Opioids", "CNS depressants (opioids, kava)",
                                                                        "CNS depressants"]
    assert with_parts(["Opioids", "CNS depressants (opioids, kava)"], named_members=True)[-2:] == ["opioids", "kava"]


def test_a_sentence_item_is_also_met_through_its_runs_of_content_words():
    fiber = "Dietary fiber may bind to levothyroxine sodium and decrease its absorption"
    assert sentence_phrases(fiber, ["Levothyroxine Sodium"]) == ["Dietary fiber"]  # its own name ends a run
    assert sentence_phrases("There have been postmarketing reports of severe and disabling arthralgia in "
                            "patients taking DPP-4 inhibitors.") == ["disabling arthralgia"]  # framing and numbers
    assert "orange juice" in sentence_phrases("Avoid orange juice for at least 2 hours after taking")
    assert sentence_phrases("Grapefruit juice (large amounts)") == []  # a short item is matched whole


def test_a_fibre_supplement_meets_the_labels_sentence_on_dietary_fiber(reader_over):
    """"a big bowl of bran flakes plus a fibre supplement" on Synthroid: the interactions sentence
    on dietary fiber is 0.50 from "fibre supplement" whole, "Dietary fiber" alone much nearer."""
    fiber = "Dietary fiber may bind to levothyroxine sodium and decrease its absorption"
    catalog = DrugCatalog(
        [Drug("levothyroxine", "levothyroxine", ["Synthroid"], "Thyroid hormone")],
        [DrugAttribute("levothyroxine", A.INTERACTIONS, "Iron\n" + fiber, SRC),
         DrugAttribute("levothyroxine", A.ADVERSE_REACTIONS, "Tremors\nNausea\nIrritability", SRC)])
    base = reader_over(catalog)
    said = ["I take my Synthroid every morning, then a fibre supplement with breakfast. Is that a problem?"]
    phrases = with_settings(base, item_phrases=True)
    r = phrases.reply(said, "levothyroxine")
    assert r.chosen.attribute.type is A.INTERACTIONS and r.matched == [fiber], r.text
    assert fiber not in base.reply(said, "levothyroxine").matched  # off: the sentence is too far whole


def test_a_food_named_among_an_items_members_is_that_item(reader_over):
    """"aged cheddar" on Nardil missed "Foods high in tyramine (…, aged cheeses, …)", a blend of
    eight foods to MiniLM; its member "aged cheeses" is what the patient names."""
    catalog = DrugCatalog(
        [Drug("phenelzine", "phenelzine", ["Nardil"], "Monoamine oxidase inhibitor")],
        [DrugAttribute("phenelzine", A.INTERACTIONS, "Caffeine\n" + TYRAMINE, SRC),
         DrugAttribute("phenelzine", A.DOSAGE, "15 mg orally 3 times daily.", SRC)])
    reader = reader_over(catalog)
    said = ["I'm on Nardil. Can I eat cheese with it?"]
    r = reader.reply(said, "phenelzine")
    assert r.chosen.attribute.type is A.INTERACTIONS and r.matched == [TYRAMINE], r.text
    assert "Foods high in tyramine (milk" in r.first_sentence  # the whole item, never the bare member
    whole = with_settings(reader, item_members=False)
    assert TYRAMINE not in whole.reply(said, "phenelzine").matched


def test_a_rare_word_of_the_context_never_reaches_what_the_drug_is_for(reader_over):
    """"hay fever is brutal today. took a claritin at 8am and still sneezing. can i take another
    one now?": "sneezing", rare in the database, named the therapeutic effect outright although
    the purpose rule keeps context words away from it."""
    catalog = DrugCatalog(
        [Drug("loratadine", "loratadine", ["Claritin"], "Antihistamine")],
        [DrugAttribute("loratadine", A.THERAPEUTIC_EFFECTS,
                       "Relieves runny nose, sneezing, and itchy watery eyes caused by allergies", SRC),
         DrugAttribute("loratadine", A.DOSAGE, "One 10 mg tablet orally daily, not to exceed 1 tablet in 24 hours.",
                       SRC)])
    base = reader_over(catalog)
    # "sneezing" is in one of the two entries: rare, as it is in the shipped database
    reader = with_settings(base, rare_share=0.6)
    t = "hay fever is brutal today. took a claritin at 8am and still sneezing. can i take another one now?"
    assert reader.reply([t], "loratadine").chosen.attribute.type is A.DOSAGE
    asked = "hay fever is brutal today. took a claritin at 8am and still sneezing. does it even help with sneezing?"
    assert reader.reply([asked], "loratadine").chosen.attribute.type is A.THERAPEUTIC_EFFECTS


def test_the_words_naming_the_medicine_are_never_rare_words(reader_over):
    """"im on the breo ellipta inhaler": "ellipta", in every line of the label, met them all as
    a rare word; words describing a medicine say which drug, not what is asked."""
    from medground.reading.consult_text import describing_words

    assert describing_words("im on the breo ellipta inhaler for my copd. related?") == {"breo", "ellipta", "inhaler"}
    assert describing_words("my calcium tablets", frozenset({"calcium"})) == {"tablets"}  # a substance stays
    catalog = DrugCatalog(
        [Drug("breo", "breo", [], "")],
        [DrugAttribute("breo", A.ADVERSE_REACTIONS, "Oral candidiasis\nPneumonia in BREO ELLIPTA patients", SRC),
         DrugAttribute("breo", A.WARNINGS, "Discontinue BREO ELLIPTA if paradoxical bronchospasm occurs", SRC),
         DrugAttribute("breo", A.DOSAGE, "One inhalation once daily.", SRC)])
    reader = reader_over(catalog)
    space = reader.space
    space.settings = space.settings.model_copy(update={"rare_share": 0.9})  # every word rare here
    rare = space.rare_words("got pneumonia last week. im on the breo ellipta inhaler. related?", ["breo"])
    assert rare == {"pneumonia"}


def test_a_warnings_sentence_naming_the_other_drugs_class_answers_the_two_together(reader_over):
    """"can he take aleve with his eliquis?": neither drug has an interactions entry, but
    Eliquis's warnings name NSAIDs (reply.partner_warnings)."""
    hemostasis = ("Concomitant use of drugs affecting hemostasis increases the risk of bleeding. These include "
                  "aspirin and other antiplatelet agents and nonsteroidal anti-inflammatory drugs (NSAIDs).")
    catalog = DrugCatalog(
        [Drug("apixaban", "apixaban", ["Eliquis"], "Anticoagulant"),
         Drug("naproxen", "naproxen", ["Aleve"], "Propionic Acid Derivatives; Nonsteroidal Anti-inflammatory Drugs")],
        [DrugAttribute("apixaban", A.WARNINGS, "Spinal/epidural hematoma\n" + hemostasis, SRC),
         DrugAttribute("apixaban", A.DOSAGE, "5 mg orally twice daily.", SRC),
         DrugAttribute("naproxen", A.DOSAGE, "220 mg orally every 8 to 12 hours.", SRC)])
    base = reader_over(catalog)
    said = ["my husband is on eliquis for his AF", "his back is sore, can he take aleve with his eliquis?"]
    on = with_settings(base, partner_warnings=True)
    r = on.reply(said, "naproxen", ["apixaban"])
    assert r.outcome == "answered" and r.chosen.drug.drug_id == "apixaban" and r.chosen.attribute.type is A.WARNINGS
    assert r.first_sentence.startswith("Caution — Apixaban's warnings and precautions name Nonsteroidal "
                                       "Anti-inflammatory Drugs [1] — Naproxen is one"), r.first_sentence
    off = with_settings(base, partner_warnings=False)
    assert not any(c.attribute.type is A.WARNINGS for c in off.reply(said, "naproxen", ["apixaban"]).ranked)
    # the other drug's warnings are weighed only where a sentence names the subject
    tylenol = DrugCatalog(
        [*catalog.drugs, Drug("acetaminophen", "acetaminophen", ["Tylenol"], "Analgesic")],
        [*catalog.attributes, DrugAttribute("acetaminophen", A.DOSAGE, "325–650 mg orally every 4–6 hours.", SRC)])
    three = ConsultReader(*(lambda b: (b.drugs, b.typer, b.embedder))(reader_over(tylenol)),
                          base.settings.model_copy(update={"partner_warnings": True}))
    r = three.reply(["can I take tylenol with my eliquis?"], "acetaminophen", ["apixaban"])
    assert not any(c.drug.drug_id == "apixaban" and c.attribute.type is A.WARNINGS for c in r.ranked)


def test_a_food_the_question_is_about_answers_before_a_dose_that_names_nothing(reader_over):
    """"Do I really have to skip the cheese??" on Nardil was given its dose (the typer's 0.62): its
    interactions item names the cheese (reply.matched_first). Cheese told before a dose question
    is context: the dose answers."""
    catalog = DrugCatalog(
        [Drug("phenelzine", "phenelzine", ["Nardil"], "Monoamine oxidase inhibitor")],
        [DrugAttribute("phenelzine", A.INTERACTIONS, "Antidepressants\n" + TYRAMINE, SRC),
         DrugAttribute("phenelzine", A.DOSAGE, "15 mg orally 3 times daily; maximum dose: 90 mg/day.", SRC)])
    reader = reader_over(catalog)
    skip = ["I'm on Nardil for my depression.", "Do I really have to skip the cheese??"]
    assert reader.reply(skip, "phenelzine").chosen.attribute.type is A.INTERACTIONS
    dose = ["I'm on Nardil. I had some cheese at lunch and felt fine. What's the most Nardil I can take in a day?"]
    assert reader.reply(dose, "phenelzine").chosen.attribute.type is A.DOSAGE
    off = with_settings(reader, matched_first="off")
    assert off.reply(skip, "phenelzine").chosen.attribute.type is A.DOSAGE  # the typer's choice alone


def test_how_it_works_comes_with_what_it_does(reader_over):
    """"What does Plavix actually do?" is read as how it works; a patient means what it does for
    them too: the other entry of the pair is given after, cited as its own (the first stays)."""
    catalog = DrugCatalog(
        [Drug("clopidogrel", "clopidogrel", ["Plavix"], "P2Y12 inhibitor")],
        [DrugAttribute("clopidogrel", A.MECHANISM, "Inhibits platelet activation through the P2Y12 receptor", SRC),
         DrugAttribute("clopidogrel", A.THERAPEUTIC_EFFECTS, "Decreases platelet activation\nDecreases clotting risk",
                       SRC),
         DrugAttribute("clopidogrel", A.DOSAGE, "75 mg orally once daily.", SRC)])
    reader = reader_over(catalog)
    r = reader.reply(["They sent me home with Plavix. How does it actually work?"], "clopidogrel")
    kinds = [c.section for c in r.citations]
    assert kinds[0] == r.chosen.attribute.type.value and set(kinds[:2]) == {"mechanism", "therapeutic_effects"}
    assert "Decreases clotting risk" in r.text and "Inhibits platelet activation" in r.text
    alone = with_settings(reader, effects_with_mechanism=False)
    assert len(alone.reply(["How does Plavix work?"], "clopidogrel").citations) == 1
    dose = reader.reply(["How much Plavix do I take?"], "clopidogrel")
    assert [c.section for c in dose.citations] == ["dosage"]  # only the pair brings the other


def test_a_sub_heading_is_never_quoted_as_a_line_close_to_the_question(reader_over):
    """"Whats the most metformine I'm allowed per day?" was shown "Extended release:" and "Oral
    solution:": the dose's sub-headings, nearest in MiniLM's space and saying nothing."""
    from medground.reading.consult_sentences import heading_only

    assert heading_only("Extended release:") and heading_only("Treatment of osteoporosis:")
    assert not heading_only("Maximum dose: 2000 mg daily.") and not heading_only("Adults: 500 mg twice daily:")
    dose = ("Immediate release:\nAdults: 500–1000 mg orally twice daily.\nMaximum dose: 2000 mg daily.\n"
            "Children (the only oral diabetes drug that is safe for use in children 10–17 years of age): 500 mg "
            "orally twice daily.\nMaximum dose: 2000 mg daily in divided doses.\n"
            "Extended release:\nAdults: 250–500 mg once daily with evening meal; increase dose by 500 mg/week on "
            "the basis of glycemic control and tolerability.\nMaximum dose: 2000 mg/day.\nChildren: Health care "
            "provider should determine dose based on body surface area and glucose target range.\nOral solution:\n"
            "Adults and children: 500 mg/5 mL daily up to a maximum of 2000 mg/day.")  # over 600 characters: prose
    catalog = DrugCatalog([Drug("metformin", "metformin", ["Glucophage"], "Biguanide")],
                          [DrugAttribute("metformin", A.DOSAGE, dose, SRC)])
    r = reader_over(catalog).reply(["Whats the most metformin I'm allowed per day? I'm on 1000 now."], "metformin")
    # a heading only before a line under it, which it names the case of
    assert r.quotes and not heading_only(r.quotes[-1]), r.text
    assert all(not heading_only(b) for a, b in zip(r.quotes, r.quotes[1:]) if heading_only(a)), r.text
    assert any("Maximum dose" in q for q in r.quotes), r.text
