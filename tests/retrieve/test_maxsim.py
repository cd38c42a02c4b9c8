from __future__ import annotations

import numpy as np
import pytest

from medground.retrieve.maxsim import MaxSimReranker, TokenEncoder, make_maxsim, maxsim
from medground.retrieve.rerank import minilm_path
from medground.schema import Passage

from ._fakes import chunk


def test_maxsim_by_hand():
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    d = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, -1.0]])
    # q1: max(0.6, 1.0, 0.0) = 1.0 ; q2: max(0.8, 0.0, -1.0) = 0.8 → 1.8
    assert maxsim(q, d) == pytest.approx(1.8)
    # a 3-token query: q3 = (0.6, 0.8): max(0.36+0.64, 0.6, -0.8) = 1.0 → 2.8
    assert maxsim(np.vstack([q, [[0.6, 0.8]]]), d) == pytest.approx(2.8)
    assert maxsim(np.zeros((0, 2)), d) == 0.0


class TableEncoder:
    """Maps each text to a fixed token matrix; counts how many texts it encoded."""

    def __init__(self, table):
        self.table = table
        self.encoded = 0

    def encode(self, texts):
        self.encoded += len(texts)
        return [np.asarray(self.table[t], dtype=float) for t in texts]


def test_maxsim_reranker_orders_and_caches():
    enc = TableEncoder({
        "q": [[1, 0], [0, 1]],
        "a": [[1, 0]],  # 1 + 0 = 1.0
        "b": [[0.6, 0.8], [1, 0]],  # 1 + 0.8 = 1.8
        "c": [[0, 1]],  # 0 + 1 = 1.0 (tie with a: incoming order)
    })
    ps = [Passage(chunk(t, t), 1.0, "bm25", rank=i) for i, t in enumerate("abc", start=1)]
    rr = MaxSimReranker(enc)
    out = rr.rerank("q", ps, k=3)
    assert [(p.chunk.chunk_id, p.score) for p in out] == [("b", 1.8), ("a", 1.0), ("c", 1.0)]
    assert out[0].source == "rerank:maxsim"
    assert enc.encoded == 4
    rr.rerank("q", ps, k=1)
    assert enc.encoded == 5  # passages came from the cache; only the query was encoded


@pytest.fixture(scope="session")
def minilm_tokens() -> TokenEncoder:
    pytest.importorskip("transformers")
    import torch

    torch.set_num_threads(1)
    return TokenEncoder(minilm_path(), batch_size=4)


def test_minilm_token_vectors_are_unit_and_unpadded(minilm_tokens):
    short, long = minilm_tokens.encode(["insulin", "insulin lowers the blood glucose level"])
    n_short = len(minilm_tokens.tokenizer("insulin")["input_ids"])
    assert short.shape == (n_short, 384)  # padding of the shorter text was removed
    assert long.shape[0] > short.shape[0]
    assert np.linalg.norm(long, axis=1) == pytest.approx(np.ones(long.shape[0]), abs=1e-5)


def test_minilm_maxsim_prefers_the_relevant_passage(minilm_tokens):
    rr = make_maxsim(encoder=minilm_tokens)
    texts = ["The femur is the longest bone in the body.",
             "Insulin is a hormone that lowers blood glucose."]
    ps = [Passage(chunk(f"c{i}", t), 1.0, "bm25", rank=i) for i, t in enumerate(texts)]
    out = rr.rerank("Which hormone lowers blood glucose?", ps, k=2)
    assert out[0].chunk.chunk_id == "c1"
    assert out[0].score > out[1].score
