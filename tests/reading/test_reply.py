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
    assert closest_passage("Book / Ch", 3, " words ", judged_answering=True) == (
        "The passage closest to your question is Book / Ch [3]: \u201cwords\u201d")


def test_a_table_row_is_narrowed_to_its_part_that_supports_the_claim():
    row = ("Micronutrient: Vitamin B6 (pyridoxine); Expected Effect: - Converts pyridoxine into pyridoxal "
           "phosphate, a cofactor in numerous metabolic reactions; Defined Level: - 3.4-65.2 mcg/L; - or; - "
           "13.76-263.81 nmol/L; Significance of Abnormal Values: - Deficiencies are seen with some medications "
           "(isoniazid, phenelzine, hydralazine) and in pregnancy.")
    got = supporting_sentence(row, "Isoniazid is a medication that can cause a deficiency in vitamin B6.", max_words=30)
    assert got.startswith("Deficiencies are seen with some medications (isoniazid")
    long_one = " ".join(["filler"] * 50 + ["isoniazid", "deficiency"] + ["filler"] * 50)
    cut = supporting_sentence(long_one, "isoniazid deficiency", max_words=20)
    assert cut.startswith("\u2026 ") and cut.endswith(" \u2026") and "isoniazid deficiency" in cut
    assert len(cut.split()) == 22  # 20 words and two ellipses


def test_a_sentence_said_twice_is_said_once_with_both_marks():
    from medground.reading.reply import without_repeats

    assert without_repeats("Histoplasmosis is caused by a mold. Histoplasmosis is caused by a mold [5].") == \
        "Histoplasmosis is caused by a mold [5]."
    once = "Digoxin slows the heart [1]. It is given orally [2]."
    assert without_repeats(once) == once
