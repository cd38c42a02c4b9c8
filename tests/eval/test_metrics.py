import math

import numpy as np
import pytest
from scipy.stats import binomtest

from medground.eval.records import RunRecord
from medground.pipelines.amt import weighted_vote
from medground.schema import Vote
from medground.eval.metrics import (
    accuracy,
    balanced_accuracy,
    bootstrap_ci,
    cohen_kappa,
    fit_cut,
    mcnemar_test,
    outcome_rates,
    paired_bootstrap,
    parse_failure_rate,
    vote_curve,

    wilson_ci,
)


def _wilson(k, n, z=1.959963984540054):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_accuracy_and_wilson_against_formula():
    correct = [True] * 37 + [False] * 13
    assert accuracy(correct) == 0.74
    ci = wilson_ci(correct)
    lo, hi = _wilson(37, 50)
    assert ci.estimate == 0.74 and ci.low == pytest.approx(lo, abs=1e-12) and ci.high == pytest.approx(hi, abs=1e-12)
    # At 0 correct the Wilson interval still has width (the normal interval would be [0, 0]).
    ci0 = wilson_ci([False] * 20)
    assert ci0.low == pytest.approx(0.0, abs=1e-12) and ci0.high == pytest.approx(_wilson(0, 20)[1])
    with pytest.raises(ValueError):
        accuracy([])


def test_bootstrap_ci_is_seeded_and_close_to_wilson():
    correct = [True] * 60 + [False] * 40
    a, b = bootstrap_ci(correct, seed=1), bootstrap_ci(correct, seed=1)
    assert a == b and a.low < 0.6 < a.high
    w = wilson_ci(correct)
    assert abs(a.low - w.low) < 0.03 and abs(a.high - w.high) < 0.03


def test_exact_mcnemar_equals_binomial_test_on_discordant_pairs():
    # A right/B wrong = 9, A wrong/B right = 2, both right = 30, both wrong = 9
    a = [True] * 30 + [True] * 9 + [False] * 2 + [False] * 9
    b = [True] * 30 + [False] * 9 + [True] * 2 + [False] * 9
    m = mcnemar_test(a, b)
    assert m.table == ((30, 9), (2, 9)) and m.n == 50
    assert m.a_only == 9 and m.b_only == 2
    assert m.statistic == 2
    assert m.pvalue == pytest.approx(binomtest(2, 11, 0.5).pvalue, rel=1e-12)
    assert mcnemar_test([True, False], [True, False]).pvalue == 1.0  # no discordant pairs
    with pytest.raises(ValueError, match="same questions"):
        mcnemar_test([True], [True, False])


def test_paired_bootstrap_delta():
    a = [True] * 50 + [False] * 50
    b = [True] * 50 + [True] * 20 + [False] * 30  # B fixes 20 of A's errors, breaks none
    d = paired_bootstrap(a, b, seed=0)
    assert d.delta == pytest.approx(0.2) and d.n == 100
    assert 0.1 < d.low < 0.2 < d.high < 0.3
    # Every resample differs by a multiple of 1/100 and cannot be negative: only B-fixes exist.
    assert d.low >= 0
    again = paired_bootstrap(a, b, seed=0)  # the same seed, the same interval (to float rounding:
    # the resample means go through BLAS, whose summation order may follow the thread count)
    assert (again.delta, again.n) == (d.delta, d.n)
    assert again.low == pytest.approx(d.low, abs=1e-9) and again.high == pytest.approx(d.high, abs=1e-9)


def test_outcome_rates_count_parse_failures_separately():
    outcomes = ["answered"] * 7 + ["parse_failure"] * 2 + ["error"]
    assert outcome_rates(outcomes) == {"answered": 0.7, "error": 0.1, "parse_failure": 0.2}
    assert parse_failure_rate(outcomes) == 0.2
    assert parse_failure_rate([]) == 0.0


def test_weighted_vote_and_curve():
    votes = [Vote("B", 0.9), Vote("A", 0.6), Vote(None, 1.0), Vote("A", 0.5)]
    assert weighted_vote(votes, 1) == "B"
    assert weighted_vote(votes, 2) == "B"  # 0.9 vs 0.6
    assert weighted_vote(votes, 3) == "B"  # the unparsed vote is ignored
    assert weighted_vote(votes, 4) == "A"  # 1.1 vs 0.9
    assert weighted_vote([Vote("C", 0.5), Vote("D", 0.5)]) == "C"  # tie
    assert weighted_vote([Vote(None)]) is None

    def rec(gold, votes):
        return RunRecord(qid="q", dataset="d", gold=gold, choice=None, correct=False, outcome="answered", votes=votes)

    recs = [rec("A", votes), rec("B", votes[:2]), rec("A", None)]
    assert vote_curve(recs) == [(1, 0.5), (2, 0.5), (3, 0.5), (4, 1.0)]
    assert vote_curve(recs, max_k=2) == [(1, 0.5), (2, 0.5)]
    assert np.isclose(vote_curve([rec("A", [Vote("A")])])[0][1], 1.0)


def test_recalibrate_subtracts_each_letters_mean_log_probability():
    from medground.eval.metrics import recalibrate

    # A model that loves B: raw argmax is B everywhere; after subtracting the per-letter means
    # (A: -2, B: -0.5) the second record flips to A; raw argmax said B everywhere.
    records = [
        {"qid": "1", "gold": "B", "letter_logprobs": {"A": -2.0, "B": -0.4}},
        {"qid": "2", "gold": "A", "letter_logprobs": {"A": -1.0, "B": -0.6}},
        {"qid": "3", "gold": "B", "letter_logprobs": {"A": -3.0, "B": -0.5}},
        {"qid": "4", "gold": "A"},  # no log-probabilities (a parse failure): stays wrong
    ]
    out = recalibrate(records)
    assert [r["choice"] for r in out] == ["B", "A", "B", None]
    assert [r["correct"] for r in out] == [True, True, True, False]
    assert recalibrate([{"qid": "x", "gold": "A"}]) == []
    # a run's typed records are re-scored the same way, and stay records
    typed = [RunRecord(qid=r["qid"], dataset="d", gold=r["gold"], choice="B", correct=r["gold"] == "B",
                       outcome="answered", letter_logprobs=r.get("letter_logprobs")) for r in records]
    again = recalibrate(typed)
    assert [(r.choice, r.correct) for r in again] == [("B", True), ("A", True), ("B", True), (None, False)]
    assert all(isinstance(r, RunRecord) for r in again) and typed[1].choice == "B"  # the input is not changed


def test_balanced_accuracy_and_the_cut_fitted_on_it():
    labels = [True, True, False, False]
    assert balanced_accuracy(labels, [True, True, True, False]) == 0.75  # (2/2 + 1/2) / 2
    assert balanced_accuracy([True, True], [True, False]) == 0.5  # one class present: its rate alone
    # cuts are midpoints of 0.2, 0.6, 0.9: 0.4 → (1 + 1/2)/2, 0.75 → (1/2 + 1)/2; the tie goes low
    assert fit_cut(labels, [0.9, 0.6, 0.6, 0.2]) == pytest.approx(0.4)
    assert fit_cut(labels, [0.9, 0.8, 0.3, 0.2]) == pytest.approx(0.55)  # separates perfectly
    assert fit_cut([True, False], [0.5, 0.5]) == 0.5  # one distinct score: the score itself


def test_cohen_kappa_by_hand():
    a = [True, True, False, False]
    b = [True, False, False, False]
    # observed 3/4; chance 1/2 * 1/4 + 1/2 * 3/4 = 1/2 → (0.75 - 0.5) / 0.5
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    assert cohen_kappa(a, a) == 1.0 and cohen_kappa(a, [not x for x in a]) == -1.0
    assert cohen_kappa([True, True], [True, True]) is None  # chance agreement is total: undefined
    with pytest.raises(ValueError):
        cohen_kappa([True], [True, False])
