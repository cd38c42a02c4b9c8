"""The chunk store: SQLite (WAL) holding the manifest, documents and chunks.

A *unit* is what a reader ingests at once (an OpenStax book directory, one JSON file); its
key is the source path. ``replace_unit`` swaps all rows of one unit in a single transaction,
so a crash or a bad input midway leaves the previous state intact.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from medground import paths
from medground.store.stats import (
    TOKEN_BINS,
    CorpusCounts,
    CorpusStats,
    compute_stats,
)
from medground.schema import Chunk, Document, GlossaryTerm, ReviewQuestion

__all__ = [  # stats types live in store_stats; re-exported for existing imports
    "SCHEMA_VERSION",
    "TOKEN_BINS",
    "ChunkStore",
    "CorpusCounts",
    "CorpusStats",
    "DuplicateChunkError",
    "ManifestEntry",
    "StoredDocument",
]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS manifest (
    unit TEXT PRIMARY KEY, reader TEXT NOT NULL, corpus TEXT NOT NULL, sha256 TEXT NOT NULL,
    file_count INTEGER NOT NULL, chunker TEXT NOT NULL, ingested_at TEXT NOT NULL,
    documents INTEGER NOT NULL, chunks INTEGER NOT NULL, chunks_sha256 TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT NOT NULL, corpus TEXT NOT NULL, source_unit TEXT NOT NULL, book TEXT,
    unit TEXT, chapter TEXT, title TEXT, source_path TEXT, glossary TEXT, review_questions TEXT,
    metadata TEXT, PRIMARY KEY (corpus, doc_id)
);
CREATE INDEX IF NOT EXISTS documents_unit ON documents (source_unit);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY, source_unit TEXT NOT NULL, ordinal INTEGER NOT NULL,
    doc_id TEXT NOT NULL, corpus TEXT NOT NULL, source_path TEXT, text TEXT NOT NULL,
    title TEXT, book TEXT, chapter TEXT, section_path TEXT NOT NULL, token_count INTEGER,
    char_start INTEGER, char_end INTEGER, metadata TEXT
);
CREATE INDEX IF NOT EXISTS chunks_order ON chunks (corpus, source_unit, ordinal);
"""

_CHUNK_COLS = (
    "chunk_id, doc_id, corpus, source_path, text, title, book, chapter, section_path, "
    "token_count, char_start, char_end, metadata"
)


@dataclass(slots=True)
class ManifestEntry:
    unit: str  # the source path the reader was given (a file or a directory)
    reader: str
    corpus: str
    sha256: str  # over the unit's files; a directory hashes its sorted files
    file_count: int
    chunker: str  # chunker settings as canonical JSON
    ingested_at: str = ""
    documents: int = 0
    chunks: int = 0
    chunks_sha256: str = ""  # over the unit's chunk ids in order: feeds fingerprint()


@dataclass(slots=True)
class StoredDocument:
    doc_id: str
    corpus: str
    source_unit: str
    book: str
    unit: str
    chapter: str
    title: str
    source_path: str
    glossary: list[GlossaryTerm] = field(default_factory=list)
    review_questions: list[ReviewQuestion] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


class DuplicateChunkError(ValueError):
    pass


def chunk_set_fingerprint(manifest_rows: Iterable[tuple[str, str, str]]) -> str:
    """Hash of (corpus, unit, chunks_sha256) manifest rows, sorted in Python so every backend
    (SQLite orders by bytes, a Postgres collation may not) gives the same value."""
    h = hashlib.sha256(b"medground-chunks-v1")
    for corpus, unit, chunks_sha in sorted(manifest_rows):
        h.update(f"{corpus}\x1f{unit}\x1f{chunks_sha}\x1e".encode())
    return h.hexdigest()[:32]


def in_asked_order(ids: Sequence[str], found: dict[str, Chunk], where: object) -> list[Chunk]:
    """``found`` in the order of ``ids``; KeyError naming the ids that are not stored."""
    missing = [c for c in ids if c not in found]
    if missing:
        shown = ", ".join(missing[:5]) + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else "")
        raise KeyError(f"{len(missing)} chunk id(s) not in {where}: {shown}")
    return [found[c] for c in ids]


class _StoreBase:
    """What the SQLite and PostgreSQL stores do alike (``_db`` a DB-API connection, ``_where``
    each backend's corpus filter): closing, counting, listing corpora, the chunk-set fingerprint
    and the row layout of a chunk."""

    _db: Any

    def _where(self, corpora: Sequence[str] | None, column: str = "corpus") -> tuple[str, list[Any]]:
        raise NotImplementedError

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _to_chunk(row: tuple) -> Chunk:
        return Chunk(
            chunk_id=row[0],
            doc_id=row[1],
            corpus=row[2],
            source_path=row[3],
            text=row[4],
            title=row[5],
            book=row[6] or "",
            chapter=row[7] or "",
            section_path=tuple(json.loads(row[8])),
            token_count=row[9],
            char_start=row[10],
            char_end=row[11],
            metadata=json.loads(row[12]) if row[12] else {},
        )

    def count(self, corpora: Sequence[str] | None = None) -> int:
        where, args = self._where(corpora)
        return self._db.execute(f"SELECT COUNT(*) FROM chunks{where}", args).fetchone()[0]

    def corpora(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT corpus FROM chunks ORDER BY corpus")]

    def fingerprint(self, corpora: Sequence[str] | None = None) -> str:
        """Hash of the chunk set of these corpora (ids carry the text hash): any change of
        chunks, chunker or source changes it; re-ingesting unchanged data does not. Both
        backends hash the same manifest rows, so an index stays valid across `store migrate`."""
        where, args = self._where(corpora)
        return chunk_set_fingerprint(self._db.execute(
            f"SELECT corpus, unit, chunks_sha256 FROM manifest{where}", args).fetchall())


class ChunkStore(_StoreBase):
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE in replace_unit).
        # check_same_thread=False: a web server reads from worker threads (SQLite serializes).
        self._db = sqlite3.connect(
            str(self.path), isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)
        row = self._db.execute(
            "SELECT value FROM meta WHERE key='schema_version'"
        ).fetchone()
        if row is None:
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        elif int(row[0]) != SCHEMA_VERSION:
            raise RuntimeError(
                f"{self.path}: chunk store schema version {row[0]}, this code expects "
                f"{SCHEMA_VERSION}; re-ingest into a new store"
            )

    @classmethod
    def default(cls) -> ChunkStore:
        return cls(paths.home() / "store.sqlite")

    # -- reading --------------------------------------------------------------------------
    @staticmethod
    def _where(
        corpora: Sequence[str] | None, column: str = "corpus"
    ) -> tuple[str, list[str]]:
        if not corpora:
            return "", []
        marks = ",".join("?" * len(corpora))
        return f" WHERE {column} IN ({marks})", list(corpora)

    def iter_chunks(self, corpora: Sequence[str] | None = None) -> Iterator[Chunk]:
        """All chunks (of the given corpora) ordered by corpus, unit, position in the unit."""
        where, args = self._where(corpora)
        cur = self._db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks{where} ORDER BY corpus, source_unit, ordinal",
            args,
        )
        for row in cur:
            yield self._to_chunk(row)

    def iter_unit_chunks(self, unit: str) -> Iterator[Chunk]:
        """The chunks of one ingested unit in their order (what `store migrate` copies)."""
        cur = self._db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE source_unit = ? ORDER BY ordinal", (unit,)
        )
        for row in cur:
            yield self._to_chunk(row)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks in the order asked; KeyError naming the ids that are not stored."""
        found: dict[str, Chunk] = {}
        ids = list(chunk_ids)
        for i in range(0, len(ids), 500):  # stay under SQLite's bound-parameter limit
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            for row in self._db.execute(
                f"SELECT {_CHUNK_COLS} FROM chunks WHERE chunk_id IN ({marks})", part
            ):
                found[row[0]] = self._to_chunk(row)
        return in_asked_order(ids, found, self.path)

    def manifest(self) -> list[ManifestEntry]:
        rows = self._db.execute(
            "SELECT unit, reader, corpus, sha256, file_count, chunker, ingested_at, documents, "
            "chunks, chunks_sha256 FROM manifest ORDER BY corpus, unit"
        )
        return [ManifestEntry(*r) for r in rows]

    def manifest_entry(self, unit: str) -> ManifestEntry | None:
        return next((m for m in self.manifest() if m.unit == unit), None)

    def documents(
        self, corpora: Sequence[str] | None = None, *, unit: str | None = None
    ) -> Iterator[StoredDocument]:
        """Documents of the given corpora (or of one ingested ``unit``) in ingest order."""
        where, args = self._where(corpora)
        if unit is not None:
            where, args = f"{where}{' AND' if where else ' WHERE'} source_unit = ?", [*args, unit]
        cur = self._db.execute(
            "SELECT doc_id, corpus, source_unit, book, unit, chapter, title, source_path, "
            f"glossary, review_questions, metadata FROM documents{where} "
            "ORDER BY corpus, source_unit, rowid",
            args,
        )
        for r in cur:
            yield StoredDocument(
                *r[:8],
                glossary=[GlossaryTerm(**g) for g in json.loads(r[8] or "[]")],
                review_questions=[
                    ReviewQuestion(**q) for q in json.loads(r[9] or "[]")
                ],
                metadata=json.loads(r[10] or "{}"),
            )

    def stats(self, corpora: Sequence[str] | None = None) -> CorpusStats:
        return compute_stats(self._db, *self._where(corpora))

    # -- writing --------------------------------------------------------------------------
    def replace_unit(
        self,
        entry: ManifestEntry,
        documents: Iterable[Document],
        chunks: Iterable[Chunk],
    ) -> None:
        """Swap every row of ``entry.unit`` for these documents and chunks, atomically."""
        docs, chunk_list = list(documents), list(chunks)
        ids = hashlib.sha256()
        for c in chunk_list:
            ids.update(c.chunk_id.encode() + b"\n")
        entry.documents, entry.chunks = len(docs), len(chunk_list)
        entry.chunks_sha256 = ids.hexdigest()
        entry.ingested_at = entry.ingested_at or datetime.now(UTC).isoformat(
            timespec="seconds"
        )
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            self._delete_unit_rows(entry.unit)
            db.executemany(
                "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    (
                        d.doc_id,
                        d.corpus,
                        entry.unit,
                        d.book,
                        d.unit,
                        d.chapter,
                        d.title,
                        d.source_path,
                        json.dumps([asdict(g) for g in d.glossary]),
                        json.dumps([asdict(q) for q in d.review_questions]),
                        json.dumps(d.metadata, default=str),
                    )
                    for d in docs
                ),
            )
            db.executemany(
                "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    (
                        c.chunk_id,
                        entry.unit,
                        i,
                        c.doc_id,
                        c.corpus,
                        c.source_path,
                        c.text,
                        c.title,
                        c.book,
                        c.chapter,
                        json.dumps(list(c.section_path)),
                        c.token_count,
                        c.char_start,
                        c.char_end,
                        json.dumps(c.metadata, default=str),
                    )
                    for i, c in enumerate(chunk_list)
                ),
            )
            db.execute(
                "INSERT INTO manifest VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    entry.unit,
                    entry.reader,
                    entry.corpus,
                    entry.sha256,
                    entry.file_count,
                    entry.chunker,
                    entry.ingested_at,
                    entry.documents,
                    entry.chunks,
                    entry.chunks_sha256,
                ),
            )
        except sqlite3.IntegrityError as exc:
            db.execute("ROLLBACK")
            raise DuplicateChunkError(
                f"unit {entry.unit}: a document or chunk id is already stored (by this or another "
                f"unit): {exc}"
            ) from None
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _delete_unit_rows(self, unit: str) -> None:
        for table, col in (("chunks", "source_unit"), ("documents", "source_unit"),
                           ("manifest", "unit")):
            self._db.execute(f"DELETE FROM {table} WHERE {col} = ?", (unit,))

    def remove_unit(self, unit: str) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            self._delete_unit_rows(unit)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
