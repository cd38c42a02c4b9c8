"""Chunkers: Documents → Chunks that never cross a section boundary.

A *section* is the run of blocks of one Document that share a ``section_path``; its text is
those blocks joined by "\\n\\n" (blocks with the same path that are not adjacent are joined in
document order). Every chunk's text is exactly ``section_text[char_start:char_end]``.

Modes (registered as ``chunker`` components, chosen by ``ChunkerSettings.mode``):

* ``structure`` (default): whole sentences packed greedily up to ``max_tokens``; the window
  closes at the last full sentence that fits. A sentence longer than the limit is cut at word
  boundaries into pieces of at most ``max_tokens``, each its own chunk flagged
  ``oversized_sentence``. A chunk under ``min_tokens`` is merged into the previous (else the
  next) chunk of the same section when the result fits; otherwise, and for a section that is
  small as a whole, it is kept as it is and flagged ``short``: text is never dropped and
  never moved into another section. A heading block (a short line of its own, no closing
  punctuation) that would be the last piece of a window opens the next window instead, so a
  section's title stays with the text it titles (``carry_headings``).
* ``sentence``: units of ``sentences_per_unit`` sentences (LLM-AMT style), still capped at
  ``max_tokens`` and confined to the section.
* ``fixed``: plain windows of ``max_tokens`` tokens (``overlap_tokens`` shared) that ignore
  sentences: the baseline for ablations.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from medground.corpus.sentences import SplitterName, is_heading_block, split_spans
from medground.corpus.tokens import TokenCounter, get_token_counter
from medground.registry import create, register
from medground.schema import Chunk, Document, make_chunk_id

ChunkerMode = Literal["structure", "sentence", "fixed"]
# Bump when a code change alters the chunks of unchanged input: ingest then re-chunks.
CHUNKER_VERSION = 2  # 2: a heading block that would end a window opens the next one instead


class ChunkerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: ChunkerMode = "structure"
    max_tokens: int = Field(
        256, ge=8, description="hard cap per chunk (tokenizer tokens)"
    )
    min_tokens: int = Field(
        32, ge=0, description="smaller chunks are merged within a section"
    )
    overlap_sentences: int = Field(
        0, ge=0, description="sentences repeated from the last chunk"
    )
    sentences_per_unit: int = Field(
        3, ge=1, description="sentence mode: sentences per chunk"
    )
    overlap_tokens: int = Field(
        0, ge=0, description="fixed mode: tokens shared by windows"
    )
    tokenizer: str | None = Field(
        None,
        description="tokenizer.json or model dir; None = the dense embedder's tokenizer",
    )
    splitter: SplitterName = "sentencex"
    carry_headings: bool = Field(
        True, description="a heading block never ends a chunk: it opens the next one"
    )

    @model_validator(mode="after")
    def _check(self) -> ChunkerSettings:
        if self.min_tokens >= self.max_tokens:
            raise ValueError(
                f"min_tokens ({self.min_tokens}) must be < max_tokens ({self.max_tokens})"
            )
        if self.overlap_tokens >= self.max_tokens:
            raise ValueError("overlap_tokens must be < max_tokens")
        return self


class Chunker(Protocol):
    settings: ChunkerSettings

    def chunk(self, doc: Document) -> list[Chunk]: ...


@dataclass(slots=True)
class Section:
    path: tuple[str, ...]
    text: str


def sections_of(doc: Document) -> list[Section]:
    """The document's sections in order of first appearance, blocks joined by "\\n\\n"."""
    grouped: dict[tuple[str, ...], list[str]] = {}
    for block in doc.blocks:
        grouped.setdefault(tuple(block.section_path), []).append(block.text)
    return [Section(path, "\n\n".join(texts)) for path, texts in grouped.items()]


@dataclass(slots=True)
class _Piece:
    """A run of text inside one section: a sentence, or a cut of an oversized sentence."""

    start: int
    end: int
    tokens: int
    oversized: bool = False
    heading: bool = False  # a block of its own that titles what follows


@dataclass(slots=True)
class _Draft:
    pieces: list[_Piece]
    short: bool = False

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.pieces)

    @property
    def oversized(self) -> bool:
        return any(p.oversized for p in self.pieces)


class _BaseChunker:
    mode: ChunkerMode = "structure"

    def __init__(self, settings: ChunkerSettings | None = None, **overrides: Any):
        base = settings or ChunkerSettings()
        data = base.model_dump() | overrides | {"mode": self.mode}
        self.settings = ChunkerSettings(**data)
        self.counter: TokenCounter = get_token_counter(self.settings.tokenizer)
        self._meta_settings = self.settings.model_dump(exclude={"mode"})

    # -- shared machinery ---------------------------------------------------------------
    def chunk(self, doc: Document) -> list[Chunk]:
        sections = sections_of(doc)
        drafts_per_section = list(zip(sections, self._section_drafts(sections)))
        texts = [
            sec.text[d.pieces[0].start : d.pieces[-1].end]
            for sec, drafts in drafts_per_section
            for d in drafts
        ]
        # Whitespace-additive tokenizers (BERT): the sum of sentence counts is exact.
        exact = (
            [d.tokens for _, drafts in drafts_per_section for d in drafts]
            if self.counter.additive and self.mode != "fixed"
            else self.counter.count_batch(texts)
        )
        chunks: list[Chunk] = []
        i = 0
        for sec, drafts in drafts_per_section:
            for d in drafts:
                chunks.extend(self._emit(doc, sec, d, exact[i], len(chunks)))
                i += 1
        return chunks

    def _emit(
        self, doc: Document, sec: Section, d: _Draft, tokens: int, ordinal: int
    ) -> list[Chunk]:
        if tokens > self.settings.max_tokens and len(d.pieces) > 1:
            # Sums of sentence counts can undercount for tokenizers that are not additive over
            # whitespace; halve until every chunk fits.
            half = len(d.pieces) // 2
            out: list[Chunk] = []
            for part in (
                _Draft(d.pieces[:half], d.short),
                _Draft(d.pieces[half:], d.short),
            ):
                text = sec.text[part.pieces[0].start : part.pieces[-1].end]
                out.extend(
                    self._emit(
                        doc, sec, part, self.counter.count(text), ordinal + len(out)
                    )
                )
            return out
        if (
            tokens > self.settings.max_tokens
        ):  # one piece cut inside a word re-tokenizes longer
            out = []
            piece = d.pieces[0]
            for a, b in self.counter.split_to_fit(
                sec.text[piece.start : piece.end], self.settings.max_tokens
            ):
                part = _Piece(piece.start + a, piece.start + b, 0, True)
                text = sec.text[part.start : part.end]
                out.extend(
                    self._emit(
                        doc,
                        sec,
                        _Draft([part]),
                        self.counter.count(text),
                        ordinal + len(out),
                    )
                )
            return out
        start, end = d.pieces[0].start, d.pieces[-1].end
        text = sec.text[start:end]
        meta = {
            "chunker": self.mode,
            "settings": self._meta_settings,
            "sentences": len(d.pieces),
            "short": d.short or tokens < self.settings.min_tokens,
            "oversized_sentence": d.oversized,
        }
        return [
            Chunk(
                chunk_id=make_chunk_id(doc.source_path, sec.path, text, ordinal),
                doc_id=doc.doc_id,
                corpus=doc.corpus,
                source_path=doc.source_path,
                text=text,
                title=doc.title,
                book=doc.book,
                chapter=doc.chapter,
                section_path=sec.path,
                token_count=tokens,
                char_start=start,
                char_end=end,
                metadata=meta,
            )
        ]

    def _sentence_pieces(self, sections: list[Section]) -> list[list[_Piece]]:
        """Sentence pieces of every section, counted in one tokenizer batch per document."""
        spans = [split_spans(sec.text, self.settings.splitter) for sec in sections]
        flat = [sec.text[s:e] for sec, sp in zip(sections, spans) for s, e in sp]
        counts = iter(self.counter.count_batch(flat))
        limit = self.settings.max_tokens
        out: list[list[_Piece]] = []
        for sec, sp in zip(sections, spans):
            pieces: list[_Piece] = []
            for s, e in sp:
                n = next(counts)
                if n <= limit:
                    pieces.append(_Piece(s, e, n, heading=is_heading_block(sec.text, s, e)))
                    continue
                sentence = sec.text[s:e]
                bounds = [
                    0,
                    *self.counter.word_cut_points(sentence, limit),
                    len(sentence),
                ]
                for a, b in pairwise(bounds):
                    piece = sentence[a:b]
                    lead = len(piece) - len(piece.lstrip())
                    core = piece.strip()
                    if core:
                        ps = s + a + lead
                        pieces.append(
                            _Piece(ps, ps + len(core), self.counter.count(core), True)
                        )
            out.append(pieces)
        return out

    def _section_drafts(self, sections: list[Section]) -> list[list[_Draft]]:
        return [self._drafts(pieces) for pieces in self._sentence_pieces(sections)]

    def _drafts(self, pieces: list[_Piece]) -> list[_Draft]:
        raise NotImplementedError

    def _pack(
        self, pieces: list[_Piece], max_pieces: int | None = None
    ) -> list[_Draft]:
        """Greedy windows of whole pieces up to max_tokens, with sentence overlap."""
        limit, overlap = self.settings.max_tokens, self.settings.overlap_sentences
        drafts: list[_Draft] = []
        window: list[_Piece] = []
        fresh = 0  # pieces in the window that are not overlap from the previous chunk

        def full(p: _Piece) -> bool:
            too_many = max_pieces is not None and len(window) >= max_pieces
            return sum(x.tokens for x in window) + p.tokens > limit or too_many

        for p in pieces:
            if p.oversized:
                if fresh:
                    drafts.append(_Draft(window))
                drafts.append(_Draft([p]))
                window, fresh = [], 0
                continue
            if window and full(p):
                # A heading that would close this window opens the next one with its text.
                carried: list[_Piece] = []
                if (
                    self.settings.carry_headings
                    and max_pieces is None  # sentence units count pieces: keep them exact
                    and fresh > 1
                    and window[-1].heading
                    and window[-1].tokens + p.tokens <= limit
                ):
                    carried = [window.pop()]
                    fresh -= 1
                if fresh:
                    drafts.append(_Draft(window))
                window = (
                    [x for x in window[-overlap:] if not x.oversized] if overlap else []
                ) + carried
                fresh = len(carried)
                # the overlap must leave room for progress (a carried heading stays: it fits with p)
                while len(window) > len(carried) and full(p):
                    window.pop(0)
            window.append(p)
            fresh += 1
        if fresh:
            drafts.append(_Draft(window))
        return drafts

    def _merge_small(self, drafts: list[_Draft]) -> list[_Draft]:
        """Fold chunks under min_tokens into a neighbour of the same section when it fits."""
        limit, small = self.settings.max_tokens, self.settings.min_tokens
        out: list[_Draft] = []
        i = 0
        while i < len(drafts):
            d = drafts[i]
            if d.tokens < small and not d.oversized:
                if out and not out[-1].oversized and out[-1].tokens + d.tokens <= limit:
                    out[-1] = _Draft(_union(out[-1].pieces, d.pieces))
                    i += 1
                    continue
                nxt = drafts[i + 1] if i + 1 < len(drafts) else None
                if (
                    nxt is not None
                    and not nxt.oversized
                    and nxt.tokens + d.tokens <= limit
                ):
                    drafts[i + 1] = _Draft(_union(d.pieces, nxt.pieces))
                    i += 1
                    continue
                d = _Draft(d.pieces, short=True)
            out.append(d)
            i += 1
        return out


def _union(a: list[_Piece], b: list[_Piece]) -> list[_Piece]:
    """Concatenate two windows, dropping pieces of ``b`` that overlap the end of ``a``."""
    end = a[-1].end
    return a + [p for p in b if p.start >= end]


class StructureChunker(_BaseChunker):
    mode: ChunkerMode = "structure"

    def _drafts(self, pieces: list[_Piece]) -> list[_Draft]:
        return self._merge_small(self._pack(pieces))


class SentenceUnitChunker(_BaseChunker):
    mode: ChunkerMode = "sentence"

    def _drafts(self, pieces: list[_Piece]) -> list[_Draft]:
        return self._pack(pieces, self.settings.sentences_per_unit)


class FixedTokenChunker(_BaseChunker):
    mode: ChunkerMode = "fixed"

    def _section_drafts(self, sections: list[Section]) -> list[list[_Draft]]:
        return [self._windows(sec) for sec in sections]

    def _windows(self, sec: Section) -> list[_Draft]:
        offsets, word_ids = self.counter.words(sec.text)
        n, size = len(offsets), self.settings.max_tokens

        def word_start(i: int, floor: int) -> int:
            """Move a cut back to the first token of its word (a cut inside a word would
            re-tokenize it), unless that reaches ``floor``."""
            j = i
            while (
                j > floor
                and j < n
                and word_ids[j] is not None
                and word_ids[j] == word_ids[j - 1]
            ):
                j -= 1
            return j if j > floor else i

        drafts: list[_Draft] = []
        first = 0
        while first < n:
            stop = n if first + size >= n else word_start(first + size, first)
            drafts.append(
                _Draft([_Piece(offsets[first][0], offsets[stop - 1][1], stop - first)])
            )
            if stop >= n:
                break
            first = word_start(
                max(stop - self.settings.overlap_tokens, first + 1), first
            )
        return drafts


@register("chunker", "structure")
def make_structure_chunker(
    settings: ChunkerSettings | None = None, **kw: Any
) -> StructureChunker:
    return StructureChunker(settings, **kw)


@register("chunker", "sentence")
def make_sentence_chunker(
    settings: ChunkerSettings | None = None, **kw: Any
) -> SentenceUnitChunker:
    return SentenceUnitChunker(settings, **kw)


@register("chunker", "fixed")
def make_fixed_chunker(
    settings: ChunkerSettings | None = None, **kw: Any
) -> FixedTokenChunker:
    return FixedTokenChunker(settings, **kw)


def make_chunker(settings: ChunkerSettings | None = None) -> Chunker:
    """The chunker named by ``settings.mode`` (through the registry, so plugins can replace it)."""
    settings = settings or ChunkerSettings()
    return create("chunker", settings.mode, settings=settings)
