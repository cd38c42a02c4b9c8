"""A patient's misspelt word read as the database's word, and only then."""

from medground.reading.spelling import Speller, embedder_vocabulary

ITEMS = ["Pregnancy (fetal toxicity)", "pregnant women", "Narrow-angle glaucoma", "Renal disease; kidney failure",
         "Epilepsy", "Diabetes", "diabetic ketoacidosis", "Bedding"]
ENGLISH = {"wedding", "sister", "woozy", "the"}  # what a tokenizer's vocabulary would know


def speller() -> Speller:
    return Speller(ITEMS, lambda w: w in ENGLISH)


def test_a_misspelling_within_one_edit_becomes_the_databases_word():
    s = speller()
    assert s.correct("pregnent") == "pregnant"
    assert s.correct("glacoma") == "glaucoma"
    assert s.correct("kidny") == "kidney"
    assert s.correct("epilepsey") == "epilepsy"  # eight letters: two edits allowed


def test_known_words_short_words_and_ties_are_left_alone():
    s = speller()
    assert s.correct("wedding") is None  # one edit from "bedding", but a word spelt right
    assert s.correct("pregnant") is None and s.correct("kidy") is None
    assert s.correct("diabetis") is None  # diabetes and diabetic are both one edit away


def test_a_phrase_is_corrected_word_by_word_or_not_at_all():
    s = speller()
    assert s.corrected("glacoma the narrow kind") == "glaucoma the narrow kind"
    assert s.corrected("woozy sister") is None


def test_no_tokenizer_vocabulary_means_no_speller():
    class Plain:
        pass

    assert embedder_vocabulary(Plain()) is None
