"""The typer's word n-gram block: numpy reads what scikit-learn fitted (parity), and a typer with
the block saves, loads and types a question as it did before saving."""

import numpy as np
import pytest

from medground.reading.consult_typer import ConsultTyperModel, train
from medground.reading.word_grams import WordGrams, grams

TEXTS = [
    "can I take this medicine with ibuprofen",
    "can i take it with a glass of wine?",
    "how does this medicine work",
    "how does it work in the brain",
    "what is the dose for a child",
    "what is the dose, and can I take it twice",
    "is it safe while pregnant",
    "is it safe while breastfeeding my baby",
    "could my cough be from this medicine",
    "could the rash be from the new tablet",
]


def test_grams_are_the_vectorizers_unigrams_and_bigrams():
    from sklearn.feature_extraction.text import TfidfVectorizer

    analyzer = TfidfVectorizer(ngram_range=(1, 2)).build_analyzer()
    for text in [*TEXTS, "Ça va? l'ibuprofène, 2x daily — OK", ""]:
        assert grams(text) == analyzer(text)


def test_transform_matches_scikit_learn_to_float_precision():
    from sklearn.feature_extraction.text import TfidfVectorizer

    fitted = WordGrams.fit(TEXTS, min_df=2)
    reference = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit(TEXTS)
    unseen = ["can I take it with wine wine wine", "how does the dose work", "nothing known here"]
    for texts in (TEXTS, unseen):
        assert np.allclose(fitted.transform(texts), reference.transform(texts).toarray(), atol=1e-6)
    assert not fitted.transform(["nothing known here"]).any()  # no known gram: a zero row, not NaN
    assert np.allclose(WordGrams.fit(TEXTS, weight=0.5).transform(TEXTS), 0.5 * fitted.transform(TEXTS))


def test_a_typer_with_word_grams_saves_loads_and_reads_alike(tmp_path):
    rng = np.random.default_rng(0)
    labels = ["interactions", "interactions", "mechanism", "mechanism", "dosage", "dosage",
              "contraindications", "contraindications", "adverse_reactions", "adverse_reactions"] * 3
    texts = TEXTS * 3
    vectors = rng.normal(size=(len(texts), 8)).astype(np.float32)
    with pytest.raises(ValueError, match="texts"):
        train(vectors, labels, gram_weight=1.0)
    model = train(vectors, labels, texts=texts, gram_weight=1.0)
    assert model.grams is not None and model.coef.shape[1] == 8 + len(model.grams.vocabulary)
    path = tmp_path / "typer.npz"
    model.save(path)
    again = ConsultTyperModel.load(path)
    assert again.grams.vocabulary == model.grams.vocabulary and again.grams.weight == 1.0
    probe = ["can I take it with ibuprofen", "how does it work"]
    x = rng.normal(size=(2, 8)).astype(np.float32)
    assert np.allclose(again.probabilities(x, probe), model.probabilities(x, probe), atol=1e-5)
    with pytest.raises(ValueError, match="texts"):
        again.probabilities(x)
    # the words decide when the embedding says nothing: a zero vector, two different questions
    zero = np.zeros((2, 8), dtype=np.float32)
    p = again.probabilities(zero, probe)
    assert again.classes[int(p[0].argmax())] == "interactions" and again.classes[int(p[1].argmax())] == "mechanism"
    # a model without the block reads as before
    plain = train(vectors, labels)
    assert plain.grams is None and plain.probabilities(x).shape == (2, len(plain.classes))


def test_stemmed_grams_read_a_singular_as_its_plural():
    from medground.reading.word_grams import WordGrams, grams

    assert grams("Contraindication", stem=True) == grams("contraindications", stem=True) == ["contraind"]
    assert grams("Contraindication") == ["contraindication"]  # words as they are unless asked
    fitted = WordGrams.fit(["contraindications of this", "contraindications for that", "dose of this"], min_df=1,
                           stem=True)
    row = fitted.transform(["contraindication"])[0]
    assert row[fitted.vocabulary.index("contraind")] > 0  # the singular meets the plural's gram
