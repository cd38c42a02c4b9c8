"""ReaderEvaluator on a hand-computed six-question table: accuracy with its Wilson interval,
macro-F1, prediction shares, parse failures, cost per question; the paired McNemar comparison."""

import pytest

from medground.eval.evaluators import ReaderEvaluator, compare, mcnemar_row
from medground.eval.metrics import macro_f1
from medground.eval.records import RunRecord
from medground.schema import Answer, Question

GOLD = ["A", "A", "A", "B", "B", "C"]
PRED = ["A", "A", "B", "B", None, "A"]  # right, right, wrong, right, parse failure, wrong
QIDS = [f"q{i}" for i in range(1, 7)]


def rows(ev: ReaderEvaluator) -> list[dict]:
    return [ev.row(q, g, p, seconds=float(i), prompt_tokens=100 * i)
            for i, (q, g, p) in enumerate(zip(QIDS, GOLD, PRED), 1)]


def test_summary_matches_the_hand_computed_table():
    ev = ReaderEvaluator(labels=["A", "B", "C"])
    s = ev.summarize(rows(ev))
    assert s["n"] == 6
    assert s["accuracy"] == {"n": 6, "k": 3, "rate": 0.5, "ci95": [0.1876, 0.8124]}
    # F1: A = 2·2/(2·2+1+1) = 0.6667, B = 2·1/(2·1+1+1) = 0.5, C = 0 (never right): mean 0.3889
    assert s["macro_f1"] == 0.3889
    assert s["pred_share"] == {"A": 0.5, "B": 0.333, "C": 0.0}
    assert s["parse_failures"] == 1 and s["errors"] == 0
    assert s["seconds_per_q"] == 3.5 and s["prompt_tokens_per_q"] == 350.0
    assert "macro_f1" not in ReaderEvaluator().summarize(rows(ev))  # no labels: no per-label figures


def test_macro_f1_counts_a_parse_failure_as_a_miss_and_checks_lengths():
    assert macro_f1(GOLD, PRED, ["A", "B", "C"]) == pytest.approx((2 / 3 + 1 / 2 + 0) / 3)
    assert macro_f1(["A", "B"], ["A", "B"], ["A", "B"]) == 1.0
    with pytest.raises(ValueError):
        macro_f1(["A"], ["A", "B"], ["A"])


def test_paired_comparison_against_a_baseline_arm():
    ev = ReaderEvaluator()
    this = rows(ev)
    baseline = {"q1": True, "q2": False, "q3": False, "q4": False, "q5": False, "q6": False}
    p = ev.paired(this, baseline)
    # discordant: this alone right on q2 and q4, the baseline alone on none: exact p = 2 · 0.5² = 0.5
    assert (p.n, p.only_this_right, p.only_baseline_right, p.pvalue) == (6, 2, 0, 0.5)
    assert p.delta_pts == 33.3  # 3/6 − 1/6
    assert p.row() == {"only_baseline_right": 0, "only_this_right": 2, "p_value": 0.5}
    # only the questions both arms answered are paired
    assert ev.paired(this, {"q1": False, "q2": False}).n == 2


def test_mcnemar_row_keeps_six_significant_figures():
    # 1 vs 11 discordant: p = 2 · 13 / 2¹² = 0.00634765625, stored as 0.00634766 (not 0.006348)
    baseline = [True] * 29 + [False] * 11
    this = [True] * 28 + [False] + [True] * 11
    assert mcnemar_row(baseline, this) == {"only_baseline_right": 1, "only_this_right": 11, "p_value": 0.00634766}
    assert compare(baseline, this).delta_pts == 25.0


def test_calling_the_evaluator_judges_pipeline_answers_and_stored_records():
    answers = {"q1": Answer("answered", choice="A", timings={"total": 2.0}, tokens={"prompt": 40}),
               "q2": Answer("parse_failure", timings={"total": 1.0}, tokens={"prompt": 20})}

    class Scripted:
        def answer(self, q):
            return answers[q.qid]

    qs = [Question("q1", "t", "?", {"A": "x", "B": "y"}, "A"), Question("q2", "t", "?", {"A": "x", "B": "y"}, "B")]
    result = ReaderEvaluator()(Scripted(), qs)
    assert [r["correct"] for r in result.rows] == [True, False]
    assert result.summary["parse_failures"] == 1 and result.summary["seconds_per_q"] == 1.5
    assert result.summary["prompt_tokens_per_q"] == 30.0
    # a stored record keeps its own ``correct`` (a re-scored record is judged as re-scored)
    rec = ReaderEvaluator.from_record(RunRecord(qid="q", dataset="d", gold="A", choice="B", correct=True,
                                                outcome="answered", seconds=0.5))
    assert rec == {"qid": "q", "gold": "A", "pred": "B", "correct": True, "outcome": "answered", "seconds": 0.5,
                   "prompt_tokens": 0}
