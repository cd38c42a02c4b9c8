"""Shrink mined files to what `train judge-mined` and `train biencoder --judged … --holdout 0` read,
to carry them to a GPU machine (the full files hold 20 + up to 40 passages a question; 350 MB
for the three sets used here, 5 MB slim). Per question that yields a triplet, the slim row keeps
its paired hard negatives as `passages` and its answer-stating positives as `mined`, in order.

The script then checks, on the full and the slim files, that (1) the reader is asked the same
questions about the same passages in the same order, and (2) with --judged given, every cross-fit
fold trains on the same questions and the same triplets in the same order. It refuses to write
output that would change either. Not for --holdout > 0: its check ranks each held-out question's
own 20 passages, which the slim files drop.

    python benchmarks/slim_mined.py --mined .medground/feedback/crossfit-medqa.jsonl --out slim/crossfit-medqa.jsonl \
        [--judged .medground/feedback/judged-gpu-medqa.jsonl …]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mined", type=Path, action="append", required=True)
    ap.add_argument("--out", type=Path, action="append", required=True, help="one per --mined, in order")
    ap.add_argument("--judged", type=Path, action="append", default=[], help="check training triplets with these labels")
    ap.add_argument("--max-positives", type=int, default=2)
    ap.add_argument("--crossfit-set", action="append", default=None)
    ap.add_argument("--folds", type=int, default=2)
    args = ap.parse_args()
    if len(args.out) != len(args.mined):
        raise SystemExit("give one --out per --mined")

    from medground.train.feedback import load_feedback, stored_passages
    from medground.train.mining import (
        CrossFit,
        MinedJudgeSource,
        _mined_item,
        _paired,
        crossfit_training,
        load_mined,
        mined_triplets,
        reader_labels,
    )

    full = [load_mined(f) for f in args.mined]
    rows = []
    for items in full:
        rows.append([])
        for it in items:
            positives, negatives = _paired(it, args.max_positives)
            if positives:
                q = it.question
                rows[-1].append({"qid": q.qid, "dataset": q.dataset, "question": q.question, "options": q.options,
                                 "answer": q.answer, "passages": stored_passages(negatives),
                                 "mined": stored_passages(positives)})
    slim = [[_mined_item(row) for row in file_rows] for file_rows in rows]
    a, b = [it for items in full for it in items], [it for items in slim for it in items]

    def asked(items) -> list:
        source = MinedJudgeSource(items, args.max_positives)
        return [(q.qid, q.question, [(p.chunk.chunk_id, p.chunk.text) for p in source.retrieve(q.question)])
                for q in source.questions]

    if asked(a) != asked(b):
        raise SystemExit("slim files would change what judge-mined asks: nothing written")
    checked = {"judge_questions": len(asked(b))}
    if args.judged:
        judgements = [j for f in args.judged for j in load_feedback(f)]
        label, judged = reader_labels(judgements, "gain", 0.1), {(j.qid, j.query) for j in judgements}
        sets = tuple(args.crossfit_set or ["mirage/medqa", "mirage/mmlu"])
        for fold in range(args.folds):
            per = []
            for items in (a, b):
                side = [it for it in crossfit_training(items, CrossFit(sets, fold, args.folds))[0]
                        if (it.question.qid, it.question.question) in judged]
                per.append(([(it.question.qid, it.question.question) for it in side],
                            mined_triplets(side, args.max_positives, label)))
            if per[0] != per[1]:
                raise SystemExit(f"slim files would change fold {fold}'s training: nothing written")
            checked[f"fold_{fold}_triplets"] = len(per[1][1])
    for out, file_rows in zip(args.out, rows):
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(r) + "\n" for r in file_rows))
    print(json.dumps({**checked, "written": {str(o): len(r) for o, r in zip(args.out, rows)}}, indent=2))


if __name__ == "__main__":
    main()
