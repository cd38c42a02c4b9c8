"""`python benchmarks/consult_doseonly.py`: can a drug whose only entry is its dose tell a dose
question from another, better than the typer does?

Session 37 found 16 of Medication QA's 18 wrong development abstentions to be questions its
experts file under dose ("what milligrams olanzapine come in", "can i eat after taking rapaflo?")
about a drug whose only database entry is its dose, read out of sample by the typer as another
type. For such a drug, answering or abstaining is one decision: does the dose entry relate to the
question? Three signals, each read on Medication QA's development questions about dose-only
drugs (answerable: the expert's type maps to dosage):

  typer P(dosage)   the shipped recipe's typer trained without the question's fold (the models
                    `consult_e2e.py e2e --crossfit 5` keeps; on --split test, the shipped typer)
  cosine            MiniLM: the name-masked question against the dose entry's sentences, best one
  LLM P(yes)        the bundled LLM's "does this passage answer the question?" (the quote_answers
                    prompt) over the entry's first 900 characters

Per signal its ROC AUC; per combination the AUC of a logistic regression read by 5-fold CV (5
seeds). A signal that adds nothing to the typer's AUC cannot lower wrong abstention at the same
right abstention. Writes section ``dose_only_<split>`` of benchmarks/results/consult.json.

    python benchmarks/consult_doseonly.py --split dev
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from medground.eval.bench import print_table, save_section
from medground.eval.testbeds import exact_drug, medication_qa_items

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "consult.json"
FOLDS = 5


def fold_models(folder: str | None) -> list[Path]:
    """The cross-fit typers `consult_e2e.py e2e --crossfit 5` trained and keeps under
    $MEDGROUND_HOME/typer_crossfit/<recipe key>/ (the newest such folder unless one is named)."""
    from medground.paths import home
    from medground.train.typer_recipe import crossfit_path

    if folder:
        chosen = Path(folder)
    else:
        found = sorted((p for p in (home() / "typer_crossfit").glob("*") if crossfit_path(p, 0, FOLDS).exists()),
                       key=lambda p: p.stat().st_mtime)
        if not found:
            raise SystemExit("no cross-fit typers: run `python benchmarks/consult_e2e.py e2e --split dev "
                             "--sets medqa --crossfit 5` first, or pass --typers DIR")
        chosen = found[-1]
    paths = [crossfit_path(chosen, k, FOLDS) for k in range(FOLDS)]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise SystemExit(f"missing cross-fit typers: {', '.join(missing)}")
    print(f"fold typers: {chosen}")
    return paths


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


def rows_for(split: str, typers: str | None) -> list[dict]:
    from medground.eval.datasets import load_dataset
    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.drugrag import yes_probabilities
    from medground.pipelines.factory import build_pipeline
    from medground.reading.consult_typer import ConsultTyper, ConsultTyperModel, load_consult_typer
    from medground.retrieve.drug_intent import EMBEDDER_KIND
    from medground.retrieve.drugs import DrugRetriever
    from medground.store.drugs import DrugStore
    from medground.train.typer_recipe import crossfit_fold, masked_question

    store = DrugStore()
    retriever = DrugRetriever(store)
    questions = {f"mqa-{q.qid}": q for q in load_dataset("medication-qa")}
    embedder = load_embedder(EmbedderSettings(kind=EMBEDDER_KIND, threads=2))
    folds = [ConsultTyper(ConsultTyperModel.load(p), embedder) for p in fold_models(typers)] if split == "dev" else []
    shipped = load_consult_typer()
    llm = build_pipeline(load_pipeline_config("drugrag")).llm
    out = []
    for item in medication_qa_items(split, store):
        q = questions[item["id"]]
        drug, held = exact_drug(retriever, q.metadata["focus_drug"])
        if held != {"dosage"}:
            continue
        typer = folds[crossfit_fold(q.qid, FOLDS)] if folds else shipped
        text = masked_question(q)
        probs = typer.probabilities(text)
        entry = " ".join(a.text for a in store.attributes(drug) if a.type.value == "dosage")
        sentences = [s for s in entry.replace("\n", " ").split(". ") if s.strip()][:60]
        qv, sv = embedder.encode_queries([text])[0], embedder.encode_queries(sentences)
        cosine = float(np.max(sv @ qv / (np.linalg.norm(sv, axis=1) * np.linalg.norm(qv) + 1e-9)))
        p_llm = yes_probabilities(llm, "quote_answers", [{"question": q.question, "passage": entry[:900]}])[0]
        out.append({"id": item["id"], "question": q.question, "type": q.metadata["question_type"],
                    "answerable": not item["unanswerable"], "p_dosage": probs.get("dosage", 0.0),
                    "p_none": probs.get("none", 0.0), "cosine": cosine, "p_llm": p_llm})
        print(json.dumps(out[-1]), flush=True)
    return out


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--typers", default=None, help="the folder of the cross-fit typers (dev; default: the newest)")
    args = ap.parse_args()
    rows = rows_for(args.split, args.typers)
    y = np.array([r["answerable"] for r in rows])
    signals = {"typer P(dosage)": _logit(np.array([r["p_dosage"] for r in rows])),
               "cosine": np.array([r["cosine"] for r in rows]),
               "LLM P(yes)": _logit(np.array([r["p_llm"] for r in rows]))}
    table = [{"signals": name, "AUC": round(float(roc_auc_score(y, x)), 3), "read": "as is"}
             for name, x in signals.items()]
    names = list(signals)
    for combo in ([names[0], names[1]], [names[0], names[2]], names, [names[1], names[2]]):
        x = np.column_stack([signals[n] for n in combo])
        aucs = [roc_auc_score(y, cross_val_predict(LogisticRegression(), x, y, method="predict_proba",
                                                   cv=StratifiedKFold(5, shuffle=True, random_state=seed))[:, 1])
                for seed in range(5)]
        table.append({"signals": " + ".join(combo), "AUC": round(float(np.mean(aucs)), 3), "read": "5-fold CV x 5"})
    save_section(RESULTS, f"dose_only_{args.split}", {"n": len(rows), "answerable": int(y.sum()), "rows": table,
                                                      "items": rows})
    print_table(f"Dose-only drugs, Medication QA {args.split} (n = {len(rows)}, {int(y.sum())} dose questions)",
                table, ["signals", "AUC", "read"])


if __name__ == "__main__":
    main()
