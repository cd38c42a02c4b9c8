from __future__ import annotations

import pytest

from medground import registry
from medground.retrieve.base import Fuser
from medground.retrieve.fusion import (
    FusionSettings,
    NormFuser,
    RRFFuser,
    make_fuser,
    min_max,
)

from ._fakes import plist

# Two lists over four documents; d3 is only in A, d4 only in B.
A = plist("bm25", ("d1", 10.0), ("d2", 6.0), ("d3", 2.0))
B = plist("dense", ("d2", 0.9), ("d4", 0.5), ("d1", 0.1))


def ids(ps):
    return [p.chunk.chunk_id for p in ps]


def scores(ps):
    return {p.chunk.chunk_id: p.score for p in ps}


def test_min_max_by_hand():
    assert min_max([10.0, 6.0, 2.0]) == [1.0, 0.5, 0.0]
    assert min_max([3.0, 3.0]) == [1.0, 1.0]  # all equal → all the best of their list
    assert min_max([]) == []


def test_norm_equal_weights_by_hand():
    # A normalized: d1 (10-2)/8=1.0, d2 (6-2)/8=0.5, d3 0.0
    # B normalized: d2 (0.9-0.1)/0.8=1.0, d4 (0.5-0.1)/0.8=0.5, d1 0.0
    # missing → 0: d3 = 0.0 + 0 ; d4 = 0 + 0.5
    out = NormFuser().fuse([A, B], k=10)
    assert ids(out) == ["d2", "d1", "d4", "d3"]
    assert scores(out) == pytest.approx({"d2": 1.5, "d1": 1.0, "d4": 0.5, "d3": 0.0})
    assert [p.rank for p in out] == [1, 2, 3, 4]
    assert all(p.source == "norm" for p in out)


def test_norm_weights_and_tie_break():
    # weights (2, 1): d1 = 2*1.0 + 0 = 2.0; d2 = 2*0.5 + 1*1.0 = 2.0 (tie);
    # tie → best rank: both rank 1, d1's is in list 0, d2's in list 1 → d1 first.
    out = NormFuser(weights=[2.0, 1.0]).fuse([A, B], k=3)
    assert ids(out) == ["d1", "d2", "d4"]
    assert scores(out) == pytest.approx({"d1": 2.0, "d2": 2.0, "d4": 0.5})


def test_norm_single_item_list_counts_as_one():
    out = NormFuser().fuse([plist("x", ("d9", 0.2)), A], k=10)
    assert scores(out)["d9"] == pytest.approx(1.0)
    assert scores(out)["d1"] == pytest.approx(1.0)
    # tie at 1.0: both are rank 1 somewhere; d9's rank 1 is in list 0 → first
    assert ids(out)[:2] == ["d9", "d1"]


def test_rrf_by_hand_default_k():
    out = RRFFuser().fuse([A, B], k=10)
    expected = {
        "d1": 1 / 61 + 1 / 63,
        "d2": 1 / 62 + 1 / 61,
        "d3": 1 / 63,
        "d4": 1 / 62,
    }
    assert scores(out) == pytest.approx(expected)
    assert ids(out) == ["d2", "d1", "d4", "d3"]


def test_rrf_weights_and_k():
    # k=1, weights (1, 0.5): d1 = 1/2 + 0.5/4 = 0.625; d2 = 1/3 + 0.5/2 = 0.58333;
    # d3 = 1/4 = 0.25; d4 = 0.5/3 = 0.16667
    out = RRFFuser(k=1, weights=[1.0, 0.5]).fuse([A, B], k=10)
    assert ids(out) == ["d1", "d2", "d3", "d4"]
    assert scores(out) == pytest.approx({"d1": 0.625, "d2": 7 / 12, "d3": 0.25, "d4": 1 / 6})


def test_rrf_uses_list_position_not_rank_field_and_dedupes_within_list():
    dup = plist("x", ("d1", 5.0), ("d1", 4.0), ("d2", 3.0))
    out = RRFFuser(k=1).fuse([dup], k=10)
    # d1 counted once at position 1 (1/2); d2 is at position 3 (1/4)
    assert scores(out) == pytest.approx({"d1": 0.5, "d2": 0.25})


def test_hits_record_provenance_and_labels():
    out = RRFFuser().fuse([A, B], k=10, labels=[{"query": "q1"}, {"query": "q2"}])
    d1 = next(p for p in out if p.chunk.chunk_id == "d1")
    assert d1.metadata["hits"] == [
        {"list": 0, "source": "bm25", "rank": 1, "score": 10.0, "query": "q1"},
        {"list": 1, "source": "dense", "rank": 3, "score": 0.1, "query": "q2"},
    ]


def test_top_k_and_empty_lists():
    assert ids(RRFFuser().fuse([A, B], k=2)) == ["d2", "d1"]
    assert RRFFuser().fuse([[], []], k=5) == []
    assert ids(NormFuser().fuse([[], A], k=5)) == ["d1", "d2", "d3"]


def test_bad_weights_and_k():
    with pytest.raises(ValueError, match="2 ranked lists but 1 weights"):
        NormFuser(weights=[1.0]).fuse([A, B], k=3)
    with pytest.raises(ValueError, match="k must be > 0"):
        RRFFuser(k=0)


def test_registry_and_protocol(monkeypatch):
    monkeypatch.setattr(registry, "_loaded", True)  # only this module's registrations matter here
    assert {"norm", "rrf"} <= set(registry.names("fuser"))
    f = registry.create("fuser", "rrf", k=10)
    assert isinstance(f, Fuser) and f.k == 10
    assert isinstance(make_fuser(FusionSettings(method="norm", weights=[1, 2])), NormFuser)
    with pytest.raises(Exception, match="extra"):
        FusionSettings(methd="rrf")
