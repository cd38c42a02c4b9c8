"""The feedback labeller under the reader's prompt vs the plain prompt it used before (issue 29 item 4).

Until session 18 `train feedback` / `judge-mined` judged passages with a plain prompt ("Context: …
Question: … Options: … Answer with the letter …", system "You are a medical expert …") while the
reader serves another (llm/prompts/mcq_zeroshot.txt, passages shown as "[1] (Book / Chapter /
Section) text"): the retriever learned from judgements made under a prompt it never serves. Now
both use ``llm.scoring.mcq_messages``. This measures what the change does to the labels, on the
same questions and passages (BM25 over the textbooks, the question stem as query, as `train
feedback` retrieves):

  - closed-book accuracy under each prompt (paired exact McNemar);
  - the labels (rule gain: P(gold) rises by >= margin; rule flip: wrong closed book, right with
    the passage) under each prompt: agreement and Cohen's kappa;
  - per prompt, the share of answer-stating passages (the gold option's words in the passage, the
    mined positives' definition) called positive, and of the other passages.

    python benchmarks/feedback_prompt.py --dataset mirage/medqa --n 30 --passages 4 --section prompt_s18

Resumable: every forward pass goes through the LLM's response cache.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

from medground.eval.evaluators import compare, rate
from medground.eval.metrics import cohen_kappa

RESULTS = Path(__file__).parent / "results" / "feedback_agreement.json"
PLAIN_SYSTEM = "You are a medical expert. Answer the multiple-choice question."


def plain_messages(question: str, options: dict[str, str], context: str = "") -> list[dict[str, str]]:
    """The labeller's prompt before session 18, kept here only to measure the change."""
    opts = "\n".join(f"{k}. {v}" for k, v in options.items())
    ctx = f"Context:\n{context.strip()}\n\n" if context.strip() else ""
    user = f"{ctx}Question: {question.strip()}\n\nOptions:\n{opts}\n\nAnswer with the letter of the correct option only."
    return [{"role": "system", "content": PLAIN_SYSTEM}, {"role": "user", "content": user}]


def kappa(a: list[bool], b: list[bool]) -> float | None:
    k = cohen_kappa(a, b)
    return None if k is None else round(k, 4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="mirage/medqa")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--passages", type=int, default=4)
    ap.add_argument("--margin", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--section", default="prompt_s18")
    args = ap.parse_args()

    from medground.eval.datasets import load_dataset
    from medground.eval.retrieval_metrics import contains_answer
    from medground.llm.base import LLMSettings, create_llm
    from medground.llm.scoring import mcq_messages, score_options
    from medground.pipelines.factory import shared_engine
    from medground.retrieve.engine import RetrieveSettings
    from medground.retrieve.pack import citation_for
    from medground.schema import Evidence

    questions = [q for q in load_dataset(args.dataset) if q.answer and len(q.options) >= 2]
    random.Random(args.seed).shuffle(questions)
    questions = questions[: args.n]
    llm = create_llm(LLMSettings(model="qwen2.5-coder-1.5b"))
    engine = shared_engine(RetrieveSettings(retrievers=["bm25"], corpora=["openstax"], final_k=args.passages))

    def gold_p(scores, gold: str) -> float:
        return float(scores.probs.get(gold, 0.0)) if scores.outcome == "answered" else 0.0

    rows, t0 = [], time.perf_counter()
    for i, q in enumerate(questions, 1):
        letters, gold = list(q.options), q.answer
        base = {"plain": score_options(llm, plain_messages(q.question, q.options), letters),
                "reader": score_options(llm, mcq_messages(q.question, q.options), letters)}
        for rank, p in enumerate(engine.retrieve(q.question, k=args.passages), 1):
            shown = Evidence([citation_for(1, p)], token_count=0, budget=0).render()
            with_p = {"plain": score_options(llm, plain_messages(q.question, q.options, p.chunk.text), letters),
                      "reader": score_options(llm, mcq_messages(q.question, q.options, context=shown), letters)}
            row = {"qid": q.qid, "rank": rank, "states_answer": contains_answer(p.chunk.text, q.options[gold])}
            for name in ("plain", "reader"):
                b, w = base[name], with_p[name]
                row[name] = {"gain": gold_p(w, gold) - gold_p(b, gold) >= args.margin,
                             "flip": b.choice != gold and w.outcome == "answered" and w.choice == gold,
                             "base_right": b.outcome == "answered" and b.choice == gold,
                             "failed": b.outcome != "answered" or w.outcome != "answered"}
            rows.append(row)
        print(f"{i}/{len(questions)} {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    per_q = {r["qid"]: r for r in rows if r["rank"] == 1}
    out: dict = {"dataset": args.dataset, "questions": len(questions), "passages": len(rows),
                 "margin": args.margin, "retriever": "bm25 over openstax, the question stem as query",
                 "closed_book_right": {n: rate([r[n]["base_right"] for r in per_q.values()]) for n in ("plain", "reader")},
                 "closed_book_paired": compare([r["plain"]["base_right"] for r in per_q.values()],
                                               [r["reader"]["base_right"] for r in per_q.values()]).row(),
                 "parse_failures": {n: sum(r[n]["failed"] for r in rows) for n in ("plain", "reader")},
                 "load_1min": round(os.getloadavg()[0], 2)}
    for rule in ("gain", "flip"):
        a = [r["plain"][rule] for r in rows]
        b = [r["reader"][rule] for r in rows]
        stating = [r for r in rows if r["states_answer"]]
        other = [r for r in rows if not r["states_answer"]]
        out[rule] = {"agreement": rate([x == y for x, y in zip(a, b)]), "kappa": kappa(a, b),
                     "positives": {"plain": sum(a), "reader": sum(b)},
                     "paired": compare(a, b).row(),
                     "answer_stating_called_positive": {n: rate([r[n][rule] for r in stating]) for n in ("plain", "reader")},
                     "other_called_positive": {n: rate([r[n][rule] for r in other]) for n in ("plain", "reader")}}
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[args.section] = out
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
