"""`python benchmarks/consult_abstain.py`: does drugrag answer what the database says, and only that?

A seeded, paired probe set built from the medicine database's list-style records (OpenStax
prototype tables: drug interactions, adverse effects). For each sampled drug X:
  interaction, answerable     "I'm on <X>. Can I take <Z> with it?", Z from X's own list
  interaction, unanswerable   the same with Z from another drug's list, Z mentioned nowhere in X's records
  adverse effect, answerable  "... Can <X> cause <Y>?", Y from X's adverse effects
  adverse effect, unanswerable the same with Y from another drug's list, absent from X's records
"Unanswerable" means the database is silent (the truth may still be yes or no): the honest answer
is to say so, not to quote X's list of other substances. Answerable items are right only when the
answer quotes a record of X that names Z / Y.

Rows (one drugrag run per item; the support gate alone is read from the same run's metadata):
  support gate only      answer when support >= abstain_below (the previous behaviour)
  + address check        drugrag.yaml: the quoted entry must mention what the asking sentence names
McNemar pairs the two on the same items. The threshold is drugrag.yaml's, not refitted here.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

from medground.eval.bench import print_table, save_section
from medground.eval.evaluators import accuracy_row, mcnemar_row
from medground.eval.testbeds import eligible_medication_qa

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "consult.json"

TEMPLATES = {
    "interactions": ["I'm on {x}. Can I take {z} with it?", "Is it safe to use {z} while taking {x}?",
                     "My doctor started me on {x}. Can I still take {z}?"],
    "adverse_reactions": ["I started {x} a few weeks ago. Can it cause {z}?",
                          "Is {z} a side effect of {x}?", "Could {x} give me {z}?"],
}
HEADINGS = {"interactions": "Drug Interactions", "adverse_reactions": "Adverse Effects"}


def items_of(store, n_drugs: int, seed: int) -> list[dict]:
    from medground.index.text import MedicalTokenizer

    tok = MedicalTokenizer()
    lists: dict[str, dict[str, list[str]]] = {}
    record_terms: dict[str, set[str]] = {}
    names: dict[str, str] = {}
    for drug in store.drugs():
        attrs = store.attributes(drug.drug_id)
        record_terms[drug.drug_id] = {t for a in attrs for t in tok.tokenize(a.text)}
        for a in attrs:
            if a.heading == HEADINGS.get(a.type.value) and a.source.startswith("openstax-prototype"):
                entries = [e.strip() for e in a.text.splitlines()
                           if 3 <= len(e.strip()) <= 40 and not re.match(r"(?i)(no|none)\b", e.strip())]
                if entries:
                    lists.setdefault(drug.drug_id, {})[a.type.value] = entries
        names[drug.drug_id] = drug.brand_names[0] if drug.brand_names else drug.generic_name
    rng = random.Random(seed)
    drugs = sorted(d for d, kinds in lists.items() if len(kinds) == len(HEADINGS))
    rng.shuffle(drugs)
    out = []
    for x in drugs[:n_drugs]:
        for kind in HEADINGS:
            own = lists[x][kind]
            foreign = sorted({e for d, kinds in lists.items() if d != x for e in kinds.get(kind, ())
                              if not set(tok.tokenize(e)) & record_terms[x]})
            template = rng.choice(TEMPLATES[kind])
            for answerable, pool in ((True, own), (False, foreign)):
                z = rng.choice(pool)
                out.append({"drug": x, "kind": kind, "answerable": answerable, "asked": z,
                            "question": template.format(x=names[x], z=re.sub(r"\s*\(.*?\)", "", z).lower())})
    return out


def correct(item: dict, answer) -> tuple[bool, bool]:
    """(right with the address check, right with the support gate only)."""
    from medground.index.text import MedicalTokenizer

    tok = MedicalTokenizer()
    asked = set(tok.tokenize(item["asked"]))
    meta = answer.metadata
    gated_out = meta.get("support") is not None and meta["support"] < meta.get("abstain_below", 0.0)
    by_number = {c.number: c for c in answer.citations}

    def names_it(number) -> bool:
        c = by_number.get(number)
        return c is not None and c.chapter and bool(asked & set(tok.tokenize(c.text))) and \
            c.section == item["kind"]

    if item["answerable"]:
        with_check = answer.outcome == "answered" and names_it(answer.citations[0].number)
        # The support gate alone quotes its own choice: the same entry unless the check moved it.
        support_only = not gated_out and names_it(meta.get("supporting_entry"))
    else:
        with_check = answer.outcome != "answered"
        support_only = gated_out
    return with_check, support_only


def multi_turn_cost(seed: int) -> dict:
    """No LLM: on the generated multi-turn dialogues (`benchmarks/consult.py retrieval`'s set), how
    often would the address check find none of drugrag's 4 entries mentioning what the last turn's
    asking sentence names, among dialogues whose first entry is the gold drug + attribute? An
    upper bound on the answers it withholds (the support gate may already withhold some); whether
    the gold *type* of record answers a Medication QA question is not known, so examples are kept."""
    from medground.eval import dialogues
    from medground.pipelines.drugrag import DrugRagSettings
    from medground.reading.addressing import asking_sentences, unaddressed_terms, vocabulary
    from medground.retrieve.drug_subject import resolve_subjects, subject_query

    store, retriever, items = eligible_medication_qa()
    checked = DrugRagSettings().address_check_types
    vocab = vocabulary([*(a.text for a in retriever.attributes), *retriever.names])
    ds = dialogues.generate(items, store.drugs(), seed=seed)
    top_gold = withheld = 0
    examples = []
    for d in ds:
        hits = [h for h in retriever.search(subject_query(resolve_subjects(retriever, d.turns), d.turns[-1]), 4)
                if h.attribute is not None]
        if not hits or (hits[0].drug.drug_id, hits[0].attribute.type) != (d.drug_id, d.attribute):
            continue
        top_gold += 1
        asked = asking_sentences(d.turns[-1])
        matches = retriever.find_drugs(d.turns[-1])  # as drugrag.addressing_entry does
        asked += "".join(f" {retriever.drugs[m.drug_id].generic_name.replace('/', ' ')} "
                         f"{retriever.drugs[m.drug_id].drug_class}" for m in matches)
        missing = []
        for h in hits:
            own = [m.span for m in matches if m.drug_id == h.drug.drug_id]
            own += [h.drug.generic_name, *h.drug.brand_names, *h.drug.synonyms, h.drug.drug_class]
            missing.append(unaddressed_terms(asked, f"{h.attribute.text} {h.attribute.type.value.replace('_', ' ')}",
                                             exclude=[h.drug.display_name, *own], vocabulary=vocab))
        if all(missing) and hits[0].attribute.type.value in checked:
            withheld += 1
            if len(examples) < 30:
                examples.append({"last_turn": d.turns[-1], "unaddressed": missing[0],
                                 "first_entry": hits[0].attribute.text[:160]})
    return {"dialogues": len(ds), "gold_entry_first": top_gold, "withheld_by_address_check": withheld,
            "share": round(withheld / max(top_gold, 1), 4), "examples": examples}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drugs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config", default="drugrag")
    args = ap.parse_args()

    from medground.store.drugs import DrugStore
    from medground.pipelines.config import load_pipeline_config, resolve_pipeline
    from medground.pipelines.factory import build_pipeline
    from medground.schema import Question

    config = load_pipeline_config(resolve_pipeline(args.config))
    pipe = build_pipeline(config)
    threshold = pipe.settings.abstain_below
    with DrugStore() as store:
        items = items_of(store, args.drugs, args.seed)
    rows: dict[str, dict[str, list[bool]]] = {}
    examples, started = [], time.perf_counter()
    for i, item in enumerate(items):
        answer = pipe.answer(Question(qid=f"probe-{i}", dataset="probe", question=item["question"], options={}))
        answer.metadata.setdefault("abstain_below", threshold)
        with_check, support_only = correct(item, answer)
        key = f"{item['kind']}, {'answerable' if item['answerable'] else 'unanswerable'}"
        for name, ok in (("support gate only", support_only), ("+ address check (drugrag.yaml)", with_check)):
            rows.setdefault(name, {}).setdefault(key, []).append(ok)
            rows[name].setdefault("all", []).append(ok)
        if len(examples) < 8 and with_check != support_only:
            examples.append({**item, "answer": answer.text[:200], "outcome": answer.outcome})
        print(f"\r{i + 1}/{len(items)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    seconds = time.perf_counter() - started
    table = []
    for name, by_key in rows.items():
        for key, oks in by_key.items():
            table.append({"configuration": name, "set": key, **accuracy_row(oks)})
    base, new = rows["support gate only"]["all"], rows["+ address check (drugrag.yaml)"]["all"]
    cost = multi_turn_cost(args.seed)
    payload = {"items": len(items), "drugs": args.drugs, "seed": args.seed, "abstain_below": threshold,
               "rows": table, "mcnemar_all": mcnemar_row(base, new), "examples_changed": examples,
               "seconds_per_item": round(seconds / max(len(items), 1), 2), "multi_turn_cost": cost}
    save_section(RESULTS, "abstain", payload)
    print_table(f"drugrag on the probe set ({len(items)} items, seed {args.seed})", table,
                ["configuration", "set", "n", "correct", "accuracy", "ci95"])
    print("McNemar (address check vs support only, all items):", payload["mcnemar_all"])
    print("multi-turn set, gold entry first, withheld by the address check:",
          {k: v for k, v in cost.items() if k != "examples"})
    for e in cost["examples"]:
        print("  ", e)


if __name__ == "__main__":
    main()
