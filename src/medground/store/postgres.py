"""The chunk store in PostgreSQL: the same tables, manifest and fingerprints as the SQLite store.

A shared database is how several machines (or Ray workers) see one corpus; the SQLite file
stays the embedded default. The fingerprint is computed exactly as the SQLite store computes
it, so a store migrated with `medground store migrate` keeps every index built from the SQLite
one valid (and an index built from either is refused by the other only if the chunks differ).

``url`` is any ``postgresql://`` URL, or ``embedded``: a PostgreSQL 16 with pgvector started
from the ``pgserver`` package under ``$MEDGROUND_HOME/pgdata`` (as root, pgserver runs the server
as a ``pgserver`` system user, because initdb refuses to run as root).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from medground import paths
from medground.store.chunks import (
    SCHEMA_VERSION,
    _StoreBase,
    CorpusStats,
    DuplicateChunkError,
    ManifestEntry,
    StoredDocument,
    in_asked_order,
)
from medground.store.stats import compute_stats
from medground.schema import Chunk, Document, GlossaryTerm, ReviewQuestion

EMBEDDED = "embedded"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mg_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS manifest (
    unit TEXT PRIMARY KEY, reader TEXT NOT NULL, corpus TEXT NOT NULL, sha256 TEXT NOT NULL,
    file_count INTEGER NOT NULL, chunker TEXT NOT NULL, ingested_at TEXT NOT NULL,
    documents INTEGER NOT NULL, chunks INTEGER NOT NULL, chunks_sha256 TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT NOT NULL, corpus TEXT NOT NULL, source_unit TEXT NOT NULL, book TEXT,
    unit TEXT, chapter TEXT, title TEXT, source_path TEXT, glossary TEXT, review_questions TEXT,
    metadata TEXT, ordinal INTEGER NOT NULL, PRIMARY KEY (corpus, doc_id)
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

_CHUNK_COLS = ("chunk_id, doc_id, corpus, source_path, text, title, book, chapter, section_path, "
               "token_count, char_start, char_end, metadata")


class StoreConnectionError(ConnectionError):
    """The configured PostgreSQL cannot be reached (the message names the URL, password hidden)."""


def redact(url: str) -> str:
    """The URL with its password replaced, for messages and logs."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


def embedded_url(root: Path | None = None) -> str:
    """Start (or join) the embedded PostgreSQL under ``root`` (default $MEDGROUND_HOME/pgdata)."""
    try:
        import pgserver
    except ModuleNotFoundError:
        raise StoreConnectionError("the embedded PostgreSQL needs the `pgserver` package: "
                                   "pip install -e '.[postgres]'") from None
    where = (root or paths.home() / "pgdata").resolve()
    try:
        server = pgserver.get_server(where, cleanup_mode="stop")
    except Exception as exc:  # pgserver raises plain errors with initdb/pg_ctl output
        raise StoreConnectionError(f"could not start the embedded PostgreSQL at {where}: {exc}") from exc
    return server.get_uri()


def connect(url: str, *, autocommit: bool = True):
    """A psycopg connection to ``url`` (or the embedded server), with pgvector's types registered
    when the extension is installed. Unreachable → StoreConnectionError naming the URL."""
    import psycopg

    target = embedded_url() if url == EMBEDDED else url
    try:
        conn = psycopg.connect(target, autocommit=autocommit, connect_timeout=10)
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreConnectionError(f"cannot reach PostgreSQL at {redact(url)}: {first}") from None
    return conn


class PgChunkStore(_StoreBase):
    """ChunkStore's reading and writing API over PostgreSQL (see store/chunks.py for semantics)."""

    backend = "postgres"

    def __init__(self, url: str):
        self.url = url
        self.path = redact(url)  # what messages name (the SQLite store names its file)
        self._db = connect(url)
        with self._db.transaction():
            # Concurrent first opens (Ray workers) must not race on CREATE TABLE.
            self._db.execute("SELECT pg_advisory_xact_lock(7400311)")
            self._db.execute(_SCHEMA)
            row = self._db.execute("SELECT value FROM mg_meta WHERE key='schema_version'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO mg_meta VALUES ('schema_version', %s)", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise RuntimeError(f"{self.path}: chunk store schema version {row[0]}, this code expects "
                                   f"{SCHEMA_VERSION}; re-ingest into a new database")

    @property
    def connection(self):
        return self._db

    # -- reading --------------------------------------------------------------------------
    @staticmethod
    def _where(corpora: Sequence[str] | None, column: str = "corpus") -> tuple[str, list[Any]]:
        if not corpora:
            return "", []
        return f" WHERE {column} = ANY(%s)", [list(corpora)]

    def iter_chunks(self, corpora: Sequence[str] | None = None) -> Iterator[Chunk]:
        """All chunks (of the given corpora) ordered by corpus, unit, position in the unit;
        streamed with a server-side cursor (a million chunks never sit in memory at once)."""
        where, args = self._where(corpora)
        with self._db.transaction(), self._db.cursor(name="mg_iter_chunks") as cur:
            cur.itersize = 2000
            cur.execute(f"SELECT {_CHUNK_COLS} FROM chunks{where} ORDER BY corpus, source_unit, ordinal", args)
            for row in cur:
                yield self._to_chunk(row)

    def iter_unit_chunks(self, unit: str) -> Iterator[Chunk]:
        cur = self._db.execute(f"SELECT {_CHUNK_COLS} FROM chunks WHERE source_unit = %s ORDER BY ordinal", (unit,))
        for row in cur.fetchall():
            yield self._to_chunk(row)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        ids = list(chunk_ids)
        found = {row[0]: self._to_chunk(row) for row in self._db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE chunk_id = ANY(%s)", (ids,))}
        return in_asked_order(ids, found, self.path)

    def manifest(self) -> list[ManifestEntry]:
        rows = self._db.execute(
            "SELECT unit, reader, corpus, sha256, file_count, chunker, ingested_at, documents, "
            "chunks, chunks_sha256 FROM manifest").fetchall()
        return [ManifestEntry(*r) for r in sorted(rows, key=lambda r: (r[2], r[0]))]

    def manifest_entry(self, unit: str) -> ManifestEntry | None:
        return next((m for m in self.manifest() if m.unit == unit), None)

    def documents(self, corpora: Sequence[str] | None = None, *, unit: str | None = None) -> Iterator[StoredDocument]:
        where, args = self._where(corpora)
        if unit is not None:
            where, args = f"{where}{' AND' if where else ' WHERE'} source_unit = %s", [*args, unit]
        cur = self._db.execute(
            "SELECT doc_id, corpus, source_unit, book, unit, chapter, title, source_path, glossary, "
            f"review_questions, metadata FROM documents{where} ORDER BY corpus, source_unit, ordinal", args)
        for r in cur.fetchall():
            yield StoredDocument(*r[:8], glossary=[GlossaryTerm(**g) for g in json.loads(r[8] or "[]")],
                                 review_questions=[ReviewQuestion(**q) for q in json.loads(r[9] or "[]")],
                                 metadata=json.loads(r[10] or "{}"))

    def stats(self, corpora: Sequence[str] | None = None) -> CorpusStats:
        return compute_stats(self._db, *self._where(corpora), json_flag=_pg_json_flag)

    # -- writing --------------------------------------------------------------------------
    def replace_unit(self, entry: ManifestEntry, documents: Iterable[Document], chunks: Iterable[Chunk]) -> None:
        """Swap every row of ``entry.unit`` for these documents and chunks in one transaction
        (COPY for the rows: a 10k-chunk unit loads in about a second)."""
        import psycopg

        docs, chunk_list = list(documents), list(chunks)
        ids = hashlib.sha256()
        for c in chunk_list:
            ids.update(c.chunk_id.encode() + b"\n")
        entry.documents, entry.chunks = len(docs), len(chunk_list)
        entry.chunks_sha256 = ids.hexdigest()
        entry.ingested_at = entry.ingested_at or datetime.now(UTC).isoformat(timespec="seconds")
        try:
            with self._db.transaction():
                self._delete_unit_rows(entry.unit)
                with self._db.cursor().copy(
                        "COPY documents (doc_id, corpus, source_unit, book, unit, chapter, title, source_path, "
                        "glossary, review_questions, metadata, ordinal) FROM STDIN") as copy:
                    for i, d in enumerate(docs):
                        copy.write_row((d.doc_id, d.corpus, entry.unit, d.book, d.unit, d.chapter, d.title,
                                        d.source_path, json.dumps([asdict(g) for g in d.glossary]),
                                        json.dumps([asdict(q) for q in d.review_questions]),
                                        json.dumps(d.metadata, default=str), i))
                with self._db.cursor().copy("COPY chunks (chunk_id, source_unit, ordinal, doc_id, corpus, source_path, "
                                            "text, title, book, chapter, section_path, token_count, char_start, "
                                            "char_end, metadata) FROM STDIN") as copy:
                    for i, c in enumerate(chunk_list):
                        copy.write_row((c.chunk_id, entry.unit, i, c.doc_id, c.corpus, c.source_path, c.text,
                                        c.title, c.book, c.chapter, json.dumps(list(c.section_path)),
                                        c.token_count, c.char_start, c.char_end,
                                        json.dumps(c.metadata, default=str)))
                self._db.execute("INSERT INTO manifest VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                                 (entry.unit, entry.reader, entry.corpus, entry.sha256, entry.file_count,
                                  entry.chunker, entry.ingested_at, entry.documents, entry.chunks,
                                  entry.chunks_sha256))
        except psycopg.errors.UniqueViolation as exc:
            raise DuplicateChunkError(f"unit {entry.unit}: a document or chunk id is already stored (by this "
                                      f"or another unit): {str(exc).splitlines()[0]}") from None

    def _delete_unit_rows(self, unit: str) -> None:
        for table, col in (("chunks", "source_unit"), ("documents", "source_unit"), ("manifest", "unit")):
            self._db.execute(f"DELETE FROM {table} WHERE {col} = %s", (unit,))

    def remove_unit(self, unit: str) -> None:
        with self._db.transaction():
            self._delete_unit_rows(unit)


def _pg_json_flag(key: str) -> str:
    return f"CASE WHEN (metadata::jsonb ->> '{key}') IN ('true', '1') THEN 1 ELSE 0 END"


def migrate(source, target: PgChunkStore, *, progress=None) -> dict[str, int]:
    """Copy every unit of ``source`` (a ChunkStore) into ``target``, unit by unit, each in its own
    transaction; units already there with the same chunks are skipped, so a killed migration
    resumes. Returns counts."""
    done = {m.unit: m.chunks_sha256 for m in target.manifest()}
    counts = {"units": 0, "skipped": 0, "documents": 0, "chunks": 0}
    for entry in source.manifest():
        if done.get(entry.unit) == entry.chunks_sha256:
            counts["skipped"] += 1
            continue
        docs = list(source.documents(unit=entry.unit))
        chunks = list(source.iter_unit_chunks(entry.unit))
        documents = [Document(doc_id=d.doc_id, corpus=d.corpus, source_path=d.source_path, title=d.title,
                              blocks=[], book=d.book, unit=d.unit, chapter=d.chapter, glossary=d.glossary,
                              review_questions=d.review_questions, metadata=d.metadata)
                     for d in docs]
        copy = ManifestEntry(**{**asdict(entry)})
        target.replace_unit(copy, documents, chunks)
        if copy.chunks_sha256 != entry.chunks_sha256:
            raise RuntimeError(f"unit {entry.unit}: migrated chunk ids differ from the source's")
        counts["units"] += 1
        counts["documents"] += len(documents)
        counts["chunks"] += len(chunks)
        if progress:
            progress(len(chunks))
    return counts
