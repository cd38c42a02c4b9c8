"""The dense retriever fine-tuned on LLM feedback (LLM-AMT's retriever training, sentence-transformers).

Training examples are (question, positive passage, hard negative) triplets: a positive is a
retrieved passage that helped the reader (``Judgement.label``), its hard negative a passage
retrieved for the same question that did not (the one that left the gold answer least likely).
MultipleNegativesRankingLoss (InfoNCE) adds every other passage in the batch as an easy negative.
Known-item pairs (a PubMedQA question and its own abstract) can be mixed in as extra positives.

The result is an ordinary SentenceTransformer directory: name it as the dense retriever's
embedder (``dense: {embedder: {model: DIR}}``); its index gets its own directory.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from medground.train.feedback import Judgement, by_question


class BiEncoderTrainSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_model: str | None = None  # a SentenceTransformer path or hub name; None = the bundled MiniLM
    epochs: float = Field(1.0, gt=0)
    batch_size: int = Field(32, ge=2, description="in-batch negatives grow with it")
    learning_rate: float = Field(2e-5, gt=0)
    warmup_ratio: float = Field(0.1, ge=0, lt=1)
    max_length: int = Field(256, ge=16)
    seed: int = 0
    threads: int | None = Field(None, ge=1)


@dataclass(slots=True)
class BiEncoderReport:
    out_dir: str
    triplets: int
    known_item_pairs: int
    epochs: float
    steps: int
    train_loss: float | None
    seconds: float


def feedback_triplets(judgements: Sequence[Judgement], rule: str = "flip", margin: float = 0.1
                      ) -> list[tuple[str, str, str]]:
    """(question, helpful passage, unhelpful passage of the same question) per helpful passage.

    The hard negative is the unhelpful passage with the lowest P(gold) with it as context; each
    is used once per question before any repeats, so one bad passage does not dominate."""
    out = []
    for js in by_question(judgements).values():
        pos = [j for j in js if j.label(rule, margin)]
        neg = sorted((j for j in js if not j.label(rule, margin) and j.may_be_negative), key=lambda j: j.with_gold_prob)
        if not pos or not neg:
            continue
        for i, p in enumerate(pos):
            out.append((p.query, p.passage, neg[i % len(neg)].passage))
    return out


def pubmedqa_known_items(root: str | Path, *, exclude_test: bool = True) -> list[tuple[str, str]]:
    """(question, its own abstract) for the labelled PubMedQA items, the official 500 test ids
    left out by default (they are what retrieval is evaluated on)."""
    root = Path(root)
    items = json.loads((root / "benchmarks/pubmedqa/ori_pqal.json").read_text())
    test = set(json.loads((root / "benchmarks/pubmedqa/test_ground_truth.json").read_text())) if exclude_test else set()
    return [(it["QUESTION"], " ".join(it["CONTEXTS"])) for pmid, it in sorted(items.items()) if pmid not in test]


def train_biencoder(triplets: Sequence[tuple[str, str, str]], out_dir: str | Path,
                    settings: BiEncoderTrainSettings | None = None,
                    known_items: Sequence[tuple[str, str]] = ()) -> BiEncoderReport:
    """Fine-tune with MultipleNegativesRankingLoss on the triplets (and known-item pairs)."""
    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.losses import MultipleNegativesRankingLoss
    from sentence_transformers.training_args import BatchSamplers  # the path that all versions >= 3 have

    from medground.retrieve.rerank import minilm_path

    settings = settings or BiEncoderTrainSettings()
    if not triplets:
        raise ValueError("no training triplets: no judged question has both a helpful and an unhelpful passage "
                         "(collect feedback on more questions, or change the labelling rule or margin)")
    if settings.threads:
        torch.set_num_threads(settings.threads)
    out_dir = Path(out_dir)
    t0 = time.perf_counter()
    model = SentenceTransformer(settings.base_model or minilm_path(), device="cpu")
    model.max_seq_length = settings.max_length
    rng = random.Random(settings.seed)
    rows = list(triplets)
    rng.shuffle(rows)
    data = {"feedback": Dataset.from_dict({"anchor": [q for q, _, _ in rows], "positive": [p for _, p, _ in rows],
                                           "negative": [n for _, _, n in rows]})}
    if known_items:
        pairs = list(known_items)
        rng.shuffle(pairs)
        data["known_item"] = Dataset.from_dict({"anchor": [q for q, _ in pairs], "positive": [p for _, p in pairs]})
    loss = MultipleNegativesRankingLoss(model)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(out_dir / "_trainer"), num_train_epochs=settings.epochs,
        per_device_train_batch_size=settings.batch_size, learning_rate=settings.learning_rate,
        warmup_ratio=settings.warmup_ratio, seed=settings.seed, data_seed=settings.seed,
        # the same text twice in a batch would be its own false negative
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="no", report_to="none", logging_steps=10, use_cpu=True, disable_tqdm=True)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data,
                                         loss={name: loss for name in data})
    result = trainer.train()
    model.save(str(out_dir))
    report = BiEncoderReport(out_dir=str(out_dir), triplets=len(rows), known_item_pairs=len(known_items),
                             epochs=settings.epochs, steps=int(result.global_step),
                             train_loss=float(result.training_loss), seconds=round(time.perf_counter() - t0, 1))
    (out_dir / "medground_training.json").write_text(
        json.dumps({"settings": settings.model_dump(mode="json"), "report": asdict(report)}, indent=2) + "\n")
    return report


def rank_judged(judgements: Sequence[Judgement], model: str | Path | None, *, rule: str = "flip",
                margin: float = 0.1) -> dict:
    """Held-out check without an index: order each question's judged passages by the bi-encoder's
    similarity and compare the helpful ones' MRR with the first-stage order (questions with both kinds)."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from medground.eval.retrieval_metrics import reciprocal_rank
    from medground.retrieve.rerank import minilm_path

    encoder = SentenceTransformer(str(model) if model else minilm_path(), device="cpu")
    first, mine = [], []
    for js in by_question(judgements).values():
        helpful = {i for i, j in enumerate(js) if j.label(rule, margin)}
        if not 0 < len(helpful) < len(js):
            continue
        q = encoder.encode([js[0].query], normalize_embeddings=True)
        p = encoder.encode([j.passage for j in js], normalize_embeddings=True, batch_size=32)
        order = np.argsort(-(p @ q[0]), kind="stable").tolist()
        first.append(reciprocal_rank(list(range(len(js))), helpful))
        mine.append(reciprocal_rank(order, helpful))
    if not first:
        raise ValueError("no held-out question has both a helpful and an unhelpful passage")
    return {"questions": len(first), "first_stage_mrr": float(np.mean(first)), "bi_encoder_mrr": float(np.mean(mine))}
