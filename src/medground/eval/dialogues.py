"""Seeded multi-turn medication dialogues whose history misleads retrieval (RagPULSE's scenario).

Built from the Medication QA questions (MedInfo2019) and the medicine database. An item is kept
when its focus drug is in the database (found by exact name) and its question type maps
(retrieve/drug_intent.MEDICATION_QA_TYPES) to an attribute the database holds for that drug; the
gold is (that drug, that attribute).

One dialogue (its own ``random.Random(seed, index)``, so items do not depend on each other):
1. a distractor turn first: another database drug with a misleading cue ("I used to take
   Motrin but it gave me stomach pain."), or a symptom, or small talk;
2. the subject introduced: "My doctor started me on Zestril last month." — a brand name half the
   time where the database lists one (users name what is on the box), else the generic;
3. the Medication QA question itself, its drug name replaced by "it" half the time when the
   question names the drug exactly once (the question alone then names no drug).
``single_turn`` gives the same items as the bare question (the single-turn set).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from medground.drug_schema import AttributeType, Drug, DrugAttribute

_INTRO = ["My doctor started me on {name} last month.", "I was prescribed {name} a few weeks ago.",
          "I have been taking {name} since the spring.", "The pharmacy gave me {name} yesterday.",
          "I'm on {name} now."]
_DISTRACT_DRUG = ["I used to take {other} but it gave me {symptom}.", "My husband takes {other} for years.",
                  "Last year I stopped {other} because of {symptom}.", "My sister said {other} is safer."]
_SYMPTOMS = ["headaches", "stomach pain", "a rash", "dizziness", "trouble sleeping", "nausea"]
_OTHER = ["My knees have been aching lately and I feel tired.", "Hi, I have a question about my medicines.",
          "I had a cold last week, still coughing a bit.", "I'm 67 and I walk every morning."]


@dataclass(slots=True)
class Dialogue:
    qid: str
    turns: list[str]  # user turns, the question last
    drug_id: str
    attribute: AttributeType
    source_qid: str
    facts: dict[str, object] = field(default_factory=dict)  # what the generator did

    @property
    def text(self) -> str:
        return "\n".join(f"User: {t}" for t in self.turns)


def eligible(questions: Sequence, drugs: Sequence[Drug], attributes: Sequence[DrugAttribute],
             find_exact) -> list[tuple[object, Drug, AttributeType]]:
    """(question, drug, attribute) for the Medication QA questions the database can answer.

    ``find_exact(name) -> drug_id | None`` looks a focus drug up by exact name.
    """
    from medground.retrieve.drug_intent import MEDICATION_QA_TYPES

    by_id = {d.drug_id: d for d in drugs}
    held: dict[str, set[AttributeType]] = {}
    for a in attributes:
        held.setdefault(a.drug_id, set()).add(a.type)
    out = []
    for q in questions:
        attr = MEDICATION_QA_TYPES.get(q.metadata.get("question_type", "").strip())
        drug_id = find_exact(q.metadata.get("focus_drug", "")) if attr else None
        if drug_id and attr in held.get(drug_id, set()):
            out.append((q, by_id[drug_id], attr))
    return out


def _named_once(question: str, names: list[str]) -> str | None:
    for name in names:
        hits = re.findall(rf"\b{re.escape(name)}\b", question, flags=re.IGNORECASE)
        if len(hits) == 1:
            return name
    return None


def generate(items: Sequence[tuple[object, Drug, AttributeType]], drugs: Sequence[Drug], *, n: int | None = None,
             seed: int = 0) -> list[Dialogue]:
    """Dialogues for the first ``n`` items of a seeded shuffle of ``items``."""
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    others = sorted(drugs, key=lambda d: d.drug_id)
    out = []
    for k, i in enumerate(order[: n if n is not None else len(order)]):
        q, drug, attr = items[i]
        rng = random.Random(f"{seed}/{q.qid}")
        brand = drug.brand_names[0] if drug.brand_names and rng.random() < 0.5 else None
        name = brand or drug.display_name
        other = rng.choice([d for d in others if d.drug_id != drug.drug_id])
        other_name = other.brand_names[0] if other.brand_names and rng.random() < 0.5 else other.display_name
        kind = rng.choice(["drug", "drug", "other"])
        distractor = (rng.choice(_DISTRACT_DRUG).format(other=other_name, symptom=rng.choice(_SYMPTOMS))
                      if kind == "drug" else rng.choice(_OTHER))
        question = q.question.strip()
        named = _named_once(question, [q.metadata.get("focus_drug", ""), drug.generic_name, *drug.brand_names])
        pronoun = bool(named) and rng.random() < 0.5
        if pronoun:
            question = re.sub(rf"\b{re.escape(named)}\b", "it", question, count=1, flags=re.IGNORECASE)
        turns = [distractor, rng.choice(_INTRO).format(name=name), question]
        out.append(Dialogue(qid=f"dlg-{k:04d}", turns=turns, drug_id=drug.drug_id, attribute=attr,
                            source_qid=q.qid, facts={"brand": brand is not None, "pronoun": pronoun,
                                                     "distractor": kind, "other_drug": other.drug_id}))
    return out


def single_turn(items: Sequence[tuple[object, Drug, AttributeType]]) -> list[Dialogue]:
    return [Dialogue(qid=f"st-{q.qid}", turns=[q.question.strip()], drug_id=drug.drug_id, attribute=attr,
                     source_qid=q.qid) for q, drug, attr in items]


def hit_ranks(dialogue: Dialogue, hits: Sequence[tuple[str, AttributeType | None]]) -> tuple[int | None, int | None]:
    """1-based rank of the first record of the gold drug, and of the gold drug's gold attribute
    (None where absent). ``hits`` are (drug_id, attribute type) in retrieval order."""
    drug_rank = next((r for r, (d, _) in enumerate(hits, 1) if d == dialogue.drug_id), None)
    attr_rank = next((r for r, (d, a) in enumerate(hits, 1) if d == dialogue.drug_id and a == dialogue.attribute),
                     None)
    return drug_rank, attr_rank
