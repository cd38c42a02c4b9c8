"""LLM-feedback labels: which passages turn a wrong answer right, resumable on disk."""

from __future__ import annotations

import json

import pytest

from medground.llm.base import ChatRequest, ChatResult, LLMSettings, TokenLogprob
from medground.schema import Chunk, Passage, Question
from medground.train.feedback import (
    FeedbackSettings,
    Judgement,
    collect,
    heldout,
    judge,
    load_feedback,
    training_pairs,
)
from medground.train.reranker import _expected_rr


class LetterLLM:
    """Answers B (gold) when the context holds 'helpful', A otherwise; counts calls."""

    name = "fake:letters"
    fingerprint = "fake"

    def __init__(self):
        self.settings = LLMSettings(backend="openai", model="fake", cache=False)
        self.calls = 0

    def complete(self, request: ChatRequest) -> ChatResult:
        self.calls += 1
        user = request.messages[-1]["content"]
        good = "helpful" in user
        top = [("B", -0.1), ("A", -2.5)] if good else [("A", -0.2), ("B", -1.8)]
        return ChatResult(text=top[0][0], logprobs=[TokenLogprob(top[0][0], top[0][1], top)], completion_tokens=1)

    def chat(self, messages, **kw) -> ChatResult:
        return self.complete(ChatRequest(messages=messages, **{k: v for k, v in kw.items() if v is not None}))


class ListEngine:
    def __init__(self, texts):
        self.texts = texts

    def retrieve(self, query, k=None):
        chunks = [Chunk(chunk_id=f"c{i}", doc_id="d", corpus="t", title="T", section_path=("S",), text=t,
                        source_path="x") for i, t in enumerate(self.texts)]
        return [Passage(c, 1.0 / (i + 1), "bm25", i + 1) for i, c in enumerate(chunks)][:k]


def q(qid: str, answer: str = "B") -> Question:
    return Question(qid=qid, dataset="unit", question=f"Question {qid}?", options={"A": "x", "B": "y"}, answer=answer)


ENGINE = ListEngine(["noise one", "a helpful passage", "noise two"])


def test_judge_labels_the_passage_that_flips_the_answer():
    llm = LetterLLM()
    js = judge(llm, ENGINE, q("q1"), FeedbackSettings(passages=3))
    assert llm.calls == 4  # closed book + 3 passages
    assert [j.label() for j in js] == [0, 1, 0]
    assert [j.rank for j in js] == [1, 2, 3] and not js[0].base_correct and js[1].with_correct
    assert js[1].with_gold_prob > 0.9 and js[0].with_gold_prob < 0.3
    assert [j.label("gain", 0.1) for j in js] == [0, 1, 0]


def test_flip_needs_a_wrong_closed_book_answer_gain_does_not():
    j = Judgement("q", "Q", "c", "p", 1, base_correct=True, with_correct=True, base_gold_prob=0.5, with_gold_prob=0.9)
    assert j.label("flip") == 0 and j.label("gain", 0.3) == 1 and j.label("gain", 0.5) == 0
    failed = Judgement("q", "Q", "c", "p", 1, False, True, 0.1, 0.9, parse_failure=True)
    assert failed.label("flip") == 0 and failed.label("gain") == 0


def test_collect_resumes_and_survives_a_torn_last_line(tmp_path):
    out = tmp_path / "fb.jsonl"
    llm = LetterLLM()
    r1 = collect(llm, ENGINE, [q("q1"), q("q2")], out, FeedbackSettings(passages=3))
    assert (r1.questions, r1.judgements, r1.positives) == (2, 6, 2)
    with out.open("a") as f:
        f.write('{"qid": "q3", "judgements": [{"qid"')  # killed mid-write
    assert {j.qid for j in load_feedback(out)} == {"q1", "q2"}
    calls = llm.calls
    r2 = collect(llm, ENGINE, [q("q1"), q("q2"), q("q3"), Question(qid="free", dataset="u", question="open?")],
                 out, FeedbackSettings(passages=3))
    assert (r2.resumed, r2.questions, r2.skipped) == (2, 1, 1)
    assert llm.calls == calls + 4  # only q3 was judged
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["qid"] for line in lines)


def test_corrupt_middle_line_is_an_error_naming_the_line(tmp_path):
    out = tmp_path / "fb.jsonl"
    out.write_text('{"qid": "q1", "judgements": []}\nnot json\n{"qid": "q2", "judgements": []}\n')
    with pytest.raises(ValueError, match=r"fb.jsonl:2"):
        load_feedback(out)


def test_training_pairs_keep_questions_with_a_positive():
    js = judge(LetterLLM(), ENGINE, q("q1"), FeedbackSettings(passages=3))
    none_helped = judge(LetterLLM(), ListEngine(["noise"]), q("q2"), FeedbackSettings(passages=1))
    pairs = training_pairs(js + none_helped)
    assert pairs == [("Question q1?", "noise one", 0), ("Question q1?", "a helpful passage", 1),
                     ("Question q1?", "noise two", 0)]
    assert len(training_pairs(js + none_helped, only_questions_with_positive=False)) == 4


def test_heldout_split_is_stable_and_near_the_share():
    ids = [f"q{i}" for i in range(2000)]
    share = sum(heldout(i, 0.2) for i in ids) / len(ids)
    assert 0.17 < share < 0.23
    assert [heldout(i, 0.2) for i in ids[:50]] == [heldout(i, 0.2) for i in ids[:50]]
    assert not any(heldout(i, 0.0) for i in ids)


def test_expected_reciprocal_rank_matches_enumeration():
    from itertools import permutations

    for n, pos in [(4, 1), (5, 2), (3, 3)]:
        items = [1] * pos + [0] * (n - pos)
        perms = list(permutations(items))
        brute = sum(1 / (p.index(1) + 1) for p in perms) / len(perms)
        assert _expected_rr(n, pos) == pytest.approx(brute)


def test_stored_candidates_judge_like_the_engine_without_it(tmp_path):
    # Retrieval and judging apart (the judging half can run on a GPU box with no index):
    # the labels from stored candidates equal those judged against the engine itself.
    from medground.train.feedback import CandidateSet, write_candidates

    cand = tmp_path / "cand.jsonl"
    assert write_candidates(ENGINE, [q("q1"), q("q2", answer="A")], cand, k=3) == 2
    assert write_candidates(ENGINE, [q("q1"), q("q3")], cand, k=3) == 1  # resumes: q1 is there
    stored = CandidateSet(cand)
    assert [x.qid for x in stored.questions] == ["q1", "q2", "q3"]
    via_engine = judge(LetterLLM(), ENGINE, q("q1"), FeedbackSettings(passages=3))
    via_file = judge(LetterLLM(), stored, stored.questions[0], FeedbackSettings(passages=3))
    assert [(j.chunk_id, j.rank, j.with_correct, j.label()) for j in via_file] == \
        [(j.chunk_id, j.rank, j.with_correct, j.label()) for j in via_engine]
    with pytest.raises(ValueError, match="4 passages asked for, 3 stored"):
        stored.retrieve(stored.questions[0].question, k=4)
    with pytest.raises(KeyError, match="no stored candidates"):
        stored.retrieve("an unseen question")
    report = collect(LetterLLM(), stored, stored.questions, tmp_path / "fb.jsonl", FeedbackSettings(passages=3))
    assert report.questions == 3 and report.questions_with_positive == 2  # q2's gold A is never reached


def test_a_bad_candidates_line_names_the_file_and_line(tmp_path):
    from medground.train.feedback import load_candidates

    bad = tmp_path / "cand.jsonl"
    bad.write_text('{"qid": "q1", "question": "x?", "options": {"A": "a"}, "answer": "A", "passages": []}\n{"qid": 2}\n')
    with pytest.raises(ValueError, match=r"cand.jsonl:2: not a candidates line"):
        load_candidates(bad)


def test_training_pairs_can_keep_only_the_hardest_negatives():
    js = [Judgement("q", "Q?", f"c{i}", f"p{i}", i + 1, False, i == 0, 0.3, p)
          for i, p in enumerate([0.9, 0.2, 0.05, 0.3, 0.1])]
    rows = training_pairs(js, "gain", 0.1, max_negatives=2)
    assert rows == [("Q?", "p0", 1), ("Q?", "p2", 0), ("Q?", "p4", 0)]
    assert len(training_pairs(js, "gain", 0.1)) == 5


def test_a_torn_candidates_line_is_dropped_before_appending(tmp_path):
    from medground.train.feedback import load_candidates, write_candidates

    cand = tmp_path / "cand.jsonl"
    write_candidates(ENGINE, [q("q1")], cand, k=2)
    with cand.open("a") as f:
        f.write('{"qid": "q2", "quest')  # killed mid-line
    assert write_candidates(ENGINE, [q("q1"), q("q2")], cand, k=2) == 1
    assert [x.qid for x, _ in load_candidates(cand)] == ["q1", "q2"]


def test_verified_positives_must_state_the_gold_answer_and_such_passages_are_never_negatives():
    from medground.train.feedback import mark_answers

    js = [Judgement("q", "Which vitamin?", "c1", "Isoniazid depletes vitamin B6 (pyridoxine).", 1, False, True, 0.2, 0.6),
          Judgement("q", "Which vitamin?", "c2", "Tuberculosis is treated for months.", 2, False, True, 0.2, 0.7),
          Judgement("q", "Which vitamin?", "c3", "Give pyridoxine with isoniazid.", 3, False, False, 0.2, 0.1),
          Judgement("q", "Which vitamin?", "c4", "Rifampin colours urine orange.", 4, False, False, 0.2, 0.15)]
    marked = mark_answers(js, {"q": "Pyridoxine"})
    assert [m.answer_in_passage for m in marked] == [True, False, True, False]
    assert [m.label("verified", 0.1) for m in marked] == [1, 0, 0, 0]
    assert [m.label("gain", 0.1) for m in marked] == [1, 1, 0, 0]  # gain alone takes the answerless c2
    # c3 states the answer although the reader did not profit: not a hard negative; c4 is
    assert training_pairs(marked, "verified", 0.1) == [("Which vitamin?", js[0].passage, 1),
                                                       ("Which vitamin?", js[1].passage, 0),
                                                       ("Which vitamin?", js[3].passage, 0)]
    with pytest.raises(ValueError, match="verified"):
        js[0].label("verified")  # unmarked
    with pytest.raises(ValueError, match="no gold answer for 1"):
        mark_answers(js, {"other": "x"})


def test_a_second_collection_into_the_same_file_is_refused_not_duplicated(tmp_path):
    import fcntl

    from medground.train.feedback import FeedbackLockedError

    out = tmp_path / "fb.jsonl"
    with out.open("a") as other:  # another process holds the file
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(FeedbackLockedError, match="another process"):
            collect(LetterLLM(), ENGINE, [q("q1")], out, FeedbackSettings(passages=3))
    assert collect(LetterLLM(), ENGINE, [q("q1")], out, FeedbackSettings(passages=3)).questions == 1
