"""Does the reader judge the same on a GPU? llama.cpp (Q4_K_M, CPU) vs transformers (the same GGUF
dequantized, bf16 on a GPU): both files from `medground train judge-mined` on the same questions.

Per (question, passage) judged in both: the reader's P(gold) closed book and with the passage,
whether it answered right, and the training label each rule gives (gain: P(gold) rises by
>= margin; flip: wrong closed book, right with the passage). Reports the differences, the share
of labels that agree, and Cohen's kappa. Writes benchmarks/results/judge_parity.json.

    python benchmarks/judge_parity.py --a .medground/feedback/judged-medqa.jsonl \
        --b .medground/feedback/judged-gpu-medqa.jsonl --section medqa
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from medground.eval.bench import save_section
from medground.eval.evaluators import accuracy_row
from medground.eval.metrics import cohen_kappa

RESULTS = Path(__file__).parent / "results" / "judge_parity.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", type=Path, action="append", required=True, help="judged JSONL (reference runtime)")
    ap.add_argument("--b", type=Path, action="append", required=True, help="judged JSONL (other runtime)")
    ap.add_argument("--margin", type=float, default=0.1)
    ap.add_argument("--section", default="medqa")
    args = ap.parse_args()

    from medground.train.feedback import load_feedback

    def keyed(files: list[Path]) -> dict:
        return {(j.qid, j.query, j.chunk_id): j for f in files for j in load_feedback(f)}

    a, b = keyed(args.a), keyed(args.b)
    common = [k for k in a if k in b and not (a[k].parse_failure or b[k].parse_failure)]
    if not common:
        raise SystemExit("no (question, passage) judged in both --a and --b files")
    d_base = [abs(a[k].base_gold_prob - b[k].base_gold_prob) for k in common]
    d_with = [abs(a[k].with_gold_prob - b[k].with_gold_prob) for k in common]

    def gain(j) -> bool:
        return j.with_gold_prob - j.base_gold_prob >= args.margin

    def flip(j) -> bool:
        return (not j.base_correct) and j.with_correct

    rows = {}
    for name, rule in (("gain", gain), ("flip", flip)):
        la, lb = [rule(a[k]) for k in common], [rule(b[k]) for k in common]
        kappa = cohen_kappa(la, lb)
        rows[name] = {"agree": accuracy_row([x == y for x, y in zip(la, lb)]),
                      "kappa": None if kappa is None else round(kappa, 4),
                      "positive_a": sum(la), "positive_b": sum(lb),
                      "a_only": sum(x and not y for x, y in zip(la, lb)),
                      "b_only": sum(y and not x for x, y in zip(la, lb))}
    result = {
        "questions": len({k[:2] for k in common}), "judgements": len(common),
        "only_in_a": len(a.keys() - b.keys()), "only_in_b": len(b.keys() - a.keys()),
        "closed_book_p_gold_abs_diff": {"mean": round(sum(d_base) / len(d_base), 4), "max": round(max(d_base), 4)},
        "with_passage_p_gold_abs_diff": {"mean": round(sum(d_with) / len(d_with), 4), "max": round(max(d_with), 4)},
        "answer_with_passage_same": accuracy_row([a[k].with_correct == b[k].with_correct for k in common]),
        "labels": rows, "margin": args.margin,
        "files": {"a": [str(f) for f in args.a], "b": [str(f) for f in args.b]},
    }
    save_section(RESULTS, args.section, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
