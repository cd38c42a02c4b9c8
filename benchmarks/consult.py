"""Medication consultation: attribute typing and retrieval hit rates. Merges its sections into
benchmarks/results/consult.json.

  intent     Attribute typing of the Medication QA questions (mapped to the database's attribute
             vocabulary by retrieve/drug_intent.MEDICATION_QA_TYPES): keyword cues vs a softmax
             regression on MiniLM embeddings (stratified 5-fold cross-validation, accuracy @1/@2)
             vs the 1.5B scoring the attribute list by letter (--llm-n questions). Then trains the
             shipped model on every mapped question (src/medground/retrieve/data/drug_intent.npz).
  retrieval  HR@1/5/10 at drug and drug+attribute level (strict set rule) of each query
             configuration on the Medication QA single-turn questions whose drug is in the
             database and on the generated multi-turn dialogues (eval/dialogues.py).

    python benchmarks/consult.py intent [--llm-n 120]
    python benchmarks/consult.py retrieval [--n 200] [--llm]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reader import acc_row, machine, mcnemar_row, print_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "consult.json"
MIN_EXAMPLES = 5  # a type with fewer labelled questions is not learnable (reported, not trained)


def save(section: str, payload: dict) -> None:
    import json

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[section] = {**payload, "machine": machine(), "command": "python " + " ".join(sys.argv)}
    RESULTS.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def eligible_items():
    """(store, DrugRetriever, the Medication QA items the database can answer) — the source of
    the single-turn set and of the generated multi-turn dialogues (eval/dialogues.py)."""
    from medground.drug_schema import normalize_name
    from medground.eval import dialogues
    from medground.eval.datasets import load_dataset
    from medground.store.drugs import DrugStore
    from medground.retrieve.drugs import DrugRetriever

    store = DrugStore()
    retriever = DrugRetriever(store)

    def exact(name: str) -> str | None:
        hits = retriever.names.get(normalize_name(name).strip(), [])
        return hits[0][0] if hits else None

    return store, retriever, dialogues.eligible(load_dataset("medication-qa"), store.drugs(), store.attributes(), exact)


def labelled_questions():
    """(question, attribute) for every Medication QA question whose type maps to an attribute."""
    from medground.eval.datasets import load_dataset
    from medground.retrieve.drug_intent import attribute_for

    items, skipped = [], Counter()
    for q in load_dataset("medication-qa"):
        attr = attribute_for(q.metadata["question_type"])
        if attr is None:
            skipped[q.metadata["question_type"]] += 1
        else:
            items.append((q, attr))
    counts = Counter(a for _, a in items)
    rare = {a for a, n in counts.items() if n < MIN_EXAMPLES}
    return [(q, a) for q, a in items if a not in rare], skipped, {a.value: counts[a] for a in rare}


def cue_top(text: str) -> list:
    from medground.retrieve.drugs import attribute_intents

    intents = attribute_intents(text)
    return [t for t, _ in sorted(intents.items(), key=lambda kv: -kv[1])]


def llm_top(llm, text: str, classes: list) -> list:
    """The 1.5B scoring the attribute list by letter (one forward pass, permutation-free)."""
    from medground.llm.scoring import score_options

    letters = [chr(ord("A") + i) for i in range(len(classes))]
    options = "\n".join(f"{x}. {c.value.replace('_', ' ')}" for x, c in zip(letters, classes))
    msgs = [{"role": "system", "content": "You sort medication questions by what they ask about."},
            {"role": "user", "content": f"Question: {text}\n\nWhat does the question ask about?\n{options}\n\n"
                                        "Reply with the letter only."}]
    s = score_options(llm, msgs, letters)
    if s.outcome != "answered":
        return []
    return [classes[letters.index(x)] for x in sorted(letters, key=lambda x: -s.probs[x])]


def intent(args) -> None:
    from sklearn.model_selection import StratifiedKFold

    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.retrieve import drug_intent

    items, skipped, rare = labelled_questions()
    texts = [q.question for q, _ in items]
    gold = [a for _, a in items]
    embedder = load_embedder(EmbedderSettings(kind=drug_intent.EMBEDDER_KIND))
    t = time.perf_counter()
    vectors = embedder.encode_queries(texts)
    embed_s = time.perf_counter() - t
    pred_learned: list[list] = [[] for _ in items]
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=args.seed)
    for train_idx, test_idx in folds.split(vectors, [g.value for g in gold]):
        model = drug_intent.train(vectors[train_idx], [gold[i] for i in train_idx])
        for i, top in zip(test_idx, model.top(vectors[test_idx], k=2)):
            pred_learned[i] = [c for c, _ in top]
    pred_cues = [cue_top(x) for x in texts]
    rows = []
    arms = {"keyword cues": pred_cues, "learned (MiniLM + logistic regression, 5-fold CV)": pred_learned}
    llm_n = min(args.llm_n, len(items))
    if llm_n:
        from reader import make_llm

        llm = make_llm(args.model, args.threads)
        classes = sorted(set(gold), key=lambda a: a.value)
        sub = np.random.default_rng(args.seed).permutation(len(items))[:llm_n]
        pred_llm = {int(i): llm_top(llm, texts[i], classes) for i in sub}
        arms[f"1.5B letter scoring (n={llm_n})"] = pred_llm
    base = None
    for name, preds in arms.items():
        idx = sorted(preds) if isinstance(preds, dict) else range(len(items))
        at1 = [bool(preds[i]) and preds[i][0] == gold[i] for i in idx]
        at2 = [gold[i] in preds[i][:2] for i in idx]
        if base is None:
            base = (list(idx), at1)
        paired = [b for i, b in zip(base[0], base[1]) if i in set(idx)]
        rows.append({"typer": name, **acc_row(at1), "accuracy_at_2": round(sum(at2) / len(at2), 4),
                     "no_type": sum(not preds[i] for i in idx),
                     "mcnemar_vs_cues": None if name == "keyword cues" else mcnemar_row(paired, at1)})
    per_class = {}
    for a in sorted(set(gold), key=lambda a: a.value):
        idx = [i for i, g in enumerate(gold) if g == a]
        per_class[a.value] = {"n": len(idx), "cues": round(sum(bool(pred_cues[i]) and pred_cues[i][0] == a
                                                                for i in idx) / len(idx), 3),
                              "learned": round(sum(pred_learned[i][0] == a for i in idx) / len(idx), 3)}
    final = drug_intent.train(vectors, gold)
    final.save(drug_intent.MODEL_PATH)
    save("intent", {"data": "Medication QA (MedInfo2019), question types mapped by "
                            "retrieve/drug_intent.MEDICATION_QA_TYPES", "n": len(items),
                    "left_out_unmapped_types": dict(skipped), "left_out_rare_types": rare,
                    "embed_seconds": round(embed_s, 2), "rows": rows, "per_class": per_class,
                    "shipped_model": str(drug_intent.MODEL_PATH.relative_to(ROOT)), "seed": args.seed})
    print_table(f"Attribute typing n={len(items)}", rows, ["typer", "n", "accuracy", "ci95", "accuracy_at_2",
                                                          "no_type", "mcnemar_vs_cues"])
    print_table("Per class @1", [{"type": k, **v} for k, v in per_class.items()], ["type", "n", "cues", "learned"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("section", choices=["intent", "retrieval"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--llm-n", type=int, default=0,
                    help="intent: questions typed by the LLM too; retrieval --llm: items per set (default 100)")
    ap.add_argument("--n", type=int, default=200, help="retrieval: dialogues to generate")
    ap.add_argument("--llm", action="store_true", help="retrieval: run the LLM distillation configurations")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    if args.section == "intent":
        intent(args)
    else:
        from consult_retrieval import retrieval

        retrieval(args)


if __name__ == "__main__":
    main()
