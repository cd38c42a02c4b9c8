"""Does the reader agree with the answer-aware mined labels? No training: labels only.

`medground train judge-mined` asks the reader (the shipped 1.5B, letter probabilities) to answer
each mined question closed book, then with each passage a mined triplet would use as context: the
answer-stating positives and the question's own top-ranked passages that do not state the
answer (the paired hard negatives). Here, per judged question:

  gain = P(gold | passage) - P(gold | closed book)

and what share of the mined positives the reader's feedback would also call positive (rule gain:
gain >= margin; rule flip: wrong closed book, right with the passage), the same for the hard
negatives (a negative the reader calls helpful contradicts the mined label), and the paired
difference positive gain - negative gain (exact sign test and Wilcoxon signed-rank over the
pairs). Writes benchmarks/results/feedback_agreement.json (a section per --section).

    python benchmarks/feedback_agreement.py --mined .medground/feedback/crossfit-medqa.jsonl \
        --judged .medground/feedback/judged-medqa.jsonl --section medqa
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from medground.eval.bench import save_section
from medground.eval.evaluators import accuracy_row

RESULTS = Path(__file__).parent / "results" / "feedback_agreement.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mined", type=Path, action="append", required=True)
    ap.add_argument("--judged", type=Path, action="append", required=True)
    ap.add_argument("--max-positives", type=int, default=2, help="as given to judge-mined and training")
    ap.add_argument("--margin", type=float, default=0.1)
    ap.add_argument("--section", default="medqa")
    args = ap.parse_args()

    from scipy.stats import binomtest, wilcoxon

    from medground.train.feedback import load_feedback
    from medground.train.mining import judged_passages, load_mined

    judgements = [j for f in args.judged for j in load_feedback(f)]
    by_key = {(j.qid, j.query, j.chunk_id): j for j in judgements}
    asked = {(j.qid, j.query) for j in judgements}  # a text can repeat under another id: judged once
    items = [it for f in args.mined for it in load_mined(f) if (it.question.qid, it.question.question) in asked]

    pos_gain, neg_gain, pos_flip, neg_flip, pairs, failures = [], [], [], [], [], 0
    closed_right = []
    for item in items:
        passages = judged_passages(item, args.max_positives)
        n = len(passages) // 2
        judged = [by_key.get((item.question.qid, item.question.question, p.chunk.chunk_id)) for p in passages]
        if any(j is None for j in judged):
            continue  # judged with other settings: not comparable
        if any(j.parse_failure for j in judged):
            failures += 1
            continue
        closed_right.append(judged[0].base_correct)
        for k, j in enumerate(judged):  # judged_passages: n positives, then their n negatives
            (pos_gain if k < n else neg_gain).append(j.with_gold_prob - j.base_gold_prob)
            (pos_flip if k < n else neg_flip).append((not j.base_correct) and j.with_correct)
        pairs += [(judged[k].with_gold_prob - judged[n + k].with_gold_prob) for k in range(n)]

    def share(flags: list[bool]) -> dict:
        return accuracy_row(flags) if flags else {"n": 0}

    nonzero = [d for d in pairs if d != 0]
    result = {
        "questions": len(closed_right), "parse_failure_questions": failures,
        "closed_book_right": share(closed_right),
        "positives": len(pos_gain), "negatives": len(neg_gain),
        "positive_gain_ge_margin": share([g >= args.margin for g in pos_gain]),
        "negative_gain_ge_margin": share([g >= args.margin for g in neg_gain]),
        "positive_flip": share(pos_flip), "negative_flip": share(neg_flip),
        "mean_gain_positive": round(sum(pos_gain) / len(pos_gain), 4) if pos_gain else None,
        "mean_gain_negative": round(sum(neg_gain) / len(neg_gain), 4) if neg_gain else None,
        "pairs": len(pairs), "pairs_positive_higher": sum(d > 0 for d in pairs),
        "sign_test_p": float(f"{binomtest(sum(d > 0 for d in nonzero), len(nonzero)).pvalue:.6g}") if nonzero else None,
        "wilcoxon_p": float(f"{wilcoxon(nonzero).pvalue:.6g}") if len(nonzero) >= 10 else None,
        "margin": args.margin, "max_positives": args.max_positives,
        "files": {"mined": [str(f) for f in args.mined], "judged": [str(f) for f in args.judged]},
    }
    save_section(RESULTS, args.section, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
