from __future__ import annotations

import pytest

from medground.pipelines.amt import AmtPipeline, AmtSettings, vote_totals
from medground.pipelines.base import ReaderSettings
from medground.pipelines.factory import build_pipeline
from medground.retrieve.engine import RetrievalEngine
from medground.schema import ChoiceDetail, Vote
from .test_scripted import ScriptedLLM, confidence_json


def test_vote_totals_hand_computed():
    votes = [Vote("B", 7), Vote("A", 9), Vote("B", 4), Vote(None, 0)]
    # B: 7 + 4 = 11, A: 9 -> B wins although A has the single most confident vote.
    assert vote_totals(votes) == {"B": 11.0, "A": 9.0}


def _engine(chunks, k=4):
    return RetrievalEngine({"retrievers": ["bm25"], "fusion": None, "top": 8, "final_k": k,
                            "budget_tokens": 2000}, chunks=chunks, build_if_missing=True)


def test_amt_vote_matches_hand_computation(tiny_chunks, mcq):
    # Per passage the reader is scripted by what the passage is about.
    def reply(user: str, kwargs: dict) -> str:
        if "Passage (" in user:
            if "Isoniazid" in user:
                return confidence_json({"A": 1, "B": 9, "C": 0, "D": 0}, "B")
            if "Vitamin C deficiency" in user:
                return confidence_json({"A": 6, "B": 2, "C": 0, "D": 0}, "A")
            if "Warfarin" in user:
                return confidence_json({"A": 1, "B": 1, "C": 5, "D": 0}, "C")
            return "not json at all"
        return "rewritten question"

    llm = ScriptedLLM(reply)
    pipe = AmtPipeline(llm, _engine(tiny_chunks), AmtSettings(augment=False, passages=4))
    ans = pipe.answer(mcq)
    votes = ans.metadata["votes"]
    # BM25 finds only the passages sharing a term with the question (3 of the 8 here).
    assert 1 <= len(votes) <= 4
    expected: dict[str, float] = {}
    for v in votes:
        if v["choice"]:
            expected[v["choice"]] = expected.get(v["choice"], 0) + v["confidence"]
    assert ans.choice == max(expected, key=expected.get)
    assert ans.option_scores == {x: expected.get(x, 0.0) for x in mcq.options}
    assert ans.metadata["vote_failures"] == sum(1 for v in votes if v["choice"] is None)
    # The isoniazid passage is retrieved for this question and votes B with 9.
    assert expected["B"] >= 9
    assert ans.outcome == "answered"
    # One read per passage, no augmentation calls.
    assert ans.tokens["llm_calls"] == len(votes)
    # the typed detail is what the metadata says, vote for vote
    assert isinstance(ans.detail, ChoiceDetail) and ans.detail.voted is True
    assert [v.to_dict() for v in ans.detail.votes] == votes
    assert all(isinstance(v["chunk_id"], str) and v["chunk_id"] for v in votes)


def test_amt_all_reads_fail_is_a_parse_failure_not_a_letter(tiny_chunks, mcq):
    pipe = AmtPipeline(ScriptedLLM(lambda u, k: "{broken"), _engine(tiny_chunks), AmtSettings(augment=False))
    ans = pipe.answer(mcq)
    assert ans.outcome == "parse_failure"
    assert ans.choice is None
    assert ans.metadata["vote_failures"] == len(ans.metadata["votes"]) > 0
    assert all(v.choice is None and v.failure for v in ans.detail.votes)
    assert all(v["failure"] == w.failure for v, w in zip(ans.metadata["votes"], ans.detail.votes))


def test_amt_augmented_query_is_rewrite_plus_expansion(tiny_chunks, mcq):
    def reply(user: str, kwargs: dict) -> str:
        if "precise medical terminology" in user:
            return "REWRITE pyridoxine isoniazid"
        if "Explain step by step" in user:
            return "EXPANSION neuropathy"
        return confidence_json({"A": 0, "B": 8, "C": 0, "D": 0}, "B")

    ans = AmtPipeline(ScriptedLLM(reply), _engine(tiny_chunks)).answer(mcq)
    assert [q.kind for q in ans.queries] == ["augmented"]
    assert ans.queries[0].text == "REWRITE pyridoxine isoniazid EXPANSION neuropathy"
    assert ans.choice == "B"


@pytest.mark.slow
def test_amt_end_to_end_with_real_model(small_llm, tiny_chunks, mcq):
    pipe = build_pipeline({"pipeline": "amt", "retrieve": {"retrievers": ["bm25"], "fusion": None, "top": 8,
                                                            "final_k": 2, "budget_tokens": 2000},
                           "amt": {"passages": 2, "expand_max_tokens": 32, "rewrite_max_tokens": 24}},
                          llm=small_llm, engine=_engine(tiny_chunks, k=2))
    ans = pipe.answer(mcq)
    assert ans.outcome in {"answered", "parse_failure"}
    assert len(ans.metadata["votes"]) == 2
    ids = {c.chunk_id for c in tiny_chunks.iter_chunks()}
    assert all(c.chunk_id in ids for c in ans.citations)
    if ans.outcome == "answered":
        assert ans.choice in mcq.options
    assert ans.timings["total"] > 0 and ans.tokens["llm_calls"] == 4


def test_logprob_confidences_are_ten_times_the_letter_probabilities(tiny_chunks, mcq):
    import math

    # The scripted reader's letter log-probabilities: B clearly first.
    lp = {"A": math.log(0.2), "B": math.log(0.7), "C": math.log(0.05), "D": math.log(0.05)}
    llm = ScriptedLLM(lambda u, k: "unused", letter_logprobs=lp)
    pipe = AmtPipeline(llm, _engine(tiny_chunks), AmtSettings(augment=False, passages=2, confidence="logprob"))
    ans = pipe.answer(mcq)
    votes = ans.metadata["votes"]
    assert votes and all(v["choice"] == "B" for v in votes)
    assert all(abs(v["confidence"] - 7.0) < 1e-6 for v in votes)
    assert all(abs(v["scores"]["A"] - 2.0) < 1e-6 for v in votes)
    assert ans.choice == "B" and abs(ans.option_scores["B"] - 7.0 * len(votes)) < 1e-6
    # One forward pass per passage: every reading call asked for one token with alternatives.
    reads = [c for c in llm.calls if "Passage (" in c["user"]]
    assert len(reads) == len(votes) and all(c["max_tokens"] == 1 for c in reads)


class _LetterBiasedLLM(ScriptedLLM):
    """Prefers letter B whatever it shows, and only then the letter showing ``gold_text``."""

    def __init__(self, gold_text: str):
        super().__init__(lambda u, k: "unused")
        self.gold_text = gold_text

    def chat(self, messages, **kwargs):
        user = messages[-1]["content"]
        gold = next(line[0] for line in user.splitlines() if line[1:] == ". " + self.gold_text)
        lp = {x: -3.0 for x in "ABCD"}
        lp[gold] = -1.0
        lp["B"] = -0.5  # the bias is stronger than the content
        self.letter_logprobs = lp
        return super().chat(messages, **kwargs)


def test_permuted_passage_reads_cancel_a_letter_bias(tiny_chunks, mcq):
    from dataclasses import replace

    mcq = replace(mcq, options={"A": "Vitamin B6", "B": "Vitamin C", "C": "Vitamin K", "D": "Vitamin D"},
                  answer="A")
    settings = AmtSettings(augment=False, passages=2, confidence="logprob")
    biased = AmtPipeline(_LetterBiasedLLM("Vitamin B6"), _engine(tiny_chunks), settings).answer(mcq)
    assert biased.choice == "B"  # undebiased: every passage votes for the favoured letter
    llm = _LetterBiasedLLM("Vitamin B6")
    debiased = AmtPipeline(llm, _engine(tiny_chunks), settings, ReaderSettings(debias="permute")).answer(mcq)
    assert debiased.choice == "A" and all(v["choice"] == "A" for v in debiased.metadata["votes"])
    reads = [c for c in llm.calls if "Passage (" in c["user"]]
    assert len(reads) == 4 * len(debiased.metadata["votes"])  # one pass per cyclic shift
    # The shifts differ only after the passage: options come last so they share a cached prefix.
    first = [c["user"] for c in reads[:4]]
    prefix = first[0][: first[0].index("\n\nA. ")]
    assert all(u.startswith(prefix) for u in first) and "Passage (" in prefix
    assert debiased.tokens["llm_calls"] == len(reads)
