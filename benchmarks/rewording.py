"""The textbook reader on questions worded their own way (issue 28): the rewording test bed.

Sets (benchmarks/data/textbook_testbed.md says how each was made):
  original   the answerable set (answerable_textbooks.jsonl), 40 items
  reworded   each item reworded: clinical vignette, lay wording, brand names for generics (written,
             reworded_textbooks.jsonl), an opposite-polarity twin of the right option added as a
             fifth option, and the options reordered (both derived here, seeded by the item)
  new        items written from chapters the original set never uses (newchapter_textbooks.jsonl)
  fresh      36 items in a writer's own words, all test (fresh_textbooks.jsonl, session 28)
  devfresh   48 items written the same way from other modules, all development (session 31)
A base item and all its rewordings share one split (reading/splits.py, frozen before the
per-option reader was built). Build on dev; report on test.

    python benchmarks/rewording.py run --config rag --split dev          # resumable
    python benchmarks/rewording.py run --config direct --split dev
    python benchmarks/rewording.py table --split dev --configs direct rag
    python benchmarks/rewording.py run --config rag --split dev --free     # free text, as rag-free
    python benchmarks/rewording.py freetable --split dev --configs rag
    python benchmarks/rewording.py run --config configs/pipelines/variants/rag-gate0.yaml --label rag-gate0 --split dev --free
    python benchmarks/rewording.py gatefit --label rag-gate0                 # the support gate refit on dev
    python benchmarks/rewording.py cost --n 6                              # on a quiet machine
    python benchmarks/rewording.py cooccur --label rag-s24 --split dev      # option weighting, simulated
    python benchmarks/rewording.py run --config configs/pipelines/variants/direct-permute.yaml --label direct-permute --split dev
    python benchmarks/rewording.py contrast --label rag-s24 --closed direct-permute   # evidence vs closed book, simulated
    python benchmarks/rewording.py promptab --n 8                          # the two answer prompts, alternating
    python benchmarks/rewording.py evidenceab --n 8 --tokens 250           # two evidence budgets, alternating
    python benchmarks/rewording.py readerab --n 12 --set evidence_tokens=250 permute_stop_at=0.8 --section S
    python benchmarks/rewording.py readerab --n 12 --set retrieve.final_k=3 --section S   # a retrieval setting
"""

from __future__ import annotations

import math
import argparse
import json
import os
import sys
from pathlib import Path

from medground.eval import rewording_testbed
from medground.eval.bench import print_table, save_section
from medground.eval.evaluators import accuracy_row, mcnemar_row

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "reader.json"
FRESH_SETS = ("fresh", "devfresh")  # one per split: the "fresh" column reads whichever the split holds
METHODS = ("vignette", "lay", "brand", "polarity", "reorder")


def save(section: str, payload: dict) -> None:
    """Merge a section into benchmarks/results/reader.json (eval/bench.py)."""
    save_section(RESULTS, section, payload)


def load_testbed(split: str | None) -> list[tuple[object, dict]]:
    """The multiple-choice items of the split (medground.eval.rewording_testbed.load_testbed)."""
    return rewording_testbed.load_testbed(DATA, split)


def load_free(split: str | None) -> list[tuple[object, dict]]:
    """The free-text questions of the split (medground.eval.rewording_testbed.load_free)."""
    return rewording_testbed.load_free(DATA, split)


def run_dir(label: str, split: str) -> Path:
    from medground.paths import home

    return home() / "runs" / "rewording" / f"{label}-{split}"


def run(args) -> None:
    from medground.eval.runner import run_questions
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import build_pipeline

    items = load_free(args.split) if args.free else load_testbed(args.split)
    if args.only:  # a subset by method (original, reorder, vignette, ...) or set (new)
        keep = set(args.only.split(","))
        items = [(q, i) for q, i in items if i.get("method") in keep or i.get("set") in keep]
    cfg = load_pipeline_config(args.config)
    cfg = cfg.model_copy(update={"llm": cfg.llm.model_copy(update={"threads": args.threads})})
    label = (args.label or Path(args.config).stem) + ("-free" if args.free else "")
    summary = run_questions(lambda: build_pipeline(cfg), [q for q, _ in items], run_dir(label, args.split),
                            {"config": cfg.model_dump(mode="json"), "name": label})
    print(f"{label} {args.split}: {summary.to_dict().get('accuracy')} over {len(items)}", file=sys.stderr)


def _records(label: str, split: str) -> dict[str, dict]:
    path = run_dir(label, split) / "results.jsonl"
    if not path.exists():
        raise SystemExit(f"{path}: no run; run `python benchmarks/rewording.py run --config {label} --split {split}`")
    return {r["qid"]: r for r in (json.loads(line) for line in path.read_text().splitlines() if line.strip())}


def _paired_row(a: list[bool], b: list[bool]) -> dict | None:
    """McNemar row of two paired lists; None when a set has no question (a subset run)."""
    return mcnemar_row(a, b) if a else None


def table(args) -> None:
    items = load_testbed(args.split)
    if args.common:  # the questions every run answered (a run of a subset: --only)
        done = set.intersection(*(set(_records(label, args.split)) for label in args.configs))
        items = [(q, i) for q, i in items if q.qid in done]
    info = {q.qid: i for q, i in items}
    gold = {q.qid: q.answer for q, _ in items}
    rows, per = [], {}
    closed = None
    for label in args.configs:
        recs = _records(label, args.split)
        missing = [qid for qid in gold if qid not in recs]
        if missing and not args.common:
            raise SystemExit(f"{label} {args.split}: {len(missing)} questions not run yet (resume the run, "
                             "or --common to compare on the questions every run answered)")
        right = {qid: recs[qid].get("choice") == gold[qid] for qid in gold if qid in recs}
        per[label] = right
        if label == args.closed:
            closed = right
        originals = {i["base"]: right[qid] for qid, i in info.items() if i["set"] == "original"}
        pairs = [(originals[i["base"]], right[qid]) for qid, i in info.items()
                 if i["set"] == "reworded" and i["base"] in originals]
        row = {"config": label,
               "original": accuracy_row(list(originals.values())),
               "reworded": accuracy_row([b for _, b in pairs]),
               "reworded_vs_original": _paired_row([a for a, _ in pairs], [b for _, b in pairs]),
               "per_method": {}, "new": accuracy_row([right[qid] for qid, i in info.items() if i["set"] == "new"]),
               "fresh": accuracy_row([right[qid] for qid, i in info.items() if i["set"] in FRESH_SETS]),
               "parse_failures": sum(recs[qid].get("outcome") == "parse_failure" for qid in gold),
               "seconds_per_q": round(sum(recs[qid].get("seconds", 0.0) or 0.0 for qid in gold) / len(gold), 2)}
        for m in METHODS:
            mp = [(originals[i["base"]], right[qid]) for qid, i in info.items()
                  if i["method"] == m and i["base"] in originals]
            if mp:
                row["per_method"][m] = {**accuracy_row([b for _, b in mp]),
                                        "vs_original": mcnemar_row([a for a, _ in mp], [b for _, b in mp])}
        cover = [recs[qid].get("options_in_evidence") for qid in gold]
        if any(c is not None for c in cover):
            row["gold_option_in_evidence"] = round(sum(bool(c and c.get(gold[qid])) for qid, c in zip(gold, cover))
                                                   / len(gold), 4)
        rows.append(row)
    if closed is not None:
        new_ids = [qid for qid, i in info.items() if i["set"] == "new"]
        fresh_ids = [qid for qid, i in info.items() if i["set"] in FRESH_SETS]
        all_ids = list(gold)
        for row in rows:
            if row["config"] != args.closed:
                right = per[row["config"]]
                row["new_vs_closed"] = _paired_row([closed[q] for q in new_ids], [right[q] for q in new_ids])
                row["fresh_vs_closed"] = _paired_row([closed[q] for q in fresh_ids], [right[q] for q in fresh_ids])
                row["all_vs_closed"] = _paired_row([closed[q] for q in all_ids], [right[q] for q in all_ids])
    if len(args.configs) > 1 and args.baseline:
        base = per[args.baseline]
        for row in rows:
            if row["config"] != args.baseline:
                right = per[row["config"]]
                row["all_vs_baseline"] = mcnemar_row([base[q] for q in gold], [right[q] for q in gold])
    save(args.section or (f"rewording_{args.split}" + ("_common" if args.common else "")), {"split": args.split, "common": args.common, "n_questions": len(gold),
                                     "n_base_items": len({i['base'] for i in info.values()}),
                                     "closed_book": args.closed, "baseline": args.baseline, "rows": rows,
                                     "per_question": {k: {q: v for q, v in r.items()} for k, r in per.items()},
                                     "load_1min": round(os.getloadavg()[0], 2)})
    flat = [{"config": r["config"], "original": f"{r['original']['accuracy']} (n={r['original']['n']})",
             "reworded": f"{r['reworded']['accuracy']} (n={r['reworded']['n']})",
             "p_reworded_vs_orig": (r["reworded_vs_original"] or {}).get("p_value", ""),
             "new": f"{r['new']['accuracy']} (n={r['new']['n']})",
             "p_new_vs_closed": (r.get("new_vs_closed") or {}).get("p_value", ""),
             "fresh": f"{r['fresh']['accuracy']} (n={r['fresh']['n']})",
             "p_fresh_vs_closed": (r.get("fresh_vs_closed") or {}).get("p_value", ""),
             "gold_opt_in_ev": r.get("gold_option_in_evidence", ""), "s/q": r["seconds_per_q"]} for r in rows]
    print_table(f"Rewording test bed, {args.split} half ({len(gold)} questions)", flat, list(flat[0]))
    for r in rows:
        print(r["config"], {m: v["accuracy"] for m, v in r["per_method"].items()})


def states(text: str, accept: list[str]) -> bool:
    low = " ".join(text.lower().split())
    return any(a.lower() in low for a in accept)


def freetable(args) -> None:
    from medground.store.settings import open_store
    from medground.reading.support import claims_supported

    items = load_free(args.split)
    if args.only:  # a subset by set (new, pair_answerable, pair_nearmiss, fresh)
        items = [(q, i) for q, i in items if i["set"] in set(args.only.split(","))]
    info = {q.qid: i for q, i in items}
    questions = {q.qid: q.question for q, _ in items}
    store = open_store(must_exist=True)
    rows, per = [], {}
    runs = []
    for label in args.configs:
        recs = _records(f"{label}-free", args.split)
        missing = [qid for qid in info if qid not in recs]
        if missing:
            raise SystemExit(f"{label}-free {args.split}: {len(missing)} questions not run yet (resume the run)")
        runs.append((label, recs))
        if any(r.get("withheld") for r in recs.values()):
            # the same run scored as if the entity check were off: each withheld answer restored
            unchecked = {q: {**r, "outcome": "answered", "text": r["withheld"]} if r.get("withheld") else r
                         for q, r in recs.items()}
            runs.append((f"{label} (entity check off)", unchecked))
    for label, recs in runs:
        out = {}
        for qid, i in info.items():
            r = recs[qid]
            answered = r["outcome"] == "answered"
            cited = store.get_chunks(r["citation_ids"]) if answered and r["citation_ids"] else []
            source = " ".join(f"{c.book} {c.chapter} {' '.join(c.section_path)} {c.text}" for c in cited)
            # the reply's own sentence(s), before any quoted source words (reading/reply.py shape)
            own = r["text"].split("\u201c", 1)[0]
            out[qid] = {"answered": answered, "states_gold": answered and states(r["text"], i["accept"]),
                        # the trap's wrong answer in the reply's own words, where the set names it
                        "states_wrong": answered and bool(i.get("reject"))
                        and states(r["text"].split("\u201c", 1)[0], i["reject"]),
                        "answer_states_gold": answered and states(own, i["accept"]),
                        "supported": bool(answered and cited and claims_supported(r["text"], source,
                                                                                  exclude=[questions[qid]])),
                        # by text, not chunk id: a re-chunked store keeps the sentence, not the id
                        "gold_chunk_cited": bool(i.get("evidence")) and any(
                            " ".join(i["evidence"].split()) in " ".join(c.text.split()) for c in cited),
                        "seconds": r.get("seconds", 0.0), "text": r["text"]}
        per[label] = out

        def pick(kind: str) -> list[dict]:
            return [out[q] for q, i in info.items() if i["set"] == kind]

        row = {"config": label}
        for kind in ("new", "pair_answerable", "fresh", "owndev", "devfresh"):
            got = pick(kind)
            if got:
                answered = [g for g in got if g["answered"]]
                row[kind] = {"states_gold": accuracy_row([g["states_gold"] for g in got]),
                             "states_wrong": accuracy_row([g["states_wrong"] for g in got]),
                             "answer_states_gold": accuracy_row([g["answer_states_gold"] for g in got]),
                             "wrong_abstention": accuracy_row([not g["answered"] for g in got]),
                             "claims_supported": accuracy_row([g["supported"] for g in answered]) if answered else None}
        near = pick("pair_nearmiss")
        if near:
            row["pair_nearmiss"] = {"right_abstention": accuracy_row([not g["answered"] for g in near])}
        row["seconds_per_q"] = round(sum(o["seconds"] or 0.0 for o in out.values()) / len(out), 2)
        judged = run_dir(f"{label}-free", args.split) / "attribution.json"  # `medground attribution RUN --judge llm`
        if judged.is_file() and "(" not in label:
            got = json.loads(judged.read_text())
            row["attribution"] = {k: v for k, v in got.items() if k != "per_answer"}
        rows.append(row)
    if args.baseline in per:
        base = per[args.baseline]
        for row in rows:
            if row["config"] != args.baseline:
                mine = per[row["config"]]
                def right(o: dict, kind: str) -> bool:  # a near miss is right when declined
                    return not o["answered"] if kind == "pair_nearmiss" else o["states_gold"]

                row["right_vs_baseline"] = mcnemar_row([right(base[q], i["set"]) for q, i in info.items()],
                                                       [right(mine[q], i["set"]) for q, i in info.items()])
    save(args.section or f"rewording_free_{args.split}", {"split": args.split, "n_questions": len(info), "rows": rows,
                                          "baseline": args.baseline, "per_question": per,
                                          "load_1min": round(os.getloadavg()[0], 2)})
    for r in rows:
        print(json.dumps({k: v for k, v in r.items()}, ensure_ascii=False))


def gatefit(args) -> None:
    """Refit the free-text support gate on a run made with it open (``freetext_abstain_below: 0``,
    variants/rag-gate0.yaml): for each threshold t, a reply is right when an answerable question's
    support ≥ t and the reply states the gold, or a near miss's support < t or the reply declines.
    Dev only: the test half is scored at the fitted t, never fitted on."""
    items = load_free(args.split)
    recs = _records(f"{args.label}-free", args.split)
    missing = [q.qid for q, _ in items if q.qid not in recs]
    if missing:
        raise SystemExit(f"{args.label}-free {args.split}: {len(missing)} questions not run yet")
    rows = []
    for t in [round(0.05 * k, 2) for k in range(0, 20)] + [args.current]:
        right = []
        for q, i in items:
            r = recs[q.qid]
            passes = r.get("support") is not None and r["support"] >= t
            answered = passes and r["outcome"] == "answered"
            right.append(not answered if i["set"] == "pair_nearmiss" else answered and states(r["text"], i["accept"]))
        rows.append({"threshold": t, **accuracy_row(right),
                     "wrong_abstention": sum(1 for (q, i) in items if i["set"] != "pair_nearmiss"
                                             and not (recs[q.qid].get("support") or 0) >= t)})
    best = max(r["accuracy"] for r in rows)
    tied = sorted(r["threshold"] for r in rows if r["accuracy"] == best)
    # ties: the current threshold if it is among the best, else the middle of the best ones
    fitted = args.current if args.current in tied else tied[len(tied) // 2]
    save(f"gate_fit_{args.split}", {"label": args.label, "n": len(items), "rows": rows, "fitted": fitted,
                                    "current": args.current})
    print_table(f"Support gate refit on {args.label}-free {args.split} (n = {len(items)}); fitted {fitted}",
                rows, ["threshold", "accuracy", "ci95", "wrong_abstention"])


def optionfit(args) -> None:
    """The per-option run re-weighed after the fact (records keep each distribution combined):
    accuracy of w·log p_check + (1 − w)·log p_letters for several w, paired with the default run
    on the same questions. w = 0 is per-option retrieval with the letter read alone."""
    import math

    gold = {q.qid: q.answer for q, _ in load_testbed(args.split)}
    mine, base = _records(args.config, args.split), _records(args.baseline, args.split)
    qids = [q for q in mine if q in base and q in gold]
    base_right = [base[q].get("choice") == gold[q] for q in qids]
    rows = []
    for w in (0.0, 0.25, 0.5, 0.75, 1.0):
        right = []
        for q in qids:
            parts = mine[q].get("score_parts") or {}
            letters, check = parts.get("letters"), parts.get("check")
            if not letters:  # a parse failure: as recorded
                right.append(mine[q].get("choice") == gold[q])
                continue
            mixed = {k: w * math.log(max((check or {}).get(k, p if not check else 0.0), 1e-12))
                     + (1 - w) * math.log(max(p, 1e-12)) for k, p in letters.items()}
            right.append(max(mixed, key=mixed.get) == gold[q])
        rows.append({"check_weight": w, **accuracy_row(right), "vs_baseline": mcnemar_row(base_right, right)})
    save(f"per_option_{args.split}", {"config": args.config, "baseline": args.baseline, "n": len(qids),
                                      "baseline_accuracy": accuracy_row(base_right), "rows": rows})
    print_table(f"Per-option reading re-weighed, {args.split} ({len(qids)} questions; {args.baseline}: "
                f"{accuracy_row(base_right)['accuracy']})", rows, ["check_weight", "accuracy", "ci95", "vs_baseline"])


def uncached_pipeline(config: str, threads: int):
    """A shipped (or YAML) pipeline with the LLM's answer cache off: every call is timed for real."""
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import build_pipeline

    cfg = load_pipeline_config(config)
    return build_pipeline(cfg.model_copy(update={"llm": cfg.llm.model_copy(update={"threads": threads,
                                                                                      "cache": False})}))


def seconds_row(key: str, label: str, secs: list[float]) -> dict:
    return {key: label, "n": len(secs), "seconds_per_q": round(sum(secs) / len(secs), 2),
            "p50": round(sorted(secs)[len(secs) // 2], 2), "max_seconds": round(max(secs), 2)}


def cost(args) -> None:
    """Seconds per question on a quiet machine, LLM cache off: the default rag on multiple choice
    and on free text, and the per-option variant; the first question of each is a warm-up."""
    mc = [q for q, i in load_testbed("dev") if i["set"] == "new"][: args.n + 1]
    free = [q for q, i in load_free("dev") if i["set"] == "new"][: args.n + 1]
    arms = {"rag, multiple choice": ("rag", mc), "rag, free text": ("rag", free),
            "rag-options-check, multiple choice": ("configs/pipelines/variants/rag-options-check.yaml", mc)}
    rows = []
    for label, (config, questions) in arms.items():
        pipe = uncached_pipeline(config, args.threads)
        pipe.answer(questions[0])
        rows.append(seconds_row("config", label, [pipe.answer(q).timings["total"] for q in questions[1:]]))
        print(rows[-1], file=sys.stderr, flush=True)
    save("rewording_cost", {"threads": args.threads, "rows": rows, "load_1min_at_start_of_save": round(os.getloadavg()[0], 2),
                            "note": "cache off; dev new-chapter questions; the first question of each arm is a warm-up"})
    print_table("Seconds per question (cache off)", rows, ["config", "n", "seconds_per_q", "p50", "max_seconds"])


def prompt_ab(args) -> None:
    """Seconds per free-text reply with the old answer prompt ("freetext") and the one that shares
    the support check's prefix ("freetext_after_support"), the arms alternating question by
    question on one pipeline, cache off: the machine's speed drifts between runs, not between
    neighbours. Each question is answered by one arm only — a second arm on the same question
    would find the first arm's support pass in llama.cpp's RAM prompt cache."""
    from scipy.stats import mannwhitneyu

    pipe = uncached_pipeline("rag", args.threads)
    free = [q for q, i in load_free("dev") if i["set"] == "new"][: 2 * args.n + 1]
    names = ("freetext", "freetext_after_support")
    arms = {name: pipe.reader.model_copy(update={"freetext_prompt": name}) for name in names}
    pipe.answer(free[0])  # warm-up
    secs: dict[str, list[float]] = {name: [] for name in names}
    for k, q in enumerate(free[1:]):
        name = names[k % 2]
        pipe.reader = arms[name]
        secs[name].append(pipe.answer(q).timings["total"])
    rows = [seconds_row("prompt", name, v) for name, v in secs.items()]
    p = round(float(mannwhitneyu(secs[names[0]], secs[names[1]]).pvalue), 4)
    save("rewording_prompt_ab", {"threads": args.threads, "rows": rows, "seconds": secs, "mann_whitney_p": p,
                                 "load_1min_at_end": round(os.getloadavg()[0], 2),
                                 "note": "cache off; dev new-chapter free-text items; arms alternate, one arm a question"})
    print_table(f"Free-text seconds per reply, arms alternating (Mann-Whitney p = {p})", rows,
                ["prompt", "n", "seconds_per_q", "p50", "max_seconds"])


def reader_ab(args, update: dict, section: str) -> None:
    """Seconds per multiple-choice question with the shipped reader and with ``update`` applied to
    its settings, the arms alternating question by question on one pipeline, cache off, each
    question answered by one arm only (as ``promptab``); prompt tokens and LLM calls recorded too."""
    from scipy.stats import mannwhitneyu

    pipe = uncached_pipeline("rag", args.threads)
    mc = [q for q, i in load_testbed("dev") if i["set"] == "new"][: 2 * args.n + 1]
    names = ("shipped", ", ".join(f"{k}={v}" for k, v in update.items()))
    # "retrieve.KEY" names a retrieval setting (final_k), any other key a reader setting
    retrieve = {k.removeprefix("retrieve."): v for k, v in update.items() if k.startswith("retrieve.")}
    reader = {k: v for k, v in update.items() if not k.startswith("retrieve.")}
    arms = {names[0]: (pipe.reader, pipe.engine.settings),
            names[1]: (pipe.reader.model_copy(update=reader), pipe.engine.settings.model_copy(update=retrieve))}
    pipe.answer(mc[0])  # warm-up
    secs: dict[str, list[float]] = {name: [] for name in names}
    tokens: dict[str, list[int]] = {name: [] for name in names}
    calls: dict[str, list[int]] = {name: [] for name in names}
    for k, q in enumerate(mc[1:]):
        name = names[k % 2]
        pipe.reader, pipe.engine.settings = arms[name]
        a = pipe.answer(q)
        secs[name].append(a.timings["total"])
        tokens[name].append(a.tokens["prompt"])
        calls[name].append(a.tokens["llm_calls"])
    rows = [seconds_row("reader", name, v) | {"prompt_tokens_per_q": round(sum(tokens[name]) / len(v), 1),
                                              "llm_calls_per_q": round(sum(calls[name]) / len(v), 2)}
            for name, v in secs.items()]
    p = round(float(mannwhitneyu(secs[names[0]], secs[names[1]]).pvalue), 4)
    save(section, {"threads": args.threads, "update": update, "rows": rows, "seconds": secs,
                   "mann_whitney_p": p, "load_1min_at_end": round(os.getloadavg()[0], 2),
                   "note": "cache off; dev new-chapter multiple-choice items; arms alternate, one arm a question"})
    print_table(f"Multiple-choice seconds per question, arms alternating (Mann-Whitney p = {p})", rows,
                ["reader", "n", "seconds_per_q", "p50", "max_seconds", "prompt_tokens_per_q", "llm_calls_per_q"])


def evidence_ab(args) -> None:
    """The shipped evidence budget against ``--tokens``."""
    reader_ab(args, {"evidence_tokens": args.tokens}, "rewording_evidence_ab")


def settings_ab(args) -> None:
    """The shipped reader against ``--set KEY=VALUE ...`` (values read as JSON)."""
    update = {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in args.set)}
    reader_ab(args, update, args.section)


def cooccur(args) -> None:
    """Options that share an evidence sentence with the question's rare words, weighted up: a
    simulation over a stored multiple-choice run (no LLM call). An option's support is the best
    share of the question's IDF weight (its terms minus every option's; IDF over the textbook
    chunks) held by a cited sentence naming at least half of the option's own terms; p(X) becomes
    p(X)·exp(beta · support(X)). Session 27, dev: at most +1 of 118 (docs/benchmarks.md)."""
    from medground.corpus.sentences import split_spans
    from medground.eval.metrics import mcnemar_test
    from medground.index.text import text_tokenizer
    from medground.store.chunks import ChunkStore

    tok, store = text_tokenizer(), ChunkStore.default()
    df: dict[str, int] = {}
    n_chunks = 0
    for c in store.iter_chunks(["openstax"]):
        n_chunks += 1
        for t in set(tok.tokenize(c.text)):
            df[t] = df.get(t, 0) + 1

    def idf(t: str) -> float:
        return math.log(1 + n_chunks / df.get(t, 1))

    records = _records(args.label, args.split)
    rows = []
    for q, _ in load_testbed(args.split):
        r = records.get(q.qid)
        if r is None or not r.get("option_scores"):
            continue
        terms = {k: set(tok.tokenize(v)) for k, v in q.options.items()}
        asked = set(tok.tokenize(q.question)) - set().union(*terms.values())
        weight = sum(idf(t) for t in asked) or 1.0
        sentences = [set(tok.tokenize(c.text[s:e])) for c in store.get_chunks(r["citation_ids"])
                     for s, e in split_spans(c.text)]
        support = {}
        for k, own in terms.items():
            own = own - set().union(*(v for j, v in terms.items() if j != k))
            need = max(1, math.ceil(len(own) / 2))
            support[k] = max((sum(idf(t) for t in asked & s) / weight for s in sentences
                              if own and len(own & s) >= need), default=0.0)
        rows.append((r["gold"], r["option_scores"], support))

    def right(beta: float) -> list[bool]:
        return [max(p, key=lambda k: math.log(max(p[k], 1e-9)) + beta * sup[k]) == gold for gold, p, sup in rows]

    base = right(0.0)
    table = []
    for beta in (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0):
        now = right(beta)
        test = mcnemar_test(base, now)
        table.append({"beta": beta, "n": len(rows), "right": sum(now),
                      "gained": sum(a and not b for a, b in zip(now, base)),
                      "lost": sum(b and not a for a, b in zip(now, base)), "mcnemar_p": round(float(test.pvalue), 4)})
    save(f"option_cooccurrence_{args.split}_s27", {"label": args.label, "rows": table})
    print_table(f"Option co-occurrence weight ({args.label}, {args.split})", table,
                ["beta", "n", "right", "gained", "lost", "mcnemar_p"])


def contrast(args) -> None:
    """Evidence contrasted with the closed book (context-aware decoding, Shi et al. 2023), simulated
    over two stored runs: an option's score is (1 + a)·log p_rag − a·log p_closed, so what the
    evidence adds weighs over what the 1.5B believes without it. No LLM call; a = 0 is the run."""
    from medground.eval.metrics import mcnemar_test

    items = load_testbed(args.split)
    rag, closed = _records(args.label, args.split), _records(args.closed, args.split)
    rows_in = [(q.qid, i["set"], q.answer, rag[q.qid]["option_scores"], closed[q.qid]["option_scores"])
               for q, i in items if rag.get(q.qid, {}).get("option_scores") and closed.get(q.qid, {}).get("option_scores")]

    def right(a: float, only: str | None = None) -> list[bool]:
        return [max(p, key=lambda k: (1 + a) * math.log(max(p[k], 1e-9)) - a * math.log(max(c.get(k, 1e-9), 1e-9)))
                == gold for _, kind, gold, p, c in rows_in if only is None or kind == only]

    base = right(0.0)
    table = []
    for a in (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5):
        now = right(a)
        test = mcnemar_test(base, now)
        table.append({"alpha": a, "n": len(now), "right": sum(now), "original": sum(right(a, "original")),
                      "reworded": sum(right(a, "reworded")), "new": sum(right(a, "new")),
                      "gained": sum(x and not y for x, y in zip(now, base)),
                      "lost": sum(y and not x for x, y in zip(now, base)), "mcnemar_p": round(float(test.pvalue), 4)})
    save(f"evidence_contrast_{args.split}_s28", {"label": args.label, "closed": args.closed, "rows": table})
    print_table(f"Evidence contrasted with the closed book ({args.label} vs {args.closed}, {args.split})", table,
                list(table[0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--config", required=True, help="a shipped pipeline name or a YAML path")
    r.add_argument("--label", help="run name (default: the config's file stem)")
    r.add_argument("--split", choices=["dev", "test"], required=True)
    r.add_argument("--threads", type=int, default=2)
    r.add_argument("--free", action="store_true", help="the free-text questions (load_free), run as LABEL-free")
    r.add_argument("--only", help="comma-separated methods or sets to run (default: all)")
    t = sub.add_parser("table")
    t.add_argument("--split", choices=["dev", "test"], required=True)
    t.add_argument("--configs", nargs="+", required=True, help="run labels")
    t.add_argument("--closed", default="direct", help="the closed-book run's label")
    t.add_argument("--baseline", default="rag", help="the run the others are compared with")
    t.add_argument("--common", action="store_true", help="compare on the questions every run answered")
    t.add_argument("--section", default=None, help="reader.json section (default: rewording_<split>)")
    f = sub.add_parser("freetable")
    f.add_argument("--split", choices=["dev", "test"], required=True)
    f.add_argument("--configs", nargs="+", required=True, help="run labels (without -free)")
    f.add_argument("--baseline", default="rag")
    f.add_argument("--section", default=None, help="reader.json section (default: rewording_free_<split>)")
    f.add_argument("--only", help="comma-separated sets to score (default: all of the split)")
    g = sub.add_parser("gatefit")
    g.add_argument("--label", default="rag-gate0", help="a free-text run made with the gate open")
    g.add_argument("--split", choices=["dev"], default="dev")
    g.add_argument("--current", type=float, default=0.78)
    o = sub.add_parser("optionfit")
    o.add_argument("--split", choices=["dev", "test"], default="dev")
    o.add_argument("--config", default="rag-options-check", help="the per-option run's label")
    o.add_argument("--baseline", default="rag")
    c = sub.add_parser("cost")
    c.add_argument("--n", type=int, default=6)
    c.add_argument("--threads", type=int, default=2)
    ab = sub.add_parser("promptab")
    ab.add_argument("--n", type=int, default=8)
    ab.add_argument("--threads", type=int, default=2)
    ea = sub.add_parser("evidenceab")
    ea.add_argument("--n", type=int, default=8, help="questions per arm")
    ea.add_argument("--tokens", type=int, default=250, help="the other arm's evidence budget")
    ea.add_argument("--threads", type=int, default=2)
    sa = sub.add_parser("readerab")
    sa.add_argument("--set", nargs="+", required=True, help="reader settings of the other arm, KEY=JSON")
    sa.add_argument("--n", type=int, default=8, help="questions per arm")
    sa.add_argument("--section", default="rewording_reader_ab", help="reader.json section")
    sa.add_argument("--threads", type=int, default=2)
    co = sub.add_parser("cooccur")
    co.add_argument("--label", default="rag-s24", help="a stored multiple-choice run")
    co.add_argument("--split", choices=["dev", "test"], default="dev")
    ct = sub.add_parser("contrast")
    ct.add_argument("--label", default="rag-s24", help="a stored multiple-choice run with evidence")
    ct.add_argument("--closed", default="direct-permute", help="a stored closed-book run, same debiasing")
    ct.add_argument("--split", choices=["dev", "test"], default="dev")
    args = ap.parse_args()
    {"contrast": contrast, "cooccur": cooccur, "run": run, "table": table, "freetable": freetable, "gatefit": gatefit, "optionfit": optionfit,
     "cost": cost, "promptab": prompt_ab, "evidenceab": evidence_ab, "readerab": settings_ab}[args.cmd](args)


if __name__ == "__main__":
    main()
