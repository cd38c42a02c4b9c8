"""The claim judge of eval/attribution.py against labelled claims (issue 28, item 5).

benchmarks/data/claims_labelled.jsonl: for each item of the textbook test bed (answerable and
new-chapter sets) three claims about its answering passage — a supported paraphrase, a wrong
option (or reversed direction) and an unstated claim built from the question's words — labelled
by whether the passage states them (textbook_testbed.md says how they were made). Claims share
their item's split (reading/splits.py): the LLM judge's threshold is fitted on dev (the value
maximising balanced accuracy), and agreement with the labels is reported on test.

    python benchmarks/attribution.py [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from medground.eval.bench import make_llm, print_table, save_section
from medground.eval.evaluators import accuracy_row
from medground.eval.metrics import balanced_accuracy, cohen_kappa, fit_cut

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
CLAIMS = DATA / "claims_labelled.jsonl"
RESULTS = ROOT / "benchmarks" / "results" / "reader.json"


def passages() -> dict[str, str]:
    """item id → "book / chapter / section: text" of its answering chunk."""
    from medground.store.settings import open_store

    items = [json.loads(line) for f in ("answerable_textbooks.jsonl", "newchapter_textbooks.jsonl")
             for line in (DATA / f).read_text().splitlines() if line.strip()]
    store = open_store(must_exist=True)
    chunks = {c.chunk_id: c for c in store.get_chunks([d["chunk_id"] for d in items])}
    return {d["qid"]: f"{' / '.join([chunks[d['chunk_id']].book, chunks[d['chunk_id']].chapter, *chunks[d['chunk_id']].section_path])}: "
                      f"{chunks[d['chunk_id']].text}" for d in items}


def main() -> None:
    from medground.reading.claims import LEXICAL_THRESHOLD, LexicalClaimJudge, LLMClaimJudge
    from medground.reading.splits import textbook_testbed_split

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    claims = [json.loads(line) for line in CLAIMS.read_text().splitlines() if line.strip()]
    text = passages()
    judges = {"llm": LLMClaimJudge(make_llm(args.model, args.threads, cache=True)), "lexical": LexicalClaimJudge()}
    scores: dict[str, list[float]] = {name: [] for name in judges}
    started = time.perf_counter()
    for i, c in enumerate(claims, 1):
        for name, judge in judges.items():
            p = judge.p_supported(c["claim"], text[c["id"]])
            scores[name].append(0.0 if p is None else p)
        if i % 25 == 0:
            print(f"{i}/{len(claims)}", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    split = [textbook_testbed_split(c["id"]) for c in claims]
    rows, per_kind = [], {}
    for name in judges:
        dev = [(c["label"], s) for c, s, sp in zip(claims, scores[name], split) if sp == "dev"]
        cut = fit_cut([a for a, _ in dev], [s for _, s in dev]) if name == "llm" else LEXICAL_THRESHOLD
        test = [(c, s >= cut) for c, s, sp in zip(claims, scores[name], split) if sp == "test"]
        labels, preds = [c["label"] for c, _ in test], [p for _, p in test]
        kappa = cohen_kappa(labels, preds)  # None: both labelings constant and equal, full agreement
        rows.append({"judge": name, "threshold": round(cut, 4), "threshold_from": "dev" if name == "llm" else "fixed",
                     "agreement": accuracy_row([a == b for a, b in zip(labels, preds)]),
                     "balanced_accuracy": round(balanced_accuracy(labels, preds), 4),
                     "kappa": round(1.0 if kappa is None else kappa, 4)})
        per_kind[name] = {k: accuracy_row([c["label"] == p for c, p in test if c["kind"] == k])
                          for k in sorted({c["kind"] for c in claims})}
    save_section(RESULTS, "attribution_judge", {
        "claims": len(claims), "test_claims": split.count("test"), "rows": rows, "per_kind_test": per_kind,
        "seconds_per_claim_llm": round(seconds / len(claims), 3),
        "per_claim": [{"id": c["id"], "kind": c["kind"], "label": c["label"],
                       **{n: round(scores[n][i], 4) for n in judges}} for i, c in enumerate(claims)]})
    flat = [{"judge": r["judge"], "threshold": r["threshold"], "agreement": r["agreement"]["accuracy"],
             "ci95": r["agreement"]["ci95"], "n": r["agreement"]["n"], "balanced": r["balanced_accuracy"],
             "kappa": r["kappa"]} for r in rows]
    print_table(f"Claim judge vs labels (test half, n={split.count('test')})", flat, list(flat[0]))
    for name, kinds in per_kind.items():
        print(name, {k: v["accuracy"] for k, v in kinds.items()})


if __name__ == "__main__":
    main()
