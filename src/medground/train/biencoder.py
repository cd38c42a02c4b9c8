"""The dense retriever fine-tuned on LLM feedback (LLM-AMT's retriever training, sentence-transformers).

Training examples are (question, positive passage, hard negative) triplets: a positive is a
retrieved passage that helped the reader (``Judgement.label``), its hard negative a passage
retrieved for the same question that did not (the one that left the gold answer least likely).
MultipleNegativesRankingLoss (InfoNCE) adds every other passage in the batch as an easy negative.
Known-item pairs (a PubMedQA question and its own abstract) can be mixed in as extra positives.

Without the LLM, ``answer_triplets`` labels stored candidates (``train candidates``) the way DPR
labelled its training data (distant supervision): a positive is a retrieved passage that states
the gold option's text and no other option's; the hard negatives are the passages ranked highest
that do not state it. Cheap for every question, but noisy: a passage can name the answer without
answering the question.

The result is an ordinary SentenceTransformer directory: name it as the dense retriever's
embedder (``dense: {embedder: {model: DIR}}``); its index gets its own directory.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from medground.schema import Passage, Question
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
    # the trainer places the model itself: it takes a kind, not an index (pick a GPU with CUDA_VISIBLE_DEVICES)
    device: Literal["cpu", "cuda"] | None = Field(None, description="default: cuda when available, else cpu")


def train_device(settings: BiEncoderTrainSettings) -> str:
    import torch

    return settings.device or ("cuda" if torch.cuda.is_available() else "cpu")


@dataclass(slots=True)
class BiEncoderReport:
    out_dir: str
    triplets: int
    known_item_pairs: int
    epochs: float
    steps: int
    train_loss: float | None
    seconds: float
    device: str = "cpu"


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


# Options whose text says nothing on its own: a passage "containing" them proves nothing.
_VACUOUS_OPTIONS = ("all of the above", "none of the above", "both", "all of these", "none of these", "none",
                    "all", "neither")


# "All are causes of X except -": the gold option is the one the evidence does not support.
_NEGATED = re.compile(r"\b(except|not|false|incorrect|untrue|least)\b", re.IGNORECASE)


def usable_answer(text: str, min_chars: int = 4) -> bool:
    """Whether an option's text can be looked for in a passage: long enough and not a catch-all."""
    from medground.eval.retrieval_metrics import answer_words

    words = answer_words(text).strip()
    return len(words) >= min_chars and not words.replace(" ", "").isdigit() and \
        not any(words == v or words.startswith(v + " ") for v in _VACUOUS_OPTIONS)


def answer_labels(question: Question, passages: Sequence[Passage]) -> list[int] | None:
    """Per passage: 1 states the gold option's text and no other option's, 0 states no gold text,
    -1 ambiguous (states the gold text and another option's too; neither positive nor negative).
    None when the gold option cannot be looked for (see ``usable_answer``) or the question is
    negated ("… except", "which is not …"), where stating the gold option is no evidence for it."""
    from medground.eval.retrieval_metrics import contains_answer

    gold = question.options.get(question.answer or "")
    if not gold or not usable_answer(gold) or _NEGATED.search(question.question):
        return None
    others = [t for k, t in question.options.items() if k != question.answer and usable_answer(t)
              and not contains_answer(gold, t)]  # "Vitamin B6" is not evidence against "Vitamin B6 deficiency"
    labels = []
    for p in passages:
        if not contains_answer(p.chunk.text, gold):
            labels.append(0)
        else:
            labels.append(-1 if any(contains_answer(p.chunk.text, t) for t in others) else 1)
    return labels


def answer_label_counts(items: Sequence[tuple[Question, Sequence[Passage]]]) -> dict[str, int]:
    """How many questions could be labelled, how many have a positive, and the passage labels."""
    counts = {"questions": len(items), "usable_answer": 0, "with_positive": 0, "positives": 0, "ambiguous": 0,
              "negatives": 0}
    for question, passages in items:
        labels = answer_labels(question, passages)
        if labels is None:
            continue
        counts["usable_answer"] += 1
        counts["with_positive"] += 1 in labels
        counts["positives"] += labels.count(1)
        counts["ambiguous"] += labels.count(-1)
        counts["negatives"] += labels.count(0)
    return counts


def answer_triplets(items: Sequence[tuple[Question, Sequence[Passage]]], max_positives: int = 2
                    ) -> list[tuple[str, str, str]]:
    """(question, passage stating the answer, highest-ranked passage not stating it) from stored
    candidates: at most ``max_positives`` per question (the best ranked), each with its own hard negative."""
    out = []
    for question, passages in items:
        labels = answer_labels(question, passages)
        if labels is None:
            continue
        pos = [p for p, y in zip(passages, labels) if y == 1][:max_positives]
        neg = [p for p, y in zip(passages, labels) if y == 0]
        for i, p in enumerate(pos):
            if i < len(neg):
                out.append((question.question, p.chunk.text, neg[i].chunk.text))
    return out


def rank_candidates(items: Sequence[tuple[Question, Sequence[Passage]]], model: str | Path | None) -> dict:
    """Held-out check for answer labels: the answer-stating passages' MRR when each question's
    stored candidates are ordered by the bi-encoder vs in first-stage order."""
    groups = []
    for question, passages in items:
        labels = answer_labels(question, passages) or []
        groups.append((question.question, [p.chunk.text for p in passages], {i for i, y in enumerate(labels) if y == 1}))
    return _reorder_mrr(groups, model, "no held-out question has both an answer-stating and another passage")


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
    device = train_device(settings)
    model = SentenceTransformer(settings.base_model or minilm_path(), device=device)
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
        save_strategy="no", report_to="none", logging_steps=10, use_cpu=device == "cpu", disable_tqdm=True)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data,
                                         loss={name: loss for name in data})
    result = trainer.train()
    model.save(str(out_dir))
    report = BiEncoderReport(out_dir=str(out_dir), triplets=len(rows), known_item_pairs=len(known_items),
                             epochs=settings.epochs, steps=int(result.global_step),
                             train_loss=float(result.training_loss), seconds=round(time.perf_counter() - t0, 1),
                             device=device)
    (out_dir / "medground_training.json").write_text(
        json.dumps({"settings": settings.model_dump(mode="json"), "report": asdict(report)}, indent=2) + "\n")
    return report


def rank_judged(judgements: Sequence[Judgement], model: str | Path | None, *, rule: str = "flip",
                margin: float = 0.1) -> dict:
    """Held-out check without an index: order each question's judged passages by the bi-encoder's
    similarity and compare the helpful ones' MRR with the first-stage order (questions with both kinds)."""
    groups = [(js[0].query, [j.passage for j in js], {i for i, j in enumerate(js) if j.label(rule, margin)})
              for js in by_question(judgements).values()]
    return _reorder_mrr(groups, model, "no held-out question has both a helpful and an unhelpful passage")


def _reorder_mrr(groups: Sequence[tuple[str, Sequence[str], set[int]]], model: str | Path | None, empty: str) -> dict:
    """(query, passages in first-stage order, indices of the relevant ones) per question → MRR of the
    relevant passages in first-stage order vs ordered by the bi-encoder; questions where every or no
    passage is relevant say nothing and are skipped."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from medground.eval.retrieval_metrics import reciprocal_rank
    from medground.retrieve.rerank import minilm_path

    encoder = SentenceTransformer(str(model) if model else minilm_path(), device="cpu")
    first, mine = [], []
    for query, texts, relevant in groups:
        if not 0 < len(relevant) < len(texts):
            continue
        q = encoder.encode([query], normalize_embeddings=True)
        p = encoder.encode(list(texts), normalize_embeddings=True, batch_size=32)
        order = np.argsort(-(p @ q[0]), kind="stable").tolist()
        first.append(reciprocal_rank(list(range(len(texts))), relevant))
        mine.append(reciprocal_rank(order, relevant))
    if not first:
        raise ValueError(empty)
    return {"questions": len(first), "first_stage_mrr": float(np.mean(first)), "bi_encoder_mrr": float(np.mean(mine))}
