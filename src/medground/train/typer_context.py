"""Extra training text for the consultation typer (reading/consult_typer.py): context sentences,
and questions about a condition the patient has.

Medication QA's questions are single sentences (6 of the 491 development questions have two),
but a patient's last turn seldom is: "I take Xarelto 20 milligrams daily. … Are there particular
concerns regarding spinal anaesthesia?" A typer trained on bare questions reads the context's
dose as a dosage question. Training copies of each question with one or two context sentences
before it teach it that such sentences say nothing of what is asked (the label is the
question's).

The sentences are what a patient says of their own medicine, filled from the medicine database
(a drug's name, a dose from its dosage entry, a use from its indications entry); drug names are
read "this medicine" as the typer reads them. They carry no label: they are noise the typer must
learn to ignore, so a template family here cannot leak an answer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.reading.consult_typer import mask_names

_DOSE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:mg|mcg|g|mL|units?)\b")
_WHEN = ("daily", "twice a day", "every morning", "at night")
_SINCE = ("last month", "a few weeks ago", "in the spring")


def _facts(drug: Drug, entries: dict[tuple[str, AttributeType], list[str]]) -> tuple[str | None, str | None]:
    """(a dose its dosage entry names, a short use its indications entry names)."""
    dose = next((m.group() for t in entries.get((drug.drug_id, AttributeType.DOSAGE), [])
                 if (m := _DOSE.search(t))), None)
    use = next((line.strip().rstrip(".").lower() for t in entries.get((drug.drug_id, AttributeType.INDICATIONS), [])
                for line in t.split("\n") if 3 < len(line.strip()) < 40), None)
    return dose, use


def _sentence(name: str, dose: str | None, use: str | None, rng: random.Random) -> str | None:
    kind = rng.randrange(5)
    if kind == 0 and dose:
        return f"I take {name} {dose} {rng.choice(_WHEN)}."
    if kind == 1 and use:
        return f"I was prescribed {name} for {use} {rng.choice(_SINCE)}."
    if kind == 2:
        return f"I've been on {name} for {rng.randint(2, 11)} {rng.choice(('weeks', 'months', 'years'))}."
    if kind == 3 and dose:
        return f"My doctor started me on {name} {dose} last week."
    if kind == 4 and dose:
        return f"Yes, {dose} {rng.choice(('a day', 'each night', 'in the morning'))}."
    return None


class ContextMaker:
    """Context sentences about the database's drugs, masked as the typer reads them."""

    def __init__(self, drugs: Sequence[Drug], attributes: Sequence[DrugAttribute], seed: int = 0):
        if not drugs:
            raise ValueError("context sentences need a built medicine database (`medground drugs build`)")
        self.drugs = sorted(drugs, key=lambda d: d.drug_id)
        self.entries: dict[tuple[str, AttributeType], list[str]] = {}
        for a in attributes:
            self.entries.setdefault((a.drug_id, a.type), []).append(a.text)
        self.rng = random.Random(seed)

    def sentence(self) -> str:
        while True:
            drug = self.rng.choice(self.drugs)
            name = self.rng.choice([drug.display_name, *drug.brand_names[:2]])
            text = _sentence(name, *_facts(drug, self.entries), self.rng)
            if text:
                return mask_names(text, [name, drug.generic_name, *drug.brand_names])

    def before(self, question: str) -> str:
        """``question`` with one or two context sentences before it."""
        return " ".join([self.sentence() for _ in range(self.rng.choice((1, 2)))] + [question])


# A condition the patient has, asked about as "can I take it": the contraindications question.
# Medication QA holds 9 such questions in its development part, so the typer read "Can I take
# lisinopril while pregnant?" as an interactions question (P 0.74). The conditions are the items of
# the database's contraindications entries; the label is the entry's type (distant supervision).
# Measured and not shipped (`consult_e2e.py typer --conditions N`): five wordings of "is X okay
# with …?" also turned "Is Diflucan okay with it?" into a contraindications question.
_CONDITION_ASKED = (
    "Is this medicine safe if I have {c}?",
    "I have {c}. Can I take this medicine?",
    "Can someone with {c} use this medicine?",
    "Should I avoid this medicine because of my {c}?",
    "My doctor says I have {c}. Is this medicine okay for me?",
)


def condition_questions(attributes: Sequence[DrugAttribute], n: int, seed: int = 0,
                        drug_names: Sequence[str] = ()) -> list[str]:
    """``n`` questions about a condition named by a contraindications item (short items only,
    notes in parentheses dropped, lower case; an item that is a drug's name, "Rilpivirine", or
    holds a number, "Children younger than 8 years", is no condition)."""
    names = {d.lower() for d in drug_names}
    conditions = sorted({re.sub(r"\s*\([^)]*\)", "", line).strip().rstrip(".").lower()
                         for a in attributes if a.type is AttributeType.CONTRAINDICATIONS
                         for line in a.text.split("\n")
                         if 3 < len(line.strip()) <= 40})
    conditions = [c for c in conditions if c and c not in names and not re.search(r"\d", c)]
    if not conditions:
        return []
    rng = random.Random(seed)
    return [rng.choice(_CONDITION_ASKED).format(c=rng.choice(conditions)) for _ in range(n)]
