"""The consultation typer's recipe (train/typer_recipe.py): what it trains on, and the folds that
let a development question be typed by a typer that never saw it."""

from collections import Counter

import numpy as np
import pytest

from medground.schema import Question
from medground.train.typer_recipe import TyperRecipe, crossfit_fold, fit_typer, masked_question


class _Embedder:
    """A stand-in: one dimension per word of a small vocabulary (bag of words)."""

    words = ["what", "for", "dose", "much", "side", "effects", "this", "medicine", "lisinopril", "ibuprofen"]

    def encode_queries(self, texts):
        return np.array([[t.lower().split().count(w) for w in self.words] for t in texts], dtype=float)


def _q(qid, text, focus):
    return Question(qid=qid, dataset="medication-qa", question=text, metadata={"focus_drug": focus})


LABELLED = [(_q(str(i), text, drug), label) for i, (text, drug, label) in enumerate(
    [("what is lisinopril for", "lisinopril", "indications"), ("what is ibuprofen for", "ibuprofen", "indications"),
     ("how much lisinopril", "lisinopril", "dosage"), ("ibuprofen dose how much", "ibuprofen", "dosage"),
     ("lisinopril side effects", "lisinopril", "adverse_reactions"),
     ("ibuprofen side effects", "ibuprofen", "adverse_reactions")] * 2)]


def test_the_focus_drug_reads_this_medicine():
    assert masked_question(_q("1", "Is Tagamet HB safe?", "Tagamet HB")) == "Is this medicine safe?"


def test_a_recipe_trains_on_plain_and_masked_questions_and_types_them():
    model = fit_typer(TyperRecipe(mask=True), LABELLED, _Embedder())
    assert model.masks_names and set(model.classes) == {"indications", "dosage", "adverse_reactions"}
    probs = model.probabilities(_Embedder().encode_queries(["what is this medicine for"]))[0]
    assert model.classes[int(probs.argmax())] == "indications"


def test_folds_are_stable_and_cover_every_fold():
    ids = [str(i) for i in range(500)]
    folds = [crossfit_fold(i, 5) for i in ids]
    assert folds == [crossfit_fold(i, 5) for i in ids]  # a hash of the id alone
    assert set(folds) == set(range(5)) and min(Counter(folds).values()) > 60
    with pytest.raises(ValueError, match="at least 2 folds"):
        crossfit_fold("1", 1)


def test_a_folds_typer_is_kept_under_one_name_per_fold(tmp_path):
    from medground.train.typer_recipe import crossfit_path

    assert crossfit_path(tmp_path, 2, 5) == tmp_path / "fold2of5.npz"
    assert len({crossfit_path(tmp_path, k, 5) for k in range(5)}) == 5
