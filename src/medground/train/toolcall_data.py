"""RagPULSE's distillation data: (consultation → ``search_engine(keywords)``) pairs from the database.

A seeded builder writes multi-turn consultations about database drugs and the tool call a good
distiller makes for them, in the OpenAI chat format with ``tools`` (what TRL/PEFT fine-tuning
scripts and vLLM's tool parsers read). How one example is built (``random.Random(f"{seed}/{i}")``):

1. a drug of the database and one of its attribute types (uniform over the drug's types);
2. the name the patient uses: a brand name half the time where the database lists one;
3. a question for that attribute from ``QUESTIONS`` (none is a Medication QA question, so the
   evaluation sets stay unseen), the drug replaced by "it" half the time;
4. a distractor turn first: another drug the patient stopped or a relative takes, or small talk;
   then the turn introducing the subject; then the question;
5. the target call: ``{"keywords": "<name as the patient wrote it> <attribute words>"}``.

Drugs are split into train and dev by a hash of the drug id (``dev_share``): no dev drug is ever
seen in training.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence

from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.llm.structured import SEARCH_ENGINE

A = AttributeType
QUESTIONS: dict[AttributeType, list[str]] = {
    A.DOSAGE: ["How much {name} can I take in a day?", "What's the usual dose of {name}?",
               "How often should I take {name}?"],
    A.ADVERSE_REACTIONS: ["What side effects can {name} cause?", "Could {name} be why I feel dizzy?",
                          "Is it normal to get a rash from {name}?"],
    A.INTERACTIONS: ["Can I take {name} together with {other}?", "Is it OK to drink alcohol on {name}?",
                     "Does {name} interact with other medicines?"],
    A.CONTRAINDICATIONS: ["Who should not take {name}?", "Can I use {name} if I have kidney problems?"],
    A.INDICATIONS: ["What is {name} used for?", "Why would a doctor prescribe {name}?"],
    A.WARNINGS: ["Is {name} safe for me to take?", "What should I watch out for with {name}?"],
    A.BOXED_WARNING: ["Does {name} have a black box warning?"],
    A.MECHANISM: ["How does {name} work?", "What does {name} do in the body?"],
    A.DRUG_CLASS: ["What kind of medicine is {name}?", "Which drug class is {name} in?"],
    A.THERAPEUTIC_EFFECTS: ["How long does {name} take to start working?", "What benefit should I notice from {name}?"],
    A.SPECIAL_POPULATIONS: ["Can I take {name} while pregnant?"],
    A.STORAGE: ["How should I store {name}?"],
}
KEYWORDS: dict[AttributeType, str] = {
    A.DOSAGE: "dosage", A.ADVERSE_REACTIONS: "side effects", A.INTERACTIONS: "interactions",
    A.CONTRAINDICATIONS: "contraindications", A.INDICATIONS: "indications", A.WARNINGS: "warnings",
    A.BOXED_WARNING: "boxed warning", A.MECHANISM: "mechanism of action", A.DRUG_CLASS: "drug class",
    A.THERAPEUTIC_EFFECTS: "therapeutic effects", A.SPECIAL_POPULATIONS: "pregnancy", A.STORAGE: "storage",
}
_INTRO = ["I was prescribed {name} last month.", "My doctor put me on {name}.", "I've been taking {name} for a while."]
_DISTRACT = ["I stopped taking {other} last year.", "My wife takes {other}.", "Hi, quick question about my pills.",
             "I've had a sore back this week."]


def split_of(drug_id: str, dev_share: float) -> str:
    h = int(hashlib.sha256(drug_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "dev" if h < dev_share else "train"


def build(drugs: Sequence[Drug], attributes: Sequence[DrugAttribute], n: int, *, seed: int = 0,
          dev_share: float = 0.1, system: str | None = None) -> list[dict]:
    """``n`` chat-format examples; each has ``split`` ("train"/"dev") and ``target`` metadata."""
    from medground.llm import prompts

    held: dict[str, list[AttributeType]] = {}
    for a in attributes:
        if a.type in QUESTIONS and a.type not in held.setdefault(a.drug_id, []):
            held[a.drug_id].append(a.type)
    pool = sorted((d for d in drugs if held.get(d.drug_id)), key=lambda d: d.drug_id)
    if len(pool) < 2:
        raise ValueError("the database needs at least two drugs with attributes to build tool-call data")
    system = system or prompts.messages("drug_distill", dialogue="", candidates="")[0]["content"]
    out = []
    for i in range(n):
        rng = random.Random(f"{seed}/{i}")
        drug = rng.choice(pool)
        kind = rng.choice(held[drug.drug_id])
        name = drug.brand_names[0] if drug.brand_names and rng.random() < 0.5 else drug.display_name
        other_drug = rng.choice([d for d in pool if d.drug_id != drug.drug_id])
        other = other_drug.brand_names[0] if other_drug.brand_names and rng.random() < 0.5 else other_drug.display_name
        question = rng.choice(QUESTIONS[kind])
        pronoun = "{name}" in question and rng.random() < 0.5
        asked = question.format(name="it" if pronoun else name, other=other)
        turns = [rng.choice(_DISTRACT).format(other=other), rng.choice(_INTRO).format(name=name), asked]
        keywords = f"{name} {KEYWORDS[kind]}"
        if kind is A.INTERACTIONS and "{other}" in question:
            keywords = f"{name} {other} interactions"
        dialogue = "\n".join(f"Patient: {t}" for t in turns)
        call = {"id": f"call_{i}", "type": "function",
                "function": {"name": "search_engine", "arguments": json.dumps({"keywords": keywords})}}
        out.append({"messages": [{"role": "system", "content": system},
                                 {"role": "user", "content": f"Consultation:\n{dialogue}"},
                                 {"role": "assistant", "content": None, "tool_calls": [call]}],
                    "tools": [SEARCH_ENGINE.to_openai()],
                    "split": split_of(drug.drug_id, dev_share),
                    "target": {"drug_id": drug.drug_id, "attribute": kind.value, "keywords": keywords}})
    return out


def write_jsonl(examples: Sequence[dict], path) -> dict[str, int]:
    """One example a line; returns the count per split."""
    counts: dict[str, int] = {}
    with open(path, "w", encoding="utf-8") as fh:
        for ex in examples:
            fh.write(json.dumps(ex, ensure_ascii=False) + "\n")
            counts[ex["split"]] = counts.get(ex["split"], 0) + 1
    return counts
