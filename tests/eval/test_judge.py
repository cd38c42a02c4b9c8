"""The pairwise LLM judge: both orders, ties, failures, Elo from the verdicts."""

from __future__ import annotations

import math

from medground.eval.judge import combine, ratings, run_tournament
from medground.llm.base import ChatResult, TokenLogprob


class _Judge:
    """Prefers the answer that mentions ``good``; ``biased`` always says "A"; ``mute`` says nothing."""

    name = "judge"

    def __init__(self, good="pyridoxine", biased=False, mute=False):
        self.good, self.biased, self.mute, self.calls = good, biased, mute, 0

    def chat(self, messages, **kw):
        self.calls += 1
        user = messages[-1]["content"]
        a = user.split("Answer A:")[1].split("Answer B:")[0]
        b = user.split("Answer B:")[1]
        if self.mute:
            top = [("The", -0.1), ("I", -2.0)]
        else:
            letter = "A" if self.biased else ("A" if self.good in a and self.good not in b
                                              else "B" if self.good in b and self.good not in a else "C")
            top = [(letter, -0.05)] + [(x, -4.0) for x in "ABC" if x != letter]
        return ChatResult(text=top[0][0], prompt_tokens=10, completion_tokens=1,
                          logprobs=[TokenLogprob(top[0][0], top[0][1], top)])


Q = {"q1": "How is isoniazid neuropathy prevented?", "q2": "What prevents it?"}
ANSWERS = {"good": {"q1": "Give pyridoxine.", "q2": "pyridoxine daily"},
           "bad": {"q1": "Give vitamin C.", "q2": "rest"},
           "also-bad": {"q1": "Stop eating.", "q2": "nothing"}}


def test_combine_maps_both_orders_back_to_the_systems():
    assert combine("A", "B") == "a" and combine("B", "A") == "b"
    assert combine("C", "C") == "tie" and combine("A", "A") == "tie"  # position bias → tie
    assert combine(None, "A") is None


def test_a_consistent_judge_ranks_the_better_system_first():
    judge = _Judge()
    t = run_tournament(judge, Q, ANSWERS, seed=0)
    assert len(t.verdicts) == 6 and judge.calls == 12  # 3 pairs × 2 questions × 2 orders
    rows = ratings(t, n_boot=200)
    assert rows[0]["system"] == "good" and rows[0]["wins"] == 4 and rows[0]["losses"] == 0
    assert t.failures == 0 and t.position_disagreements() == 0
    assert run_tournament(_Judge(), Q, ANSWERS, seed=0).verdicts == t.verdicts  # seeded order


def test_a_position_biased_judge_yields_ties_and_an_unreadable_one_failures():
    t = run_tournament(_Judge(biased=True), Q, ANSWERS)
    assert {v.winner for v in t.verdicts} == {"tie"} and t.position_disagreements() == 6
    assert all(math.isclose(r["elo"], 1000.0) for r in ratings(t, n_boot=50))
    mute = run_tournament(_Judge(mute=True), Q, ANSWERS)
    assert mute.failures == 6 and mute.judgments == [] and ratings(mute) == []
