"""What every pipeline shares: the Pipeline protocol and the evidence focus step. The reader steps
(settings and accounting, multiple choice, free text) live in reading/ and are re-exported here."""

from __future__ import annotations

import functools
import logging

from dataclasses import asdict
from typing import Protocol, runtime_checkable

from medground.reading.choice import (
    choice_answer,
    evidence_block,
    read_choice,
    read_grounded_choice,
)
from medground.reading.freetext import (
    INSUFFICIENT,
    free_text_answer,
    judge_first_claim,
    with_support_quote,
)
from medground.reading.reader import ReaderSettings, Tally, chat_text
from medground.retrieve.engine import RetrievalEngine
from medground.schema import Answer, Evidence, Question

log = logging.getLogger(__name__)

__all__ = ["INSUFFICIENT", "Pipeline", "ReaderSettings", "Tally", "answer_dict", "chat_text", "choice_answer",
           "evidence_block", "focus", "free_text_answer", "judge_first_claim", "read_choice",
           "read_grounded_choice", "with_support_quote"]


def answer_dict(answer: Answer) -> dict:
    """An Answer as JSON-ready data, each citation with its label (what the API and `ask --json` send).
    The typed detail travels as ``metadata``'s keys, its JSON face, not twice."""
    d = asdict(answer)
    del d["detail"]
    d["citations"] = [{**asdict(c), "label": c.label} for c in answer.citations]
    return d


@runtime_checkable
class Pipeline(Protocol):
    name: str

    def answer(self, question: Question) -> Answer: ...


def focus(evidence: Evidence, question: Question, settings: ReaderSettings, engine: RetrievalEngine,
          tally: Tally, asked: str | None = None) -> Evidence:
    """The evidence compressed to ``settings.evidence_tokens`` (``freetext_evidence_tokens`` for
    a free-text question, when set; unchanged when the budget is None); ``asked``: the words
    sentences are scored against, when not the question's own (the question with the other
    names of what it names)."""
    budget = settings.evidence_tokens
    if not question.is_multiple_choice and settings.freetext_evidence_tokens is not None:
        budget = settings.freetext_evidence_tokens
    if budget is None:
        return evidence
    from medground.retrieve.compress import compress

    with tally.stage("compress"):
        said = asked or question.question
        equivalents = lay_equivalents(said) if settings.evidence_lay_terms else None
        similarity = sentence_similarity(engine) if settings.evidence_ranking == "rrf" else None
        return compress(evidence, said, question.options, budget_tokens=budget,
                        count_tokens=engine.count_tokens, neighbor_weight=settings.evidence_neighbor_weight,
                        rank_weight=settings.evidence_rank_weight, join_headings=settings.evidence_join_headings,
                        equivalents=equivalents, similarity=similarity,
                        passage_slots=0 if question.is_multiple_choice else settings.freetext_passage_slots)


def sentence_similarity(engine: RetrievalEngine):
    """(question, sentences) → cosines from the dense retriever's embedder; None without one."""
    dense = engine.retriever("dense")
    embedder = getattr(dense, "embedder", None)
    if embedder is None:
        log.warning("evidence_ranking is rrf but the retrieval has no dense embedder: lexical only")
        return None

    def similarity(question: str, sentences: list[str]):
        return embedder.encode_passages(sentences) @ embedder.encode_queries([question])[0]

    return similarity


@functools.lru_cache(maxsize=1)
def lay_vocabulary():
    from medground.corpus.lay_vocabulary import load_vocabulary

    return load_vocabulary()


def lay_equivalents(text: str) -> dict[str, str]:
    """What the sources also call the phrases of ``text`` (the data directory's lay vocabulary,
    mined once and cached in the home; empty when the data has no consumer-health source)."""
    return lay_vocabulary().equivalents(text)
