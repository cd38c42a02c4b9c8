"""Consultation replies judged end to end (issue 27). Merges sections into
benchmarks/results/consult.json; imports only the package.

  typer   The reply's typer (reading/consult_typer.py: attribute types plus "none", a question
          no entry answers) trained on Medication QA's development part only; accuracy on the
          frozen test part (reading/splits.py). Writes src/medground/reading/data/consult_typer.npz.
  e2e     The drugrag pipeline (a shipped config) on three sets, dev or test part:
          written    benchmarks/data/consult_written.jsonl (multi-turn, written apart from the
                     project; see its header in docs/benchmarks.md)
          medqa      Medication QA single-turn questions whose drug is in the database
          generated  eval/dialogues.py dialogues built from Medication QA test-part questions
          apart      benchmarks/data/consult_apart.jsonl (session 28; development only)
          apart2     benchmarks/data/consult_apart2.jsonl (session 29; test only)
          apart3     benchmarks/data/consult_apart3.jsonl (session 29; development only, 60 items)
          apart4     benchmarks/data/consult_apart4.jsonl (session 30; test only, 50 items)
          apart5     benchmarks/data/consult_apart5.jsonl (session 31; development only, 60 items;
                     read first by the shipped reply and the word-gram typer, both unseen)
          apart6     benchmarks/data/consult_apart6.jsonl (session 32; development only, 60 items, 54 of
                     55 drugs new to the sets written apart; read first by the session-32 reply)
          apart7     benchmarks/data/consult_apart7.jsonl (session 33; development only, 60 items, 55
                     drugs new to the sets written apart; read by the session's first and last reply only)
          apart8     benchmarks/data/consult_apart8.jsonl (session 34; development only, 60 items, 52
                     drugs new to the sets written apart; read by the session's first and last reply only)
          Per set: the reply's cited entry right at drug and drug + attribute level, rubric checks
          (first sentence names the asked item when the entry has it; yes/no agrees with the
          entry; no quoted text outside the cited entries), wrong and right abstention, seconds.

    python benchmarks/consult_e2e.py typer
    python benchmarks/consult_e2e.py e2e --split dev [--config drugrag] [--sets written,medqa,generated]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np

from medground.eval.bench import save_section
from medground.eval.testbeds import exact_drug, medication_qa_items as medqa_items
from medground.eval.evaluators import rate  # every rate is computed by the library

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "consult.json"
DATA_DIR = ROOT / "benchmarks" / "data"
WRITTEN = DATA_DIR / "consult_written.jsonl"
# Consultations about a condition the patient has, with interaction and indication look-alikes
# (session 21; made as consult_written.md says, section "consult_conditions.jsonl")
CONDITIONS = ROOT / "benchmarks" / "data" / "consult_conditions.jsonl"
APART = ROOT / "benchmarks" / "data" / "consult_apart.jsonl"  # session 28: development only, no test half
APART2 = ROOT / "benchmarks" / "data" / "consult_apart2.jsonl"  # session 29: test only, no development half
APART3 = ROOT / "benchmarks" / "data" / "consult_apart3.jsonl"  # session 29: development only
APART4 = ROOT / "benchmarks" / "data" / "consult_apart4.jsonl"  # session 30: test only
APART5 = ROOT / "benchmarks" / "data" / "consult_apart5.jsonl"  # session 31: development only
APART6 = ROOT / "benchmarks" / "data" / "consult_apart6.jsonl"  # session 32: development only
APART7 = ROOT / "benchmarks" / "data" / "consult_apart7.jsonl"  # session 33: development only
APART8 = ROOT / "benchmarks" / "data" / "consult_apart8.jsonl"  # session 34: development only
# Which entries (and items) answer each written dialogue, labelled blind to any reply (consult_written.md)
ENTRY_LABELS = [ROOT / "benchmarks" / "data" / "consult_written_entries.jsonl",
                ROOT / "benchmarks" / "data" / "consult_conditions_entries.jsonl"]


def save(section: str, payload: dict) -> None:
    """Merge a section into benchmarks/results/consult.json (eval/bench.py)."""
    save_section(RESULTS, section, payload)


def _masked(q) -> str:
    """The question with its focus drug read as "this medicine" (the typer's recipe does it)."""
    from medground.train.typer_recipe import masked_question

    return masked_question(q)


def medqa_labelled(split: str) -> list:
    """Medication QA questions of one split with their typer class (an unknown type left out)."""
    from medground.eval.datasets import load_dataset
    from medground.reading.consult_typer import label_of
    from medground.reading.splits import medication_qa_split

    items = [(q, label_of(q.metadata["question_type"])) for q in load_dataset("medication-qa")]
    return [(q, lab) for q, lab in items if lab is not None and medication_qa_split(q.qid) == split]


# The shipped typer's recipe (session 31; `typer --context 1 --bank <the three banks> --grams 1`)
SHIPPED_TYPER = {"context": 1, "grams": 1.0,
                 "banks": tuple(DATA_DIR / f"typer_bank{n}.jsonl" for n in ("", "2", "3"))}


def recipe_of(args):
    from medground.train.typer_recipe import TyperRecipe

    banks = tuple(Path(p.strip()) for p in args.bank.split(",")) if args.bank else ()
    return TyperRecipe(c=args.c, mask=args.mask, context=args.context, conditions=args.conditions, banks=banks,
                       relabels=Path(args.relabels) if args.relabels else None, bank_special=args.bank_special,
                       grams=args.grams)


def _typer_cv(embedder, dev, seeds: int = 3, folds: int = 5) -> dict:
    """Development part only: k-fold accuracy of the typer read plain vs with drug names masked
    (trained on plain + masked questions, read masked); McNemar on the pooled first-seed folds."""
    from sklearn.model_selection import StratifiedKFold

    from medground.eval.metrics import mcnemar_test
    from medground.reading.consult_typer import train

    y = np.array([lab for _, lab in dev])
    x_plain = embedder.encode_queries([q.question for q, _ in dev])
    x_mask = embedder.encode_queries([_masked(q) for q, _ in dev])
    strata = np.array([lab if (y == lab).sum() >= folds else "rare" for lab in y])
    acc: dict[str, list[float]] = {"plain": [], "masked": []}
    first: dict[str, np.ndarray] = {}
    for seed in range(seeds):
        right = {k: np.zeros(len(y), dtype=bool) for k in acc}
        for tr, te in StratifiedKFold(folds, shuffle=True, random_state=seed).split(x_plain, strata):
            for k in acc:
                xt, yt = (x_plain[tr], list(y[tr])) if k == "plain" else \
                    (np.vstack([x_plain[tr], x_mask[tr]]), list(y[tr]) * 2)
                m = train(xt, yt)
                pred = m.probabilities(x_plain[te] if k == "plain" else x_mask[te]).argmax(axis=1)
                right[k][te] = [m.classes[i] == g for i, g in zip(pred, y[te])]
        for k in acc:
            acc[k].append(round(float(right[k].mean()), 4))
        if seed == 0:
            first = right
    test = mcnemar_test(list(first["plain"]), list(first["masked"]))
    return {"n": len(y), "folds": folds, "seeds": seeds, "accuracy": acc,
            "mean": {k: round(float(np.mean(v)), 4) for k, v in acc.items()},
            "seed0_plain_only_right": int((first["plain"] & ~first["masked"]).sum()),
            "seed0_masked_only_right": int((first["masked"] & ~first["plain"]).sum()),
            "seed0_mcnemar_p": round(float(test.pvalue), 4)}


def _context_cv(embedder, dev, copies: int, folds: int = 5) -> dict:
    """Development part only: the masked typer trained without vs with ``copies`` context-prefixed
    copies of each question (train/typer_context.py), read on held-out questions as they are and
    with context sentences about the *other half* of the database's drugs before them."""
    from sklearn.model_selection import StratifiedKFold

    from medground.eval.metrics import mcnemar_test
    from medground.reading.consult_typer import train
    from medground.store.drugs import DrugStore
    from medground.train.typer_context import ContextMaker

    store = DrugStore()
    drugs, attributes = sorted(store.drugs(), key=lambda d: d.drug_id), store.attributes()
    fit_half, read_half = ContextMaker(drugs[::2], attributes, seed=2), ContextMaker(drugs[1::2], attributes, seed=1)
    y = np.array([lab for _, lab in dev])
    masked = [_masked(q) for q, _ in dev]
    x_plain = embedder.encode_queries([q.question for q, _ in dev])
    x_mask = embedder.encode_queries(masked)
    x_read = embedder.encode_queries([read_half.before(t) for t in masked])
    x_fit = embedder.encode_queries([fit_half.before(t) for t in masked for _ in range(copies)])
    x_fit = x_fit.reshape(len(y), copies, -1)
    strata = np.array([lab if (y == lab).sum() >= folds else "rare" for lab in y])
    right = {(m, r): np.zeros(len(y), dtype=bool) for m in ("without", "with") for r in ("bare", "in context")}
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=0).split(x_plain, strata):
        for m in ("without", "with"):
            xs, ys = [x_plain[tr], x_mask[tr]], list(y[tr]) * 2
            if m == "with":
                xs.append(x_fit[tr].reshape(-1, x_fit.shape[-1]))
                ys += [lab for lab in y[tr] for _ in range(copies)]
            model = train(np.vstack(xs), ys)
            for r, x in (("bare", x_mask), ("in context", x_read)):
                pred = model.probabilities(x[te]).argmax(axis=1)
                right[(m, r)][te] = [model.classes[i] == g for i, g in zip(pred, y[te])]
    out: dict = {"n": len(y), "folds": folds, "copies": copies}
    for r in ("bare", "in context"):
        a, b = right[("without", r)], right[("with", r)]
        out[r] = {"without_context_training": round(float(a.mean()), 4), "with": round(float(b.mean()), 4),
                  "only_without": int((a & ~b).sum()), "only_with": int((b & ~a).sum()),
                  "mcnemar_p": round(float(mcnemar_test(list(a), list(b)).pvalue), 4)}
    return out


def typer_cmd(args) -> None:
    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.reading.consult_typer import MODEL_PATH, ConsultTyper
    from medground.retrieve.drug_intent import EMBEDDER_KIND
    from medground.train.typer_recipe import fit_typer

    dev, test = medqa_labelled("dev"), medqa_labelled("test")
    embedder = load_embedder(EmbedderSettings(kind=EMBEDDER_KIND, threads=2))
    cv = _typer_cv(embedder, dev) if args.cv else None
    context_cv = _context_cv(embedder, dev, args.context) if args.cv and args.context else None
    model = fit_typer(recipe_of(args), dev, embedder)
    typer = ConsultTyper(model, embedder)
    out_path = Path(args.out) if args.out else MODEL_PATH
    if args.dev_only:  # a candidate to try on the development sets: its test figure is not read yet
        model.save(out_path)
        print(f"wrote {out_path} (classes {model.classes}; Medication QA's test part not read)")
        return
    test_texts = [_masked(q) if args.mask else q.question for q, _ in test]
    probs = model.probabilities(embedder.encode_queries(test_texts), test_texts)
    pred = [model.classes[i] for i in probs.argmax(axis=1)]
    gold = [lab for _, lab in test]
    top2 = [g in {model.classes[i] for i in np.argsort(-row)[:2]} for g, row in zip(gold, probs)]
    none_gold = [g == "none" for g in gold]
    none_pred = [p == "none" for p in pred]
    tp = sum(a and b for a, b in zip(none_gold, none_pred))
    out = {"dev_n": len(dev), "test_n": len(test), "classes": model.classes,
           "dev_counts": dict(Counter(lab for _, lab in dev)),
           "test_accuracy@1": rate([p == g for p, g in zip(pred, gold)]), "test_accuracy@2": rate(top2),
           "none_precision": round(tp / max(1, sum(none_pred)), 4), "none_recall": round(tp / max(1, sum(none_gold)), 4),
           "none_test_n": sum(none_gold), "C": args.c, "masks_names": args.mask, "context_copies": args.context, "condition_questions": args.conditions, "word_grams": args.grams, "bank": args.bank, "bank_special": args.bank_special, "dev_cv": cv, "dev_context_cv": context_cv,
           "model": str(out_path.relative_to(ROOT) if out_path.is_relative_to(ROOT) else out_path)}
    model.save(out_path)
    assert typer.probabilities("what is lisinopril for")  # the saved model loads and runs
    save(args.section, out)
    print(json.dumps(out, indent=2))


# --- sets ----------------------------------------------------------------------------------
def _dialogue(turns: list[dict]) -> str:
    """A written set's turns as the pipeline reads a consultation: "Patient: …" / "Pharmacist: …"."""
    return "\n".join(f"{'Patient' if t['role'] == 'patient' else 'Pharmacist'}: {t['text']}" for t in turns)


def written_items(split: str, path: Path = WRITTEN, prefix: str = "consult-written") -> list[dict]:
    """A written set's dialogues of one split (the split of ``<prefix>/<id>``, frozen before building)."""
    from medground.reading.splits import split_of

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = []
    for r in rows:
        if split_of(f"{prefix}/{r['id']}", seed=27, test_share=0.5) != split:
            continue
        out.append({"id": r["id"], "dialogue": _dialogue(r["turns"]), "subject": r["subject"], "attribute": r["attribute"],
                    "terms": r.get("clinical_terms") or [], "kind": r.get("question_kind"),
                    "unanswerable": bool(r.get("unanswerable")), "second_drug": r.get("second_drug"),
                    "features": r.get("features", [])})
    return out


def apart_items(split: str, store, path: Path = APART, whole_split: str = "dev") -> list[dict]:
    """Consultations written apart (benchmarks/data/consult_written.md): the session-28 set and
    apart3 are all development, apart2 and apart4 all test (``whole_split``); an item whose drug lacks an entry
    of the writer's attribute is unanswerable."""
    from medground.retrieve.drugs import DrugRetriever

    if split != whole_split:
        return []
    retriever = DrugRetriever(store)
    out = []
    for r in (json.loads(line) for line in path.read_text().splitlines() if line.strip()):
        subject, held = exact_drug(retriever, r["subject"])
        subject = subject or r["subject"]
        unanswerable = r["attribute"] is None or r["attribute"] not in held
        out.append({"id": r["id"], "dialogue": _dialogue(r["turns"]),
                    "subject": subject, "attribute": None if unanswerable else r["attribute"],
                    "terms": [r["answer_item"]] if r.get("answer_item") else [], "kind": r["kind"],
                    "answer_item": None if unanswerable else r.get("answer_item"), "unanswerable": unanswerable})
    return out


def generated_items(split: str) -> list[dict]:
    from medground.eval import dialogues
    from medground.eval.datasets import load_dataset
    from medground.store.drugs import DrugStore
    from medground.reading.splits import medication_qa_split
    from medground.retrieve.drugs import DrugRetriever

    store = DrugStore()
    retriever = DrugRetriever(store)

    def exact(name: str):
        from medground.drug_schema import normalize_name

        hits = retriever.names.get(normalize_name(name).strip(), [])
        return hits[0][0] if hits else None

    eligible = dialogues.eligible(load_dataset("medication-qa"), store.drugs(), store.attributes(), exact)
    out = []
    for d in dialogues.generate(eligible, store.drugs(), seed=0):
        if medication_qa_split(d.source_qid) != split:
            continue
        out.append({"id": d.qid, "dialogue": d.text, "subject": d.drug_id, "attribute": d.attribute.value,
                    "terms": [], "kind": None, "unanswerable": False, "source_qid": d.source_qid})
    return out


def load_sets(names: list[str], split: str, n: int) -> dict[str, list[dict]]:
    from medground.store.drugs import DrugStore

    store = DrugStore()
    makers = {"written": lambda: written_items(split),
              "conditions": lambda: written_items(split, CONDITIONS, "consult-conditions"),
              "medqa": lambda: medqa_items(split, store),
              "apart": lambda: apart_items(split, store),
              "apart2": lambda: apart_items(split, store, APART2, "test"),
              "apart3": lambda: apart_items(split, store, APART3, "dev"),
              "apart4": lambda: apart_items(split, store, APART4, "test"),
              "apart5": lambda: apart_items(split, store, APART5, "dev"),
              "apart6": lambda: apart_items(split, store, APART6, "dev"),
              "apart7": lambda: apart_items(split, store, APART7, "dev"),
              "apart8": lambda: apart_items(split, store, APART8, "dev"),
              "generated": lambda: generated_items(split)}
    out = {}
    for name in names:
        items = makers[name]()
        if n:
            import random

            random.Random(0).shuffle(items)
            items = items[:n]
        out[name] = items
    return out


def fit_cmd(args) -> None:
    """Fit the reply's weights on the dev split of the chosen sets (never the test split)."""
    from medground.store.drugs import DrugStore
    from medground.reading.consult import ConsultReader
    from medground.reading.consult_fit import FitExample, fit
    from medground.reading.consult_typer import load_consult_typer
    from medground.retrieve.drug_subject import co_named, resolve_subjects, user_turns
    from medground.retrieve.drugs import DrugRetriever

    drugs = DrugRetriever(DrugStore())
    typer = load_consult_typer()
    verifier = None
    if args.verify:
        from medground.pipelines.config import load_pipeline_config
        from medground.pipelines.factory import build_pipeline

        verifier = build_pipeline(load_pipeline_config("drugrag")).verify_entries
    from medground.reading.consult_settings import ConsultReplySettings

    reader = ConsultReader(drugs, typer, typer.embedder, ConsultReplySettings(typer_reads=args.typer_reads),
                           verifier=verifier)
    sets = load_sets(args.sets.split(","), "dev", 0)
    if args.n:  # a seeded sample of each set but the written one (all of it is used)
        import random

        for name in sets:
            if name != "written":
                random.Random(0).shuffle(sets[name])
                sets[name] = sets[name][: args.n]
    fold_readers = []
    if args.crossfit:  # each Medication QA-made example read by a typer that never saw its question
        from medground.reading.consult_typer import ConsultTyper, ConsultTyperModel

        fold_readers = [ConsultReader(drugs, ConsultTyper(ConsultTyperModel.load(path), typer.embedder),
                                      typer.embedder, reader.settings, verifier=verifier)
                        for path in crossfit_models(args.crossfit)]
    examples, weights, per_set, readers, set_of = [], [], Counter(), [], []
    for name, items in sets.items():
        for it in items:
            turns = user_turns(it["dialogue"])
            subj = resolve_subjects(drugs, turns)
            if not subj:
                continue
            others = co_named(drugs, turns, subj[0].drug_id)
            examples.append(FitExample(turns, subj[0].drug_id, others, None if it["unanswerable"] else it["attribute"]))
            per_set[name] += 1
            set_of.append(name)
            if fold_readers and name in ("medqa", "generated"):
                from medground.train.typer_recipe import crossfit_fold

                readers.append(fold_readers[crossfit_fold(it["source_qid"], args.crossfit)])
            else:
                readers.append(reader)
        # every set weighs the same in the objective, whatever its size
        weights += [1.0 / max(1, per_set[name])] * per_set[name]
    t0 = time.perf_counter()
    grid = None
    if args.verify:
        from medground.reading.consult_fit import GRID

        grid = {**GRID, "verify_weight": [0.0, 0.25, 0.5, 1.0, 2.0, 4.0]}
    if args.only:
        from medground.reading.consult_fit import GRID

        grid = {k: (grid or GRID)[k] for k in args.only.split(",")}
    result = fit(reader, examples, grid=grid, weights=weights, verify=args.verify, readers=readers)
    out = {"split": "dev", "examples": dict(per_set), "objective": round(result.objective, 4), "verify": args.verify,
           "crossfit": args.crossfit, "grid": grid or "GRID",
           "best_objective_per_value": result.per_value,
           "fitted": result.settings.model_dump(), "seconds": round(time.perf_counter() - t0, 1)}
    out["typer_reads"] = args.typer_reads
    if args.only:
        out["per_point"] = _per_point(reader, examples, result.signals, grid, set_of)
    save(args.section or ("e2e_fit_verify" if args.verify else "e2e_fit"), out)
    print(json.dumps(out, indent=2))


def _per_point(reader, examples, sigs, grid: dict, set_of: list[str]) -> list[dict]:
    """Per grid point and set: answerable examples right (gold drug + type, no abstention), wrongly
    declined, and unanswerable ones declined — what the single objective sums."""
    import itertools

    from medground.reading.consult_fit import correct, outcome

    rows = []
    for values in itertools.product(*grid.values()):
        s = reader.settings.model_copy(update=dict(zip(grid, values)))
        tally: dict = {}
        for ex, sig, name in zip(examples, sigs, set_of):
            t = tally.setdefault(name, Counter())
            abstained = outcome(sig, s)[2]
            if ex.gold_type is None:
                t["unanswerable"] += 1
                t["declined_unanswerable"] += abstained
            else:
                t["answerable"] += 1
                t["right"] += correct(ex, sig, s)
                t["declined_answerable"] += abstained
        rows.append({"settings": dict(zip(grid, values)), "sets": {k: dict(v) for k, v in tally.items()}})
    return rows


def e2e_cmd(args) -> None:
    """The shipped (or named) config on the chosen sets, judged by the library's
    ConsultationEvaluator (eval/evaluators/consultation.py). ``--crossfit K``: each development
    item made from a Medication QA question (the medqa and generated sets) is read by a typer
    trained with the shipped recipe on the other K-1 folds of Medication QA's development part."""
    from medground.eval.evaluators import ConsultationEvaluator, ConsultItem, ConsultReference
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import build_pipeline
    from medground.store.drugs import DrugStore

    if args.crossfit and args.split != "dev":
        raise SystemExit("--crossfit reads the development split only (the test part is typed by the shipped typer)")
    evaluator = ConsultationEvaluator(ConsultReference.from_store(DrugStore(), ENTRY_LABELS))
    config = load_pipeline_config(args.config)
    pipe = build_pipeline(config)
    fold_models = crossfit_models(args.crossfit) if args.crossfit else []
    sets = load_sets(args.sets.split(","), args.split, args.n)
    report: dict = {"split": args.split, "config": args.config, "sets": {}}
    if args.crossfit:
        report["crossfit"] = {"folds": args.crossfit, "recipe": "SHIPPED_TYPER", "sets": "medqa, generated"}
    elif args.split == "dev" and (typed := [n for n in sets if n in ("medqa", "generated")]):
        # the shipped typer learned these very questions: their figures flatter the test part
        report["in_sample"] = typed
        print(f"note: {', '.join(typed)} read in sample (the typer trained on them); "
              "--crossfit 5 reads them out of sample")
    fold_pipes = [build_pipeline(with_typer(config, path)) for path in fold_models]  # built once, every set
    samples: dict = {}
    for name, items in sets.items():
        if fold_pipes and name in ("medqa", "generated"):
            from medground.train.typer_recipe import crossfit_fold

            rows: list = [None] * len(items)
            for k, fold_pipe in enumerate(fold_pipes):
                idx = [i for i, it in enumerate(items) if crossfit_fold(it["source_qid"], args.crossfit) == k]
                result = evaluator(fold_pipe, [ConsultItem.from_dict(items[i]) for i in idx])
                for i, row in zip(idx, result.rows):
                    rows[i] = row
            summary = evaluator.summarize(rows)
        else:
            result = evaluator(pipe, [ConsultItem.from_dict(it) for it in items])
            rows, summary = result.rows, result.summary
        report["sets"][name] = summary
        samples[name] = rows
        print(f"{name}: {json.dumps(summary)}")
    section = args.section or f"e2e_{args.split}"
    save(section, report)
    out = RESULTS.parent / f"consult_{section}_replies.json"
    out.write_text(json.dumps(samples, indent=1, ensure_ascii=False) + "\n")


def with_typer(config, path: Path):
    """``config`` with the consultation reply reading the typer at ``path``."""
    from medground.pipelines.config import pipeline_config

    data = config.model_dump()
    data["drugrag"]["reply"]["typer_model"] = str(path)
    return pipeline_config(data)


def crossfit_models(folds: int) -> list[Path]:
    """One typer per fold, trained by the shipped recipe on Medication QA's development part
    without that fold; kept under $MEDGROUND_HOME/typer_crossfit, keyed by the recipe and the data."""
    import hashlib

    from medground.paths import home
    from medground.index.embedders import EmbedderSettings, load_embedder
    from medground.retrieve.drug_intent import EMBEDDER_KIND
    from medground.store.drugs import DrugStore
    from medground.train.typer_recipe import TyperRecipe, crossfit_fold, crossfit_path, fit_typer

    recipe = TyperRecipe(**SHIPPED_TYPER)
    dev = medqa_labelled("dev")
    store = DrugStore()  # the context copies are drawn from the database: a rebuilt one trains anew
    key = hashlib.sha256(repr((recipe, [q.qid for q, _ in dev], len(store.names()), len(store.attributes()),
                               [p.stat().st_size for p in recipe.banks])).encode()).hexdigest()[:12]
    folder = home() / "typer_crossfit" / key
    folder.mkdir(parents=True, exist_ok=True)
    embedder = None
    paths = []
    for k in range(folds):
        path = crossfit_path(folder, k, folds)
        if not path.exists():
            embedder = embedder or load_embedder(EmbedderSettings(kind=EMBEDDER_KIND, threads=2))
            kept = [(q, lab) for q, lab in dev if crossfit_fold(q.qid, folds) != k]
            fit_typer(recipe, kept, embedder).save(path)
            print(f"trained {path} on {len(kept)} of {len(dev)} development questions")
        paths.append(path)
    return paths


def compare_cmd(args) -> None:
    """Paired comparison of two e2e runs (reply files) per set: exact McNemar on each metric."""
    from medground.eval.metrics import mcnemar_test

    a = json.loads((RESULTS.parent / f"consult_{args.a}_replies.json").read_text())
    b = json.loads((RESULTS.parent / f"consult_{args.b}_replies.json").read_text())
    out: dict = {"a": args.a, "b": args.b, "sets": {}}
    pooled = {"pooled": [r for name in sorted(set(a) & set(b)) for r in a[name]]}
    for name in [*sorted(set(a) & set(b)), "pooled"]:
        rows_a = pooled["pooled"] if name == "pooled" else a[name]
        rows_b = [r for n in sorted(set(a) & set(b)) for r in b[n]] if name == "pooled" else b[name]
        ra = {r["id"]: r for r in rows_a}
        rb = {r["id"]: r for r in rows_b}
        ids = sorted(set(ra) & set(rb))
        row: dict = {"n": len(ids)}
        for metric in ("drug_attr_ok", "rubric"):
            xa = [bool(ra[i].get(metric)) for i in ids]
            xb = [bool(rb[i].get(metric)) for i in ids]
            t = mcnemar_test(xa, xb)
            row[metric] = {"a": sum(xa), "b": sum(xb), "only_a": t.a_only, "only_b": t.b_only,
                           "p_value": float(f"{t.pvalue:.6g}")}
        out["sets"][name] = row
        print(name, json.dumps(row))
    save(f"e2e_compare_{args.a}_vs_{args.b}", out)


def table_cmd(args) -> None:
    """Markdown rows of stored e2e sections (what docs/benchmarks.md shows, from the JSON)."""
    data = json.loads(RESULTS.read_text())

    def cell(m: dict | None) -> str:
        if not m or not m.get("n"):
            return "—"
        return f"{m['rate'] * 100:.1f} % ({m['k']}/{m['n']})"

    print("| config | set | n | cites drug | cites drug + attribute | rubric pass | wrong abstention | "
          "right abstention | p50 / p95 s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for section in args.sections.split(","):
        rep = data[section]
        for name, m in rep["sets"].items():
            # a development read of a set made from Medication QA's questions, typed by the typer
            # that learned them (every dev section before session 37 and any without --crossfit)
            if rep.get("split") == "dev" and name in ("medqa", "generated") and "crossfit" not in rep:
                name += " (in sample)"
            print(f"| {section} | {name} | {m['n']} | {cell(m['cites_drug'])} | {cell(m['cites_drug_attribute'])} | "
                  f"{cell(m['rubric_pass'])} | {cell(m['wrong_abstention'])} | {cell(m['right_abstention'])} | "
                  f"{m['seconds_p50']} / {m['seconds_p95']} |")
    held = [(sec, name, m) for sec in args.sections.split(",") for name, m in data[sec]["sets"].items()
            if (m.get("cites_item_entry") or {}).get("n")]
    if held:
        print("\nSets written apart: the cited entry holds the writer's item (the book's \"Caution\" lines sit in its "
              "Contraindications row; the database files them as warnings):\n")
        print("| config | set | cites drug + attribute | cites the entry holding the writer's item |")
        print("|---|---|---|---|")
        for sec, name, m in held:
            print(f"| {sec} | {name} | {cell(m['cites_drug_attribute'])} | {cell(m['cites_item_entry'])} |")
    labelled = [(sec, data[sec]["sets"]["written"]) for sec in args.sections.split(",")
                if data[sec]["sets"].get("written", {}).get("rubric_labelled")]
    if labelled:
        print("\nWritten set against the blind labels (benchmarks/data/consult_written.md):\n")
        print("| config | cites an answering entry | names an answering item | yes/no agrees | rubric (labelled) |")
        print("|---|---|---|---|---|")
        for sec, m in labelled:
            print(f"| {sec} | {cell(m['cites_answering_entry'])} | {cell(m['names_answering_item'])} | "
                  f"{cell(m['yes_no_agrees_labelled'])} | {cell(m['rubric_labelled'])} |")


def sheet_cmd(args) -> None:
    """The labelling sheet for the written set's answering entries (benchmarks/data/consult_written.md):
    each answerable dialogue with every entry of its subject and second drug, items numbered. It
    holds no reply of any reader, so whoever labels it never sees what the system said."""
    from medground.reading.consult_text import split_items
    from medground.retrieve.drugs import DrugRetriever
    from medground.store.drugs import DrugStore

    store = DrugStore()
    retriever = DrugRetriever(store)
    by_drug: dict = {}
    for a in store.attributes():
        by_drug.setdefault(a.drug_id, []).append(a)

    def drug_id(name: str | None):
        # as medqa_items resolves a name: the retriever's best exact match (a generic name ranks
        # before a combination that merely contains it)
        exact = [m for m in retriever.find_drugs(name or "") if m.how.startswith("exact")]
        return exact[0].drug_id if exact else None

    rows = [json.loads(line) for line in Path(args.set).read_text().splitlines() if line.strip()]
    out = []
    for r in rows:
        if r.get("unanswerable"):
            continue
        entries = []
        for name in (r["subject"], r.get("second_drug")):
            d = drug_id(name)
            for a in by_drug.get(d, []) if d else []:
                items = list(dict.fromkeys(split_items(a.text)))[:60]
                entries.append({"drug": d, "attribute": a.type.value,
                                "items": {str(k + 1): i[:300] for k, i in enumerate(items)}})
        out.append({"id": r["id"], "dialogue": [f"{t['role']}: {t['text']}" for t in r["turns"]],
                    "subject": r["subject"], "second_drug": r.get("second_drug"), "asked": r["asked"],
                    "entries": entries})
    Path(args.out).write_text("\n".join(json.dumps(o, ensure_ascii=False) for o in out) + "\n")
    print(f"{len(out)} dialogues -> {args.out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("typer")
    t.add_argument("--c", type=float, default=4.0)
    t.add_argument("--mask", action=argparse.BooleanOptionalAction, default=True,
                   help="train on questions with the drug names read as 'this medicine' too (default)")
    t.add_argument("--cv", action="store_true", help="also compare plain vs masked by k-fold CV on dev")
    t.add_argument("--context", type=int, default=0,
                   help="also train on N copies of each question with context sentences before it")
    t.add_argument("--conditions", type=int, default=0,
                   help="also train on N questions about a condition named by a contraindications item")
    t.add_argument("--relabels", default="",
                   help="a bank relabelling file (benchmarks/data/typer_bank_relabels.json: measured, not "
                        "adopted); default: the writers' labels as written")
    t.add_argument("--bank", default=None, help="also train on banks of written questions (comma-separated .jsonl files)")
    t.add_argument("--bank-special", default=None,
                   help="read the bank's special_populations questions as this class (default: dropped)")
    t.add_argument("--grams", type=float, default=0.0,
                   help="weight of a word 1-2-gram tf-idf block beside the embedding (0: none; session 31)")
    t.add_argument("--dev-only", action="store_true", help="write the model without reading the test part")
    t.add_argument("--out", default=None, help="model path (default: the shipped one)")
    t.add_argument("--section", default="e2e_typer")
    tb = sub.add_parser("table")
    tb.add_argument("sections", help="comma-separated consult.json sections")
    c = sub.add_parser("compare")
    c.add_argument("a", help="section name of the first run (its replies file)")
    c.add_argument("b")
    f = sub.add_parser("fit")
    f.add_argument("--sets", default="written,medqa,generated")
    f.add_argument("--n", type=int, default=0, help="at most N items of each set but the written one")
    f.add_argument("--verify", action="store_true", help="also fit the LLM verifier's weight (runs the LLM)")
    f.add_argument("--typer-reads", choices=["turn", "question", "both"], default="turn")
    f.add_argument("--section", default=None, help="consult.json section (default e2e_fit / e2e_fit_verify)")
    f.add_argument("--crossfit", type=int, default=0,
                   help="K: the medqa and generated examples read by typers trained on the other K-1 folds")
    f.add_argument("--only", default="", help="fit only these settings (comma-separated), the rest as shipped")
    e = sub.add_parser("e2e")
    e.add_argument("--split", choices=["dev", "test"], required=True)
    e.add_argument("--config", default="drugrag")
    e.add_argument("--sets", default="written,medqa,generated")
    e.add_argument("--n", type=int, default=0, help="at most N items a set (0: all)")
    e.add_argument("--section", default=None)
    e.add_argument("--crossfit", type=int, default=0,
                   help="K: read the medqa and generated dev items with typers trained on the other K-1 folds")
    sh = sub.add_parser("sheet")
    sh.add_argument("--out", required=True)
    sh.add_argument("--set", default=str(WRITTEN), help="the written set's file (consult_written / consult_conditions)")
    args = ap.parse_args()
    commands = {"sheet": sheet_cmd, "typer": typer_cmd, "fit": fit_cmd, "e2e": e2e_cmd, "compare": compare_cmd,
                "table": table_cmd}
    commands[args.cmd](args)


if __name__ == "__main__":
    main()
