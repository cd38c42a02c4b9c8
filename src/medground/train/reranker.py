"""A cross-encoder reranker fine-tuned on LLM-feedback labels (sentence-transformers).

The result is an ordinary CrossEncoder directory: name it in any config as
``rerank: {name: cross-encoder, model: DIR}``. With no model hub here, the start point is the
bundled all-MiniLM-L6-v2 (its encoder; the one-logit head starts untrained); users with a hub
start from a real reranker (``base_model: BAAI/bge-reranker-base``).

``evaluate`` answers the question that matters on held-out feedback: does the reranker put
the passages that helped the LLM ahead of those that did not, compared with the first-stage
order they were retrieved in?
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from medground.eval.retrieval_metrics import reciprocal_rank
from medground.train.feedback import Judgement, by_question


class RerankerTrainSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_model: str | None = None  # a CrossEncoder / encoder path or hub name; None = bundled MiniLM
    epochs: float = Field(2.0, gt=0)
    batch_size: int = Field(16, ge=1)
    learning_rate: float = Field(3e-5, gt=0)
    warmup_ratio: float = Field(0.1, ge=0, lt=1)
    max_length: int = Field(256, ge=16)
    seed: int = 0
    # Positives are rare (a few per question): weight them by negatives/positives unless set.
    pos_weight: float | None = Field(None, gt=0)


@dataclass(slots=True)
class TrainReport:
    out_dir: str
    pairs: int
    positives: int
    pos_weight: float
    steps: int
    train_loss: float | None
    seconds: float
    data_sha256: str


def _pairs_digest(pairs: Sequence[tuple[str, str, int]]) -> str:
    h = hashlib.sha256()
    for q, p, y in pairs:
        h.update(f"{q}\x1f{p}\x1f{y}\x1e".encode())
    return h.hexdigest()


def train_reranker(pairs: Sequence[tuple[str, str, int]], out_dir: str | Path,
                   settings: RerankerTrainSettings | None = None) -> TrainReport:
    """Fine-tune a one-logit cross-encoder on (query, passage, label) with weighted BCE."""
    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    from medground.retrieve.rerank import minilm_path

    settings = settings or RerankerTrainSettings()
    positives = sum(y for _, _, y in pairs)
    if not pairs or positives == 0 or positives == len(pairs):
        raise ValueError(f"training needs both positive and negative pairs; got {positives} positives "
                         f"of {len(pairs)} (collect feedback on more questions, or change the labelling rule or margin)")
    out_dir = Path(out_dir)
    pos_weight = settings.pos_weight or (len(pairs) - positives) / positives
    t0 = time.perf_counter()
    model = CrossEncoder(settings.base_model or minilm_path(), num_labels=1, max_length=settings.max_length,
                         device="cpu")
    data = Dataset.from_dict({"query": [q for q, _, _ in pairs], "passage": [p for _, p, _ in pairs],
                              "label": [float(y) for _, _, y in pairs]})
    args = CrossEncoderTrainingArguments(
        output_dir=str(out_dir / "_trainer"), num_train_epochs=settings.epochs,
        per_device_train_batch_size=settings.batch_size, learning_rate=settings.learning_rate,
        warmup_ratio=settings.warmup_ratio, seed=settings.seed, data_seed=settings.seed,
        save_strategy="no", report_to="none", logging_steps=10, use_cpu=True, disable_tqdm=True)
    loss = BinaryCrossEntropyLoss(model, pos_weight=torch.tensor(pos_weight))
    trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=data, loss=loss)
    result = trainer.train()
    model.save_pretrained(str(out_dir))
    report = TrainReport(out_dir=str(out_dir), pairs=len(pairs), positives=positives, pos_weight=round(pos_weight, 3),
                         steps=int(result.global_step), train_loss=float(result.training_loss),
                         seconds=round(time.perf_counter() - t0, 1), data_sha256=_pairs_digest(pairs))
    (out_dir / "medground_training.json").write_text(
        json.dumps({"settings": settings.model_dump(mode="json"), "report": asdict(report)}, indent=2) + "\n")
    return report


# --- evaluation on held-out feedback ------------------------------------------------------------
def _summary(rankings: list[list[int]], helpful: list[set[int]]) -> dict[str, float]:
    return {"mrr": float(np.mean([reciprocal_rank(r, h) for r, h in zip(rankings, helpful)])),
            "p_at_1": float(np.mean([reciprocal_rank(r, h, k=1) for r, h in zip(rankings, helpful)]))}


def evaluate(judgements: Sequence[Judgement], model: str | Path, *, rule: str = "flip", margin: float = 0.1,
             batch_size: int = 32) -> dict:
    """First-stage order vs reranker order of the judged passages, on questions with both kinds."""
    from sentence_transformers.cross_encoder import CrossEncoder

    groups = []  # (judgements in first-stage order, positions of the helpful ones)
    for js in by_question(judgements).values():
        helpful = {i for i, j in enumerate(js) if j.label(rule, margin)}
        if 0 < len(helpful) < len(js):
            groups.append((js, helpful))
    if not groups:
        raise ValueError("no held-out question has both a helpful and an unhelpful passage")
    ce = CrossEncoder(str(model), device="cpu")
    reranked = []
    for js, _ in groups:
        scores = ce.predict([(j.query, j.passage) for j in js], batch_size=batch_size, show_progress_bar=False)
        reranked.append(np.argsort(-np.asarray(scores), kind="stable").tolist())
    helpful = [h for _, h in groups]
    return {"questions": len(groups), "passages": sum(len(js) for js, _ in groups), "rule": rule,
            "first_stage": _summary([list(range(len(js))) for js, _ in groups], helpful),
            "reranker": _summary(reranked, helpful),
            "random_mrr": float(np.mean([_expected_rr(len(js), len(h)) for js, h in groups]))}


def _expected_rr(n: int, positives: int) -> float:
    """Expected reciprocal rank of the first positive in a random order of n items."""
    # P(first positive at rank r) = C(n-r, positives-1) / C(n, positives)
    from math import comb

    total = comb(n, positives)
    return sum(comb(n - r, positives - 1) / total / r for r in range(1, n - positives + 2))
