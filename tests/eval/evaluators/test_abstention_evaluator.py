"""Abstention on a hand-computed fixture: wrong and right abstention as rates, the support gate at a
threshold, the threshold fit (ties to the lower threshold, exactly), and the evaluator on answers."""

from medground.eval.evaluators import (
    AbstentionEvaluator,
    AbstentionItem,
    fit_threshold,
    gate_rates,
    scored_rows,
)
from medground.schema import Answer, Question

# Each question read with its gold record (answerable) and a wrong record (unanswerable).
PAIRS = [{"gold_support": 0.9, "wrong_support": 0.2, "gold_supported": True},
         {"gold_support": 0.6, "wrong_support": 0.7, "gold_supported": False},
         {"gold_support": None, "wrong_support": 0.1, "gold_supported": False},  # no score: counts as 0
         {"gold_support": 0.4, "wrong_support": 0.4, "gold_supported": True}]


def rows(pairs):
    return (scored_rows(pairs, "gold_support", unanswerable=False, supported="gold_supported")
            + scored_rows(pairs, "wrong_support", unanswerable=True))


def test_the_gate_at_a_threshold():
    g = gate_rates(rows(PAIRS), 0.4)
    # answerable scores 0.9, 0.6, 0, 0.4: only the unscored one falls below 0.4
    assert g["wrong_abstention"] == {"n": 4, "k": 1, "rate": 0.25, "ci95": [0.0456, 0.6994]}
    # wrong-record scores 0.2, 0.7, 0.1, 0.4: two below 0.4 (0.4 itself is answered)
    assert g["right_abstention"] == {"n": 4, "k": 2, "rate": 0.5, "ci95": [0.15, 0.85]}
    # answers let through on answerable rows: 0.9 (supported), 0.6 (not), 0.4 (supported)
    assert g["support_rate"] == {"n": 3, "k": 2, "rate": 0.6667, "ci95": [0.2077, 0.9385]}
    assert gate_rates(rows(PAIRS), 0.0)["wrong_abstention"]["k"] == 0  # nothing is below 0


def test_fit_maximises_right_plus_one_minus_wrong_and_breaks_ties_low():
    # right − wrong by threshold: 0 → 0, 0.1 → −1/4, 0.2 → 0, 0.4 → 1/4, 0.6 → 1/4, 0.7 → 0, 0.9 → 1/4
    assert fit_threshold(rows(PAIRS)) == 0.4
    # an exact tie that four-decimal rates would break upwards: at 0.3 right 1/3, wrong 0; at 0.8
    # right 2/3, wrong 1/3 (0.6667 − 0.3333 = 0.3334 > 0.3333 when rounded); the lower one wins
    tie = [{"gold_support": a, "wrong_support": w, "gold_supported": True} for a, w in ((0.3, 0.1), (0.8, 0.5), (0.8, 0.9))]
    assert fit_threshold(rows(tie)) == 0.3


def test_the_evaluator_counts_abstentions_on_both_sides():
    q = [Question(f"q{i}", "t", "?") for i in range(4)]
    items = [AbstentionItem(q[0], False), AbstentionItem(q[1], False), AbstentionItem(q[2], True),
             AbstentionItem(q[3], True)]
    answers = {"q0": Answer("answered", metadata={"support": 0.8}), "q1": Answer("insufficient_evidence"),
               "q2": Answer("insufficient_evidence", metadata={"support": 0.1}),
               "q3": Answer("answered", metadata={"support": 0.9})}

    class Scripted:
        def answer(self, question):
            return answers[question.qid]

    ev = AbstentionEvaluator()
    result = ev(Scripted(), items)
    s = result.summary
    assert (s["n"], s["answerable"], s["unanswerable"]) == (4, 2, 2)
    assert s["wrong_abstention"]["k"] == 1 and s["right_abstention"]["k"] == 1
    assert [r["score"] for r in result.rows] == [0.8, None, 0.1, 0.9]
    # the rows carry the scores, so a gate threshold can be fitted on them afterwards
    assert ev.fit_threshold(result.rows) == 0.0 and ev.at_threshold(result.rows, 0.5)["right_abstention"]["k"] == 1
