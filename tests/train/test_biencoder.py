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

