"""Medication consultation: attribute typing and retrieval hit rates. Merges its sections into
benchmarks/results/consult.json.

  intent     Attribute typing of the Medication QA questions (mapped to the database's attribute
             vocabulary by retrieve/drug_intent.MEDICATION_QA_TYPES): keyword cues vs a softmax
             regression on MiniLM embeddings (stratified 5-fold cross-validation, accuracy @1/@2)
             vs the 1.5B scoring the attribute list by letter (--llm-n questions). Then trains the
             shipped model on every mapped question (src/medground/retrieve/data/drug_intent.npz).
  retrieval  HR@1/5/10 at drug and drug+attribute level (strict set rule: the gold drug, or the
             gold drug's gold attribute, among the top k) of each query configuration on the
             Medication QA single-turn questions the database can answer (eval/dialogues.eligible)
             and on one generated multi-turn dialogue per such question (eval/dialogues.generate,
             seeded). The learned attribute typer is never evaluated on a question it was trained
             on: each item is typed by the model of the 5-fold split that held its source question
             out. Configurations (no LLM): last question only; whole history; subject resolution +
             learned typing (retrieve/drug_subject.py, DrugRetriever.search_subject); the subject's
             name + the last turn (drugrag's `query: subject`). With --llm also, on the first
             --llm-n (default 100) multi-turn dialogues:
               plain JSON query (paper)   RagPULSE-style instruction: summarise the consultation as
                                          a search query, answered as JSON {"query": ...}
                                          (schema-constrained);
               tool calling               drugrag's distill step, search_engine(keywords), no candidates;
               tool calling + candidates  the same with the recognised drugs named to the model
               + repair (drugrag)         (likely subject first) and the call repaired when it drops
                                          or demotes the subject: what drugrag.yaml runs.
             Each dialogue's keywords go to DrugRetriever.search. "instruction-follow" = the model's
             answer parsed into a query (schema-valid JSON or a valid tool call); failures fall back
             to the whole dialogue and are counted.

    python benchmarks/consult.py intent [--llm-n 120]
    python benchmarks/consult.py retrieval [--n 200] [--llm]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from medground.eval.bench import make_llm, print_table, save_section
from medground.eval.evaluators import accuracy_row, mcnemar_row
from medground.eval.testbeds import eligible_medication_qa, labelled_medication_qa

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "consult.json"
KS = (1, 5, 10)


# --- intent --------------------------------------------------------------------------------------
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

    items, skipped, rare = labelled_medication_qa()
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
        rows.append({"typer": name, **accuracy_row(at1), "accuracy_at_2": round(sum(at2) / len(at2), 4),
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
    save_section(RESULTS, "intent", {
        "data": "Medication QA (MedInfo2019), question types mapped by retrieve/drug_intent.MEDICATION_QA_TYPES",
        "n": len(items), "left_out_unmapped_types": dict(skipped), "left_out_rare_types": rare,
        "embed_seconds": round(embed_s, 2), "rows": rows, "per_class": per_class,
        "shipped_model": str(drug_intent.MODEL_PATH.relative_to(ROOT)), "seed": args.seed})
    print_table(f"Attribute typing n={len(items)}", rows, ["typer", "n", "accuracy", "ci95", "accuracy_at_2",
                                                          "no_type", "mcnemar_vs_cues"])
    print_table("Per class @1", [{"type": k, **v} for k, v in per_class.items()], ["type", "n", "cues", "learned"])


# --- retrieval -----------------------------------------------------------------------------------
def fold_typers(seed: int):
    """qid → IntentTyper trained without that question (5-fold, stratified)."""
    from sklearn.model_selection import StratifiedKFold

    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.retrieve import drug_intent

    items, _, _ = labelled_medication_qa()
    embedder = load_embedder(EmbedderSettings(kind=drug_intent.EMBEDDER_KIND))
    vectors = embedder.encode_queries([q.question for q, _ in items])
    gold = [a for _, a in items]
    by_qid = {}
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    for train_idx, test_idx in folds.split(vectors, [g.value for g in gold]):
        typer = drug_intent.IntentTyper(drug_intent.train(vectors[train_idx], [gold[i] for i in train_idx]), embedder)
        for i in test_idx:
            by_qid[items[i][0].qid] = typer
    return by_qid


def rates(ranks: list[tuple[int | None, int | None]]) -> dict:
    n = len(ranks)
    row = {"n": n}
    for k in KS:
        row[f"drug_hr@{k}"] = round(sum(d is not None and d <= k for d, _ in ranks) / n, 4)
    for k in KS:
        row[f"attr_hr@{k}"] = round(sum(a is not None and a <= k for _, a in ranks) / n, 4)
    return row


def retrieval(args) -> None:
    from medground.eval import dialogues
    from medground.retrieve.drug_subject import resolve_subjects, subject_query

    store, retriever, items = eligible_medication_qa()
    typers = fold_typers(args.seed)
    sets = {"single-turn (Medication QA)": dialogues.single_turn(items),
            "multi-turn (generated)": dialogues.generate(items, store.drugs(), n=args.n, seed=args.seed)}

    def keyed(hits):
        return [(h.drug.drug_id, h.attribute.type if h.attribute else None) for h in hits]

    def last_only(d):
        return keyed(retriever.search(d.turns[-1], 10))

    def whole(d):
        return keyed(retriever.search(" ".join(d.turns), 10))

    def subject(d):
        subjects = resolve_subjects(retriever, d.turns)
        if not subjects:
            return keyed(retriever.search(" ".join(d.turns), 10))
        return keyed(retriever.search_subject([s.drug_id for s in subjects], d.turns[-1], 10))

    def subject_keywords(d):  # what drugrag's `query: subject` sends through the ordinary search
        return keyed(retriever.search(subject_query(resolve_subjects(retriever, d.turns), d.turns[-1]), 10))

    configs = {"last question only": last_only, "whole history": whole, "subject + learned typing": subject,
               "subject name + last turn (drugrag query: subject)": subject_keywords}
    follow: dict[str, list[bool]] = {}
    if args.llm:
        configs.update(llm_configs(args, retriever, keyed))
        follow = configs.pop("_follow")
        # The LLM costs seconds per dialogue: every configuration runs on the same first items.
        # The target set only (multi-turn): the single-turn set has no history to distill.
        sets = {"multi-turn (generated)": sets["multi-turn (generated)"][: args.llm_n or 100]}
    results, per_item = {}, {}
    for set_name, ds in sets.items():
        rows = []
        for name, fn in configs.items():
            ranks, secs = [], []
            for d in ds:
                retriever._typer = typers[d.source_qid]  # out-of-fold typing
                t = time.perf_counter()
                ranks.append(dialogues.hit_ranks(d, fn(d)))
                secs.append(time.perf_counter() - t)
            per_item[f"{set_name}/{name}"] = ranks
            rows.append({"config": name, **rates(ranks), "seconds_per_dialogue": round(float(np.mean(secs)), 4)})
            if name in follow:
                calls = follow[name][-len(ds):]
                rows[-1]["instruction_follow"] = round(sum(calls) / len(calls), 4)
            print(f"{set_name} / {name}: {rows[-1]}", file=sys.stderr, flush=True)
        base = [a == 1 for _, a in per_item[f"{set_name}/whole history"]]
        for row in rows:
            mine = [a == 1 for _, a in per_item[f"{set_name}/{row['config']}"]]
            row["attr_hr@1_mcnemar_vs_whole_history"] = mcnemar_row(base, mine)
        results[set_name] = rows
        print_table(f"{set_name}, n={len(ds)}", rows, ["config", "drug_hr@1", "drug_hr@5", "attr_hr@1", "attr_hr@5",
                                                      "attr_hr@10", "seconds_per_dialogue"])
    example = sets["multi-turn (generated)"][:3]
    save_section(RESULTS, "retrieval" + (f"_seed{args.seed}" if args.seed else "") + ("_llm" if args.llm else ""), {
        "sets": {k: len(v) for k, v in sets.items()}, "seed": args.seed, "rows": results,
        "typing": "out-of-fold: each item typed by the 5-fold model that did not see its source question",
        "examples": [{"turns": d.turns, "drug": d.drug_id, "attribute": d.attribute.value, **d.facts} for d in example],
        "per_item": {k: [list(r) for r in v] for k, v in per_item.items()}})


PLAIN_JSON = ("You help a pharmacist search a medicine database. Read the consultation and write the search "
              "query that finds the answer to the patient's last question: the drug name and what is asked. "
              'Reply with JSON only: {"query": "..."}')


class PlainQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=120)


def llm_configs(args, retriever, keyed) -> dict:
    """The --llm query configurations (see the module docstring), each dialogue → keyed hits; under
    "_follow" the per-configuration instruction-follow flags."""
    from medground.llm.structured import generate_json
    from medground.pipelines.base import Tally
    from medground.pipelines.drugrag import DRUG_RETRIEVE, DrugRagPipeline, DrugRagSettings
    from medground.retrieve.drugs import DrugPassageRetriever
    from medground.retrieve.engine import RetrievalEngine

    llm = make_llm(args.model, args.threads)
    engine = RetrievalEngine(DRUG_RETRIEVE, retrievers={"drugs": DrugPassageRetriever(retriever)})
    follow: dict[str, list[bool]] = {}

    def dialogue_text(d) -> str:
        return "\n".join(f"Patient: {t}" for t in d.turns)

    def plain(d):
        msgs = [{"role": "system", "content": PLAIN_JSON},
                {"role": "user", "content": f"Consultation:\n{dialogue_text(d)}"}]
        out = generate_json(llm, msgs, PlainQuery, max_tokens=64)
        follow.setdefault("plain JSON query (paper)", []).append(out.value is not None)
        query = out.value.query if out.value is not None else " ".join(d.turns)
        return keyed(retriever.search(query, 10))

    def tool(candidates: bool, label: str):
        pipe = DrugRagPipeline(llm, engine, DrugRagSettings(candidates=candidates))

        def run(d):
            query, failure, _ = pipe.distill(dialogue_text(d), Tally())
            follow.setdefault(label, []).append(failure is None)
            return keyed(retriever.search(query.text, 10))
        return run

    configs = {"plain JSON query (paper)": plain,
               "tool calling": tool(False, "tool calling"),
               "tool calling + candidates + repair (drugrag)": tool(True, "tool calling + candidates + repair (drugrag)")}
    configs["_follow"] = follow
    return configs


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
        retrieval(args)


if __name__ == "__main__":
    main()
