import itertools

import numpy as np
import pytest

from medground.index.fingerprint import ChunkList, StaleIndexError
from medground.index.splade import (
    SpladeEncoder,
    SpladeIndex,
    SpladeRetriever,
    SpladeSettings,
    make_splade,
)
from medground.retrieve.base import EmptyQueryError
from medground.schema import Chunk

TEXTS = {
    "scurvy": "Vitamin C deficiency causes scurvy: bleeding gums and poor wound healing.",
    "insulin": "Insulin lowers blood glucose; type 1 diabetes needs insulin replacement.",
    "beta": "Beta-blockers such as metoprolol lower heart rate and blood pressure.",
    "asthma": "Albuterol is a short-acting bronchodilator used in acute asthma attacks.",
    "iron": "Iron deficiency anemia presents with fatigue and microcytic red cells.",
}


@pytest.fixture(scope="session")
def encoder():
    return SpladeEncoder(SpladeSettings(threads=1))


@pytest.fixture
def source():
    return ChunkList(Chunk(chunk_id=k, doc_id=k, corpus="t", source_path="p", text=v, title="")
                     for k, v in TEXTS.items())


@pytest.fixture
def retriever(source, encoder):
    return SpladeRetriever(SpladeIndex.build(source.iter_chunks(), encoder, chunks_fingerprint=source.fingerprint()),
                           encoder, source)


def test_encoding_is_sparse_nonnegative(encoder):
    m = encoder.encode(["Vitamin C deficiency causes scurvy.", "asthma"])
    assert m.shape == (2, encoder.vocab_size)
    assert (m.data > 0).all()
    assert 0 < m[1].nnz < m.shape[1] // 10  # sparse, not dense
    # padding never contributes: the short text alone equals the short text in a batch
    alone = encoder.encode(["asthma"])
    np.testing.assert_allclose(alone.toarray(), m[1].toarray(), atol=1e-4)


def test_query_expansion_includes_related_terms(encoder):
    terms = [t for t, _ in encoder.terms(encoder.encode(["what causes scurvy"]), 20)]
    assert "cause" in terms or "causes" in terms


@pytest.mark.parametrize("query,expected", [
    ("what causes scurvy", "scurvy"),
    ("high blood sugar treatment", "insulin"),
    ("bronchodilator for asthma", "asthma"),
])
def test_relevant_first(retriever, query, expected):
    hits = retriever.search(query, 3)
    assert hits[0].chunk.chunk_id == expected and hits[0].source == "splade"
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))


def test_scores_equal_sparse_dot_product(retriever, encoder):
    q = encoder.encode(["anemia fatigue"])
    expected = (retriever.index.matrix @ q.T).toarray().ravel()
    np.testing.assert_allclose(retriever.index.scores(q), expected, rtol=1e-5)


def test_empty_query(retriever):
    with pytest.raises(EmptyQueryError):
        retriever.search(" ")


def test_save_load_identical_and_stale(tmp_path, retriever, encoder, source):
    retriever.index.save(tmp_path / "s")
    loaded = SpladeRetriever(SpladeIndex.load(tmp_path / "s", chunks_fingerprint=source.fingerprint()), encoder, source)
    for q in ["scurvy", "heart rate", "red cells"]:
        assert [(p.chunk.chunk_id, p.score) for p in retriever.search(q, 3)] == \
               [(p.chunk.chunk_id, p.score) for p in loaded.search(q, 3)]
    with pytest.raises(StaleIndexError, match="settings.max_length"):
        SpladeIndex.load(tmp_path / "s", SpladeSettings(max_length=128))


def test_doc_top_terms_prunes(source, encoder):
    pruned_enc = SpladeEncoder(SpladeSettings(doc_top_terms=5))
    index = SpladeIndex.build(source.iter_chunks(), pruned_enc)
    assert np.diff(index.matrix.tocsr().indptr).max() == 5


def test_search_within(retriever):
    hits = retriever.search_within("scurvy", 5, ["iron", "beta"])
    assert {p.chunk.chunk_id for p in hits} <= {"iron", "beta"}


def test_factory(source):
    r = make_splade(chunks=source, build_if_missing=True)
    assert r.search("scurvy")[0].chunk.chunk_id == "scurvy"


def _reference_encode(encoder, texts):
    """The definition, on one text at a time: max over tokens of log1p(relu(MLM logits))."""
    import torch

    rows = []
    for t in texts:
        enc = encoder.tokenizer([t], truncation=True, max_length=encoder.settings.max_length, return_tensors="pt")
        with torch.inference_mode():
            rows.append(torch.log1p(torch.relu(encoder.model(**enc).logits)).amax(dim=1)[0].numpy())
    return np.vstack(rows)


MIXED = ["asthma", "Vitamin C deficiency causes scurvy: bleeding gums and poor wound healing. " * 3,
         "Insulin lowers blood glucose.", "Beta-blockers lower heart rate and blood pressure. " * 6, "iron"]


def test_length_sorted_batches_keep_order_and_values():
    enc = SpladeEncoder(SpladeSettings(threads=1, batch_size=2))
    got = enc.encode(MIXED).toarray()
    np.testing.assert_allclose(got, _reference_encode(enc, MIXED), atol=1e-4)


def test_other_mlm_architectures_take_the_padded_path(encoder, monkeypatch):
    import torch

    fast = encoder.encode(MIXED).toarray()

    class Wrapped(torch.nn.Module):  # an MLM without .bert / .cls
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, **kw):
            return self.inner(**kw)

    monkeypatch.setattr(encoder, "model", Wrapped(encoder.model))
    assert not hasattr(encoder.model, "bert")
    np.testing.assert_allclose(encoder.encode(MIXED).toarray(), fast, atol=1e-4)


def test_build_keeps_chunk_order_across_length_blocks():
    enc = SpladeEncoder(SpladeSettings(threads=1, batch_size=1))  # blocks of 8 chunks
    chunks = [Chunk(chunk_id=f"c{i}", doc_id="d", corpus="t", source_path="p", title="",
                    text=" ".join(["scurvy", "asthma", "insulin", "iron"][i % 4] for _ in range(1 + (i * 7) % 13)))
              for i in range(20)]
    index = SpladeIndex.build(chunks, enc)
    assert index.chunk_ids == [c.chunk_id for c in chunks]
    np.testing.assert_allclose(index.matrix.toarray(), enc.encode([c.text for c in chunks]).toarray(), atol=1e-5)
