"""The patient's words read as text (reading/consult_text.py)."""


def test_a_medicines_form_names_it_as_a_pill_does():
    """"i also carry a nitro spray for angina. can i use both?" beside Viagra: "nitro spray" is a
    second medicine (reading/described.py), not "angina" read as the patient's condition."""
    from medground.reading.consult_text import content_phrases, describing_words

    assert describing_words("i also carry a nitro spray for angina") == {"nitro", "spray"}
    assert "nitro" not in content_phrases("i also carry a nitro spray for angina")
    assert "blood pressure" in content_phrases("my blood pressure drops when I stand up")  # "drops": a symptom
