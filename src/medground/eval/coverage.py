"""The retrieval ceiling of a grounded reader: does the gold option's text reach the evidence?

For a multiple-choice set, a corpus and a retriever, the share of questions whose gold option
text appears in the top k passages, with the query built from the question alone and from the
question joined with its options. A reader cannot cite what retrieval never shows it, so this
is what to look at before spending GPU hours on a reader (issue 28: BM25 over every shipped
source reaches MedQA's gold text in its top 5 for a few percent of questions).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from medground.schema import Chunk, Passage, Question

QUERY_MODES = ("question", "question+options")
_SPACE = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^a-z0-9%./+-]+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", _NON_WORD.sub(" ", text.lower())).strip()


def contains_option(passage_text: str, option: str) -> bool:
    """The option's words appear in the passage as a phrase (case and punctuation ignored; a
    short option such as "K+" must stand as whole words)."""
    opt = _norm(option)
    if not opt:
        return False
    return re.search(rf"(?<![a-z0-9]){re.escape(opt)}(?![a-z0-9])", _norm(passage_text)) is not None


def query_for(q: Question, mode: str) -> str:
    if mode == "question":
        return q.question
    if mode == "question+options":
        return q.question + " " + " ".join(q.options[k] for k in sorted(q.options))
    raise ValueError(f"query mode {mode!r}: expected one of {', '.join(QUERY_MODES)}")


@dataclass(slots=True)
class CoverageRow:
    query: str
    k: int
    n: int
    covered: int
    share: float
    ci95: tuple[float, float]

    def to_dict(self) -> dict:
        return asdict(self)


def coverage(questions: Sequence[Question], retrieve, ks: Sequence[int] = (1, 5, 10),
             modes: Sequence[str] = QUERY_MODES) -> dict:
    """``retrieve(query, k) -> list[Passage]``; the rows (one per mode and k) and seconds per query."""
    from medground.eval.metrics import wilson_ci

    usable = [q for q in questions if q.is_multiple_choice and q.answer in q.options]
    if not usable:
        raise ValueError("no multiple-choice question with a gold letter among its options")
    k_max = max(ks)
    rows: list[CoverageRow] = []
    seconds: dict[str, float] = {}
    for mode in modes:
        hit_at: list[int | None] = []  # rank of the first passage holding the gold text
        started = time.perf_counter()
        for q in usable:
            passages: list[Passage] = retrieve(query_for(q, mode), k_max)
            gold = q.options[q.answer]
            hit_at.append(next((r for r, p in enumerate(passages, 1) if contains_option(p.chunk.text, gold)), None))
        seconds[mode] = round((time.perf_counter() - started) / len(usable), 4)
        for k in ks:
            flags = [h is not None and h <= k for h in hit_at]
            ci = wilson_ci(flags)
            rows.append(CoverageRow(mode, k, len(flags), sum(flags), round(sum(flags) / len(flags), 4),
                                    (round(ci.low, 4), round(ci.high, 4))))
    return {"rows": [r.to_dict() for r in rows], "seconds_per_query": seconds, "n": len(usable),
            "skipped": len(questions) - len(usable)}


def locate_evidence(chunks: Iterable[Chunk], evidences: Sequence[str]) -> dict[str, set[str]]:
    """For each evidence sentence, the ids of the chunks that hold it (case and punctuation
    ignored): a test set names its gold passage by the sentence, not by a chunk id, which a store
    chunked with other settings (or a later chunker version) does not have."""
    wanted = {e: _norm(e) for e in evidences}
    found: dict[str, set[str]] = {e: set() for e in evidences}
    for c in chunks:
        text = _norm(c.text)
        for e, needle in wanted.items():
            if needle and needle in text:
                found[e].add(c.chunk_id)
    return found


def holds_sentence(citations: Iterable, sentence: str) -> bool:
    """Some citation's ``text`` contains ``sentence`` (case and whitespace ignored, punctuation
    kept, unlike ``locate_evidence``): the answerable set's evidence span survived retrieval,
    packing or compression word for word."""
    def norm(text: str) -> str:
        return " ".join(text.lower().split())

    want = norm(sentence)
    return any(want in norm(c.text) for c in citations)
