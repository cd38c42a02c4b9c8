from __future__ import annotations

from medground.reading.reply import answer_with_quote, closest_passage, quote_line, supporting_sentence

PASSAGE = ("Digoxin increases the force of contraction. Hypokalemia increases the risk of digoxin toxicity. "
           "Monitor the apical pulse before each dose.")


def test_the_supporting_sentence_is_the_one_sharing_most_of_the_claim():
    assert supporting_sentence(PASSAGE, "Low potassium (hypokalemia) raises digoxin toxicity risk") == \
        "Hypokalemia increases the risk of digoxin toxicity."
    assert supporting_sentence(PASSAGE, "Warfarin needs INR checks") == ""


def test_an_answer_is_followed_by_its_source_words_unless_they_only_repeat_it():
    said = "Hypokalemia increases the risk of digoxin toxicity [2]."
    assert answer_with_quote(said, "Book / Digoxin", 2, "Hypokalemia increases the risk of digoxin toxicity.") \
        == said  # quoting the same words again adds nothing
    assert answer_with_quote("Low potassium does [2].", "Book / Digoxin", 2, "Hypokalemia increases the risk.") \
        == "Low potassium does [2]. Book / Digoxin: \u201cHypokalemia increases the risk.\u201d [2]"
    assert answer_with_quote("Low potassium does [2].", "Book", 2, " ") == "Low potassium does [2]."


def test_quote_line_and_the_closest_passage_reply():
    assert quote_line("DB / X / warnings", 1, ["a", "b "]) == "DB / X / warnings: \u201ca\u201d; \u201cb\u201d [1]"
    assert closest_passage("Book / Ch", 3, "words").startswith("The sources do not state this in so many words")
