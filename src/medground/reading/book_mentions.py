"""What the pharmacology textbook says of a drug, where the database has no entry of the kind asked.

339 of the 738 drugs of the database have nothing but a dose, and labels hold no interactions
entry; the textbook's prose often says what is missing: "Avoid drinking alcohol while using
acetaminophen." (Pharmacology for Nurses, nonopioid analgesics); "Use sunscreen or protective
coverings while out in the sun … when taking doxycycline." Where the reply abstains for want of
an entry, the textbook sentence that names the drug and is nearest in meaning to the question
(MiniLM, the drug's names masked; sharing a content word with it) is offered when the LLM reads it
as answering (the textbook reader's ``quote_answers``
check, P(yes) ≥ ``book_answers_min``), cited as the book's, not the database's. The outcome
stays an abstention on the database.

Sentences are read from the chunk store (the ingested books; none ingested: nothing offered).
A sentence must name the drug (generic or brand name, whole words), read as prose (5 to 50
words), and not be a prototype table flattened into text ("Drug Interactions: Metoprolol,
Albuterol, Metformin, …" lists another drug's partners).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from medground.corpus.sentences import sentences_of
from medground.drug_schema import Drug
from medground.schema import Chunk, Citation

PHARMACOLOGY = "Pharmacology for Nurses"
_TABLE_CELL = re.compile(r"\b(indications|therapeutic effects|drug interactions|food interactions|adverse effects|"
                         r"contraindications|mechanism of action|drug class|drug|dosage|routes and dosage ranges)"
                         r"\s*:", re.IGNORECASE)
_LIST_MARK = re.compile(r"^(?:[-•*]|\d+\.)\s+")  # a list item's bullet or number
_WORDS = re.compile(r"[A-Za-z0-9][\w'-]*")


@dataclass(frozen=True, slots=True)
class BookSentence:
    text: str
    chunk: Chunk

    def citation(self, number: int, score: float = 0.0) -> Citation:
        c = self.chunk
        return Citation(number=number, chunk_id=c.chunk_id, book=c.book, chapter=c.title or c.chapter,
                        section=" / ".join(c.section_path), title=c.title, text=self.text, score=score)


def is_prose(sentence: str) -> bool:
    """A sentence of prose, not a heading or a table's cells run together ("Drug: Tramadol (Ultram);
    Routes and Dosage Ranges: …")."""
    n = len(_WORDS.findall(sentence))
    return 5 <= n <= 50 and not _TABLE_CELL.search(sentence) and sentence.count(":") < 2


class BookMentions:
    """The textbook's sentences that name each drug of the database."""

    def __init__(self, chunks: Iterable[Chunk], drugs: Mapping[str, Drug], book: str = PHARMACOLOGY):
        names: dict[str, set[str]] = {}
        for drug in drugs.values():
            for name in [drug.generic_name, *drug.brand_names]:
                if len(name) >= 4 and "/" not in name:
                    names.setdefault(name.lower(), set()).add(drug.drug_id)
        # longest first: "insulin glargine" before "insulin"
        pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b",
                             re.IGNORECASE) if names else None
        self.by_drug: dict[str, list[BookSentence]] = {}
        self._vectors: dict[str, np.ndarray] = {}
        if pattern is None:
            return
        for chunk in chunks:
            if chunk.book != book:
                continue
            for sentence in sentences_of(chunk.text):
                sentence = _LIST_MARK.sub("", " ".join(sentence.split()))
                if not is_prose(sentence):
                    continue
                for drug_id in {d for m in pattern.finditer(sentence) for d in names[m.group(1).lower()]}:
                    self.by_drug.setdefault(drug_id, []).append(BookSentence(sentence, chunk))

    def of(self, drug_id: str) -> list[BookSentence]:
        return self.by_drug.get(drug_id, [])

    def vectors(self, drug_id: str, embedder, names: Sequence[str]) -> np.ndarray:
        """The drug's sentences embedded with its ``names`` masked, once per drug (insulin has 191)."""
        if drug_id not in self._vectors:
            self._vectors[drug_id] = embedder.encode_passages([_masked(s.text, names) for s in self.of(drug_id)])
        return self._vectors[drug_id]


def _masked(text: str, names: Sequence[str]) -> str:
    """``text`` with the drug's names said as "it": nearness is then about what is said of it."""
    if not names:
        return text
    return re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b", "it", text, flags=re.IGNORECASE)


def _stems(text: str, drop: frozenset[str]) -> set[str]:
    """Content words, cut to five letters ("drinking" meets "drink")."""
    return {w[:5] for w in (m.lower() for m in _WORDS.findall(text)) if len(w) > 2 and w not in drop}


def nearest(embedder, question: str, mentions: BookMentions, drug_id: str, names: Sequence[str], k: int,
            near: float) -> list[tuple[BookSentence, float]]:
    """The ``k`` sentences of the drug nearest ``question`` in MiniLM's space with its ``names`` said as
    "it" in both (every sentence names the drug), nearest first, among those at least ``near`` or
    sharing a content word with the question besides the drug's names (a sentence on
    simvastatin's 80 mg dose, 0.36, is no answer about grapefruit juice; "a few beers" meets
    "Avoid drinking alcohol while using acetaminophen" at 0.51)."""
    sentences = mentions.of(drug_id)
    if not sentences or not question.strip():
        return []
    from medground.reading.consult_text import stop_words

    drop = stop_words() | {w.lower() for n in names for w in _WORDS.findall(n)}
    asked = _stems(question, drop)
    q = embedder.encode_queries([_masked(question, names)])[0]
    sims = mentions.vectors(drug_id, embedder, names) @ q
    kept = [i for i in np.argsort(-sims) if sims[i] >= near or asked & _stems(sentences[i].text, drop)]
    return [(sentences[i], float(sims[i])) for i in kept[:k]]


def book_reply(mentions: BookMentions | None, embedder, answers: Callable[[str, str], float] | None,
               question: str, asked_of: Sequence[Drug], *, candidates: int, answers_min: float,
               floor: float, near: float, number: int = 1) -> tuple[str, Citation] | None:
    """The sentence offering what the textbook says (cited [``number``]) and its citation, or None:
    of the drugs asked about (the subject first), the first with a sentence among its
    ``candidates`` nearest the question (at least ``floor`` near, and ``near`` or sharing a word:
    :func:`nearest`) that the LLM (``answers``:
    (question, sentence) → P(it answers)) reads as answering."""
    if mentions is None or answers is None:
        return None
    for drug in asked_of:
        names = [drug.generic_name, *drug.brand_names]
        # the other drugs asked about by their generic name and class too: "Zoloft" with tramadol
        # meets "… serotonin syndrome when combined with SSRIs" through sertraline's class
        with_others = " ".join([question, *(f"({d.generic_name}, {d.drug_class})" for d in asked_of if d is not drug)])
        for sentence, similarity in nearest(embedder, with_others, mentions, drug.drug_id, names, candidates, near):
            if similarity >= floor and answers(with_others, sentence.text) >= answers_min:
                where = sentence.chunk.title or sentence.chunk.chapter
                return (f"The textbook ({sentence.chunk.book}, {where}) says of {drug.display_name}: "
                        f"\u201c{sentence.text}\u201d [{number}].", sentence.citation(number, similarity))
    return None
