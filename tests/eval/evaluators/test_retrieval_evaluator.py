"""RetrievalEvaluator on hand-computed tables: three known-item queries (R@k, MRR@10, nDCG@3, HR@k,
passages collapsed to documents), graded nDCG, and answer@k / distractor@k over passage text."""

import math

import pytest

from medground.eval.evaluators import RetrievalEvaluator, RetrievalItem, doc_id
from medground.schema import Chunk, Passage


def passage(cid: str, text: str = "", rank: int = 0) -> Passage:
    doc = cid.split("-")[0]
    return Passage(Chunk(cid, doc, "c", "s.json", text, ""), 1.0, "bm25", rank)


# query → passages in rank order (chunk ids "<doc>-<n>"), gold documents
Q1 = [passage("d2-0"), passage("d1-0"), passage("d1-1"), passage("d3-0")]  # docs d2, d1, d3: gold d1 at 2
Q2 = [passage("d4-0"), passage("d6-0"), passage("d7-0"), passage("d5-0")]  # gold d4 at 1, d5 at 4
Q3 = [passage("d9-0")]  # gold d8 never found
ITEMS = [RetrievalItem("q1", "first", frozenset({"d1"})), RetrievalItem("q2", "second", frozenset({"d4", "d5"})),
         RetrievalItem("q3", "third", frozenset({"d8"}))]


def test_known_item_metrics_match_the_hand_computed_table():
    ev = RetrievalEvaluator(recall_at=(1, 3), mrr_at=10, ndcg_at=(3,), hit_at=(1, 3), key=doc_id)
    result = ev.evaluate(ITEMS, [Q1, Q2, Q3])
    q1, q2, q3 = result.rows
    # q1: d1 at rank 2 (the repeated d1-1 does not count twice)
    assert q1 == {"id": "q1", "R@1": 0.0, "R@3": 1.0, "MRR@10": 0.5, "nDCG@3": pytest.approx(1 / math.log2(3)),
                  "HR@1": False, "HR@3": True}
    # q2: d4 at 1, d5 at 4: half the gold in the top 3, and not every gold (strict HR@3 misses)
    assert q2["R@1"] == 0.5 and q2["R@3"] == 0.5 and q2["MRR@10"] == 1.0 and q2["HR@3"] is False
    assert q2["nDCG@3"] == pytest.approx(1 / (1 + 1 / math.log2(3)))  # 0.6131
    assert q3 == {"id": "q3", "R@1": 0.0, "R@3": 0.0, "MRR@10": 0.0, "nDCG@3": 0.0, "HR@1": False, "HR@3": False}
    s = result.summary
    assert s["n"] == 3
    assert s["R@1"] == pytest.approx(1 / 6) and s["R@3"] == pytest.approx(0.5) and s["MRR@10"] == pytest.approx(0.5)
    assert round(s["nDCG@3"], 4) == 0.4147
    assert s["HR@1"] == {"n": 3, "k": 0, "rate": 0.0, "ci95": [0.0, 0.5615]}
    assert s["HR@3"] == {"n": 3, "k": 1, "rate": 0.3333, "ci95": [0.0615, 0.7923]}


def test_a_document_found_twice_takes_one_rank():
    # Q1's documents are d2, d1, d3 once d1's second chunk is collapsed: d3 is within the top 3
    row = RetrievalEvaluator(recall_at=(3,), mrr_at=10, key=doc_id).evaluate(
        [RetrievalItem("q", "", frozenset({"d3"}))], [Q1]).rows[0]
    assert row == {"id": "q", "R@3": 1.0, "MRR@10": pytest.approx(1 / 3)}


def test_chunk_ids_by_default_and_graded_gains():
    ranked = [passage("d2-0"), passage("d1-0")]
    chunks = RetrievalEvaluator(recall_at=(1,), mrr_at=None).evaluate(
        [RetrievalItem("q", "", frozenset({"d1-0"}))], [ranked]).rows[0]
    assert chunks == {"id": "q", "R@1": 0.0}  # the chunk, not its document, and no MRR asked
    graded = RetrievalEvaluator(recall_at=(), mrr_at=None, ndcg_at=(2,), key=doc_id).evaluate(
        [RetrievalItem("q", "", {"d1": 3.0, "d2": 1.0})], [ranked]).rows[0]
    # DCG = 1/log2(2) + 3/log2(3); ideal = 3/log2(2) + 1/log2(3)
    assert round(graded["nDCG@2"], 4) == 0.7967


MCQ = [RetrievalItem("m1", "", answer="beta blocker", distractors=("aspirin", "renal failure", "liver")),
       RetrievalItem("m2", "", answer="beta blocker", distractors=("liver",))]
TEXTS = [[passage("a-0", "Aspirin and a beta blocker after infarction."), passage("a-1", "Renal failure: halve the dose.")],
         [passage("b-0", "Beta-blockers slow the heart."), passage("b-1", "Liver enzymes rise.")]]


def test_answer_and_distractor_at_k_are_whole_word_checks_of_the_top_k_text():
    ev = RetrievalEvaluator(recall_at=(), mrr_at=None, answer_at=(1, 2))
    result = ev.evaluate(MCQ, TEXTS)
    m1, m2 = result.rows
    assert m1 == {"id": "m1", "answer@1": True, "distractor@1": pytest.approx(1 / 3),
                  "answer@2": True, "distractor@2": pytest.approx(2 / 3)}
    # "beta-blockers" is not the whole words "beta blocker"
    assert m2 == {"id": "m2", "answer@1": False, "distractor@1": 0.0, "answer@2": False, "distractor@2": 1.0}
    s = result.summary
    assert s["answer@1"] == {"n": 2, "k": 1, "rate": 0.5, "ci95": [0.0945, 0.9055]}
    assert s["distractor@1"] == pytest.approx(1 / 6) and s["distractor@2"] == pytest.approx(5 / 6)
    ceiling = RetrievalEvaluator.answer_in_corpus(MCQ, [p.chunk.text for ps in TEXTS for p in ps])
    assert (ceiling["k"], ceiling["n"]) == (2, 2)  # m1's text holds "beta blocker" for both


def test_calling_the_evaluator_searches_each_query_to_the_deepest_cut_off():
    class Fake:
        def __init__(self):
            self.asked = []

        def search(self, query, k=10):
            self.asked.append((query, k))
            return {"first": Q1, "second": Q2, "third": Q3}[query][:k]

    fake = Fake()
    result = RetrievalEvaluator(recall_at=(1, 3), mrr_at=10, key=doc_id)(fake, ITEMS)
    assert fake.asked == [("first", 10), ("second", 10), ("third", 10)]
    assert result.summary["MRR@10"] == pytest.approx(0.5)


def test_the_result_file_layouts_of_known_item_and_answer_hits():
    from medground.eval.evaluators import answer_hits, known_item

    # known item, passages collapsed to documents: q1's d1 at 2, q2's gold d4 at 1, q3's d8 never found
    got = known_item([Q1, Q2, Q3], ["d1", "d4", "d8"])
    assert got == {"R@1": pytest.approx(1 / 3), "R@5": pytest.approx(2 / 3), "R@10": pytest.approx(2 / 3),
                   "MRR@10": pytest.approx(0.5)}
    rows = [{"question": "", "options": {"A": "beta blocker", "B": "aspirin", "C": "renal failure", "D": "liver"},
             "answer_idx": "A", "answer": "beta blocker"},
            {"question": "", "options": {"A": "beta blocker", "B": "liver"}, "answer_idx": "A", "answer": "beta blocker"}]
    hits = answer_hits(TEXTS, rows, 1)
    assert hits == {"answer@1": 0.5, "answer@1_ci95": [0.0945, 0.9055], "distractor@1": pytest.approx(1 / 6),
                    "hits@1": "10"}
