"""`python benchmarks/consult.py retrieval`: hit rates of the consultation query configurations.

Sets: the Medication QA single-turn questions the database can answer (eval/dialogues.eligible)
and one generated multi-turn dialogue per such question (eval/dialogues.generate, seeded).
The learned attribute typer is never evaluated on a question it was trained on: each item is
typed by the model of the 5-fold split that held its source question out.

Configurations (no LLM): last question only; whole history; subject resolution + learned typing
(retrieve/drug_subject.py, DrugRetriever.search_subject). With --llm also: the paper's plain
JSON-query instruction, tool calling (drugrag's distill step), and tool calling with the
recognised drugs given as candidates and the call repaired when it drops them.
HR@k (strict set rule: the gold drug, or the gold drug's gold attribute, among the top k).
With --llm every configuration runs on the first --llm-n (default 100) multi-turn dialogues.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from consult import labelled_questions, save
from reader import mcnemar_row, print_table

KS = (1, 5, 10)


def fold_typers(seed: int):
    """qid → IntentTyper trained without that question (5-fold, stratified)."""
    from sklearn.model_selection import StratifiedKFold

    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.retrieve import drug_intent

    items, _, _ = labelled_questions()
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
    from medground.drug_schema import normalize_name
    from medground.eval import dialogues
    from medground.eval.datasets import load_dataset
    from medground.store.drugs import DrugStore
    from medground.retrieve.drug_subject import resolve_subjects, subject_query
    from medground.retrieve.drugs import DrugRetriever

    store = DrugStore()
    retriever = DrugRetriever(store)
    typers = fold_typers(args.seed)

    def exact(name: str) -> str | None:
        hits = retriever.names.get(normalize_name(name).strip(), [])
        return hits[0][0] if hits else None

    items = dialogues.eligible(load_dataset("medication-qa"), store.drugs(), store.attributes(), exact)
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
        from consult_llm import llm_configs

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
    save("retrieval" + (f"_seed{args.seed}" if args.seed else "") + ("_llm" if args.llm else ""), {
        "sets": {k: len(v) for k, v in sets.items()}, "seed": args.seed, "rows": results,
        "typing": "out-of-fold: each item typed by the 5-fold model that did not see its source question",
        "examples": [{"turns": d.turns, "drug": d.drug_id, "attribute": d.attribute.value, **d.facts} for d in example],
        "per_item": {k: [list(r) for r in v] for k, v in per_item.items()}})
