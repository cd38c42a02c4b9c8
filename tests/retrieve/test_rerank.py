from __future__ import annotations

import math

import numpy as np
import pytest

from medground import registry
from medground.retrieve.base import Reranker
from medground.retrieve.rerank import (
    BiEncoderReranker,
    CrossEncoderReranker,
    RerankSettings,
    ScoringReranker,
    make_cross_encoder,
    minilm_path,
)
from medground.schema import Passage

from ._fakes import BagOfWordsEmbedder, chunk


def passages(*texts: str) -> list[Passage]:
    return [Passage(chunk(f"c{i}", t), score=10.0 - i, source="bm25", rank=i)
            for i, t in enumerate(texts, start=1)]


class LengthReranker(ScoringReranker):
    name = "length"

    def __init__(self, candidates: int = 150) -> None:
        super().__init__(candidates)
        self.seen: list[int] = []

    def score(self, query, ps):
        self.seen.append(len(ps))
        return np.array([len(p.chunk.text) for p in ps], dtype=float)


def test_pool_topk_stable_ties_and_first_stage_metadata():
    ps = passages("aa", "bbbb", "cc", "dddddd", "e")
    r = LengthReranker(candidates=4)
    out = r.rerank("q", ps, k=3)
    assert r.seen == [4]  # only the candidate pool is scored: "e" never is
    assert [p.chunk.chunk_id for p in out] == ["c4", "c2", "c1"]  # 6, 4, then 2 (c1 before c3: tie keeps order)
    assert [p.rank for p in out] == [1, 2, 3]
    assert out[0].source == "rerank:length" and out[0].score == 6.0
    assert out[0].metadata["first_stage"] == {"score": 6.0, "rank": 4, "source": "bm25"}
    assert r.rerank("q", [], k=3) == []


def test_bi_encoder_cosine_by_hand():
    emb = BagOfWordsEmbedder()
    ps = passages("platelets aspirin", "insulin glucose glucose", "insulin")
    out = BiEncoderReranker(emb).rerank("insulin", ps, k=3)
    # query vector = e(insulin). c3 = e(insulin) → 1.0; c2 = (e(insulin) + 2 e(glucose))/sqrt(5)
    # → 1/sqrt(5) if the two words hash to different buckets; c1 shares no word → 0.
    assert [p.chunk.chunk_id for p in out] == ["c3", "c2", "c1"]
    assert [p.score for p in out] == pytest.approx([1.0, 1 / math.sqrt(5), 0.0])


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> str:
    """A CrossEncoder built from the local MiniLM with a fresh 1-label head, saved to disk."""
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import CrossEncoder

    path = tmp_path_factory.mktemp("ce") / "tiny-ce"
    CrossEncoder(minilm_path(), num_labels=1, device="cpu").save(str(path))
    return str(path)


def test_cross_encoder_loads_scores_and_reorders(tiny_cross_encoder):
    from sentence_transformers import CrossEncoder

    texts = ["Insulin lowers blood glucose.", "Aspirin inhibits platelet aggregation.",
             "The femur is the longest bone.", "Metformin is first-line for type 2 diabetes."]
    query = "What lowers blood sugar?"
    ref = CrossEncoder(tiny_cross_encoder, device="cpu").predict([(query, t) for t in texts])
    ascending = [texts[i] for i in np.argsort(ref)]  # give the reranker the worst order
    rr = make_cross_encoder(RerankSettings(model=tiny_cross_encoder, batch_size=2))
    assert isinstance(rr, CrossEncoderReranker) and isinstance(rr, Reranker)
    out = rr.rerank(query, passages(*ascending), k=4)
    assert [p.chunk.text for p in out] == [texts[i] for i in np.argsort(-ref)]
    assert [p.score for p in out] == pytest.approx(sorted(ref.tolist(), reverse=True), abs=1e-5)
    assert out[0].metadata["first_stage"]["rank"] == 4


def test_cross_encoder_needs_a_model_and_settings_forbid_typos(monkeypatch):
    monkeypatch.setattr(registry, "_loaded", True)
    with pytest.raises(ValueError, match="needs a model"):
        registry.create("reranker", "cross-encoder")
    with pytest.raises(Exception, match="extra"):
        RerankSettings(nme="x")
    assert {"cross-encoder", "bi-encoder"} <= set(registry.names("reranker"))


def test_bi_encoder_caches_passage_vectors():
    class Counting(BagOfWordsEmbedder):
        passages_encoded = 0

        def encode_passages(self, texts):
            self.passages_encoded += len(texts)
            return super().encode_passages(texts)

    emb = Counting()
    rr = BiEncoderReranker(emb)
    ps = passages("insulin", "glucose")
    rr.rerank("insulin", ps, k=2)
    out = rr.rerank("glucose", ps + ps[:1], k=3)  # a repeated chunk id is embedded once, too
    assert emb.passages_encoded == 2
    assert out[0].chunk.chunk_id == "c2"
