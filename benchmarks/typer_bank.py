"""Does a bank of written consumer questions help the consultation typer? (session 29)

The shipped typer (reading/consult_typer.py) learns from Medication QA's development part only:
plain + name-masked questions and one copy with context sentences (train/typer_context.py). This
adds the bank (benchmarks/data/typer_bank.jsonl, train/typer_bank.py) to the training folds and
reads three things, on development data only:

- Medication QA dev, 5-fold CV (3 seeds), held-out folds read masked: does the bank hurt the
  real consumer questions the typer was built on?
- the bank itself, 5-fold CV over the bank (Medication QA always in training): lay and context
  questions, which the shipped typer never saw;
- the shipped recipe without the bank on the whole bank (trained on all of Medication QA dev).

McNemar on seed 0's pooled folds. Medication QA's test part is not read here.

    python benchmarks/typer_bank.py [--special drop|contraindications]  → consult.json "typer_bank_s29[...]"
    python benchmarks/typer_bank.py --banks typer_bank.jsonl --read typer_bank2.jsonl --section typer_bank2_read_s29
    python benchmarks/typer_bank.py --banks typer_bank.jsonl,typer_bank2.jsonl --section typer_banks12_s29

``--read``: a bank by another writer, never trained on, read by both arms (the typer without any
bank and with ``--banks``): how the bank's gain carries to questions written apart from it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from medground.eval.bench import print_table, save_section

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "consult.json"
BANK = ROOT / "benchmarks" / "data" / "typer_bank.jsonl"


def main() -> None:
    from sklearn.model_selection import StratifiedKFold

    from medground.eval.evaluators import rate
    from medground.eval.metrics import mcnemar_test
    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.reading.consult_typer import train
    from medground.retrieve.drug_intent import EMBEDDER_KIND
    from medground.store.drugs import DrugStore
    from medground.train.typer_bank import load_bank, medication_qa_questions, training_pairs
    from medground.train.typer_context import ContextMaker

    ap = argparse.ArgumentParser()
    ap.add_argument("--special", choices=["drop", "contraindications"], default="drop",
                    help="the bank's special_populations questions: dropped, or read as contraindications")
    ap.add_argument("--banks", default=BANK.name, help="comma-separated bank files under benchmarks/data")
    ap.add_argument("--read", default=None, help="a bank file read by both arms, never trained on")
    ap.add_argument("--section", default=None)
    args = ap.parse_args()
    special = None if args.special == "drop" else args.special

    emb = load_embedder(EmbedderSettings(kind=EMBEDDER_KIND, threads=2))
    store = DrugStore()
    plain, masked, y_list = medication_qa_questions("dev")
    y = np.array(y_list)
    names = [n for n, _, _ in store.names()]
    bank_items = [item for f in args.banks.split(",") for item in load_bank(BANK.parent / f.strip())]
    bank_texts, bank_labels = training_pairs(bank_items, names, special_as=special)
    yb = np.array(bank_labels)
    maker = ContextMaker(store.drugs(), store.attributes(), seed=0)
    xp, xm = emb.encode_queries(plain), emb.encode_queries(masked)
    xc = emb.encode_queries([maker.before(t) for t in masked])  # the shipped one context copy
    xb = emb.encode_queries(bank_texts)

    def fit(rows: np.ndarray, with_bank: np.ndarray | None):
        xs, ys = [xp[rows], xm[rows], xc[rows]], list(y[rows]) * 3
        if with_bank is not None:
            xs.append(xb[with_bank])
            ys += list(yb[with_bank])
        return train(np.vstack(xs), ys)

    def right(model, x, gold) -> np.ndarray:
        pred = model.probabilities(x).argmax(axis=1)
        return np.array([model.classes[i] == g for i, g in zip(pred, gold)])

    strata = np.array([lab if (y == lab).sum() >= 5 else "rare" for lab in y])
    every_bank = np.arange(len(yb))
    acc = {"without bank": [], "with bank": []}
    first = {}
    for seed in range(3):
        r = {k: np.zeros(len(y), dtype=bool) for k in acc}
        for tr, te in StratifiedKFold(5, shuffle=True, random_state=seed).split(xm, strata):
            r["without bank"][te] = right(fit(tr, None), xm[te], y[te])
            r["with bank"][te] = right(fit(tr, every_bank), xm[te], y[te])
        for k in acc:
            acc[k].append(float(r[k].mean()))
        if seed == 0:
            first = r
    mqa_test = mcnemar_test(list(first["without bank"]), list(first["with bank"]))

    # the bank read by the shipped recipe (all of Medication QA dev) and by 5-fold CV over the bank
    all_rows = np.arange(len(y))
    shipped_on_bank = right(fit(all_rows, None), xb, yb)
    bank_cv = np.zeros(len(yb), dtype=bool)
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(xb, yb):
        bank_cv[te] = right(fit(all_rows, tr), xb[te], yb[te])
    bank_test = mcnemar_test(list(shipped_on_bank), list(bank_cv))
    read_out = None
    if args.read:
        read_texts, read_labels = training_pairs(load_bank(BANK.parent / args.read), names, special_as=special)
        xr, yr = emb.encode_queries(read_texts), np.array(read_labels)
        r0, r1 = right(fit(all_rows, None), xr, yr), right(fit(all_rows, every_bank), xr, yr)
        read_test = mcnemar_test(list(r0), list(r1))
        read_out = {"bank": args.read, "n": len(yr), "without bank": rate(list(r0)), "with bank": rate(list(r1)),
                    "only_without": int((r0 & ~r1).sum()), "only_with": int((r1 & ~r0).sum()),
                    "mcnemar_p": round(float(read_test.pvalue), 4),
                    "per_class": {lab: {"n": int((yr == lab).sum()), "without": round(float(r0[yr == lab].mean()), 3),
                                        "with": round(float(r1[yr == lab].mean()), 3)} for lab in sorted(set(yr))}}
    per_class = {lab: {"n": int((yb == lab).sum()), "without": round(float(shipped_on_bank[yb == lab].mean()), 3),
                       "with": round(float(bank_cv[yb == lab].mean()), 3)} for lab in sorted(set(yb))}

    out = {
        "banks": args.banks, "bank_n": len(yb), "read_apart": read_out, "special_populations": args.special,
        "medication_qa_dev_n": len(y), "folds": 5, "seeds": 3,
        "medication_qa_dev_cv": {k: [round(a, 4) for a in v] for k, v in acc.items()},
        "medication_qa_dev_cv_mean": {k: round(float(np.mean(v)), 4) for k, v in acc.items()},
        "medication_qa_seed0": {"only_without": int((first["without bank"] & ~first["with bank"]).sum()),
                                "only_with": int((first["with bank"] & ~first["without bank"]).sum()),
                                "mcnemar_p": round(float(mqa_test.pvalue), 4)},
        "bank_read": {"without bank (shipped recipe)": rate(list(shipped_on_bank)),
                      "with bank (5-fold over the bank)": rate(list(bank_cv)),
                      "only_without": int((shipped_on_bank & ~bank_cv).sum()),
                      "only_with": int((bank_cv & ~shipped_on_bank).sum()),
                      "mcnemar_p": round(float(bank_test.pvalue), 4)},
        "bank_per_class": per_class,
    }
    save_section(RESULTS, args.section or f"typer_bank_s29_{args.special}", out)
    cols = ["read", "without bank", "with bank", "only without / only with", "McNemar p"]
    seed0, br = out["medication_qa_seed0"], out["bank_read"]
    print_table("The typer with and without the bank (development data only)", [
        dict(zip(cols, [f"Medication QA dev (CV, n = {len(y)})", f"{np.mean(acc['without bank']):.1%}",
                        f"{np.mean(acc['with bank']):.1%}", f"{seed0['only_without']} / {seed0['only_with']}",
                        f"{mqa_test.pvalue:.3f}"])),
        dict(zip(cols, [f"bank (n = {len(yb)})", f"{shipped_on_bank.mean():.1%}", f"{bank_cv.mean():.1%}",
                        f"{br['only_without']} / {br['only_with']}", f"{bank_test.pvalue:.3f}"]))], cols)
    if read_out:
        print_table(f"{args.read}, never trained on (n = {read_out['n']})", [
            {"arm": "without bank", "accuracy": f"{read_out['without bank']['rate']:.1%}"},
            {"arm": f"with {args.banks}", "accuracy": f"{read_out['with bank']['rate']:.1%}"},
            {"arm": "only without / only with, p",
             "accuracy": f"{read_out['only_without']} / {read_out['only_with']}, {read_out['mcnemar_p']}"}],
            ["arm", "accuracy"])
        print_table("per class", [{"class": k, **v} for k, v in read_out["per_class"].items()],
                    ["class", "n", "without", "with"])
    print_table("The bank per class", [{"class": k, "n": v["n"], "without": f"{v['without']:.0%}",
                                        "with": f"{v['with']:.0%}"} for k, v in per_class.items()],
                ["class", "n", "without", "with"])

if __name__ == "__main__":
    main()
