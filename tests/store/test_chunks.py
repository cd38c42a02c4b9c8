from __future__ import annotations

import sqlite3

import pytest

from medground.store.chunks import ChunkStore, DuplicateChunkError, ManifestEntry
from medground.schema import Block, Chunk, Document, GlossaryTerm, ReviewQuestion


def entry(unit: str, corpus: str = "books", sha: str = "s1") -> ManifestEntry:
    return ManifestEntry(
        unit=unit,
        reader="jsonl",
        corpus=corpus,
        sha256=sha,
        file_count=1,
        chunker='{"mode": "structure"}',
    )


def document(
    doc_id: str, corpus: str = "books", book: str = "B", chapter: str = "C1"
) -> Document:
    return Document(
        doc_id=doc_id,
        corpus=corpus,
        source_path=f"/src/{doc_id}",
        title=f"T {doc_id}",
        blocks=[Block("paragraph", "x")],
        book=book,
        unit="Unit 1",
        chapter=chapter,
        glossary=[GlossaryTerm("atrium", "upper chamber")],
        review_questions=[ReviewQuestion("Which?", ["a", "b"], "a")],
    )


def chunk(
    cid: str,
    doc_id: str,
    tokens: int = 10,
    corpus: str = "books",
    section=("S",),
    **meta,
) -> Chunk:
    return Chunk(
        chunk_id=cid,
        doc_id=doc_id,
        corpus=corpus,
        source_path=f"/src/{doc_id}",
        text=f"text of {cid}",
        title=f"T {doc_id}",
        book="B",
        chapter="C1",
        section_path=section,
        token_count=tokens,
        char_start=3,
        char_end=3 + len(f"text of {cid}"),
        metadata={"chunker": "structure", **meta},
    )


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    """Every store test runs on both backends: the Postgres store must behave the same."""
    if request.param == "postgres":
        from medground.store.postgres import PgChunkStore

        s = PgChunkStore(request.getfixturevalue("pg_url"))
    else:
        s = ChunkStore(tmp_path / "store.sqlite")
    yield s
    s.close()


def test_round_trip_and_order(store):
    store.replace_unit(
        entry("/u2"),
        [document("d2")],
        [chunk("c3", "d2"), chunk("c1", "d2", section=("S", "T"))],
    )
    store.replace_unit(
        entry("/u1"), [document("d1")], [chunk("c9", "d1"), chunk("c2", "d1")]
    )
    # Ordered by corpus, unit, then position inside the unit (not by id).
    assert [c.chunk_id for c in store.iter_chunks()] == ["c9", "c2", "c3", "c1"]
    got = store.get_chunks(["c1"])[0]
    assert got == chunk(
        "c1", "d2", section=("S", "T")
    )  # every field survives, tuple included
    assert store.count() == 4 and store.corpora() == ["books"]
    docs = list(store.documents())
    assert [d.doc_id for d in docs] == ["d1", "d2"]
    assert docs[0].glossary == [GlossaryTerm("atrium", "upper chamber")]
    assert (
        docs[0].review_questions[0].options == ["a", "b"]
        and docs[0].source_unit == "/u1"
    )


def test_get_chunks_keeps_input_order_and_names_missing(store):
    store.replace_unit(entry("/u"), [document("d")], [chunk("a", "d"), chunk("b", "d")])
    assert [c.chunk_id for c in store.get_chunks(["b", "a", "b"])] == ["b", "a", "b"]
    with pytest.raises(KeyError, match="nope"):
        store.get_chunks(["a", "nope"])


def test_corpus_filter(store):
    store.replace_unit(entry("/u1", "books"), [document("d1")], [chunk("a", "d1")])
    store.replace_unit(
        entry("/u2", "labels"),
        [document("d2", "labels")],
        [chunk("b", "d2", corpus="labels")],
    )
    assert [c.chunk_id for c in store.iter_chunks(["labels"])] == ["b"]
    assert store.count(["books"]) == 1 and store.count(["books", "labels"]) == 2
    assert store.corpora() == ["books", "labels"]


def test_replace_unit_swaps_rows_and_fingerprint_tracks_chunks(store):
    store.replace_unit(
        entry("/u1"), [document("d1")], [chunk("a", "d1"), chunk("b", "d1")]
    )
    store.replace_unit(
        entry("/u2", "labels"),
        [document("d2", "labels")],
        [chunk("z", "d2", corpus="labels")],
    )
    fp_all, fp_books, fp_labels = (
        store.fingerprint(),
        store.fingerprint(["books"]),
        store.fingerprint(["labels"]),
    )
    # Same chunks again (as a re-ingest would write): fingerprint unchanged.
    store.replace_unit(
        entry("/u1"), [document("d1")], [chunk("a", "d1"), chunk("b", "d1")]
    )
    assert store.fingerprint() == fp_all
    store.replace_unit(
        entry("/u1", sha="s2"), [document("d1")], [chunk("a", "d1"), chunk("c", "d1")]
    )
    assert [c.chunk_id for c in store.iter_chunks(["books"])] == [
        "a",
        "c",
    ]  # b gone, no duplicates
    assert store.fingerprint(["books"]) != fp_books
    assert store.fingerprint(["labels"]) == fp_labels
    assert store.fingerprint() != fp_all
    (m_books, m_labels) = store.manifest()
    assert (m_books.unit, m_books.sha256, m_books.chunks, m_books.documents) == (
        "/u1",
        "s2",
        2,
        1,
    )
    assert m_labels.corpus == "labels" and m_books.ingested_at


def test_failed_replace_leaves_previous_state(store):
    store.replace_unit(entry("/u1"), [document("d1")], [chunk("a", "d1")])
    store.replace_unit(entry("/u2"), [document("d2")], [chunk("b", "d2")])
    before = (list(store.iter_chunks()), store.manifest(), store.fingerprint())
    # "b" belongs to /u2: inserting it again under /u1 violates the key midway.
    with pytest.raises(DuplicateChunkError, match="/u1"):
        store.replace_unit(
            entry("/u1", sha="s9"),
            [document("d1")],
            [chunk("new", "d1"), chunk("b", "d1")],
        )
    assert (list(store.iter_chunks()), store.manifest(), store.fingerprint()) == before

    def broken():
        yield chunk("x", "d1")
        raise RuntimeError("reader died")

    with pytest.raises(RuntimeError):
        store.replace_unit(entry("/u1", sha="s9"), [document("d1")], broken())
    assert store.manifest() == before[1]


def test_stats_counts_by_hand(store):
    store.replace_unit(
        entry("/u1"),
        [document("d1", chapter="C1"), document("d2", chapter="C2")],
        [
            chunk("a", "d1", 5, short=True),
            chunk("b", "d1", 16),
            chunk("c", "d1", 17, section=("S2",)),
            chunk("d", "d2", 300, oversized_sentence=True),
        ],
    )
    store.replace_unit(
        entry("/u2", "labels"),
        [document("l1", "labels", book="", chapter="")],
        [chunk("e", "l1", 600, corpus="labels")],
    )
    s = store.stats()
    assert (s.books, s.chapters, s.sections, s.documents, s.chunks) == (1, 2, 4, 3, 5)
    assert s.tokens == 5 + 16 + 17 + 300 + 600
    assert s.token_histogram["0-16"] == 2 and s.token_histogram["17-32"] == 1
    assert s.token_histogram["257-384"] == 1 and s.token_histogram["513+"] == 1
    assert sum(s.token_histogram.values()) == 5
    assert (s.short_chunks, s.oversized_chunks) == (1, 1)
    assert s.per_corpus["labels"].documents == 1 and s.per_corpus["books"].chunks == 4
    assert store.stats(["labels"]).chunks == 1


def test_wal_and_default_location(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path / "home"))
    s = ChunkStore.default()
    assert s.path == tmp_path / "home" / "store.sqlite"
    s.close()
    with sqlite3.connect(tmp_path / "home" / "store.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_reopen_keeps_data(tmp_path):
    with ChunkStore(tmp_path / "s.sqlite") as s:
        s.replace_unit(entry("/u"), [document("d")], [chunk("a", "d")])
    with ChunkStore(tmp_path / "s.sqlite") as s:
        assert s.count() == 1 and s.manifest()[0].chunks == 1
