"""What a consultation asks for, including "nothing a drug record holds".

The retriever's typer (retrieve/drug_intent.py) always names an attribute type. The reply needs
one more answer: is this a question any entry could answer at all ("how much does it cost",
"what colour is the pill", "does it contain gluten")? Medication QA labels such questions
(Appearance, Ingredient, Manufacturer, Comparison, ... map to no attribute), so here they form a
class of their own, ``none``, learned beside the attribute types from the same embeddings.

Trained only on Medication QA's development part (reading/splits.py), never on its test part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from medground.drug_schema import AttributeType
from medground.reading.consult_text import whole_name
from medground.reading.word_grams import WordGrams
from medground.retrieve.drug_intent import (
    EMBEDDER_KIND,
    MEDICATION_QA_TYPES,
    load_linear,
    save_linear,
    softmax_probabilities,
)

NONE = "none"
MODEL_PATH = Path(__file__).with_name("data") / "consult_typer.npz"
MIN_EXAMPLES = 5  # a type with fewer labelled questions is left out of training


def label_of(question_type: str) -> str | None:
    """Medication QA question type → an attribute type's value, ``none``, or None (unknown type)."""
    t = question_type.strip()
    if t not in MEDICATION_QA_TYPES:
        return None
    attr = MEDICATION_QA_TYPES[t]
    return attr.value if attr is not None else NONE


@dataclass(slots=True)
class ConsultTyperModel:
    classes: list[str]  # attribute type values and "none"
    coef: np.ndarray
    intercept: np.ndarray
    embedder: str
    # trained on questions whose drug names read "this medicine": it then reads any question so
    masks_names: bool = False
    # word n-grams beside the embedding (reading/word_grams.py); None: the embedding alone
    grams: WordGrams | None = None

    def probabilities(self, vectors: np.ndarray, texts: Sequence[str] = ()) -> np.ndarray:
        """P(class) per row; ``texts`` (the rows' texts) are needed when the model reads word n-grams."""
        if self.grams is not None:
            if len(texts) != len(vectors):
                raise ValueError("this typer reads word n-grams: pass the texts of the vectors")
            vectors = self.grams.features(vectors, texts)
        return softmax_probabilities(vectors, self.coef, self.intercept)

    def save(self, path: Path) -> None:
        extra = {}
        if self.grams is not None:
            extra = {"gram_vocabulary": np.array(self.grams.vocabulary), "gram_idf": self.grams.idf,
                     "gram_weight": np.array(self.grams.weight), "gram_stem": np.array(self.grams.stem)}
        save_linear(path, self.classes, self.coef, self.intercept, self.embedder,
                    masks_names=np.array(self.masks_names), **extra)

    @classmethod
    def load(cls, path: Path) -> ConsultTyperModel:
        with np.load(path, allow_pickle=False) as z:
            masks = bool(z["masks_names"]) if "masks_names" in z.files else False
            grams = (WordGrams([str(g) for g in z["gram_vocabulary"]], z["gram_idf"], float(z["gram_weight"]),
                               bool(z["gram_stem"]) if "gram_stem" in z.files else False)
                     if "gram_vocabulary" in z.files else None)
        return cls(*load_linear(path), masks_names=masks, grams=grams)


MASK = "this medicine"


def mask_names(text: str, names: Sequence[str]) -> str:
    """``text`` with each drug name (whole words, any case, longest first) read as "this medicine".
    A typer that learned "what is Tagamet HB for" learns Tagamet; one that learned "what is this
    medicine for" learns the question: masked, it types questions about drugs it never saw as well
    (5-fold CV on Medication QA's development part: benchmarks/consult_e2e.py typer)."""
    for name in sorted({n.strip() for n in names if n and len(n.strip()) > 2}, key=len, reverse=True):
        text = whole_name(name).sub(MASK, text)
    return text


def train(vectors: np.ndarray, labels: Sequence[str], *, c: float = 4.0,
          embedder: str = EMBEDDER_KIND, masks_names: bool = False,
          texts: Sequence[str] | None = None, gram_weight: float = 0.0, stem: bool = False) -> ConsultTyperModel:
    """Class-balanced multinomial logistic regression over sentence embeddings, and over word
    n-grams of ``texts`` (the vectors' texts; of their word stems with ``stem``) beside them when
    ``gram_weight`` > 0."""
    from collections import Counter

    from sklearn.linear_model import LogisticRegression

    counts = Counter(labels)
    keep = np.array([counts[label] >= MIN_EXAMPLES for label in labels])
    y = np.array(labels)[keep]
    grams = None
    x = vectors[keep]
    if gram_weight > 0:
        if texts is None or len(texts) != len(vectors):
            raise ValueError("word n-grams need the texts of the vectors, one per row")
        kept = [t for t, k in zip(texts, keep) if k]
        grams = WordGrams.fit(kept, weight=gram_weight, stem=stem)
        x = grams.features(x, kept)
    clf = LogisticRegression(C=c, max_iter=3000, class_weight="balanced")
    clf.fit(x, y)
    return ConsultTyperModel([str(x) for x in clf.classes_], clf.coef_, clf.intercept_, embedder, masks_names,
                             grams)


class ConsultTyper:
    """P(type | question) over the attribute types and ``none``."""

    def __init__(self, model: ConsultTyperModel, embedder) -> None:
        self.model = model
        self.embedder = embedder

    def probabilities(self, text: str, names: Sequence[str] = ()) -> dict[str, float]:
        """P(class | text); ``names`` are the drug names in it, masked when the model was trained so."""
        if self.model.masks_names and names:
            text = mask_names(text, names)
        row = self.model.probabilities(self.embedder.encode_queries([text]), [text])[0]
        return {c: float(p) for c, p in zip(self.model.classes, row)}

    def attribute_probabilities(self, text: str, names: Sequence[str] = ()
                                ) -> tuple[dict[AttributeType, float], float]:
        """(P(type) for each attribute type, P(none))."""
        probs = self.probabilities(text, names)
        return {AttributeType(c): p for c, p in probs.items() if c != NONE}, probs.get(NONE, 0.0)


def model_path(path: str | None) -> Path:
    """The shipped model when ``path`` is empty; a bare file name is one shipped beside it
    (``consult_typer_s28.npz``: the typer before the written bank, kept for the baseline)."""
    if not path:
        return MODEL_PATH
    given = Path(path)
    shipped = MODEL_PATH.parent / given.name
    return shipped if given.name == path and not given.exists() and shipped.exists() else given


@lru_cache(maxsize=2)
def load_consult_typer(path: str | None = None) -> ConsultTyper:
    from medground.index.embedders import EmbedderSettings, load_embedder

    model = ConsultTyperModel.load(model_path(path))
    return ConsultTyper(model, load_embedder(EmbedderSettings(kind=model.embedder, threads=1)))
