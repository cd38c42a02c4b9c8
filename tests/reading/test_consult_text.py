"""The patient's words read as text (reading/consult_text.py)."""


def test_a_medicines_form_names_it_as_a_pill_does():
    """"i also carry a nitro spray for angina. can i use both?" beside Viagra: "nitro spray" is a
    second medicine (reading/described.py), not "angina" read as the patient's condition."""
    from medground.reading.consult_text import content_phrases, describing_words

    assert describing_words("i also carry a nitro spray for angina") == {"nitro", "spray"}
    assert "nitro" not in content_phrases("i also carry a nitro spray for angina")
    assert "blood pressure" in content_phrases("my blood pressure drops when I stand up")  # "drops": a symptom


def test_a_label_lines_title_is_a_part_and_a_part_names_its_whole_item():
    from medground.reading.consult_text import item_parts, whole_of_parts

    line = "Arthralgia: Severe and disabling arthralgia has been reported in patients taking DPP-4 inhibitors."
    assert item_parts(line, titles=True) == ["Arthralgia"]
    assert item_parts(line) == []  # titles only where asked (entries of cautions and interactions)
    assert item_parts("EXCERPT: * Gout Flare : An increase in gout flares is frequently observed",
                      titles=True) == ["Gout Flare"]
    assert item_parts("Adults: 500 mg orally every 12 hours.", titles=True) == []  # a dose line has no title
    assert item_parts("Severe infections:", titles=True) == []
    # the reply quotes what the source listed, not half of it; a part that is an item itself stays one
    assert whole_of_parts(["Cramping/diarrhea", "Vertigo"]) == {"Cramping": "Cramping/diarrhea",
                                                                 "diarrhea": "Cramping/diarrhea"}
    assert whole_of_parts(["Cramping/diarrhea", "Cramping"]) == {"diarrhea": "Cramping/diarrhea"}
