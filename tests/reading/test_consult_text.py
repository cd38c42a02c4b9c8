"""The patient's words read as text (reading/consult_text.py)."""

from medground.reading.consult_text import attribution_question


def test_a_question_without_its_mark_still_ties_what_was_said_to_the_medicine():
    """"… crying one minute and screaming at his sister the next … could it be the meds" (no
    '?') was typed as a question about what Keppra is for."""
    said = "hes been crying one minute and screaming at his sister the next. could it be the meds"
    assert attribution_question(said, ["keppra"]) == (
        "Can this medicine cause this: hes been crying one minute and screaming at his sister the next?")
    # a last sentence that asks nothing is no question, with or without a mark
    assert attribution_question("hes been crying a lot. it started with the meds", ["keppra"]) is None
    # an unmarked question that says what it asks is left to the typer as it is
    assert attribution_question("I take keppra. Can it be taken with food", ["keppra"]) is None


def test_a_medicines_form_names_it_as_a_pill_does():
    """"i also carry a nitro spray for angina. can i use both?" beside Viagra: "nitro spray" is a
    second medicine (reading/described.py), not "angina" read as the patient's condition."""
    from medground.reading.consult_text import content_phrases, describing_words

    assert describing_words("i also carry a nitro spray for angina") == {"nitro", "spray"}
    assert "nitro" not in content_phrases("i also carry a nitro spray for angina")
    assert "blood pressure" in content_phrases("my blood pressure drops when I stand up")  # "drops": a symptom
