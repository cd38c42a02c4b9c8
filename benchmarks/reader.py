"""Reading apart from retrieval: does the reader use the evidence it is given?

Sections (each merges its result into benchmarks/results/reader.json; run them one at a time):

  pubmedqa    PubMedQA PQA-L (1,000 expert-labelled, reasoning-required): the question with its
              own abstract vs closed book, plain letter scoring and permutation-debiased;
              accuracy, macro-F1, majority-class rate, exact McNemar vs closed book.
  drugs       Medicine-database reading (eval/drugqa.py): multiple choice read with the gold
              record, a wrong drug's record and no record; free text through the consultation
              reader with the gold and the wrong record: support rate, wrong-abstention and
              right-abstention rates, the abstention threshold fitted on a development half.
  answerable  The answerable set (benchmarks/data/answerable_textbooks.jsonl): the default
              pipeline (configs/pipelines/rag.yaml) vs closed book on questions whose answer is
              in one textbook chunk; does retrieval find that chunk, does the reader follow it.
  cost        Seconds and prompt tokens per question on a quiet machine, cache off: rag
              multiple choice before (4 passages, 900 tokens, whole) and after (the default
              config), amt, and a consultation answer.

    python benchmarks/reader.py pubmedqa --n 200
    python benchmarks/reader.py drugs --n 60
    python benchmarks/reader.py answerable
    python benchmarks/reader.py cost --n 8
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from medground.eval.bench import make_llm, print_table, save_section
from medground.eval.coverage import holds_sentence
from medground.eval.evaluators import (
    ReaderEvaluator,
    accuracy_fields,
    fit_threshold,
    gate_rates,
    mcnemar_row,
    rate,
    scored_rows,
)
from medground.eval.testbeds import load_answerable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "reader.json"
ANSWERABLE = ROOT / "benchmarks" / "data" / "answerable_textbooks.jsonl"
CONFIGS = ROOT / "configs" / "pipelines"


# --- shared ---------------------------------------------------------------------------------
READER = ReaderEvaluator()  # no labels: accuracy, parse failures and cost only


def context_block(label: str, text: str) -> str:
    from medground.llm import prompts

    return prompts.fill("evidence_block", evidence=f"[1] ({label}) {text}")


def read(llm, question, block: str, debias: str):
    from medground.pipelines.base import ReaderSettings, Tally, read_choice

    tally = Tally()
    t = time.perf_counter()
    scores = read_choice(llm, question, block, ReaderSettings(debias=debias), tally)
    return scores, time.perf_counter() - t, tally.tokens["prompt"]


def save(section: str, payload: dict) -> None:
    """Merge a section into benchmarks/results/reader.json (eval/bench.py)."""
    save_section(RESULTS, section, payload)


# --- PubMedQA ------------------------------------------------------------------------------
def pubmedqa(args) -> None:
    from dataclasses import replace

    from medground.eval.datasets import load_dataset, subset

    qs = subset(load_dataset("pubmedqa", split="all"), args.n, seed=args.seed)
    llm = make_llm(args.model, args.threads)
    arms = {"closed": (False, "none"), "closed-permute": (False, "permute"),
            "context": (True, "none"), "context-permute": (True, "permute")}
    preds: dict[str, list[str | None]] = {a: [] for a in arms}
    logprobs: dict[str, list[dict]] = {a: [] for a in arms}
    secs: dict[str, list[float]] = {a: [] for a in arms}
    for i, q in enumerate(qs, 1):
        for arm, (with_ctx, debias) in arms.items():
            block = context_block("PubMed abstract", q.context) if with_ctx else ""
            scores, s, _ = read(llm, replace(q, context=""), block, debias)
            preds[arm].append(scores.choice)
            logprobs[arm].append(dict(scores.logprobs))
            secs[arm].append(s)
        if i % 10 == 0:
            print(f"pubmedqa {i}/{len(qs)}", file=sys.stderr, flush=True)
    gold = [q.answer for q in qs]
    labels = ["A", "B", "C"]
    majority = max(labels, key=gold.count)
    # Label-free recalibration (eval.metrics.recalibrate): the model says "yes" to nearly
    # everything; subtracting each label's mean log-probability over the questions removes that.
    from medground.eval.metrics import recalibrate

    for arm in list(arms):
        recs = recalibrate([{"qid": q.qid, "gold": q.answer, "letter_logprobs": lp or None}
                            for q, lp in zip(qs, logprobs[arm])])
        if recs:
            preds[f"{arm}+recalibrated"] = [r["choice"] for r in recs]
            secs[f"{arm}+recalibrated"] = secs[arm]
    rows = pubmedqa_rows([q.qid for q in qs], gold, preds, secs, labels)
    payload = {"dataset": "pubmedqa PQA-L (ori_pqal.json, all 1,000 labelled), seeded subset",
               "n": len(qs), "seed": args.seed, "model": args.model, "labels": {"A": "yes", "B": "no", "C": "maybe"},
               "majority_class": {"label": majority, "rate": rate([g == majority for g in gold])["rate"]},
               "rows": rows, "per_question": {"qids": [q.qid for q in qs], "gold": gold, "pred": preds}}
    save("pubmedqa", payload)
    print_table(f"PubMedQA n={len(qs)} (majority rate {payload['majority_class']['rate']})", rows,
                ["arm", "accuracy", "ci95", "macro_f1", "pred_share", "mcnemar_vs_closed"])


def pubmedqa_rows(qids: list[str], gold: list[str], preds: dict[str, list[str | None]],
                  secs: dict[str, list[float]], labels: list[str]) -> list[dict]:
    """Each arm's summary row (eval/evaluators/reader.py); context arms paired with their closed-book arm."""
    ev = ReaderEvaluator(labels)
    judged = {arm: [ev.row(q, g, p, seconds=s) for q, g, p, s in zip(qids, gold, preds[arm], secs[arm], strict=True)]
              for arm in preds}
    rows = []
    for arm, arm_rows in judged.items():
        s = ev.summarize(arm_rows)
        closed = "closed" + ("-permute" if "permute" in arm else "") + ("+recalibrated" if "recalibrated" in arm else "")
        rows.append({"arm": arm, **accuracy_fields(s["accuracy"]), "macro_f1": s["macro_f1"],
                     "pred_share": s["pred_share"], "parse_failures": s["parse_failures"],
                     "seconds_per_q": s["seconds_per_q"],
                     "mcnemar_vs_closed": None if not arm.startswith("context") else
                     mcnemar_row([r["correct"] for r in judged[closed]], [r["correct"] for r in arm_rows])})
    return rows


# --- medicine database ----------------------------------------------------------------------
def drugs(args) -> None:
    from medground.eval import drugqa
    from medground.store.drugs import DrugStore
    from medground.pipelines.base import Tally
    from medground.pipelines.drugrag import DrugRagPipeline, DrugRagSettings
    from medground.reading.consult_types import record_citation
    from medground.retrieve.engine import RetrievalEngine
    from medground.schema import Evidence

    store = DrugStore()
    drugs_, attrs = store.drugs(), store.attributes()
    llm = make_llm(args.model, args.threads)

    # Multiple choice: the same question read with the gold record, a wrong record and none.
    mc = drugqa.generate(drugs_, attrs, args.n, seed=args.seed, kind="mc")
    arms = [(rec, debias) for rec in ("gold", "wrong", "none") for debias in ("none", "permute")]
    mc_preds = {f"{r}/{d}": [] for r, d in arms}
    for i, item in enumerate(mc, 1):
        for rec, debias in arms:
            att, drug = (item.gold, item.drug) if rec == "gold" else (item.wrong, item.wrong_drug)
            block = "" if rec == "none" else context_block(f"Medicine database / {drug.display_name} / "
                                                           f"{att.type.value}", att.text)
            scores, _, _ = read(llm, item.question, block, debias)
            mc_preds[f"{rec}/{debias}"].append(scores.choice)
        if i % 10 == 0:
            print(f"drugs mc {i}/{len(mc)}", file=sys.stderr, flush=True)
    gold = [it.question.answer for it in mc]
    mc_rows = mc_summary_rows([it.question.qid for it in mc], gold, mc_preds)

    # Free text through the consultation reader: support score with the gold and a wrong record.
    free = drugqa.generate(drugs_, attrs, args.n, seed=args.seed + 1, kind="free")
    engine = RetrievalEngine({"retrievers": ["bm25"]})  # only its token counter is used
    pipe = DrugRagPipeline(llm, engine, DrugRagSettings(answer="extractive", abstain_below=None))
    items = []
    for i, item in enumerate(free, 1):
        row = {"qid": item.question.qid, "drug": item.drug.display_name, "attribute": item.gold.type.value}
        for rec in ("gold", "wrong"):
            att, drug = (item.gold, item.drug) if rec == "gold" else (item.wrong, item.wrong_drug)
            ev = Evidence(citations=[record_citation(drug, att)], token_count=0, budget=0)
            t = time.perf_counter()
            ans = pipe.read(item.question.question, ev, Tally(), {})
            row[f"{rec}_support"] = ans.metadata.get("support")
            row[f"{rec}_seconds"] = round(time.perf_counter() - t, 2)
            if rec == "gold":
                row["gold_answer"] = ans.text
                row["gold_supported"] = drugqa.supported(ans.text, att.text, exclude=[drug.display_name,
                                                                                      item.question.question])
        items.append(row)
        if i % 10 == 0:
            print(f"drugs free {i}/{len(free)}", file=sys.stderr, flush=True)
    dev, test = items[: len(items) // 2], items[len(items) // 2:]
    threshold = fit_threshold(gate_rows(dev))
    free_rows = [rates(part, threshold, name) for name, part in (("dev", dev), ("test", test))]
    free_rows.append(rates(test, 0.5, "test, untuned threshold 0.5"))

    # Generated free text (the other answer mode) on a few items: support rate of what it writes.
    gen = DrugRagPipeline(llm, engine, DrugRagSettings(answer="generate", abstain_below=None))
    gen_rows = []
    for item in free[: args.n_generate]:
        ev = Evidence(citations=[record_citation(item.drug, item.gold)], token_count=0, budget=0)
        ans = gen.read(item.question.question, ev, Tally(), {})
        gen_rows.append({"qid": item.question.qid, "answer": ans.text, "outcome": ans.outcome,
                         "supported": drugqa.supported(ans.text, item.gold.text,
                                                       exclude=[item.drug.display_name, item.question.question])})
    payload = {
        "generator": "medground.eval.drugqa.generate (OpenStax prototype-table records, one item a line)",
        "n_mc": len(mc), "n_free": len(free), "seed": args.seed, "model": args.model,
        "mc": mc_rows,
        "free_text_extractive": {"threshold_fitted_on_dev": threshold, "rows": free_rows,
                                 "support_check": "eval.drugqa.supported: every sentence has >= 70 % of its "
                                                  "content terms in the record"},
        "free_text_generated": {"n": len(gen_rows),
                                "support_rate": rate([r["supported"] for r in gen_rows])["rate"], "answers": gen_rows},
        "per_question": {"mc": {"gold": gold, "pred": mc_preds}, "free": items},
    }
    save("drugs", payload)
    print_table(f"Medicine database, multiple choice n={len(mc)}", mc_rows, ["arm", "accuracy", "ci95"])
    print_table(f"Consultation reader, extractive, threshold {threshold} fitted on dev", free_rows,
                ["split", "n", "support_rate", "wrong_abstention", "right_abstention"])
    print(f"generated answers: support rate {payload['free_text_generated']['support_rate']} "
          f"(n={len(gen_rows)})")


def mc_summary_rows(qids: list[str], gold: list[str], preds: dict[str, list[str | None]]) -> list[dict]:
    ev = READER
    rows = []
    for arm, arm_preds in preds.items():
        s = ev.summarize([ev.row(q, g, p) for q, g, p in zip(qids, gold, arm_preds, strict=True)])
        rows.append({"arm": arm, **accuracy_fields(s["accuracy"]), "parse_failures": s["parse_failures"]})
    return rows


def gate_rows(pairs: list[dict]) -> list[dict]:
    """Each question read with its gold record (answerable) and a wrong one (unanswerable), as the
    scored rows of eval/evaluators/abstention.py."""
    return (scored_rows(pairs, "gold_support", unanswerable=False, supported="gold_supported")
            + scored_rows(pairs, "wrong_support", unanswerable=True))


def rates(pairs: list[dict], threshold: float, split: str) -> dict:
    """The support gate at ``threshold`` (gate_rates), as the result file stores it."""
    g = gate_rates(gate_rows(pairs), threshold)
    return {"split": split, "n": len(pairs), "threshold": threshold,
            "wrong_abstention": g["wrong_abstention"]["rate"], "right_abstention": g["right_abstention"]["rate"],
            "support_rate": g["support_rate"]["rate"]}


# --- the answerable set ------------------------------------------------------------------------
def answerable(args) -> None:
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import build_pipeline

    items = load_answerable(ANSWERABLE)
    configs = {"closed book (direct.yaml)": CONFIGS / "direct.yaml", "default (rag.yaml)": CONFIGS / "rag.yaml"}
    for extra in args.configs or []:
        configs[Path(extra).name] = Path(extra)
    per: dict[str, list[dict]] = {}
    for label, path in configs.items():
        cfg = load_pipeline_config(path)
        cfg = cfg.model_copy(update={"llm": cfg.llm.model_copy(update={"threads": args.threads})})
        pipe = build_pipeline(cfg)
        rows = []
        for q, d in items:
            ans = pipe.answer(q)
            row = READER.judge(q, ans)
            rows.append({**row, "gold_chunk_retrieved": any(c.chunk_id in d["gold_ids"] for c in ans.citations),
                         "evidence_in_context": holds_sentence(ans.citations, d["evidence"]),
                         "seconds": round(row["seconds"], 2)})
        per[label] = rows
        print(f"{label}: {sum(r['correct'] for r in rows)}/{len(rows)}", file=sys.stderr, flush=True)
    table = answerable_table(per)
    save("answerable", {"set": str(ANSWERABLE.relative_to(ROOT)), "n": len(items), "rows": table, "per_question": per,
                        "seconds_note": "seconds_per_q is wall time as run: answers found in the shared LLM cache cost ~0 s; cold costs are in the cost section"})
    print_table(f"Answerable set n={len(items)}", table,
                ["config", "accuracy", "ci95", "gold_chunk_cited", "accuracy_when_gold_chunk_cited", "mcnemar_vs_closed"])


def answerable_table(per: dict[str, list[dict]]) -> list[dict]:
    """Each config's row; the closed-book config (the first) is the McNemar baseline."""
    ev = READER
    base = {r["qid"]: r["correct"] for r in per["closed book (direct.yaml)"]}
    table = []
    for label, rows in per.items():
        s = ev.summarize(rows)
        table.append({"config": label, **accuracy_fields(s["accuracy"]),
                      "gold_chunk_cited": sum(r["gold_chunk_retrieved"] for r in rows),
                      "accuracy_when_gold_chunk_cited": rate([r["correct"] for r in rows if r["gold_chunk_retrieved"]])["rate"],
                      "seconds_per_q": s["seconds_per_q"],
                      "mcnemar_vs_closed": None if label.startswith("closed") else ev.paired(rows, base).row()})
    return table


# --- cost ----------------------------------------------------------------------------------------
def cost(args) -> None:
    from medground.eval.datasets import load_dataset
    from medground.pipelines.config import load_pipeline_config, pipeline_config
    from medground.pipelines.factory import build_pipeline

    items = [q for q, _ in load_answerable(ANSWERABLE)][: args.n]
    before = {"pipeline": "rag", "llm": {"model": args.model, "threads": args.threads, "cache": False},
              "retrieve": {"retrievers": ["bm25"], "fusion": None, "top": 50, "final_k": 4, "budget_tokens": 900,
                           "corpora": ["openstax"]},
              "reader": {"prompt": "zeroshot"}}
    runs = {"rag before (4 passages, 900 tokens, whole)": pipeline_config(before)}
    for label, name in (("rag (default rag.yaml)", "rag"), ("amt (amt.yaml)", "amt")):
        cfg = load_pipeline_config(CONFIGS / f"{name}.yaml")
        runs[label] = cfg.model_copy(update={"llm": cfg.llm.model_copy(update={"threads": args.threads, "cache": False})})
    rows = []
    for label, cfg in runs.items():
        pipe = build_pipeline(cfg)
        pipe.answer(items[0])  # warm-up: model load and index open are not per-question cost
        rows.append({"config": label, **cost_row(READER(pipe, items[1:]).rows)})
        print(rows[-1], file=sys.stderr, flush=True)
    # A consultation answer: MedInfo2019 medication questions through drugrag.yaml.
    cfg = load_pipeline_config(CONFIGS / "drugrag.yaml")
    cfg = cfg.model_copy(update={"llm": cfg.llm.model_copy(update={"threads": args.threads, "cache": False})})
    pipe = build_pipeline(cfg)
    consult = load_dataset("medication-qa")[: args.n]
    pipe.answer(consult[0])
    judged = READER(pipe, consult[1:]).rows
    outcomes = [r["outcome"] for r in judged]
    rows.append({"config": "consultation (drugrag.yaml)", **cost_row(judged),
                 "outcomes": {o: outcomes.count(o) for o in set(outcomes)}})
    save("cost", {"model": args.model, "threads": args.threads, "rows": rows,
                  "note": "cache off; the first question of each config is a warm-up and not counted"})
    print_table("Cost per question (cache off)", rows, ["config", "n", "seconds_per_q", "max_seconds", "prompt_tokens_per_q"])


def cost_row(rows: list[dict]) -> dict:
    s = READER.summarize(rows)
    return {"n": s["n"], "seconds_per_q": s["seconds_per_q"], "max_seconds": round(max(r["seconds"] for r in rows), 2),
            "prompt_tokens_per_q": s["prompt_tokens_per_q"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("section", choices=["pubmedqa", "drugs", "answerable", "cost"])
    ap.add_argument("--n", type=int, default=None, help="questions (pubmedqa 200, drugs 60, cost 8)")
    ap.add_argument("--n-generate", type=int, default=12, help="drugs: generated free-text answers to check")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--configs", nargs="*", help="answerable: further pipeline configs to compare")
    args = ap.parse_args()
    args.n = args.n or {"pubmedqa": 200, "drugs": 60, "cost": 8}.get(args.section)
    {"pubmedqa": pubmedqa, "drugs": drugs, "answerable": answerable, "cost": cost}[args.section](args)


if __name__ == "__main__":
    main()
