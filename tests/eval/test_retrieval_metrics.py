import math

import pytest

from medground.eval.retrieval_metrics import (
    contains_answer,
    drug_attribute_hits,
    hit_at_k,
    hit_rate_at_k,
    mean_over,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)

RANKED = ["d3", "d1", "d7", "d2", "d9"]


def test_recall_and_mrr():
    assert recall_at_k(RANKED, {"d1", "d2", "d8"}, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, {"d1", "d2", "d8"}, 5) == pytest.approx(2 / 3)
    assert recall_at_k(RANKED, set(), 5) == 0.0
    assert reciprocal_rank(RANKED, {"d7", "d2"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(RANKED, {"d2"}, k=3) == 0.0
    assert mean_over(reciprocal_rank, [RANKED, RANKED], [{"d3"}, {"d1"}]) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        recall_at_k(RANKED, {"d1"}, 0)


def test_ndcg_binary_and_graded_by_hand():
    # relevant d1 (rank 2) and d2 (rank 4): DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3)
    assert ndcg_at_k(RANKED, {"d1", "d2"}, 5) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(RANKED, {"d1", "d2"}, 3) == pytest.approx((1 / math.log2(3)) / idcg)
    graded = {"d3": 1.0, "d2": 3.0}
    assert ndcg_at_k(RANKED, graded, 5) == pytest.approx((1 + 3 / math.log2(5)) / (3 + 1 / math.log2(3)))
    assert ndcg_at_k(["d1", "d1"], {"d1", "d2"}, 2) == pytest.approx(1 / idcg)  # duplicates gain once
    assert ndcg_at_k(RANKED, ["d3"], 1) == 1.0


def test_strict_hit_rate_needs_every_gold_item():
    assert hit_at_k(RANKED, {"d3", "d1"}, 2)
    assert not hit_at_k(RANKED, {"d3", "d2"}, 2)  # one of two gold items is not a hit
    assert hit_at_k(RANKED, {"d3", "d2"}, 4)
    assert hit_rate_at_k([RANKED, RANKED], [{"d3"}, {"d3", "d2"}], 3) == 0.5
    with pytest.raises(ValueError):
        hit_at_k(RANKED, set(), 3)


def test_drug_and_attribute_level():
    ranked = [("ibuprofen", "dose"), ("aspirin", "adverse"), ("ibuprofen", "adverse"), ("aspirin", "dose")]
    gold = [("ibuprofen", "adverse"), ("aspirin", "adverse")]
    assert drug_attribute_hits(ranked, gold, 2) == {"drug": True, "attribute": False}
    assert drug_attribute_hits(ranked, gold, 3) == {"drug": True, "attribute": True}
    assert drug_attribute_hits(ranked, gold, 1) == {"drug": False, "attribute": False}


def test_whole_word_answer_check():
    assert contains_answer("Low K+ (hypokalemia) raises digoxin toxicity.", "Hypokalemia")
    assert not contains_answer("hyperkalemia and hypokalemias", "hypokalemia")
    assert not contains_answer("anything", "  -- ")


# Parity with a table computed by hand (log2(3) = 1.58496, log2(5) = 2.32193):
# ranked d3 d1 d7 d2 d5, relevant {d1, d2, d9}
#   recall@1 0/3, @2 1/3, @5 2/3; reciprocal rank 1/2
#   nDCG@2  = (1/log2 3) / (1 + 1/log2 3)                         = 0.63093 / 1.63093 = 0.38685
#   nDCG@5  = (1/log2 3 + 1/log2 5) / (1 + 1/log2 3 + 1/log2 4)     = 1.06161 / 2.13093 = 0.49819
#   graded {d1: 3, d2: 1, d9: 2}, nDCG@5 = (3/log2 3 + 1/log2 5) / (3 + 2/log2 3 + 1/log2 4)
#                                                                  = 2.32347 / 4.76186 = 0.48794
HAND_RANKED = ["d3", "d1", "d7", "d2", "d5"]
HAND_RELEVANT = {"d1", "d2", "d9"}


@pytest.mark.parametrize("metric, args, expected", [
    ("recall_at_k", (HAND_RELEVANT, 1), 0.0),
    ("recall_at_k", (HAND_RELEVANT, 2), 1 / 3),
    ("recall_at_k", (HAND_RELEVANT, 5), 2 / 3),
    ("reciprocal_rank", (HAND_RELEVANT,), 0.5),
    ("ndcg_at_k", (HAND_RELEVANT, 2), 0.38685),
    ("ndcg_at_k", (HAND_RELEVANT, 5), 0.49819),
    ("ndcg_at_k", ({"d1": 3.0, "d2": 1.0, "d9": 2.0}, 5), 0.48794),
])
def test_metrics_match_the_hand_computed_table(metric, args, expected):
    from medground.eval import retrieval_metrics as m

    assert getattr(m, metric)(HAND_RANKED, *args) == pytest.approx(expected, abs=5e-5)
