"""The Postgres backend: chunks and pgvector search give the same answers as SQLite + FAISS."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from medground.index.dense import DenseIndex, DenseRetriever, DenseSettings, dense_dir, open_dense
from medground.index.embedders import EmbedderSettings, OnnxMiniLMEmbedder
from medground.index.fingerprint import IndexFingerprint, IndexNotFoundError, StaleIndexError
from medground.store.chunks import ChunkStore, ManifestEntry
from medground.schema import Chunk, Document

pytest.importorskip("pgserver")
from medground.store.postgres import PgChunkStore, StoreConnectionError, migrate, redact  # noqa: E402
from medground.index.pgvector import PgVectorIndex  # noqa: E402

from .test_dense import TEXTS  # noqa: E402  (the same eight chunks as the FAISS tests)
QUERIES = ["lack of ascorbic acid", "drug for wheezing", "one arm is weak", "pain when peeing", "tired, pale"]


def fill(store, unit: str = "/u1", keys=tuple(TEXTS)) -> None:
    chunks = [Chunk(chunk_id=k, doc_id=f"doc-{k}", corpus="test", source_path=f"{k}.xml", text=TEXTS[k][1],
                    title=TEXTS[k][0], section_path=(TEXTS[k][0],)) for k in keys]
    docs = [Document(doc_id=f"doc-{k}", corpus="test", source_path=f"{k}.xml", title=TEXTS[k][0], blocks=[])
            for k in keys]
    store.replace_unit(ManifestEntry(unit=unit, reader="jsonl", corpus="test", sha256="s", file_count=1,
                                     chunker="{}"), docs, chunks)


@pytest.fixture(scope="module")
def embedder():
    return OnnxMiniLMEmbedder(EmbedderSettings(kind="onnx-minilm", threads=1))


@pytest.fixture
def sqlite_store(tmp_path):
    with ChunkStore(tmp_path / "store.sqlite") as s:
        fill(s)
        yield s


@pytest.fixture
def pg_store(pg_url):
    with PgChunkStore(pg_url) as s:
        fill(s)
        yield s


def test_same_fingerprint_as_sqlite_and_migration_resumes(sqlite_store, pg_url):
    with PgChunkStore(pg_url) as target:
        assert migrate(sqlite_store, target) == {"units": 1, "skipped": 0, "documents": 8, "chunks": 8}
        assert target.fingerprint() == sqlite_store.fingerprint()
        assert list(target.iter_chunks()) == list(sqlite_store.iter_chunks())
        assert migrate(sqlite_store, target)["skipped"] == 1  # a re-run copies nothing twice


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_pgvector_answers_like_faiss(sqlite_store, pg_store, embedder, index_type):
    settings = DenseSettings(index_type=index_type, hnsw_m=8)
    faiss_r = open_dense(settings, chunks=sqlite_store, embedder=embedder, build_if_missing=True)
    pg_r = open_dense(settings, chunks=pg_store, embedder=embedder, build_if_missing=True)
    assert isinstance(faiss_r.index, DenseIndex) and isinstance(pg_r.index, PgVectorIndex)
    # The pgvector index's local record never lands in the FAISS index's directory.
    faiss_dir = dense_dir(settings, None)
    assert pg_r.index.name != faiss_dir.name and not (faiss_dir / "pgvector.json").exists()
    assert (dense_dir(settings, None, pgvector=True) / "pgvector.json").exists()
    for q in QUERIES:
        a, b = faiss_r.search(q, k=4), pg_r.search(q, k=4)
        assert [p.chunk.chunk_id for p in a] == [p.chunk.chunk_id for p in b]
        assert np.allclose([p.score for p in a], [p.score for p in b], atol=1e-5)
        assert b[0].chunk == a[0].chunk  # the text comes from Postgres


def test_section_filter_is_exact_sql(pg_store, embedder):
    r = open_dense(DenseSettings(index_type="hnsw", hnsw_m=8), chunks=pg_store, embedder=embedder,
                   build_if_missing=True)
    allowed = ["iron", "uti", "beta"]
    hits = r.search_within("lack of ascorbic acid", 3, allowed)
    assert sorted(p.chunk.chunk_id for p in hits) == sorted(allowed)  # all k, though none is the best match


def test_index_reloads_and_refuses_a_changed_store(pg_store, embedder, tmp_path):
    built = open_dense(chunks=pg_store, embedder=embedder, build_if_missing=True)
    again = open_dense(chunks=pg_store, embedder=embedder)  # loaded, not rebuilt
    assert again.index.fingerprint.created == built.index.fingerprint.created
    fill(pg_store, unit="/u2", keys=())  # another (empty) unit: the chunk set's fingerprint moves
    with pytest.raises(StaleIndexError, match="chunks"):
        open_dense(chunks=pg_store, embedder=embedder)
    with pytest.raises(IndexNotFoundError, match="index build"):
        open_dense(DenseSettings(index_type="hnsw"), chunks=pg_store, embedder=embedder)


def test_failed_rebuild_keeps_the_serving_index(pg_store, embedder):
    r = open_dense(chunks=pg_store, embedder=embedder, build_if_missing=True)
    before = r.search("drug for wheezing", k=2)
    fp = IndexFingerprint(kind="dense", settings={}, chunks=None, chunk_count=1)
    bad = np.full((2, 384), np.nan, dtype=np.float32)  # NaN vectors are refused by pgvector
    with pytest.raises(Exception):
        PgVectorIndex.from_vectors(pg_store.connection, r.index.name, ["a", "b"], bad, DenseSettings(), fp)
    assert [p.chunk.chunk_id for p in r.search("drug for wheezing", k=2)] == [p.chunk.chunk_id for p in before]


def test_pgvector_backend_needs_a_postgres_store(sqlite_store, embedder):
    with pytest.raises(ValueError, match="Postgres chunk store"):
        open_dense(DenseSettings(backend="pgvector"), chunks=sqlite_store, embedder=embedder)
    faiss_only = open_dense(DenseSettings(backend="faiss"), chunks=sqlite_store, embedder=embedder,
                            build_if_missing=True)
    assert isinstance(faiss_only, DenseRetriever) and isinstance(faiss_only.index, DenseIndex)


def test_unreachable_url_is_named_without_its_password():
    url = "postgresql://medground:s3cret@127.0.0.1:1/medground"
    with pytest.raises(StoreConnectionError) as err:
        PgChunkStore(url)
    assert "127.0.0.1:1" in str(err.value) and "s3cret" not in str(err.value)
    assert redact(url) == "postgresql://medground:***@127.0.0.1:1/medground"


def test_engine_reads_the_configured_store(pg_store, pg_url):
    from medground.retrieve.engine import RetrievalEngine

    engine = RetrievalEngine({"retrievers": ["bm25"], "store": {"backend": "postgres", "url": pg_url},
                              "final_k": 2}, build_if_missing=True)
    hits = engine.retrieve("vitamin C deficiency scurvy")
    assert hits[0].chunk.chunk_id == "scurvy" and hits[0].chunk.text == TEXTS["scurvy"][1]


def test_migrate_command(sqlite_store, pg_url, tmp_path):
    from medground.cli import app

    out = CliRunner().invoke(app, ["store", "migrate", "--to", pg_url, "--from", str(tmp_path / "store.sqlite"),
                                   "--json"])
    assert out.exit_code == 0, out.output
    assert '"fingerprint_matches_source": true' in out.output
    bad = CliRunner().invoke(app, ["store", "migrate", "--to", "postgresql://x:pw@127.0.0.1:1/db",
                                   "--from", str(tmp_path / "store.sqlite")])
    assert bad.exit_code == 1 and "127.0.0.1:1" in bad.output and "pw@" not in bad.output


def test_unreachable_store_is_one_line_from_any_command(monkeypatch, capsys):
    import sys

    from medground.cli import main

    monkeypatch.setenv("MEDGROUND_STORE", "postgresql://x:pw@127.0.0.1:1/db")
    monkeypatch.setattr(sys, "argv", ["medground", "search", "digoxin toxicity"])
    with pytest.raises(SystemExit) as exit_:
        main()
    err = capsys.readouterr().err
    assert exit_.value.code == 1 and "127.0.0.1:1" in err and "pw@" not in err and "Traceback" not in err
