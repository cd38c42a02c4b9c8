from __future__ import annotations

import pytest

from medground.retrieve.base import EmptyQueryError, Retriever
from medground.retrieve.fusion import NormFuser, RRFFuser
from medground.retrieve.multiquery import (
    MultiQueryRetriever,
    WeightedRetriever,
    as_queries,
    primary_query,
)
from medground.schema import Query

from ._fakes import KeywordRetriever, chunk

CHUNKS = [
    chunk("c1", "insulin lowers blood glucose"),
    chunk("c2", "glucagon raises blood glucose"),
    chunk("c3", "metformin treats type 2 diabetes"),
    chunk("c4", "aspirin inhibits platelets"),
]


def test_as_queries_kinds_and_dedupe():
    qs = as_queries(["  insulin ", Query("metformin", "keywords"), "insulin", "glucagon"])
    assert [(q.text, q.kind) for q in qs] == [
        ("insulin", "original"), ("metformin", "keywords"), ("glucagon", "rewrite")]
    assert primary_query([Query("a", "rewrite"), Query("b", "original")]).text == "b"
    with pytest.raises(EmptyQueryError):
        as_queries(["ok", "   "])


def test_multi_query_rrf_by_hand_and_provenance():
    kw = KeywordRetriever(CHUNKS)
    mq = MultiQueryRetriever([kw], RRFFuser(k=1), top=10)
    # q1 "blood glucose": c1 (2), c2 (2) → ranks 1, 2.  q2 "diabetes insulin": c1 (1), c3 (1) → ranks 1, 2
    out = mq.retrieve([Query("blood glucose"), Query("diabetes insulin", "expansion")])
    got = {p.chunk.chunk_id: p.score for p in out}
    assert got == pytest.approx({"c1": 1 / 2 + 1 / 2, "c2": 1 / 3, "c3": 1 / 3})
    assert [p.chunk.chunk_id for p in out] == ["c1", "c2", "c3"]  # c2/c3 tie: both best rank 2, c2 list 0
    assert out[0].metadata["queries"] == ["blood glucose", "diabetes insulin"]
    assert out[2].metadata["queries"] == ["diabetes insulin"]
    assert out[2].metadata["hits"][0]["kind"] == "expansion"
    assert kw.calls == ["blood glucose", "diabetes insulin"]


def test_retriever_weights_times_kind_weights():
    a = KeywordRetriever(CHUNKS, name="a")
    b = KeywordRetriever(list(reversed(CHUNKS)), name="b")
    mq = MultiQueryRetriever([WeightedRetriever(a, 1.0), WeightedRetriever(b, 3.0)], NormFuser(),
                             kind_weights={"keywords": 0.5})
    # one query "glucose": a → c1, c2 (both score 1 → normalized 1.0 each); b → c2, c1 (same)
    # c1 = 1*1.0 + 3*1.0 = 4 ; c2 = 4 ; tie → c1 has rank 1 in list 0
    out = mq.retrieve([Query("glucose", "keywords")])
    assert [(p.chunk.chunk_id, p.score) for p in out] == [("c1", 2.0), ("c2", 2.0)]  # x0.5 kind weight
    assert mq.name == "norm(a+b)"


def test_single_list_passthrough_and_error_without_fuser():
    kw = KeywordRetriever(CHUNKS)
    mq = MultiQueryRetriever([kw], None, top=5)
    out = mq.retrieve("platelets aspirin")
    assert [(p.chunk.chunk_id, p.score, p.rank) for p in out] == [("c4", 2.0, 1)]
    assert out[0].metadata["queries"] == ["platelets aspirin"]
    with pytest.raises(ValueError, match="need a fusion method"):
        mq.retrieve(["a", "b"])


def test_is_a_retriever():
    mq = MultiQueryRetriever([KeywordRetriever(CHUNKS)], RRFFuser())
    assert isinstance(mq, Retriever)
    assert [p.chunk.chunk_id for p in mq.search("aspirin", k=3)] == ["c4"]
    assert len(mq.batch_search(["aspirin", "insulin"], k=1)) == 2
