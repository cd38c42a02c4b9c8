"""Fine-tuning a cross-encoder on feedback pairs, for real (MiniLM, CPU, a few steps)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("datasets")
pytest.importorskip("sentence_transformers")

from medground.retrieve.rerank import RerankSettings, make_cross_encoder
from medground.schema import Chunk, Passage
from medground.train.feedback import Judgement
from medground.train.reranker import RerankerTrainSettings, evaluate, train_reranker

pytestmark = pytest.mark.slow

DRUGS = ["warfarin", "digoxin", "isoniazid", "metformin", "lithium", "heparin"]


def pairs():
    rows = []
    for d in DRUGS:
        query = f"What monitoring does a patient on {d} need?"
        rows.append((query, f"Patients taking {d} need regular monitoring of drug levels and organ function.", 1))
        rows.append((query, "The skeletal system supports the body and protects organs.", 0))
        rows.append((query, "Photosynthesis converts light into chemical energy in plants.", 0))
    return rows


def test_train_save_load_and_evaluate(tmp_path):
    out = tmp_path / "ce"
    report = train_reranker(pairs(), out, RerankerTrainSettings(epochs=3, batch_size=6, learning_rate=1e-4))
    assert report.pairs == 18 and report.positives == 6 and report.pos_weight == 2.0 and report.steps == 9
    meta = json.loads((out / "medground_training.json").read_text())
    assert meta["report"]["data_sha256"] == report.data_sha256 and meta["settings"]["epochs"] == 3
    # The directory is an ordinary CrossEncoder: the project's reranker loads it by path.
    rr = make_cross_encoder(RerankSettings(model=str(out), candidates=3))
    texts = [t for _, t, _ in pairs()[:3]][::-1]  # helpful passage last
    ps = [Passage(Chunk(chunk_id=f"c{i}", doc_id="d", corpus="t", title="", section_path=(), text=t,
                        source_path="x"), 1.0, "bm25", i + 1) for i, t in enumerate(texts)]
    top = rr.rerank("What monitoring does a patient on warfarin need?", ps, k=1)
    assert "warfarin" in top[0].chunk.text
    # Held-out evaluation compares first-stage order (helpful passage ranked last) with the reranker's.
    js = [Judgement("h1", "Which checks are needed on lithium?", f"c{i}", t, i + 1, False, "lithium" in t, 0.2,
                    0.9 if "lithium" in t else 0.2)
          for i, t in enumerate(["The heart has four chambers.", "Bones store calcium.",
                                 "Patients taking lithium need regular monitoring of drug levels."])]
    res = evaluate(js, out)
    assert res["questions"] == 1 and res["first_stage"]["mrr"] == pytest.approx(1 / 3)
    assert res["reranker"]["mrr"] == 1.0 and res["random_mrr"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)


def test_refuses_one_class_data(tmp_path):
    with pytest.raises(ValueError, match="both positive and negative"):
        train_reranker([(q, p, 0) for q, p, _ in pairs()], tmp_path / "x")
