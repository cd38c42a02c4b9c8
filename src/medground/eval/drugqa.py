"""Reading questions over the medicine database: the answer is in one given record.

``generate`` draws, with a seed, questions whose answer is an item of one drug record (an
OpenStax prototype table lists adverse effects, indications, contraindications and
interactions one per line):

- multiple choice — "Which of the following is listed as an adverse effect of Amlodipine?"
  The gold option is an item of the drug's record; the three distractors are items of the same
  attribute in other drugs' records that share no term (stem) with the gold record.
- free text — "What adverse effects are listed for Amlodipine?", answered from the record.

Each question carries its gold record and a *wrong* record (another drug's record of the same
attribute, the one the first distractor came from), so a benchmark can read it with the gold
record, with the wrong record, and with none.

``supported`` is the free-text support check: an answer is supported when every sentence of it,
citations removed, has at least ``min_share`` of its content terms (BM25 tokenizer terms, the
drug's own name excluded) in the record text.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from medground.drug_schema import AttributeType, Drug, DrugAttribute
from medground.schema import Question

A = AttributeType
# attribute → (the noun the question uses, the source kind whose records are one item a line)
ASKABLE: dict[AttributeType, str] = {
    A.ADVERSE_REACTIONS: "adverse effect",
    A.INDICATIONS: "indication",
    A.CONTRAINDICATIONS: "contraindication",
    A.INTERACTIONS: "interaction",
}
LIST_SOURCE = "openstax-prototype"


@dataclass(slots=True)
class RecordQuestion:
    question: Question  # multiple choice (options) or free text (no options)
    drug: Drug
    gold: DrugAttribute
    wrong: DrugAttribute
    wrong_drug: Drug
    items: list[str] = field(default_factory=list)  # the gold record's items


def record_items(text: str, max_words: int = 6) -> list[str]:
    """One item a line, short ones only (a line that is a sentence is not an option)."""
    out = []
    for line in text.splitlines():
        item = line.strip(" -•*\t")
        if item and len(item.split()) <= max_words and not item.endswith(":") and len(item) >= 3:
            out.append(item)
    return out


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", s.lower()).strip()


def mentions(record_text: str, item: str) -> bool:
    """Whether the record mentions the item (word-boundary match, case and punctuation folded)."""
    return f" {_norm(item)} " in f" {_norm(record_text)} "


def generate(drugs: Sequence[Drug], attributes: Sequence[DrugAttribute], n: int, *, seed: int = 0,
             kind: str = "mc") -> list[RecordQuestion]:
    """``n`` questions (``kind`` "mc" or "free"), at most one per (drug, attribute)."""
    by_id = {d.drug_id: d for d in drugs}
    pool = [a for a in attributes if a.type in ASKABLE and a.source.startswith(LIST_SOURCE)
            and a.drug_id in by_id and len(record_items(a.text)) >= 2]
    by_type: dict[AttributeType, list[DrugAttribute]] = {}
    for a in pool:
        by_type.setdefault(a.type, []).append(a)
    from medground.index.text import MedicalTokenizer

    tok = MedicalTokenizer()
    rng = random.Random(seed)
    order = sorted(pool, key=lambda a: (a.drug_id, a.type.value, a.source))
    rng.shuffle(order)
    out: list[RecordQuestion] = []
    seen: set[tuple[str, str]] = set()
    for gold in order:
        if len(out) >= n:
            break
        key = (gold.drug_id, gold.type.value)
        if key in seen:
            continue
        drug = by_id[gold.drug_id]
        others = [a for a in by_type[gold.type] if a.drug_id != gold.drug_id]
        rng.shuffle(others)
        distractors: list[tuple[str, DrugAttribute]] = []
        # A distractor shares no term with the gold record ("Hepatic disease" is no distractor
        # for a record listing "Active liver disease"): one answer only, not a near-synonym.
        gold_terms = set(tok.tokenize(gold.text))
        for other in others:
            cands = [x for x in record_items(other.text) if not mentions(gold.text, x)
                     and not gold_terms & set(tok.tokenize(x))
                     and all(_norm(x) != _norm(d) for d, _ in distractors)
                     and not mentions(x, drug.generic_name)]
            if cands:
                distractors.append((rng.choice(cands), other))
            if len(distractors) == 3:
                break
        if len(distractors) < 3:
            continue
        items = record_items(gold.text)
        noun = ASKABLE[gold.type]
        name = drug.display_name
        qid = f"drugqa-{kind}-{len(out):03d}"
        if kind == "mc":
            texts = [rng.choice(items)] + [d for d, _ in distractors]
            letters = ["A", "B", "C", "D"]
            perm = list(range(4))
            rng.shuffle(perm)
            options = {letters[i]: texts[p] for i, p in enumerate(perm)}
            answer = letters[perm.index(0)]
            q = Question(qid=qid, dataset="drugqa", question=f"Which of the following is listed as {_article(noun)} "
                         f"{noun} of {name}?", options=options, answer=answer,
                         metadata={"drug_id": drug.drug_id, "attribute": gold.type.value})
        else:
            q = Question(qid=qid, dataset="drugqa", question=f"What {noun}s are listed for {name}?",
                         answer="\n".join(items), metadata={"drug_id": drug.drug_id, "attribute": gold.type.value})
        wrong = distractors[0][1]
        out.append(RecordQuestion(q, drug, gold, wrong, by_id[wrong.drug_id], items))
        seen.add(key)
    return out


def _article(noun: str) -> str:
    return "an" if noun[0] in "aeiou" else "a"




def supported(answer: str, record_text: str, *, exclude: Sequence[str] = (), min_share: float = 0.7) -> bool:
    """Every sentence of ``answer`` has ≥ ``min_share`` of its content terms in ``record_text``
    (``pipelines.support.claims_supported``: the check the readers themselves use)."""
    from medground.reading.support import claims_supported

    return claims_supported(answer, record_text, exclude=exclude, min_share=min_share)
