"""Dense retrieval: FAISS inner product over L2-normalized chunk embeddings.

Embeddings are cached by (embedder name, chunk content hash) in SQLite, so rebuilding after
adding documents embeds only the new chunks.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import faiss
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from medground import paths
from medground.index.embedders import EmbedderSettings, load_embedder
from medground.index.fingerprint import (
    ChunkSource,
    IndexFingerprint,
    StaleIndexError,
    index_dir,
    open_or_build,
    to_passages,
)
from medground.registry import register
from medground.protocols import Embedder, check_query
from medground.schema import Chunk, Passage

if TYPE_CHECKING:
    from medground.index.pgvector import PgVectorIndex

log = logging.getLogger(__name__)

_IDS_FILE = "chunk_ids.json"
_FAISS_FILE = "index.faiss"


class DenseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    index_type: Literal["flat", "hnsw"] = "flat"  # flat = exact; hnsw = approximate, faster at scale
    hnsw_m: int = Field(32, ge=4)
    hnsw_ef_construction: int = Field(80, ge=8)
    hnsw_ef_search: int = Field(64, ge=8)
    cache: bool = True  # reuse embeddings of unchanged chunks across builds
    include_title: bool = True  # embed "title > section: text" rather than the bare text
    # Where the vectors live: FAISS files, or pgvector in the Postgres chunk store ("auto": pgvector
    # exactly when the chunk store is Postgres). Not part of the fingerprint: both hold the same index.
    backend: Literal["auto", "faiss", "pgvector"] = "auto"

    def index_fields(self) -> dict:
        # The embedder identity is checked via Embedder.name; ef_search is a query-time knob.
        return self.model_dump(mode="json", exclude={"embedder", "cache", "hnsw_ef_search", "backend"})


def passage_text(chunk: Chunk, include_title: bool = True) -> str:
    if not include_title:
        return chunk.text
    head = " > ".join(p for p in (chunk.title, *chunk.section_path) if p)
    return f"{head}: {chunk.text}" if head else chunk.text


class EmbeddingCache:
    """SQLite table content-hash → float32 vector, one file per embedder identity."""

    def __init__(self, embedder_name: str, root: Path | None = None):
        root = root or paths.home() / "embcache"
        root.mkdir(parents=True, exist_ok=True)
        key = hashlib.sha256(embedder_name.encode()).hexdigest()[:16]
        self.path = root / f"{key}.sqlite"
        self._db = sqlite3.connect(self.path)
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (hash TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('embedder', ?)", (embedder_name,))
        self._db.commit()

    def get_many(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(hashes))
        for start in range(0, len(uniq), 900):  # SQLite's bound-parameter limit
            part = uniq[start:start + 900]
            q = f"SELECT hash, vec FROM emb WHERE hash IN ({','.join('?' * len(part))})"
            for h, blob in self._db.execute(q, part):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?)",
                             ((h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items))
        self._db.commit()

    def close(self) -> None:
        self._db.close()


def length_blocks(texts: Sequence[str], rows: Sequence[int], batch: int) -> list[list[int]]:
    """``rows`` cut into blocks of ``batch`` that hold texts of similar length, in a fixed shuffled order.

    Sorting the whole build by length (not only within one call) keeps the padding of every model
    batch small; shuffling the blocks keeps the work per block even along the build, so the
    progress bar's rate, and so its ETA, holds from the start (sorted blocks would run from the
    shortest chunks to the longest). The order depends only on the texts: a resumed build sees
    the same blocks, less those already cached."""
    ordered = sorted(rows, key=lambda i: (len(texts[i]), i))
    blocks = [ordered[start:start + batch] for start in range(0, len(ordered), batch)]
    perm = np.random.default_rng(0).permutation(len(blocks))
    return [blocks[i] for i in perm]


def embed_chunks(chunks: Sequence[Chunk], embedder: Embedder, *, include_title: bool = True,
                 cache: EmbeddingCache | None = None, batch: int = 256,
                 progress=None) -> tuple[np.ndarray, int]:
    """(n, dim) vectors for ``chunks`` and how many had to be embedded (cache misses).

    Cached chunks are served from ``cache`` (and reported to ``progress`` at once); the rest are
    embedded in length-sorted blocks of ``batch`` (``length_blocks``) and each block is committed
    to the cache as soon as it is done, so a build that is killed resumes where it stopped."""
    texts = [passage_text(c, include_title) for c in chunks]
    hashes = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    cached = cache.get_many(hashes) if cache else {}
    todo = [i for i, h in enumerate(hashes) if h not in cached]
    todo = list({hashes[i]: i for i in todo}.values())  # same text twice: embed once
    if progress and len(chunks) > len(todo):
        progress(len(chunks) - len(todo))  # cached (and duplicate) chunks: done already
    for rows in length_blocks(texts, todo, batch):
        vecs = embedder.encode_passages([texts[i] for i in rows])
        fresh = [(hashes[i], v) for i, v in zip(rows, vecs)]
        cached.update(fresh)
        if cache:
            cache.put_many(fresh)
        if progress:
            progress(len(rows))
    out = np.zeros((len(chunks), embedder.dim), dtype=np.float32)
    for i, h in enumerate(hashes):
        out[i] = cached[h]
    return out, len(todo)


def embed_for_index(chunks: Sequence[Chunk], embedder: Embedder, settings: DenseSettings,
                    progress=None) -> tuple[np.ndarray, int]:
    """What every dense backend builds from: the chunks' vectors (through the embedding cache
    unless ``settings.cache`` is off) and how many had to be embedded."""
    if not chunks:
        raise ValueError("cannot build a dense index from zero chunks")
    cache = EmbeddingCache(embedder.name) if settings.cache else None
    try:
        return embed_chunks(chunks, embedder, include_title=settings.include_title, cache=cache,
                            progress=progress)
    finally:
        if cache:
            cache.close()


class DenseIndex:
    kind = "dense"

    def __init__(self, faiss_index: faiss.Index, chunk_ids: list[str], settings: DenseSettings,
                 fingerprint: IndexFingerprint):
        self.faiss = faiss_index
        self.chunk_ids = chunk_ids
        self.settings = settings
        self.fingerprint = fingerprint
        self.embedded = 0  # chunks embedded (not served from cache) by the last build
        if isinstance(faiss_index, faiss.IndexHNSW):
            faiss_index.hnsw.efSearch = settings.hnsw_ef_search

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @classmethod
    def build(cls, chunks: Iterable[Chunk], embedder: Embedder, settings: DenseSettings | None = None,
              *, chunks_fingerprint: str | None = None, corpora: Sequence[str] | None = None,
              progress=None) -> DenseIndex:
        settings = settings or DenseSettings()
        chunks = list(chunks)
        vecs, embedded = embed_for_index(chunks, embedder, settings, progress)
        faiss.normalize_L2(vecs)  # inner product == cosine whatever the embedder returns
        if settings.index_type == "hnsw":
            index = faiss.IndexHNSWFlat(embedder.dim, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = settings.hnsw_ef_construction
        else:
            index = faiss.IndexFlatIP(embedder.dim)
        index.add(vecs)
        fp = IndexFingerprint(kind=cls.kind, settings=settings.index_fields(), embedder=embedder.name,
                              chunks=chunks_fingerprint, chunk_count=len(chunks),
                              corpora=list(corpora) if corpora else None)
        out = cls(index, [c.chunk_id for c in chunks], settings, fp)
        out.embedded = embedded
        return out

    def save(self, directory: Path | str) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self.faiss, str(directory / _FAISS_FILE))
        (directory / _IDS_FILE).write_text(json.dumps(self.chunk_ids))
        self.fingerprint.write(directory)
        return directory

    @classmethod
    def load(cls, directory: Path | str, settings: DenseSettings | None = None, *,
             embedder_name: str | None = None, chunks_fingerprint: str | None = None,
             chunk_count: int | None = None) -> DenseIndex:
        directory = Path(directory)
        settings = settings or DenseSettings()
        stored = IndexFingerprint.read(directory)
        stored.check(IndexFingerprint(kind=cls.kind, settings=settings.index_fields(), embedder=embedder_name,
                                      chunks=chunks_fingerprint, chunk_count=chunk_count), directory)
        index = faiss.read_index(str(directory / _FAISS_FILE))
        return cls(index, json.loads((directory / _IDS_FILE).read_text()), settings, stored)

    def search_vectors(self, queries: np.ndarray, k: int, *,
                       within: Iterable[str] | None = None) -> list[tuple[list[str], list[float]]]:
        """Top ``k`` (chunk ids, inner products) per query, optionally among ``within`` only."""
        k = min(k, len(self.chunk_ids))
        q = np.ascontiguousarray(queries, dtype=np.float32)
        faiss.normalize_L2(q)
        params = None
        allowed_rows = self.rows_for(within) if within is not None else None
        if allowed_rows is not None:
            selector = faiss.IDSelectorBatch(np.asarray(allowed_rows, dtype=np.int64))
            params = (faiss.SearchParametersHNSW(sel=selector, efSearch=self.settings.hnsw_ef_search)
                      if isinstance(self.faiss, faiss.IndexHNSW) else faiss.SearchParameters(sel=selector))
        scores, rows = self.faiss.search(q, k, params=params)
        out = []
        for srow, rrow in zip(scores, rows):
            keep = rrow >= 0  # -1 pads when fewer than k rows qualify
            out.append(([self.chunk_ids[r] for r in rrow[keep]], srow[keep].tolist()))
        return out

    def rows_for(self, chunk_ids: Iterable[str]) -> np.ndarray:
        if not hasattr(self, "_row_of"):
            self._row_of = {cid: i for i, cid in enumerate(self.chunk_ids)}
        return np.array([self._row_of[c] for c in chunk_ids if c in self._row_of], dtype=np.int64)


class DenseRetriever:
    """Retriever protocol over a DenseIndex (FAISS) or a PgVectorIndex. ``last_timings`` holds
    the seconds the last call spent encoding queries and searching, reported apart (encoding
    dominates on CPU)."""

    name = "dense"

    def __init__(self, index: DenseIndex | PgVectorIndex, embedder: Embedder, chunks: ChunkSource):
        if index.fingerprint.embedder and index.fingerprint.embedder != embedder.name:
            raise StaleIndexError(f"dense index was built with embedder {index.fingerprint.embedder!r}, "
                                  f"not {embedder.name!r}; rebuild with `medground index build --retrievers dense`")
        self.index = index
        self.embedder = embedder
        self.chunks = chunks
        self.last_timings: dict[str, float] = {}

    def encode(self, queries: Sequence[str]) -> np.ndarray:
        t0 = time.perf_counter()
        vecs = self.embedder.encode_queries([check_query(q) for q in queries])
        self.last_timings = {"encode": time.perf_counter() - t0}
        return vecs

    def search(self, query: str, k: int = 10) -> list[Passage]:
        return self.batch_search([query], k)[0]

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        vecs = self.encode(queries)
        return self.search_encoded(vecs, k)

    def search_encoded(self, vecs: np.ndarray, k: int = 10,
                       chunk_ids: Iterable[str] | None = None) -> list[list[Passage]]:
        t0 = time.perf_counter()
        hits = self.index.search_vectors(vecs, k, within=chunk_ids)
        self.last_timings["search"] = time.perf_counter() - t0
        return [to_passages(self.chunks, ids, scores, self.name) for ids, scores in hits]

    def search_within(self, query: str, k: int, chunk_ids: Iterable[str]) -> list[Passage]:
        """Search restricted to ``chunk_ids`` (section filtering): a FAISS IDSelector, or SQL."""
        return self.search_encoded(self.encode([query]), k, chunk_ids=chunk_ids)[0]


def dense_variant(settings: DenseSettings) -> str | None:
    """None for the default dense configuration (its index stays at indexes/dense[-corpora]); for
    any other embedder or index setting "<embedder kind>-<8 hex digits of what shapes the vectors>"."""
    import hashlib
    import json

    def shaping_of(emb: EmbedderSettings) -> dict:
        # fp32 (the default precision) is left out, so variants named before the field existed keep their names
        return emb.model_dump(mode="json", exclude={"threads", "batch_size"} |
                              ({"precision"} if emb.precision == "fp32" else set()))

    shaping = shaping_of(settings.embedder)
    if shaping == shaping_of(EmbedderSettings()) and settings.index_fields() == DenseSettings().index_fields():
        return None
    digest = hashlib.sha256(json.dumps([shaping, settings.index_fields()], sort_keys=True).encode()).hexdigest()
    return f"{settings.embedder.kind}-{digest[:8]}"


def dense_dir(settings: DenseSettings, corpora: Sequence[str] | None, *, pgvector: bool = False) -> Path:
    """Where a dense index of these settings lives: indexes/dense[-variant][-corpora] for FAISS;
    a pgvector index (its vectors are in the database) keeps its fingerprint and table name in
    indexes/dense-pgvector[-variant][-corpora], never in a FAISS index's directory."""
    variant = dense_variant(settings)
    if pgvector:
        variant = "pgvector" if variant is None else f"pgvector-{variant}"
    return index_dir("dense", corpora, variant)


def uses_pgvector(settings: DenseSettings, chunks: ChunkSource) -> bool:
    from medground.store.settings import is_postgres

    if settings.backend == "pgvector" and not is_postgres(chunks):
        raise ValueError("dense backend pgvector needs a Postgres chunk store "
                         "(retrieve.store: {backend: postgres} or MEDGROUND_STORE=postgresql://…)")
    return settings.backend == "pgvector" or (settings.backend == "auto" and is_postgres(chunks))


def open_dense(settings: DenseSettings | None = None, *, chunks: ChunkSource | None = None,
               corpora: Sequence[str] | None = None, directory: Path | str | None = None,
               embedder: Embedder | None = None, build_if_missing: bool = False) -> DenseRetriever:
    from medground.index.fingerprint import default_chunk_source

    settings = settings or DenseSettings()
    model = embedder or load_embedder(settings.embedder)
    chunks = chunks if chunks is not None else default_chunk_source()
    pgvector = uses_pgvector(settings, chunks)
    if directory is None:
        directory = dense_dir(settings, corpora, pgvector=pgvector)
    if pgvector:
        return _open_pgvector(settings, model, chunks, corpora, Path(directory), build_if_missing)
    index, source = open_or_build(
        "dense", "dense", chunks=chunks, corpora=corpora, directory=directory,
        build_if_missing=build_if_missing,
        load=lambda where, fp: DenseIndex.load(where, settings, embedder_name=model.name,
                                               chunks_fingerprint=fp),
        build=lambda items, fp: _with_progress(chunks, corpora, lambda progress: DenseIndex.build(
            items, model, settings, chunks_fingerprint=fp, corpora=corpora, progress=progress)),
    )
    return DenseRetriever(index, model, source)


@register("index", "dense")
def build_dense_index(chunks: ChunkSource, corpora: Sequence[str] | None, options, *, progress=None, ray=None):
    """`index build` for dense (index/build.py): FAISS on disk, or pgvector beside a Postgres store;
    ``ray``: a RayCluster whose workers embed."""
    from medground.index.build import BuiltIndex
    from medground.index.embedders import embedder_settings_from

    settings = options.settings or DenseSettings(
        embedder=embedder_settings_from(options.embedder, options.threads, options.precision),
        index_type=options.dense_index)
    pgvector = uses_pgvector(settings, chunks)
    directory = dense_dir(settings, corpora, pgvector=pgvector)
    embedder = load_embedder(settings.embedder)
    extra: dict = {}
    if ray is not None:
        from medground.index.rayembed import RayEmbedder

        embedder = RayEmbedder(embedder, settings.embedder, ray)
        extra["ray_workers"] = embedder.workers
    fp = chunks.fingerprint(corpora)
    try:
        if pgvector:
            from medground.index.pgvector import PgVectorIndex

            index = PgVectorIndex.build(chunks.iter_chunks(corpora), embedder, settings, conn=chunks.connection,
                                        name=directory.name, chunks_fingerprint=fp, corpora=corpora,
                                        progress=progress)
        else:
            index = DenseIndex.build(chunks.iter_chunks(corpora), embedder, settings, chunks_fingerprint=fp,
                                     corpora=corpora, progress=progress)
    finally:
        if ray is not None:
            embedder.close()
    extra.update(embedder=embedder.name, embedded=index.embedded, cached=chunks.count(corpora) - index.embedded)
    return BuiltIndex(index, directory, extra)


def _open_pgvector(settings, model, chunks, corpora, directory: Path, build_if_missing: bool) -> DenseRetriever:
    """The pgvector twin of the FAISS path: same staleness checks, same build-on-first-use."""
    from medground.index.pgvector import PgVectorIndex

    conn = chunks.connection
    index, source = open_or_build(
        "dense", "dense (pgvector)", chunks=chunks, corpora=corpora, directory=directory,
        build_if_missing=build_if_missing,
        load=lambda where, fp: PgVectorIndex.load(conn, where.name, settings, embedder_name=model.name,
                                                  chunks_fingerprint=fp),
        build=lambda items, fp: _with_progress(chunks, corpora, lambda progress: PgVectorIndex.build(
            items, model, settings, conn=conn, name=directory.name, chunks_fingerprint=fp, corpora=corpora,
            progress=progress)),
    )
    return DenseRetriever(index, model, source)


def _with_progress(chunks: ChunkSource, corpora, make):
    """``make(progress)`` under a progress bar over the chunks to embed (the count when known)."""
    from tqdm import tqdm

    try:
        total = chunks.count(corpora)
    except (AttributeError, TypeError):
        total = None
    with tqdm(total=total, desc="embedding chunks", unit="chunk", mininterval=2.0) as bar:
        return make(bar.update)


@register("retriever", "dense")
def make_dense(settings: DenseSettings | None = None, **kwargs) -> DenseRetriever:
    return open_dense(settings, **kwargs)
