"""BM25 over chunks with bm25s (sparse precomputed scores, memory-mapped when loaded)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import bm25s
import numpy as np

from medground.index.fingerprint import (
    ChunkSource,
    IndexFingerprint,
    index_dir,
    open_or_build,
    to_passages,
)
from medground.index.text import BM25Settings, MedicalTokenizer, build_vocab
from medground.protocols import check_query
from medground.registry import register
from medground.schema import Chunk, Passage

_IDS_FILE = "chunk_ids.json"
_MODEL_DIR = "bm25s"


class BM25Index:
    """A bm25s model plus the chunk id of each row. Build once, save, load memory-mapped."""

    kind = "bm25"

    def __init__(self, model: bm25s.BM25, chunk_ids: list[str], settings: BM25Settings,
                 fingerprint: IndexFingerprint):
        self.model = model
        self.chunk_ids = chunk_ids
        self.settings = settings
        self.fingerprint = fingerprint
        self.tokenizer = MedicalTokenizer(settings)

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def doc_freq(self, text: str) -> int | None:
        """How many indexed chunks contain the rarest term of ``text`` as this index tokenizes it
        (None when ``text`` has no term: a stop word)."""
        indptr = self.model.scores["indptr"]
        counts = [0 if col is None else int(indptr[col + 1] - indptr[col])
                  for col in (self.model.vocab_dict.get(t) for t in self.tokenizer.tokenize(text))]
        return min(counts) if counts else None

    @classmethod
    def build(cls, chunks: Iterable[Chunk], settings: BM25Settings | None = None, *,
              chunks_fingerprint: str | None = None, corpora: Sequence[str] | None = None,
              show_progress: bool = False) -> BM25Index:
        settings = settings or BM25Settings()
        tokenizer = MedicalTokenizer(settings)
        chunk_ids: list[str] = []
        token_lists: list[list[str]] = []
        for c in chunks:
            chunk_ids.append(c.chunk_id)
            # Title and section path are part of what a chunk is about.
            token_lists.append(tokenizer.tokenize(f"{c.title} {' '.join(c.section_path)} {c.text}"))
        if not chunk_ids:
            raise ValueError("cannot build a BM25 index from zero chunks")
        ids, vocab = build_vocab(token_lists)
        model = bm25s.BM25(k1=settings.k1, b=settings.b, delta=settings.delta, method=settings.method,
                           backend=settings.backend)
        model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=show_progress)
        fp = IndexFingerprint(kind=cls.kind, settings=settings.index_fields(), chunks=chunks_fingerprint,
                              chunk_count=len(chunk_ids), corpora=list(corpora) if corpora else None)
        return cls(model, chunk_ids, settings, fp)

    def save(self, directory: Path | str) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.model.save(str(directory / _MODEL_DIR), show_progress=False)
        (directory / _IDS_FILE).write_text(json.dumps(self.chunk_ids))
        self.fingerprint.write(directory)  # written last: its presence marks a complete index
        return directory

    @classmethod
    def load(cls, directory: Path | str, settings: BM25Settings | None = None, *,
             chunks_fingerprint: str | None = None, chunk_count: int | None = None,
             mmap: bool = True) -> BM25Index:
        """Load, refusing (StaleIndexError) an index built with other settings or chunks."""
        directory = Path(directory)
        settings = settings or BM25Settings()
        stored = IndexFingerprint.read(directory)
        stored.check(IndexFingerprint(kind=cls.kind, settings=settings.index_fields(),
                                      chunks=chunks_fingerprint, chunk_count=chunk_count), directory)
        model = bm25s.BM25.load(str(directory / _MODEL_DIR), mmap=mmap, show_progress=False,
                                backend=settings.backend)
        chunk_ids = json.loads((directory / _IDS_FILE).read_text())
        return cls(model, chunk_ids, settings, stored)

    def top_k(self, token_lists: list[list[str]], k: int, *, weight_mask: np.ndarray | None = None,
              n_threads: int | None = None) -> list[tuple[list[str], list[float]]]:
        """Per query: chunk ids and scores, best first; documents scoring 0 are left out."""
        k = min(k, len(self.chunk_ids))
        if not token_lists or k <= 0:
            return [([], []) for _ in token_lists]
        threads = self.settings.n_threads if n_threads is None else n_threads
        if len(token_lists) == 1:
            threads = 0  # a thread pool costs more than one query
        docs, scores = self.model.retrieve(
            token_lists, k=k, show_progress=False, n_threads=threads, weight_mask=weight_mask)
        out = []
        for row_docs, row_scores in zip(docs, scores):
            keep = row_scores > 0
            out.append(([self.chunk_ids[i] for i in row_docs[keep]], row_scores[keep].tolist()))
        return out

    def mask_for(self, chunk_ids: Iterable[str]) -> np.ndarray:
        """A bm25s weight mask that keeps only ``chunk_ids``."""
        if not hasattr(self, "_row_of"):
            self._row_of = {cid: i for i, cid in enumerate(self.chunk_ids)}
        mask = np.zeros(len(self.chunk_ids), dtype=np.float32)
        rows = [self._row_of[c] for c in chunk_ids if c in self._row_of]
        mask[rows] = 1.0
        return mask


class BM25Retriever:
    """Retriever protocol over a BM25Index; chunks are looked up in ``chunks`` at query time."""

    name = "bm25"

    def __init__(self, index: BM25Index, chunks: ChunkSource):
        self.index = index
        self.chunks = chunks

    def _tokens(self, query: str) -> list[str]:
        return self.index.tokenizer.tokenize(check_query(query))

    def search(self, query: str, k: int = 10) -> list[Passage]:
        return self.batch_search([query], k)[0]

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        tokens = [self._tokens(q) for q in queries]
        return [to_passages(self.chunks, ids, scores, self.name)
                for ids, scores in self.index.top_k(tokens, k)]

    def search_within(self, query: str, k: int, chunk_ids: Iterable[str]) -> list[Passage]:
        """Search restricted to ``chunk_ids`` (section filtering) with a bm25s weight mask."""
        mask = self.index.mask_for(chunk_ids)
        ids, scores = self.index.top_k([self._tokens(query)], k, weight_mask=mask)[0]
        return to_passages(self.chunks, ids, scores, self.name)


def open_bm25(settings: BM25Settings | None = None, *, chunks: ChunkSource | None = None,
              corpora: Sequence[str] | None = None, directory: Path | str | None = None,
              build_if_missing: bool = False) -> BM25Retriever:
    """Load the persisted BM25 index for ``chunks`` (default: the chunk store), checking it is
    current; build and save it when missing and ``build_if_missing``."""
    settings = settings or BM25Settings()
    index, source = open_or_build(
        "bm25", "BM25", chunks=chunks, corpora=corpora, directory=directory,
        build_if_missing=build_if_missing,
        load=lambda where, fp: BM25Index.load(where, settings, chunks_fingerprint=fp),
        build=lambda items, fp: BM25Index.build(items, settings, chunks_fingerprint=fp,
                                                corpora=corpora),
    )
    return BM25Retriever(index, source)


@register("retriever", "bm25")
def make_bm25(settings: BM25Settings | None = None, **kwargs) -> BM25Retriever:
    return open_bm25(settings, **kwargs)


@register("index", "bm25")
def build_bm25_index(chunks: ChunkSource, corpora: Sequence[str] | None, options, **_):
    """`index build` for BM25 (index/build.py)."""
    from medground.index.build import BuiltIndex

    index = BM25Index.build(chunks.iter_chunks(corpora), options.settings, chunks_fingerprint=chunks.fingerprint(corpora),
                            corpora=corpora, show_progress=options.show_progress)
    return BuiltIndex(index, index_dir("bm25", corpora))
