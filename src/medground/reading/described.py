"""A second medicine the patient names by what it is, not by its name.

"My mom is on lithium … her GP just started her on a water pill for her swollen legs. Could that
cause problems with the lithium?" names no second drug, so the reader saw no interaction question:
the words that describe a medicine ("water", "heart", "blood pressure" before "pill") are dropped
as saying *which* medicine (reading/consult_text.py), and "swollen legs" met lithium's adverse
reaction "Edema" ("Yes — Edema is listed among Lithium's side effects" — clinically wrong: the
question is the lithium–diuretic interaction).

A description ("water pill") is another drug the subject is asked about with when it meets an item
of the subject's own interactions entry (through the item's mined plain names: "Diuretics" is
"water pills" on consumer pages; ``match_at``) closer than the noun alone does (the describing
words lead there: "pill" alone meets "Oral contraceptives" at 1.0, so "pain pill" is no such drug), and the description is not the subject itself (its
similarity to the subject's indications and class stays under ``hedge_at``: "my blood pressure pill"
said of lisinopril, "my heart pill" of digoxin). What follows "for" after it ("… for her swollen
legs") is why that medicine is taken, not what is asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medground.drug_schema import AttributeType, Drug
from medground.reading.consult_settings import CHECKED_TYPES
from medground.reading.consult_text import (AUXILIARIES, WH_WORDS, clause_words, content_phrases, medicine_mentions,
                                            questions, stop_words)

A = AttributeType


@dataclass(frozen=True, slots=True)
class Description:
    """A medicine named by what it is: its describing words with their noun, the noun, and the
    lower-cased words of its "for …" phrase."""

    text: str  # "water pill"
    noun: str  # "pill"
    purpose: frozenset[str]  # {"swollen", "legs"}

    @property
    def words(self) -> str:
        """The describing words alone ("antibiotic" of "an antibiotic pill")."""
        return self.text[: -len(self.noun)].strip()


def descriptions(text: str, substances: frozenset[str] = frozenset()) -> list[Description]:
    """Each referent noun with the (up to two) content words right before it ("a water pill",
    "her blood pressure pills"); a noun whose words name a substance ("calcium tablets": the
    reader keeps "calcium" as it is) or that has no describing word ("the pills") is none."""
    stop = stop_words()
    out: list[Description] = []
    for words in clause_words(text):
        low = [w.lower() for w in words]
        for i, before in medicine_mentions(words, stop):
            if not before or any(low[j] in substances for j in before):
                continue
            purpose = frozenset(_purpose(low[i + 2:], stop)) if low[i + 1:i + 2] == ["for"] else frozenset()
            out.append(Description(" ".join([*(words[j] for j in before), words[i]]), words[i], purpose))
    return out


_JOINS = frozenset("and but or so because".split())


def _purpose(words: Sequence[str], stop: frozenset[str]) -> list[str]:
    """The content words of a "for …" phrase, up to the next conjunction, auxiliary or wh-word
    ("for her swollen legs and could that …" is "swollen legs")."""
    out = []
    for w in words:
        if w in _JOINS or w in AUXILIARIES or w in WH_WORDS:
            break
        if w not in stop:
            out.append(w)
    return out


@dataclass(frozen=True, slots=True)
class SecondMedicine:
    """A described medicine read as another drug: the subject's interactions item it meets."""

    description: str  # the words that met the item: the description, or its describing words alone
    item: str
    similarity: float
    purpose: frozenset[str]

    def is_purpose(self, phrase: str) -> bool:
        """The phrase holds a word of why the described medicine is taken ("swollen legs", and
        "started swollen legs", a run the dropped description left behind)."""
        return any(w.lower() in self.purpose for w in phrase.split())


def second_medicine(space, embedder, subject: Drug, text: str, match_at: float, own_below: float,
                    ) -> SecondMedicine | None:
    """The described medicine of ``text`` that is another drug the subject interacts with (see the
    module's note), the most similar first; None when there is none. ``space``: the reader's
    ItemSpace; ``embedder``: the one its items were embedded with."""
    found = descriptions(text, space.substance_words())
    if not found:
        return None
    vectors = embedder.encode_queries([t for d in found for t in (d.text, d.words, d.noun)])
    items, vecs = space.items(subject.drug_id)
    entries = space.entries(subject.drug_id)
    inter = [(its, iv) for attr, its, iv in zip(entries, items, vecs) if attr.type is A.INTERACTIONS and iv.shape[1]]
    if not inter:
        return None
    described = np.concatenate([vectors[0::3], vectors[1::3]])  # descriptions, then their words alone
    own = space.listed_similarity(subject.drug_id, described, (A.INDICATIONS,))
    if subject.drug_class:
        own = np.maximum(own, (embedder.encode_passages([subject.drug_class]) @ described.T)[0])
    own = np.maximum(own[: len(found)], own[len(found):])
    best: SecondMedicine | None = None
    for k, d in enumerate(found):
        if own[k] >= own_below:
            continue
        for its, iv in inter:
            sims = (iv @ vectors[3 * k:3 * k + 3].T).max(axis=0)  # items × (description, its words, noun)
            said = sims[:, :2].max(axis=1)
            j = int(said.argmax())
            if said[j] >= match_at and said[j] > sims[j, 2] and (best is None or said[j] > best.similarity):
                phrase = d.text if sims[j, 0] >= sims[j, 1] else d.words  # the words that met the item
                best = SecondMedicine(phrase, its[j], round(float(said[j]), 4), d.purpose)
    return best


def asks_of_its_own(space, embedder, question: str, subject: Drug, names: Sequence[str], second: SecondMedicine,
                    match_at: float) -> bool:
    """Whether the question sentences name an effect or condition the subject's own entries list
    ("I'm on lithium and also a water pill. My hands have started shaking, is that a side effect
    of the lithium?": "hands … shaking" meets "Hand tremors"): the second medicine is then only
    mentioned, and the question is not moved to the interactions entry."""
    asked = [p for p in content_phrases(" ".join(questions(question)), names, substances=space.substance_words())
             if p != second.description and not second.is_purpose(p)]
    if not asked:
        return False
    best = space.listed_similarity(subject.drug_id, embedder.encode_queries(asked), tuple(CHECKED_TYPES))
    return bool((best >= match_at).any())


def described_in(space, embedder, subject: Drug, turns: Sequence[str], p_type: dict[AttributeType, float],
                 names: Sequence[str], match_at: float, own_below: float) -> tuple[SecondMedicine | None, bool]:
    """(The second medicine the patient describes, whether the question is about taking the two
    together). Looked for in the last turn, else — when the typer reads an interactions question,
    as named drugs of earlier turns are — in earlier turns, the latest first."""
    if not turns:
        return None, False
    asks_together = max(p_type, key=p_type.get) is A.INTERACTIONS
    for turn in [turns[-1], *(reversed(turns[:-1]) if asks_together else ())]:
        second = second_medicine(space, embedder, subject, turn, match_at, own_below)
        if second is not None:
            return second, not asks_of_its_own(space, embedder, turns[-1], subject, names, second, match_at)
    return None, False


def masked_for(entry_type: AttributeType, phrases: Sequence[tuple[str, float]], second: SecondMedicine) -> np.ndarray:
    """Per phrase: 1 where it may meet an item of an entry of ``entry_type``, 0 where it may not
    (the description and its purpose reach the interactions entries only)."""
    if entry_type is A.INTERACTIONS:
        return np.ones(len(phrases), dtype=np.float32)
    return np.array([not (p == second.description or second.is_purpose(p)) for p, _ in phrases], dtype=np.float32)
