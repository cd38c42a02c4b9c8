"""The dense retriever's bi-encoder fine-tuned on feedback, for real (MiniLM, CPU, a few steps)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("datasets")
pytest.importorskip("sentence_transformers")

from medground.train.biencoder import (  # noqa: E402
    BiEncoderTrainSettings,
    feedback_triplets,
    pubmedqa_known_items,
    rank_judged,
    train_biencoder,
    train_device,
)
from medground.train.feedback import Judgement  # noqa: E402


def j(qid, rank, text, gold_with, base=0.3, correct=False, query=None):
    return Judgement(qid, query or f"question {qid}?", f"{qid}-c{rank}", text, rank, correct, correct, base, gold_with)


def test_triplets_pair_each_helpful_passage_with_the_least_helpful_of_its_question():
    js = [j("q1", 1, "noise a", 0.25), j("q1", 2, "helpful", 0.6), j("q1", 3, "worst", 0.05),
          j("q1", 4, "also helpful", 0.5), j("q2", 1, "nothing helps", 0.3), j("q2", 2, "still nothing", 0.31)]
    trip = feedback_triplets(js, "gain", 0.1)
    assert trip == [("question q1?", "helpful", "worst"), ("question q1?", "also helpful", "noise a")]
    assert feedback_triplets([x for x in js if x.qid == "q2"], "gain") == []


def test_known_items_leave_the_test_ids_out(tmp_path):
    (tmp_path / "benchmarks/pubmedqa").mkdir(parents=True)
    items = {p: {"QUESTION": f"q{p}?", "CONTEXTS": [f"abstract {p}", "more"]} for p in ("1", "2", "3")}
    (tmp_path / "benchmarks/pubmedqa/ori_pqal.json").write_text(json.dumps(items))
    (tmp_path / "benchmarks/pubmedqa/test_ground_truth.json").write_text(json.dumps({"2": "yes"}))
    assert pubmedqa_known_items(tmp_path) == [("q1?", "abstract 1 more"), ("q3?", "abstract 3 more")]


@pytest.mark.slow
def test_training_moves_helpful_passages_up_on_their_questions(tmp_path):
    drugs = ["warfarin", "digoxin", "isoniazid", "metformin", "lithium", "heparin", "insulin", "amiodarone"]
    trip = [(f"What does a patient on {d} need monitored?", f"Patients taking {d} need their drug levels monitored.",
             "The skeletal system supports the body.") for d in drugs]
    known = [("Is photosynthesis light driven?", "Photosynthesis converts light into chemical energy.")]
    out = tmp_path / "bi"
    report = train_biencoder(trip, out, BiEncoderTrainSettings(epochs=2, batch_size=4, learning_rate=5e-5),
                             known_items=known)
    assert report.triplets == 8 and report.known_item_pairs == 1 and report.steps > 0
    assert report.device == train_device(BiEncoderTrainSettings())  # recorded with the model
    assert json.loads((out / "medground_training.json").read_text())["report"]["triplets"] == 8
    # An ordinary SentenceTransformer directory, usable as the dense retriever's embedder.
    from medground.index.embedders import EmbedderSettings, load_embedder

    vecs = load_embedder(EmbedderSettings(model=str(out))).encode_queries(["warfarin monitoring"])
    assert vecs.shape == (1, 384)
    q = "What does a patient on warfarin need monitored?"
    held = [j("h1", 1, "Bones store calcium.", 0.2, query=q), j("h1", 2, "The heart has four chambers.", 0.2, query=q),
            j("h1", 3, "Patients taking warfarin need their INR monitored.", 0.9, query=q)]
    res = rank_judged(held, out, rule="gain")
    assert res["questions"] == 1 and res["first_stage_mrr"] == pytest.approx(1 / 3) and res["bi_encoder_mrr"] == 1.0


def test_training_runs_on_a_gpu_when_there_is_one_unless_a_device_is_named(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert train_device(BiEncoderTrainSettings()) == "cuda"
    assert train_device(BiEncoderTrainSettings(device="cpu")) == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert train_device(BiEncoderTrainSettings()) == "cpu"


def _cand(qid, options, answer, texts, question=None):
    from medground.schema import Chunk, Passage, Question

    q = Question(qid=qid, dataset="t", question=question or f"question {qid}?", options=options, answer=answer)
    ps = [Passage(Chunk(chunk_id=f"{qid}-{i}", doc_id="", corpus="", source_path="", text=t, title=""), 1.0, "stored", i)
          for i, t in enumerate(texts, start=1)]
    return q, ps


def test_answer_labels_need_the_gold_text_alone_and_whole_words():
    from medground.train.biencoder import answer_labels

    q, ps = _cand("q1", {"A": "Pyridoxine", "B": "Thiamine", "C": "Folate", "D": "Niacin"}, "A",
                  ["Give pyridoxine with isoniazid.", "Pyridoxine and thiamine are B vitamins.",
                   "Isoniazid causes neuropathy.", "Pyridoxines are a family."])
    # stated alone: positive; with another option's text: ambiguous; absent (or only as part of a word): negative
    assert answer_labels(q, ps) == [1, -1, 0, 0]
    # an option inside the gold text ("Vitamin B6" in "Vitamin B6 deficiency") is no evidence against it,
    # but the longer option stated where the gold is the shorter one is
    opts = {"A": "Vitamin B6", "B": "Vitamin B6 deficiency"}
    assert answer_labels(*_cand("q2", opts, "B", ["Vitamin B6 deficiency follows."])) == [1]
    assert answer_labels(*_cand("q3", opts, "A", ["Vitamin B6 deficiency follows."])) == [-1]


def test_catch_all_numeric_and_short_answers_are_not_looked_for():
    from medground.train.biencoder import answer_labels, usable_answer

    assert not usable_answer("All of the above") and not usable_answer("None") and not usable_answer("12")
    assert not usable_answer("K+") and usable_answer("Hypokalemia") and usable_answer("Both (A) is wrong") is False
    q, ps = _cand("q", {"A": "x", "B": "All of the above"}, "B", ["All of the above apply."])
    assert answer_labels(q, ps) is None
    negated = _cand("n", {"A": "Hypokalemia", "B": "Fever"}, "B", ["Fever is common."],
                    question="All are adverse effects EXCEPT:")
    assert answer_labels(*negated) is None


def test_answer_triplets_pair_the_best_positives_with_the_top_negatives_and_count():
    from medground.train.biencoder import answer_label_counts, answer_triplets

    q, ps = _cand("q1", {"A": "Pyridoxine", "B": "Thiamine"}, "A",
                  ["Unrelated top passage.", "Give pyridoxine.", "Another unrelated.", "Pyridoxine again.",
                   "Pyridoxine a third time."])
    skipped = _cand("q2", {"A": "None of the above", "B": "x"}, "A", ["None of the above."])
    no_negative = _cand("q3", {"A": "Digoxin", "B": "Heparin"}, "A", ["Digoxin toxicity."])
    items = [(q, ps), skipped, no_negative]
    assert answer_triplets(items) == [("question q1?", "Give pyridoxine.", "Unrelated top passage."),
                                      ("question q1?", "Pyridoxine again.", "Another unrelated.")]
    assert answer_triplets(items, max_positives=1) == [("question q1?", "Give pyridoxine.", "Unrelated top passage.")]
    assert answer_label_counts(items) == {"questions": 3, "usable_answer": 2, "with_positive": 2, "positives": 4,
                                          "ambiguous": 0, "negatives": 2}
