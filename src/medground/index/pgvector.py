"""Dense retrieval in PostgreSQL with pgvector: the vectors beside the chunks they embed.

One table per dense index configuration (``mg_vec_<index name>``, the name the FAISS index's
directory would have), a fingerprint row in ``mg_indexes`` checked on load exactly like the FAISS
index's fingerprint file, and inner-product search (``<#>``) over L2-normalized vectors, so scores
equal FAISS's. ``index_type: hnsw`` builds pgvector's HNSW index (approximate, ``hnsw_m``,
``hnsw_ef_construction``; ``hnsw_ef_search`` per query); ``flat`` scans exactly.

Section filtering is SQL: a search restricted to chunk ids runs as an exact scan of those rows
(an HNSW scan filters *after* the graph search and can return fewer than k).

A rebuild writes a new table and swaps it in one transaction, so a failed build leaves the
previous index serving.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from medground.index.fingerprint import IndexFingerprint, IndexNotFoundError, library_versions
from medground.schema import Chunk

_META = """CREATE TABLE IF NOT EXISTS mg_indexes (
    name TEXT PRIMARY KEY, table_name TEXT NOT NULL, fingerprint TEXT NOT NULL)"""


def table_for(name: str) -> str:
    """A safe Postgres identifier for index ``name`` (≤ 63 bytes; long names keep a hash)."""
    base = "mg_vec_" + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if len(base) > 63:
        base = base[:50] + "_" + hashlib.sha256(name.encode()).hexdigest()[:12]
    return base


def _normalized(vecs: np.ndarray) -> np.ndarray:
    vecs = np.ascontiguousarray(vecs, dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms == 0, 1.0, norms)


def ensure_vector_extension(conn) -> None:
    """CREATE EXTENSION vector (once per database) and register its Python types."""
    from pgvector.psycopg import register_vector

    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(7400312)")
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(_META)
    register_vector(conn)


class PgVectorIndex:
    kind = "dense"

    def __init__(self, conn, name: str, settings, fingerprint: IndexFingerprint, size: int):
        self.conn = conn
        self.name = name
        self.table = table_for(name)
        self.settings = settings
        self.fingerprint = fingerprint
        self.size = size
        self.embedded = 0  # chunks embedded (not served from cache) by the last build

    def __len__(self) -> int:
        return self.size

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_vectors(cls, conn, name: str, chunk_ids: Sequence[str], vecs: np.ndarray, settings,
                     fingerprint: IndexFingerprint, *, batch: int = 5000) -> PgVectorIndex:
        """Write ``vecs`` (one row per chunk id) as index ``name`` and swap it in."""
        if len(chunk_ids) != len(vecs) or not len(vecs):
            raise ValueError(f"{len(chunk_ids)} chunk ids for {len(vecs)} vectors")
        ensure_vector_extension(conn)
        vecs = _normalized(vecs)
        dim = vecs.shape[1]
        table = table_for(name)
        staging = f"{table[:55]}_build"
        conn.execute(f"DROP TABLE IF EXISTS {staging}")
        conn.execute(f"CREATE TABLE {staging} (row_id INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL, "
                     f"embedding vector({dim}) NOT NULL)")
        with conn.cursor().copy(f"COPY {staging} (row_id, chunk_id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["int4", "text", "vector"])
            for i, (cid, v) in enumerate(zip(chunk_ids, vecs)):
                copy.write_row((i, cid, v))
        conn.execute(f"CREATE INDEX ON {staging} (chunk_id)")
        if settings.index_type == "hnsw":
            # The graph is built in memory when it fits maintenance_work_mem (much faster).
            need_mb = max(64, int(len(vecs) * (dim * 4 + settings.hnsw_m * 16) * 1.5 / 2**20))
            conn.execute(f"SET maintenance_work_mem = '{min(need_mb, 8192)}MB'")
            conn.execute(f"CREATE INDEX ON {staging} USING hnsw (embedding vector_ip_ops) "
                         f"WITH (m = {int(settings.hnsw_m)}, ef_construction = {int(settings.hnsw_ef_construction)})")
            conn.execute("RESET maintenance_work_mem")
        conn.execute(f"ANALYZE {staging}")
        with conn.transaction():
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute(f"ALTER TABLE {staging} RENAME TO {table}")
            conn.execute("INSERT INTO mg_indexes VALUES (%s, %s, %s) ON CONFLICT (name) DO UPDATE SET "
                         "table_name = EXCLUDED.table_name, fingerprint = EXCLUDED.fingerprint",
                         (name, table, json.dumps(asdict(fingerprint), sort_keys=True)))
        return cls(conn, name, settings, fingerprint, len(vecs))

    @classmethod
    def build(cls, chunks: Iterable[Chunk], embedder, settings, *, conn, name: str,
              chunks_fingerprint: str | None = None, corpora: Sequence[str] | None = None,
              progress=None) -> PgVectorIndex:
        from medground.index.dense import embed_for_index

        chunks = list(chunks)
        ensure_vector_extension(conn)
        vecs, embedded = embed_for_index(chunks, embedder, settings, progress)
        fp = IndexFingerprint(kind=cls.kind, settings=settings.index_fields(), embedder=embedder.name,
                              chunks=chunks_fingerprint, chunk_count=len(chunks),
                              corpora=list(corpora) if corpora else None, versions=_versions(conn))
        out = cls.from_vectors(conn, name, [c.chunk_id for c in chunks], vecs, settings, fp)
        out.embedded = embedded
        return out

    def save(self, directory: Path | str) -> Path:
        """The index lives in the database; the directory keeps its fingerprint and where it is,
        so `medground index info` lists it beside the file-based indexes."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.fingerprint.write(directory)
        (directory / "pgvector.json").write_text(json.dumps({"table": self.table, "name": self.name}))
        return directory

    # -- loading --------------------------------------------------------------------------
    @classmethod
    def load(cls, conn, name: str, settings, *, embedder_name: str | None = None,
             chunks_fingerprint: str | None = None, chunk_count: int | None = None) -> PgVectorIndex:
        ensure_vector_extension(conn)
        row = conn.execute("SELECT table_name, fingerprint FROM mg_indexes WHERE name = %s", (name,)).fetchone()
        if row is None:
            raise IndexNotFoundError(f"no pgvector index {name!r} in the database")
        stored = IndexFingerprint(**json.loads(row[1]))
        stored.check(IndexFingerprint(kind=cls.kind, settings=settings.index_fields(), embedder=embedder_name,
                                      chunks=chunks_fingerprint, chunk_count=chunk_count), f"pgvector:{name}")
        size = conn.execute(f"SELECT COUNT(*) FROM {row[0]}").fetchone()[0]
        return cls(conn, name, settings, stored, size)

    # -- searching ------------------------------------------------------------------------
    def search_vectors(self, queries: np.ndarray, k: int, *,
                       within: Iterable[str] | None = None) -> list[tuple[list[str], list[float]]]:
        """Top ``k`` (chunk ids, inner products) per query, optionally among ``within`` only."""
        k = min(k, self.size)
        qs = _normalized(np.atleast_2d(queries))
        allowed = list(dict.fromkeys(within)) if within is not None else None
        out = []
        with self.conn.transaction():
            if allowed is not None:
                # Exact over the allowed rows: an HNSW scan would filter after the graph walk.
                self.conn.execute("SET LOCAL enable_indexscan = off")
            elif self.settings.index_type == "hnsw":
                self.conn.execute(f"SET LOCAL hnsw.ef_search = {int(max(self.settings.hnsw_ef_search, k))}")
            for q in qs:
                if allowed is not None:
                    rows = self.conn.execute(
                        f"SELECT chunk_id, embedding <#> %s AS d FROM {self.table} WHERE chunk_id = ANY(%s) "
                        "ORDER BY d, row_id LIMIT %s", (q, allowed, k)).fetchall()
                else:
                    rows = self.conn.execute(
                        f"SELECT chunk_id, embedding <#> %s AS d FROM {self.table} ORDER BY embedding <#> %s "
                        "LIMIT %s", (q, q, k)).fetchall()
                out.append(([r[0] for r in rows], [-float(r[1]) for r in rows]))  # <#> is −inner product
        return out


def _versions(conn) -> dict[str, str]:
    out = library_versions()
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    out["pgvector"] = row[0] if row else "absent"
    out["postgres"] = str(conn.info.server_version)
    return out
