"""Typed objects that flow between the stages (see docs/architecture.md).

Data objects are frozen-ish dataclasses with slots: there are tens of thousands of chunks,
and these are cheap to build and compare. Settings are pydantic models (see config.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

BlockKind = Literal["paragraph", "list", "table", "note", "qa"]


@dataclass(slots=True)
class Block:
    """One unit of body text inside a section: a paragraph, a list, a table rendered as text."""

    kind: BlockKind
    text: str
    # Titles from the document root down to the section holding this block, e.g.
    # ("Cardiac Muscle Tissue", "Conduction").  Empty for text before the first section.
    section_path: tuple[str, ...] = ()


@dataclass(slots=True)
class GlossaryTerm:
    term: str
    definition: str


@dataclass(slots=True)
class ReviewQuestion:
    """A question kept apart from body text (OpenStax review / critical-thinking questions)."""

    question: str
    options: list[str] = field(default_factory=list)
    answer: str | None = None


@dataclass(slots=True)
class Document:
    """One source document with its place in the hierarchy.

    For a textbook this is one page (an OpenStax module): book → unit → chapter → page, and
    the page's own sections are carried by each block's ``section_path``.
    """

    doc_id: str  # stable within a corpus, e.g. "pharmacology-for-nurses/m00094"
    corpus: str  # reader name: "openstax", "medquad", "fda_labels", "pubmedqa", ...
    source_path: str  # file the document came from
    title: str
    blocks: list[Block]
    book: str = ""
    unit: str = ""
    chapter: str = ""
    glossary: list[GlossaryTerm] = field(default_factory=list)
    review_questions: list[ReviewQuestion] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


@dataclass(slots=True)
class Chunk:
    """A retrievable unit of text. Never crosses a section boundary."""

    chunk_id: str
    doc_id: str
    corpus: str
    source_path: str
    text: str
    title: str  # page / document title
    book: str = ""
    chapter: str = ""
    section_path: tuple[str, ...] = ()
    token_count: int = 0
    # Character span of ``text`` inside the section text it was cut from (blocks of one
    # section joined by "\n\n"): lets a citation point at the exact place.
    char_start: int = 0
    char_end: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def section(self) -> str:
        return " > ".join(self.section_path)

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def make_chunk_id(source_path: str, section_path: tuple[str, ...], text: str, ordinal: int) -> str:
    """Stable id: content hash + where it came from (same text in two places → two ids)."""
    h = hashlib.sha256()
    for part in (source_path, "\x1f".join(section_path), str(ordinal), text):
        h.update(part.encode("utf-8"))
        h.update(b"\x1e")
    return h.hexdigest()[:24]


QueryKind = Literal[
    "original", "rewrite", "expansion", "keywords", "followup", "distilled", "augmented", "option"
]


@dataclass(slots=True)
class Query:
    text: str
    kind: QueryKind = "original"


@dataclass(slots=True)
class Passage:
    """A chunk found by a retriever, with the score and the stage that produced it."""

    chunk: Chunk
    score: float
    source: str  # "bm25", "dense", "rrf", "rerank:cross-encoder", ...
    rank: int = 0
    # Provenance added by later stages: which lists/queries found it (fusion), the
    # first-stage score (rerank). Never holds the chunk's own metadata.
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Citation:
    """A passage as handed to a reader: numbered, with where it comes from."""

    number: int  # the [n] the reader cites
    chunk_id: str
    book: str
    chapter: str
    section: str
    title: str
    text: str
    score: float
    char_start: int = 0
    char_end: int = 0

    @property
    def label(self) -> str:
        parts = [p for p in (self.book, self.chapter, self.section or self.title) if p]
        return " / ".join(parts)


@dataclass(slots=True)
class Evidence:
    """What retrieval hands to the reader: packed passages within a token budget."""

    citations: list[Citation]
    token_count: int
    budget: int
    queries: list[Query] = field(default_factory=list)
    dropped: int = 0  # passages that did not fit the budget or were duplicates

    def render(self) -> str:
        return "\n\n".join(f"[{c.number}] ({c.label}) {c.text}" for c in self.citations)


@dataclass(slots=True)
class Question:
    """One benchmark or user question. ``options`` keeps letter order (A, B, ...)."""

    qid: str
    dataset: str
    question: str
    options: dict[str, str] = field(default_factory=dict)
    answer: str | None = None  # gold letter for multiple choice, gold text otherwise
    context: str = ""  # e.g. a PubMedQA abstract, or the dialogue of a consultation
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def is_multiple_choice(self) -> bool:
        return bool(self.options)


# needs_clarification: the input cannot be answered as asked (a consultation naming no medicine).
Outcome = Literal["answered", "parse_failure", "insufficient_evidence", "needs_clarification", "error"]


@dataclass(slots=True)
class Answer:
    """What every pipeline returns. A failed parse is an outcome, never a default letter."""

    outcome: Outcome
    choice: str | None = None  # option letter, multiple choice only
    text: str = ""  # free-text answer (with [n] citations) or the reader's raw output
    option_scores: dict[str, float] = field(default_factory=dict)
    rationale: str = ""
    citations: list[Citation] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    tokens: dict[str, int] = field(default_factory=dict)  # prompt / completion tokens
    metadata: dict[str, Any] = field(default_factory=dict)
