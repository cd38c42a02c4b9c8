"""What a medication question asks about: the attribute type, learned from labelled questions.

Keyword cues alone mistype plain-language questions ("my ankles swell since I started it" has no
side-effect cue; a dose mentioned in passing triggers dosage). Here the type is learned:

- ``MEDICATION_QA_TYPES`` maps the question types of Medication QA (MedInfo2019, 690 consumer
  questions) onto the medicine database's attribute vocabulary. Types no attribute answers
  (appearance, ingredients, manufacturer, ...) map to ``None`` and are left out of training.
- ``IntentModel`` is a softmax regression over sentence embeddings (scikit-learn's
  LogisticRegression to train; numpy alone to predict). It returns the top types with their
  probabilities, so retrieval can try the second type too.
- ``cue_intents`` is the keyword-cue typer, kept as the baseline and as the fallback where the
  embedder is not installed.

The shipped model (``data/drug_intent.npz``) was trained by ``benchmarks/consult.py intent`` on
all mapped Medication QA questions; its cross-validated accuracy is in
benchmarks/results/consult.json.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from medground.drug_schema import AttributeType

log = logging.getLogger(__name__)
A = AttributeType
MODEL_PATH = Path(__file__).with_name("data") / "drug_intent.npz"
EMBEDDER_KIND = "onnx-minilm"

# Medication QA question type → the attribute that answers it (None: no attribute does).
MEDICATION_QA_TYPES: dict[str, AttributeType | None] = {
    "Information": A.DRUG_CLASS,  # "what is morphine": what kind of drug it is
    "Dose": A.DOSAGE, "Dose/time": A.DOSAGE, "Dose/Potency": A.DOSAGE, "Overdose": A.DOSAGE,
    "Forget a dose": A.DOSAGE, "Usage": A.DOSAGE, "Usage/time": A.DOSAGE, "Usage/duration": A.DOSAGE,
    "Side effects": A.ADVERSE_REACTIONS, "Side effects/time": A.ADVERSE_REACTIONS,
    "Time/side effects": A.ADVERSE_REACTIONS, "Stopping/side effects": A.ADVERSE_REACTIONS,
    "Long term consequences": A.ADVERSE_REACTIONS,
    "Indication": A.INDICATIONS,
    "Interaction": A.INTERACTIONS, "Combination": A.INTERACTIONS,
    "Action": A.MECHANISM,
    "Action/time": A.THERAPEUTIC_EFFECTS, "Action/effectiveness": A.THERAPEUTIC_EFFECTS,
    "Time/effectiveness": A.THERAPEUTIC_EFFECTS, "Time/duration": A.THERAPEUTIC_EFFECTS,
    "Contraindication": A.CONTRAINDICATIONS,
    "Usage/special populations": A.SPECIAL_POPULATIONS,
    # Withdrawal and tapering advice sits in the labels' warnings sections.
    "Stopping/tapering": A.WARNINGS,
    "Storage and disposal": A.STORAGE,
    **{t: None for t in ("Appearance", "Ingredient", "Brand names", "Pronounce name", "Manufacturer",
                         "Availability", "Comparison", "Alternatives", "not_drug_question",
                         "other_drug_question", "unanswerable")},
}


def attribute_for(question_type: str) -> AttributeType | None:
    """The attribute a Medication QA question type asks for; KeyError for an unknown type."""
    return MEDICATION_QA_TYPES[question_type.strip()]


def softmax_probabilities(vectors: np.ndarray, coef: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    """Class probabilities of a multinomial logistic regression (numpy only, no scikit-learn)."""
    logits = vectors @ coef.T + intercept
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def save_linear(path: Path, classes: Sequence[str], coef: np.ndarray, intercept: np.ndarray, embedder: str,
                **extra: np.ndarray) -> None:
    """A linear model as one .npz; ``extra``: further arrays a model records (flags, settings)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, classes=np.array(list(classes)), coef=coef.astype(np.float32),
                        intercept=intercept.astype(np.float32), embedder=np.array(embedder), **extra)


def load_linear(path: Path) -> tuple[list[str], np.ndarray, np.ndarray, str]:
    with np.load(path, allow_pickle=False) as z:
        return [str(c) for c in z["classes"]], z["coef"], z["intercept"], str(z["embedder"])


@dataclass(slots=True)
class IntentModel:
    classes: list[AttributeType]
    coef: np.ndarray  # (n_classes, dim)
    intercept: np.ndarray  # (n_classes,)
    embedder: str  # the embedder kind the weights were trained on

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        return softmax_probabilities(vectors, self.coef, self.intercept)

    def top(self, vectors: np.ndarray, k: int = 2) -> list[list[tuple[AttributeType, float]]]:
        out = []
        for row in self.probabilities(vectors):
            order = np.argsort(-row, kind="stable")[:k]
            out.append([(self.classes[i], float(row[i])) for i in order])
        return out

    def save(self, path: Path) -> None:
        save_linear(path, [c.value for c in self.classes], self.coef, self.intercept, self.embedder)

    @classmethod
    def load(cls, path: Path) -> IntentModel:
        classes, coef, intercept, embedder = load_linear(path)
        return cls([AttributeType(c) for c in classes], coef, intercept, embedder)


def train(vectors: np.ndarray, labels: Sequence[AttributeType], *, c: float = 4.0,
          embedder: str = EMBEDDER_KIND) -> IntentModel:
    """Multinomial logistic regression (class-balanced: rare types still get predicted)."""
    from sklearn.linear_model import LogisticRegression

    y = np.array([label.value for label in labels])
    clf = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
    clf.fit(vectors, y)
    return IntentModel([AttributeType(v) for v in clf.classes_], clf.coef_, clf.intercept_, embedder)


class IntentTyper:
    """Top attribute types of a question from the shipped (or a given) model and its embedder."""

    def __init__(self, model: IntentModel, embedder) -> None:
        self.model = model
        self.embedder = embedder

    def top(self, text: str, k: int = 2) -> list[tuple[AttributeType, float]]:
        return self.model.top(self.embedder.encode_queries([text]), k)[0]


@lru_cache(maxsize=2)
def load_typer(path: str | None = None) -> IntentTyper | None:
    """The learned typer, or None (with a warning) when the model or its embedder is missing."""
    from medground.index.embedders import EmbedderSettings, load_embedder

    model_path = Path(path) if path else MODEL_PATH
    try:
        model = IntentModel.load(model_path)
        embedder = load_embedder(EmbedderSettings(kind=model.embedder, threads=1))
    except (OSError, ImportError, ValueError, KeyError) as exc:
        log.warning("learned attribute typing unavailable (%s); using keyword cues", exc)
        return None
    return IntentTyper(model, embedder)
