import itertools

import numpy as np
import pytest

from medground.index.bm25 import BM25Index, BM25Retriever, make_bm25
from medground.index.fingerprint import (
    ChunkList,
    IndexNotFoundError,
    StaleIndexError,
    index_dir,
)
from medground.index.text import BM25Settings
from medground.retrieve.base import EmptyQueryError
from medground.schema import Chunk

TEXTS = {
    "scurvy": ("Vitamins", ("Vitamin C",), "Vitamin C deficiency causes scurvy: bleeding gums and poor wound healing."),
    "insulin": ("Diabetes", ("Treatment",), "Insulin lowers blood glucose; type 1 diabetes needs insulin replacement."),
    "beta": ("Cardiac drugs", ("Beta blockers",), "Beta-blockers such as metoprolol lower heart rate and blood pressure."),
    "morphine": ("Opioids", ("Dosing",), "Morphine 10mg IV is given for severe pain; watch for respiratory depression."),
    "asthma": ("Respiratory", ("Asthma",), "Albuterol is a short-acting bronchodilator used in acute asthma attacks."),
    "iron": ("Anemia", ("Iron",), "Iron deficiency anemia presents with fatigue and microcytic red cells."),
}


def make_chunks():
    return [Chunk(chunk_id=k, doc_id=f"doc-{k}", corpus="test", source_path=f"{k}.xml", text=text, title=title,
                  section_path=path) for k, (title, path, text) in TEXTS.items()]


@pytest.fixture
def source():
    return ChunkList(make_chunks())


@pytest.fixture
def retriever(source):
    return BM25Retriever(BM25Index.build(source.iter_chunks(), chunks_fingerprint=source.fingerprint()), source)


@pytest.mark.parametrize("query,expected", [
    ("what causes scurvy?", "scurvy"),
    ("beta blocker for heart rate", "beta"),
    ("10 mg morphine", "morphine"),
    ("microcytic anemia", "iron"),
])
def test_relevant_chunk_first(retriever, query, expected):
    hits = retriever.search(query, k=3)
    assert hits[0].chunk.chunk_id == expected
    assert hits[0].source == "bm25" and hits[0].rank == 1
    assert [p.rank for p in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))


def test_no_matching_term_gives_no_passages(retriever):
    assert retriever.search("zyxwv", k=3) == []


def test_k_larger_than_corpus_is_clamped(retriever):
    hits = retriever.search("blood", k=50)
    assert {p.chunk.chunk_id for p in hits} == {"insulin", "beta"}


def test_empty_query_refused(retriever):
    with pytest.raises(EmptyQueryError):
        retriever.search("   ")


def test_batch_search_matches_search_and_threads(source):
    index = BM25Index.build(source.iter_chunks(), BM25Settings(n_threads=2))
    r = BM25Retriever(index, source)
    queries = ["scurvy", "asthma bronchodilator", "insulin glucose", "pain"]
    batch = r.batch_search(queries, k=2)
    single = [r.search(q, k=2) for q in queries]
    assert [[p.chunk.chunk_id for p in hits] for hits in batch] == [[p.chunk.chunk_id for p in h] for h in single]


def test_save_load_identical(tmp_path, source, retriever):
    retriever.index.save(tmp_path / "bm25")
    loaded = BM25Retriever(BM25Index.load(tmp_path / "bm25", chunks_fingerprint=source.fingerprint()), source)
    for q in ["scurvy bleeding gums", "blood pressure", "asthma"]:
        a = [(p.chunk.chunk_id, p.score) for p in retriever.search(q, 4)]
        b = [(p.chunk.chunk_id, p.score) for p in loaded.search(q, 4)]
        assert a == b


def test_load_refuses_other_settings_or_chunks(tmp_path, source):
    BM25Index.build(source.iter_chunks(), chunks_fingerprint=source.fingerprint()).save(tmp_path / "i")
    with pytest.raises(StaleIndexError, match=r"settings\.k1.*medground index build"):
        BM25Index.load(tmp_path / "i", BM25Settings(k1=0.9))
    with pytest.raises(StaleIndexError, match="chunks"):
        BM25Index.load(tmp_path / "i", chunks_fingerprint="something-else")
    # a query-time knob does not make the index stale
    BM25Index.load(tmp_path / "i", BM25Settings(n_threads=4), chunks_fingerprint=source.fingerprint())


def test_search_within_restricts_to_given_chunks(retriever):
    hits = retriever.search_within("blood", 5, ["beta", "scurvy"])
    assert [p.chunk.chunk_id for p in hits] == ["beta"]


def test_mask_for(retriever):
    mask = retriever.index.mask_for(["insulin", "unknown"])
    assert mask.tolist() == [0, 1, 0, 0, 0, 0]
    assert mask.dtype == np.float32


def test_registered_factory_builds_then_loads(source):
    with pytest.raises(IndexNotFoundError, match="medground index build"):
        make_bm25(chunks=source)
    r = make_bm25(chunks=source, build_if_missing=True)
    assert (index_dir("bm25") / "fingerprint.json").is_file()
    assert r.search("scurvy")[0].chunk.chunk_id == "scurvy"
    again = make_bm25(chunks=source)
    assert again.search("scurvy")[0].chunk.chunk_id == "scurvy"
    source.add([Chunk(chunk_id="new", doc_id="d", corpus="test", source_path="x", text="Gout and uric acid.",
                      title="Gout")])
    with pytest.raises(StaleIndexError):
        make_bm25(chunks=source)


def test_numba_backend_gives_the_same_results(source, retriever, tmp_path):
    pytest.importorskip("numba")
    fast = BM25Retriever(BM25Index.build(source.iter_chunks(), BM25Settings(backend="numba")), source)
    queries = ["what causes scurvy?", "blood", "zyxwv", "10 mg morphine"]
    for q in queries:
        a = [(p.chunk.chunk_id, round(p.score, 5)) for p in retriever.search(q, 4)]
        assert a == [(p.chunk.chunk_id, round(p.score, 5)) for p in fast.search(q, 4)]
    assert [p.chunk.chunk_id for p in fast.search_within("blood", 5, ["beta", "scurvy"])] == ["beta"]
    retriever.index.save(tmp_path / "i")  # an index built with numpy loads with numba
    loaded = BM25Index.load(tmp_path / "i", BM25Settings(backend="numba"))
    assert loaded.model.backend == "numba"
