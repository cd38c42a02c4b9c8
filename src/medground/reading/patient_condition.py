"""Does the patient name a condition they have, or a substance they take with the medicine?

"Can I take lisinopril while pregnant?" and "Can I take lisinopril with alcohol?" share their
words but for the thing named, and the reply's typer, trained on Medication QA's questions,
reads both as interaction questions (P 0.86). A contraindications entry is what answers the
first. Which kind of thing a phrase names is read off the medicine database itself: the short
items of its contraindications entries name conditions ("Pregnancy", "Renal disease",
"Glaucoma"), those of its interactions entries name substances ("Alcohol", "Grapefruit juice",
"NSAIDs"). A patient's phrase names a condition when its nearest item, in the sentence
embedding the typer reads, is a condition item, close enough (``min_similarity``) to be the same
thing in other words: "pregnant" → "Pregnancy" 0.94, "kidney disease" → "Renal disease" 0.95,
"weak heart" → "Heart failure" 0.69. A word a patient says of anything ("symptoms", "blood
checked", "okay") is near no item: a linear condition-vs-substance classifier fitted on the same
items called those conditions with P 0.94–0.98, so it was not used (docs/benchmarks.md, session 21).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
import zlib

import numpy as np

from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.retrieve.drug_intent import EMBEDDER_KIND

A = AttributeType
MODEL_PATH = Path(__file__).with_name("data") / "condition_substance.npz"
CONDITION, SUBSTANCE = "condition", "substance"
MAX_ITEM_CHARS = 80  # longer lines are sentences of a label section, not the name of one thing


def training_items(attributes: Iterable[DrugAttribute]) -> list[tuple[str, str]]:
    """(item, condition|substance): every short item of the contraindications and interactions
    entries, an item found on both sides left out."""
    from medground.reading.consult_text import split_items

    side: dict[str, set[str]] = {CONDITION: set(), SUBSTANCE: set()}
    for a in attributes:
        label = {A.CONTRAINDICATIONS: CONDITION, A.INTERACTIONS: SUBSTANCE}.get(a.type)
        if label is not None:
            side[label].update(i.strip() for i in split_items(a.text) if 2 < len(i.strip()) <= MAX_ITEM_CHARS)
    both = side[CONDITION] & side[SUBSTANCE]
    return [(i, lab) for lab in (CONDITION, SUBSTANCE) for i in sorted(side[lab] - both)]


def held_out(item: str, share: int = 5) -> bool:
    """A fixed fifth of the items (by a hash of their text), held out to measure the reading."""
    return zlib.crc32(item.encode()) % share == 0


@dataclass(slots=True)
class ConditionModel:
    """The database's condition and substance items, embedded (unit vectors)."""

    conditions: list[str]
    condition_vectors: np.ndarray
    substance_vectors: np.ndarray
    embedder: str

    def nearest(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per row: (similarity of the nearest condition item, its index, of the nearest substance item)."""
        c = vectors @ self.condition_vectors.T
        s = vectors @ self.substance_vectors.T
        return c.max(axis=1), c.argmax(axis=1), s.max(axis=1) if s.size else np.zeros(len(vectors))

    def save(self, path: Path = MODEL_PATH) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, conditions=np.array(self.conditions),
                            condition_vectors=self.condition_vectors.astype(np.float16),
                            substance_vectors=self.substance_vectors.astype(np.float16),
                            embedder=np.array(self.embedder))

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> ConditionModel:
        with np.load(path, allow_pickle=False) as z:  # stored as float16, read as float32 once
            return cls([str(c) for c in z["conditions"]], z["condition_vectors"].astype(np.float32),
                       z["substance_vectors"].astype(np.float32), str(z["embedder"]))


def build(items: Sequence[tuple[str, str]], vectors: np.ndarray, embedder: str = EMBEDDER_KIND) -> ConditionModel:
    """The model of ``items`` (training_items) and their embeddings, row for row."""
    cond = np.array([lab == CONDITION for _, lab in items])
    return ConditionModel([t for (t, _), c in zip(items, cond) if c], vectors[cond], vectors[~cond], embedder)


@dataclass(slots=True)
class ConditionNamed:
    phrase: str
    similarity: float
    item: str  # the condition item it is nearest to


class ConditionReader:
    """Reads a patient's phrases as a condition (or not)."""

    def __init__(self, model: ConditionModel, embedder) -> None:
        self.model = model
        self.embedder = embedder

    def named(self, phrases: Sequence[tuple[str, float]], min_similarity: float = 0.6,
              vectors: np.ndarray | None = None, exclude: np.ndarray | None = None) -> ConditionNamed | None:
        """The phrase nearest to a condition item, when that item is nearer than any substance
        item and at least ``min_similarity``, and no phrase names a substance that surely;
        ``exclude``: a mask of phrases not to take as the condition nor as a substance. ``phrases``: (phrase, weight) — an earlier turn's
        phrase counts at its weight (< 1), as the item matching counts it; ``vectors``: their
        embeddings, when the caller has them already."""
        if not phrases:
            return None
        if vectors is None:
            vectors = self.embedder.encode_queries([t for t, _ in phrases])
        to_condition, which, to_substance = self.model.nearest(vectors)
        w = np.array([wt for _, wt in phrases], dtype=np.float32)
        score = np.where(to_condition > to_substance, to_condition * w, 0.0)
        substance = np.where(to_substance >= to_condition, to_substance * w, 0.0)
        if exclude is not None:  # phrases the caller knows are neither (what the drug treats, why it is taken)
            score = np.where(exclude, 0.0, score)
            substance = np.where(exclude, 0.0, substance)
        k = int(score.argmax())
        # a substance named as surely ("… a few glasses of wine while I'm on it", said after
        # "for an infection") keeps it a question about taking the two together
        if score[k] < min_similarity or substance.max() >= min_similarity:
            return None
        return ConditionNamed(phrases[k][0], round(float(score[k]), 4), self.model.conditions[int(which[k])])


# The typed questions a named condition is read into (``condition_reads``): "interactions" only
# (the typer's "can I take X with Y" reading), or every question of the "is it safe for me" family.
# "listed": as "safety", but beyond the interactions reading only a condition the drug's own
# contraindications or warnings list (reading/consult.py).
# "any_listed": as listed, whatever the typer's reading ("Is Dysport safe with myasthenia?" reads
# as a side-effects question).
_SAFETY = (A.INTERACTIONS, A.INDICATIONS, A.CONTRAINDICATIONS, A.WARNINGS)
CONDITION_READS = {"interactions": (A.INTERACTIONS,), "safety": _SAFETY, "listed": _SAFETY,
                   "any_listed": tuple(A)}
LISTED_ONLY = frozenset({"listed", "any_listed"})  # the readings that ask the drug's record first


def as_condition_question(p_type: dict[AttributeType, float]) -> dict[AttributeType, float]:
    """The typer's top reading moves to the entries on when the medicine must not be used or
    needs care (the item match then decides between them); an interactions reading keeps what
    contraindications had."""
    out = dict(p_type)
    moved = max(p_type.values())
    if max(p_type, key=p_type.get) is A.INTERACTIONS:
        out[A.INTERACTIONS] = p_type.get(A.CONTRAINDICATIONS, 0.0)
    out[A.CONTRAINDICATIONS] = moved
    out[A.WARNINGS] = max(moved, p_type.get(A.WARNINGS, 0.0))
    return out


@lru_cache(maxsize=2)
def _shipped_model(path: str) -> ConditionModel | None:
    return ConditionModel.load(Path(path)) if Path(path).exists() else None


def load_condition_reader(path: str | None = None, embedder=None, embedder_kind: str | None = None
                          ) -> ConditionReader | None:
    """The shipped model, or None when its file is missing (the reading is then skipped).
    ``embedder``: one already loaded (the typer's) — used when it is of the kind the anchors were
    embedded with (``embedder_kind``), so a reply never loads a second copy of the same model."""
    from medground.index.embedders import EmbedderSettings, load_embedder

    model = _shipped_model(str(path or MODEL_PATH))
    if model is None:
        return None
    if embedder is None or embedder_kind != model.embedder:
        embedder = load_embedder(EmbedderSettings(kind=model.embedder, threads=1))
    return ConditionReader(model, embedder)


def condition_named(reader, question: str, subject: Drug, p_type: dict[AttributeType, float],
                    phrases: list[tuple[str, float]], vectors: np.ndarray,
                    purpose: set[str] | frozenset[str] = frozenset()) -> ConditionNamed | None:
    """The condition the patient names (``reader``: the ConsultReader, whose settings, item space
    and checks are read) when asking whether the subject drug is safe for them
    ("Can I take it while pregnant?"; no second substance named), or None. Only a question the
    typer reads as one of ``condition_reads`` is read so; a condition the drug is for is never
    it (on Glucophage "for my diabetes", diabetes is why they take it); nor are ``purpose``'s
    phrases (consult_text.purpose_phrases), which are not a substance either."""
    s = reader.settings
    top = max(p_type, key=p_type.get)
    if s.condition_similarity > 1.0 or reader.conditions is None or top not in CONDITION_READS[s.condition_reads]:
        return None
    treated = reader.space.listed_similarity(subject.drug_id, vectors, (A.INDICATIONS,)) >= s.hedge_at
    if purpose:  # "taking atorvastatin for cholesterol": why, not a substance taken with it
        treated = treated | np.array([p in purpose for p, _ in phrases])
    condition = reader.conditions.named(phrases, s.condition_similarity, vectors, exclude=treated)
    if condition is not None and s.condition_reads in LISTED_ONLY and top is not A.INTERACTIONS:
        # read past the typer only where the drug's own record names the condition as a
        # reason for care: "Is Haldol okay for someone with Parkinson's?" (typed: what is it
        # for) against haloperidol's contraindications "Parkinson's disease"
        k = [p for p, _ in phrases].index(condition.phrase)
        listed = reader.space.listed_similarity(subject.drug_id, vectors[k:k + 1], (A.CONTRAINDICATIONS, A.WARNINGS))
        if listed[0] < s.match_at:
            return None
    if condition is not None and s.condition_check and reader.condition_checker is not None \
            and top is not A.INTERACTIONS:
        # beyond the typer's interactions reading a named condition is as often what the
        # medicine is asked to treat or a side effect: the LLM says which
        if reader.condition_checker(question[: s.item_check_chars], subject.display_name, condition.phrase) < 0.5:
            return None
    return condition
