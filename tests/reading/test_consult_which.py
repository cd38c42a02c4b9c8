"""Which of the patient's medicines is behind what they described (reading/consult_which.py)."""

from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.reading.consult_types import EntryChoice, ItemMatch, Reply, record_citation
from medground.reading.consult_which import asks_which_medicine, which_reply

A = AttributeType
DRUGS = {d.drug_id: d for d in (Drug("metformin", "metformin"), Drug("lisinopril", "lisinopril"),
                                  Drug("glyburide-metformin", "glyburide/metformin",
                                       components=["glyburide", "metformin"]),
                                  Drug("simvastatin", "simvastatin"))}


def _reply(drug_id: str, kind: A, item: str | None, similarity: float = 0.8) -> Reply:
    attribute = DrugAttribute(drug_id, kind, item or "Headache", "test")
    match = ItemMatch(item or "Headache", similarity if item else 0.3, "said")
    choice = EntryChoice(DRUGS[drug_id], attribute, 0.9, [match], 0.0)
    first = f"{item} is listed among {DRUGS[drug_id].display_name}'s side effects [1]." if item else "No."
    return Reply("answered", first, [record_citation(DRUGS[drug_id], attribute)], first,
                 matched=[item] if item else [], chosen=choice)


def test_a_which_question_is_told_from_a_question_about_one_medicine():
    assert asks_which_medicine("I take metformin and lisinopril. I have a dry cough. Which one is doing it?")
    assert asks_which_medicine("my pee is orange?? which one is doing this")
    assert asks_which_medicine("Could one of my tablets be doing it?")
    assert not asks_which_medicine("I have a dry cough. Is it the lisinopril?")
    assert not asks_which_medicine("Which of the doctors should I see about my cough?")


def test_the_medicine_whose_entry_names_it_answers_and_the_others_are_said():
    alone = {"metformin": _reply("metformin", A.ADVERSE_REACTIONS, None),
             "lisinopril": _reply("lisinopril", A.ADVERSE_REACTIONS, "Cough")}
    usual = alone["metformin"]
    got = which_reply(alone.__getitem__, ["metformin", "lisinopril"], DRUGS, usual)
    assert got.chosen.drug.drug_id == "lisinopril" and got.text.startswith("Cough is listed among Lisinopril's")
    assert got.text.endswith("Of Metformin and Lisinopril, it is Lisinopril's entry that names it.")


def test_the_subjects_own_answer_stands_first_and_another_that_names_it_is_cited_after():
    alone = {"metformin": _reply("metformin", A.ADVERSE_REACTIONS, "Diarrhea", 0.9),
             "lisinopril": _reply("lisinopril", A.ADVERSE_REACTIONS, "Diarrhea", 1.0)}
    got = which_reply(alone.__getitem__, ["metformin", "lisinopril"], DRUGS, alone["metformin"])
    assert got.chosen.drug.drug_id == "metformin"
    assert "Lisinopril's side effects (adverse reactions) also list \u201cDiarrhea\u201d [2]." in got.text
    assert [c.number for c in got.citations] == [1, 2] and got.citations[1].chapter == "Lisinopril"
    assert got.text.endswith("each one's entry names it.")


def test_no_entry_naming_it_a_near_item_or_another_kind_of_entry_leaves_the_usual_reply():
    hedged = {"metformin": _reply("metformin", A.ADVERSE_REACTIONS, None),
              "simvastatin": _reply("simvastatin", A.DOSAGE, "10 mg")}  # a dose line is no effect
    assert which_reply(hedged.__getitem__, ["metformin", "simvastatin"], DRUGS, hedged["metformin"]) is None
    # one medicine alone, or a combination beside its own part, is no choice among medicines
    alone = {"metformin": _reply("metformin", A.ADVERSE_REACTIONS, "Diarrhea"),
             "glyburide-metformin": _reply("glyburide-metformin", A.ADVERSE_REACTIONS, "Hypoglycemia")}
    assert which_reply(alone.__getitem__, ["metformin", "glyburide-metformin"], DRUGS, alone["metformin"]) is None
