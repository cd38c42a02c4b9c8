"""Coarse-to-fine retrieval: find the best sections first, then search only their chunks.

A section is one (doc_id, section_path) of the corpus; its entry in the section index is the
page title, the section path and the text of all its chunks. Fine retrieval is restricted to
chunks of the top sections with the inner retriever's own filter (bm25s weight mask, FAISS
IDSelector) when it has ``search_within``, else by over-fetching and filtering.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from medground.index.bm25 import BM25Index
from medground.index.fingerprint import (
    ChunkSource,
    IndexFingerprint,
    default_chunk_source,
    index_dir,
    open_or_build,
)
from medground.index.text import BM25Settings
from medground.registry import create, register
from medground.protocols import Retriever, check_query
from medground.schema import Chunk, Passage

log = logging.getLogger(__name__)

_SECTIONS_FILE = "sections.json"
_INNER_MODULES = {"bm25": "medground.index.bm25", "dense": "medground.index.dense",
                  "splade": "medground.index.splade"}
_BM25_DIR = "bm25"


class SectionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_sections: int = Field(8, ge=1)
    inner: str = "bm25"  # retriever restricted to the chunks of the top sections
    oversample: int = Field(10, ge=1, description="k multiplier when the inner retriever cannot filter")
    bm25: BM25Settings = Field(default_factory=BM25Settings)  # section-level BM25

    def index_fields(self) -> dict:
        return {"bm25": self.bm25.index_fields()}


@dataclass(slots=True)
class Section:
    section_id: str
    doc_id: str
    section_path: tuple[str, ...]
    title: str
    chunk_ids: list[str]


def section_id(doc_id: str, section_path: Sequence[str]) -> str:
    return hashlib.sha256("\x1f".join([doc_id, *section_path]).encode()).hexdigest()[:20]


def group_sections(chunks: Iterable[Chunk]) -> tuple[list[Section], list[Chunk]]:
    """Sections in first-seen order, and one pseudo-chunk per section to index."""
    sections: dict[str, Section] = {}
    texts: dict[str, list[str]] = {}
    for c in chunks:
        sid = section_id(c.doc_id, c.section_path)
        if sid not in sections:
            sections[sid] = Section(sid, c.doc_id, tuple(c.section_path), c.title, [])
            texts[sid] = []
        sections[sid].chunk_ids.append(c.chunk_id)
        texts[sid].append(c.text)
    pseudo = [Chunk(chunk_id=s.section_id, doc_id=s.doc_id, corpus="sections", source_path="",
                    text="\n\n".join(texts[s.section_id]), title=s.title, section_path=s.section_path)
              for s in sections.values()]
    return list(sections.values()), pseudo


class SectionIndex:
    kind = "sections"

    def __init__(self, sections: list[Section], bm25: BM25Index, settings: SectionSettings,
                 fingerprint: IndexFingerprint):
        self.sections = sections
        self.by_id = {s.section_id: s for s in sections}
        self.bm25 = bm25
        self.settings = settings
        self.fingerprint = fingerprint

    def __len__(self) -> int:
        return len(self.sections)

    @classmethod
    def build(cls, chunks: Iterable[Chunk], settings: SectionSettings | None = None, *,
              chunks_fingerprint: str | None = None, corpora: Sequence[str] | None = None) -> SectionIndex:
        settings = settings or SectionSettings()
        sections, pseudo = group_sections(chunks)
        if not sections:
            raise ValueError("cannot build a section index from zero chunks")
        bm25 = BM25Index.build(pseudo, settings.bm25)
        n_chunks = sum(len(s.chunk_ids) for s in sections)
        fp = IndexFingerprint(kind=cls.kind, settings=settings.index_fields(), chunks=chunks_fingerprint,
                              chunk_count=n_chunks, corpora=list(corpora) if corpora else None)
        return cls(sections, bm25, settings, fp)

    def save(self, directory: Path | str) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.bm25.save(directory / _BM25_DIR)
        (directory / _SECTIONS_FILE).write_text(json.dumps([asdict(s) for s in self.sections]))
        self.fingerprint.write(directory)
        return directory

    @classmethod
    def load(cls, directory: Path | str, settings: SectionSettings | None = None, *,
             chunks_fingerprint: str | None = None) -> SectionIndex:
        directory = Path(directory)
        settings = settings or SectionSettings()
        stored = IndexFingerprint.read(directory)
        stored.check(IndexFingerprint(kind=cls.kind, settings=settings.index_fields(),
                                      chunks=chunks_fingerprint, chunk_count=None), directory)
        bm25 = BM25Index.load(directory / _BM25_DIR, settings.bm25)
        raw = json.loads((directory / _SECTIONS_FILE).read_text())
        sections = [Section(r["section_id"], r["doc_id"], tuple(r["section_path"]), r["title"], r["chunk_ids"])
                    for r in raw]
        return cls(sections, bm25, settings, stored)

    def top_sections(self, query: str, n: int) -> list[tuple[Section, float]]:
        tokens = self.bm25.tokenizer.tokenize(check_query(query))
        ids, scores = self.bm25.top_k([tokens], n)[0]
        return [(self.by_id[i], s) for i, s in zip(ids, scores)]


class SectionFilteredRetriever:
    """Restricts ``inner`` to chunks of the ``top_sections`` best sections for the query.

    If no section matches the query at all, the search runs unrestricted (logged)."""

    name = "sections"

    def __init__(self, inner: Retriever, section_index: SectionIndex, top_sections: int = 8,
                 oversample: int = 10):
        self.inner = inner
        self.section_index = section_index
        self.top_sections = top_sections
        self.oversample = oversample

    def allowed_chunk_ids(self, query: str) -> list[str] | None:
        found = self.section_index.top_sections(query, self.top_sections)
        if not found:
            return None
        return [cid for section, _ in found for cid in section.chunk_ids]

    def search(self, query: str, k: int = 10) -> list[Passage]:
        allowed = self.allowed_chunk_ids(query)
        if allowed is None:
            log.info("no section matches %r; searching all chunks", query[:60])
            return self.inner.search(query, k)
        search_within = getattr(self.inner, "search_within", None)
        if search_within is not None:
            return search_within(query, k, allowed)
        keep = set(allowed)
        hits = [p for p in self.inner.search(query, k * self.oversample) if p.chunk.chunk_id in keep][:k]
        for rank, p in enumerate(hits, start=1):
            p.rank = rank
        return hits

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        return [self.search(q, k) for q in queries]


def open_section_index(settings: SectionSettings | None = None, *, chunks: ChunkSource | None = None,
                       corpora: Sequence[str] | None = None, directory: Path | str | None = None,
                       build_if_missing: bool = False) -> SectionIndex:
    settings = settings or SectionSettings()
    index, _ = open_or_build(
        "sections", "section", chunks=chunks, corpora=corpora, directory=directory,
        build_if_missing=build_if_missing,
        load=lambda where, fp: SectionIndex.load(where, settings, chunks_fingerprint=fp),
        build=lambda items, fp: SectionIndex.build(items, settings, chunks_fingerprint=fp,
                                                   corpora=corpora),
    )
    return index


@register("retriever", "sections")
def make_sections(settings: SectionSettings | None = None, *, inner: Retriever | None = None,
                  chunks: ChunkSource | None = None, corpora: Sequence[str] | None = None,
                  build_if_missing: bool = False, section_index: SectionIndex | None = None,
                  **inner_kwargs) -> SectionFilteredRetriever:
    """The one way to filter by section: named in a config as a retriever (its ``inner`` built
    here), or wrapped around each retriever by the engine's ``sections: K`` (``inner`` given, and
    one ``section_index`` shared by all of them)."""
    settings = settings or SectionSettings()
    if section_index is None or inner is None:  # given both, no chunk store is needed
        chunks = chunks if chunks is not None else default_chunk_source()
    index = section_index or open_section_index(settings, chunks=chunks, corpora=corpora,
                                                build_if_missing=build_if_missing)
    if inner is None:
        if settings.inner in _INNER_MODULES:  # registers it even before the registry loads builtins
            importlib.import_module(_INNER_MODULES[settings.inner])
        inner = create("retriever", settings.inner, chunks=chunks, corpora=corpora,
                       build_if_missing=build_if_missing, **inner_kwargs)
    return SectionFilteredRetriever(inner, index, settings.top_sections, settings.oversample)


@register("index", "sections")
def build_section_index(chunks: ChunkSource, corpora: Sequence[str] | None, options, **_):
    """`index build` for the coarse section index (index/build.py)."""
    from medground.index.build import BuiltIndex

    index = SectionIndex.build(chunks.iter_chunks(corpora), options.settings,
                               chunks_fingerprint=chunks.fingerprint(corpora), corpora=corpora)
    return BuiltIndex(index, index_dir("sections", corpora), {"sections": len(index)})
