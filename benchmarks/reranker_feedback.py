"""LLM-AMT's retriever fine-tuning from LLM feedback, end to end (→ results/reranker_feedback.json).

1. Feedback: for a seeded subset of multiple-choice questions, the LLM scores the options closed
   book and with each of the top ``--passages`` hybrid (BM25 + MiniLM, RRF) textbook passages.
   Resumable: the JSONL under ``--feedback`` keeps every judged question.
2. Training: a cross-encoder from the bundled MiniLM on the training questions' pairs, once
   per labelling rule (flip = wrong→right, LLM-AMT; gain = P(gold) rises by ≥ 0.1).
3. Held-out questions (a stable hash split): MRR / P@1 of the first helpful passage in
   first-stage order, reranker order, and the expectation under a random order.

    python benchmarks/reranker_feedback.py --dataset medagents/medmcqa --subset 120 \\
        --model qwen2.5-coder-0.5b --passages 6 --threads 2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from medground import paths
from medground.eval.datasets import load_dataset, subset
from medground.llm.base import LLMSettings, create_llm
from medground.pipelines.config import load_pipeline_config
from medground.retrieve.engine import RetrievalEngine
from medground.train.feedback import (
    FeedbackSettings,
    collect,
    heldout,
    load_feedback,
    training_pairs,
)
from medground.train.reranker import RerankerTrainSettings, evaluate, train_reranker

RESULTS = Path(__file__).parent / "results" / "reranker_feedback.json"
ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="medagents/medmcqa")
    ap.add_argument("--subset", type=int, default=120)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--passages", type=int, default=6)
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "pipelines" / "rag.yaml",
                    help="its retrieve section gives the first stage")
    ap.add_argument("--feedback", type=Path, default=None, help="feedback JSONL (default under $MEDGROUND_HOME)")
    ap.add_argument("--holdout", type=float, default=0.25)
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--skip-collect", action="store_true", help="train and evaluate on the feedback already there")
    args = ap.parse_args()
    feedback_path = args.feedback or paths.home() / "feedback" / f"{args.dataset.replace('/', '_')}_{args.model}.jsonl"

    cfg = load_pipeline_config(args.config)
    t0 = time.perf_counter()
    report: dict = {"benchmark": "reranker_feedback", "command": " ".join([Path(sys.executable).name, *sys.argv]),
                    "date": datetime.now(UTC).isoformat(timespec="seconds"),
                    "machine": {"cpu_count": os.cpu_count(), "loadavg_start": os.getloadavg(),
                                "python": platform.python_version()},
                    "dataset": args.dataset, "subset": args.subset, "seed": args.seed, "model": args.model,
                    "first_stage": cfg.retrieve.model_dump(mode="json", include={"retrievers", "fusion", "top"}),
                    "passages_per_question": args.passages, "feedback_file": str(feedback_path)}
    if not args.skip_collect:
        questions = subset(load_dataset(args.dataset), args.subset, seed=args.seed)
        llm = create_llm(LLMSettings(model=args.model, threads=args.threads, cache=True))
        engine = RetrievalEngine(cfg.retrieve.model_copy(update={"rerank": None}))
        t = time.perf_counter()
        col = collect(llm, engine, questions, feedback_path, FeedbackSettings(passages=args.passages), progress=True)
        report["collect"] = {**asdict(col), "seconds": round(time.perf_counter() - t, 1),
                             "s_per_question": round((time.perf_counter() - t) / max(1, col.questions), 1)}
        print(json.dumps(report["collect"]), file=sys.stderr)

    judgements = load_feedback(feedback_path)
    qids = sorted({j.qid for j in judgements})
    train = [j for j in judgements if not heldout(j.qid, args.holdout, args.seed)]
    test = [j for j in judgements if heldout(j.qid, args.holdout, args.seed)]
    base_wrong = len({j.qid for j in judgements if not j.base_correct})
    report["feedback"] = {"questions": len(qids), "judgements": len(judgements),
                          "closed_book_wrong": base_wrong,
                          "parse_failures": sum(j.parse_failure for j in judgements),
                          "positives_flip": sum(j.label("flip") for j in judgements),
                          "positives_gain": sum(j.label("gain", 0.1) for j in judgements),
                          "train_questions": len({j.qid for j in train}),
                          "heldout_questions": len({j.qid for j in test})}
    print(json.dumps(report["feedback"]), file=sys.stderr)
    report["rules"] = {}
    for rule in ("flip", "gain"):
        out_dir = paths.home() / "models" / f"ce-feedback-{rule}"
        pairs = training_pairs(train, rule, 0.1)
        entry: dict = {"train_pairs": len(pairs), "train_positives": sum(y for *_, y in pairs)}
        try:
            entry["train"] = asdict(train_reranker(pairs, out_dir, RerankerTrainSettings(epochs=args.epochs,
                                                                                         seed=args.seed)))
            entry["heldout"] = evaluate(test, out_dir, rule=rule, margin=0.1)
        except ValueError as exc:  # too little data for this rule: say so
            entry["error"] = str(exc)
        report["rules"][rule] = entry
        print(rule, json.dumps(entry.get("heldout", entry.get("error"))), file=sys.stderr)
    report["wall_seconds"] = round(time.perf_counter() - t0, 1)
    report["machine"]["loadavg_end"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print_table(report)


def print_table(report: dict) -> None:
    print(f"\nFeedback: {report['feedback']}")
    print(f"{'rule':6s} {'pairs':>6s} {'pos':>4s} {'held-out q':>10s} {'MRR first':>10s} {'MRR rerank':>10s} "
          f"{'MRR random':>10s} {'P@1 first':>9s} {'P@1 rerank':>10s}")
    for rule, e in report["rules"].items():
        h = e.get("heldout")
        if not h:
            print(f"{rule:6s} {e['train_pairs']:6d} {e['train_positives']:4d}  {e.get('error', '')}")
            continue
        print(f"{rule:6s} {e['train_pairs']:6d} {e['train_positives']:4d} {h['questions']:10d} "
              f"{h['first_stage']['mrr']:10.3f} {h['reranker']['mrr']:10.3f} {h['random_mrr']:10.3f} "
              f"{h['first_stage']['p_at_1']:9.3f} {h['reranker']['p_at_1']:10.3f}")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
