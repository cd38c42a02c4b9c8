"""Typed objects that flow between the stages (see docs/architecture.md).

Data objects are frozen-ish dataclasses with slots: there are tens of thousands of chunks,
and these are cheap to build and compare. Settings are pydantic models (see config.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass
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
    "original", "rewrite", "expansion", "keywords", "followup", "distilled", "augmented", "option", "synonyms", "lay"
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


# How an answer was read (Answer.detail). Typed, so the run records (eval/records.py) read fields, not
# strings; every set field is also written into Answer.metadata under its own name, the JSON face that
# the HTTP API, `ask --json` and the benchmarks have always read. None means "not said": no key.


def _plain(value: Any) -> Any:
    """JSON-ready data: nested details become dicts (their own ``to_dict`` when they have one)."""
    if is_dataclass(value) and not isinstance(value, type):
        return value.to_dict() if hasattr(value, "to_dict") else asdict(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, slots=True)
class Vote:
    """One passage's read in a voting pipeline (amt), in rank order: the option it chose (None: the
    read did not parse, ``failure`` says why), its 0–10 confidence in that choice and in every option."""

    choice: str | None
    confidence: float = 1.0
    chunk_id: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    failure: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"chunk_id": self.chunk_id, "choice": self.choice, "confidence": self.confidence,
                             "scores": dict(self.scores)}
        if self.failure is not None:  # the stored shape: only a failed read names its failure
            d["failure"] = self.failure
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Vote:
        """A stored vote; an unknown key or a value of the wrong type is a ValueError naming it."""
        unknown = sorted(set(data) - {"chunk_id", "choice", "confidence", "scores", "failure"})
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r}")
        choice, failure, chunk_id = data.get("choice"), data.get("failure"), data.get("chunk_id", "")
        conf, scores = data.get("confidence", 1.0), data.get("scores") or {}
        if not all(isinstance(x, str) for x in (chunk_id, *(y for y in (choice, failure) if y is not None))):
            raise ValueError("chunk_id must be a string, choice and failure strings or null")
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not isinstance(scores, dict):
            raise ValueError("confidence must be a number and scores an object")
        return cls(choice, float(conf), chunk_id, dict(scores), failure)


@dataclass(frozen=True, slots=True)
class FollowUp:
    """One follow-up query of an iterative pipeline (imedrag) and the answer it got."""

    query: str
    answer: str


@dataclass(frozen=True, slots=True)
class ClaimJudgement:
    """The LLM claim judge's verdict on a checked answer's first claim (reading/freetext.py)."""

    p: float | None  # P(supported); None when the judge gave no usable answer
    supported: bool
    lexical: bool  # what the lexical check had said


@dataclass(frozen=True, slots=True)
class AnswerDetail:
    """What any pipeline may say about an answer: here the follow-up trail of an iterative one."""

    history: list[FollowUp] | None = None
    query_failures: int | None = None  # rounds whose follow-up queries did not parse

    def to_metadata(self) -> dict[str, Any]:
        """The set fields as JSON-ready data under their own names (Answer.metadata's keys)."""
        return {f.name: _plain(v) for f in fields(self) if (v := getattr(self, f.name)) is not None}


@dataclass(frozen=True, slots=True)
class ChoiceDetail(AnswerDetail):
    """How a multiple-choice answer was read (reading/choice.py, pipelines rag, amt, imedrag, direct)."""

    scoring: str | None = None  # the read that answered: "logprob" | "generate" (OptionScores.method)
    parse_failure: str | None = None  # why no letter came out
    # raw per-letter log-probabilities (before calibration): a report can calibrate after the fact
    letter_logprobs: dict[str, float] | None = None
    blank_passes: int | None = None  # permutation passes whose top alternatives held no letter
    score_parts: dict[str, dict[str, float]] | None = None  # each distribution a mixed read combined
    evidence_tokens: int | None = None
    # per letter, the citations whose text names the option (reading/options.py)
    options_in_evidence: dict[str, list[int]] | None = None
    voted: bool | None = None  # amt: read per passage and voted (False: one read over all)
    votes: list[Vote] | None = None
    vote_failures: int | None = None


@dataclass(frozen=True, slots=True)
class FreeTextDetail(AnswerDetail):
    """How a free-text answer was made and checked (reading/freetext.py)."""

    passages_shown: int | None = None
    support: float | None = None  # 1 − P(no passage answers), when the support pass ran
    supporting_passage: int | None = None  # the [n] that pass chose (None: none); said whenever support is
    extractive: bool | None = None  # True: the answer quotes a passage instead of the generated text
    quoted: str | None = None
    quote_reason: str | None = None
    quote_answers: float | None = None  # P(yes) that the quote answers the question, when checked
    dangling_citations: list[int] | None = None  # [n] the reader cited that name no passage
    generated: str | None = None  # checked mode: what the reader wrote before the check
    generated_supported: bool | None = None
    attributed_to: int | None = None  # an uncited answer's claims found in this passage
    dropped_sentences: list[str] | None = None
    first_claim_judged: ClaimJudgement | None = None
    restatements_cut: list[str] | None = None
    uncited: bool | None = None
    retrieved_not_cited: list[str] | None = None  # labels of the passages an uncited answer did not use
    entity_missing: list[str] | None = None  # the question's entities the cited passages never name ...
    withheld: str | None = None  # ... and the answer that check withheld
    closed_book: bool | None = None  # no retrieval (direct)

    def to_metadata(self) -> dict[str, Any]:
        out = AnswerDetail.to_metadata(self)
        if self.support is not None:
            out["supporting_passage"] = self.supporting_passage
        return out


@dataclass(slots=True)
class Answer:
    """What every pipeline returns. A failed parse is an outcome, never a default letter.

    ``detail`` says, typed, how it was read; ``metadata`` is the JSON face: the detail's set fields
    (written in when the Answer is made, so set the detail then) plus any untyped keys a caller adds.
    A key given both ways must agree. The drug consultation's details live in drug_schema.py."""

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
    detail: AnswerDetail | None = None

    def __post_init__(self) -> None:
        if self.detail is None:
            return
        face = self.detail.to_metadata()
        names = {f.name for f in fields(self.detail)}
        clash = sorted(k for k, v in self.metadata.items() if k in names and (k not in face or face[k] != v))
        if clash:
            raise ValueError(f"metadata key {clash[0]!r} is a field of {type(self.detail).__name__}: set it there")
        self.metadata = {**face, **self.metadata}
