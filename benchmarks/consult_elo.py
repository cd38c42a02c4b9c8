"""Elo of consultation answers judged pairwise by an LLM → section "elo" of consult.json.

    python benchmarks/consult_elo.py [--n 20] [--judge-model qwen2.5-coder-1.5b | --judge-url URL --judge-model NAME]

A fixed seeded set of generated multi-turn dialogues (eval/dialogues.py, seed 0, the first n).
Systems: drugrag.yaml as shipped (tool call + candidates, support gate, extractive answer);
the same with a generated answer (answer: generate, citing entries); closed book (the same
model answers the consultation with no evidence). Every pair of systems on every dialogue is
judged in both orders (eval/judge.py), ties allowed, Elo with bootstrap 95 % intervals.
Limits when the judge is the local 1.5B: it is the model that wrote the answers (self-
preference), it is small, and its position bias is reported (pairs whose two orders disagree).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from medground.eval.bench import print_table, save_section
from medground.eval.testbeds import eligible_medication_qa

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "consult.json"

CLOSED = ("You are a pharmacist. Answer the patient's last question in one to three sentences.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--judge-model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--judge-url", default=None, help="OpenAI-compatible base URL for the judge")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    from medground.eval import dialogues, judge
    from medground.llm.base import LLMSettings, create_llm
    from medground.pipelines.config import load_pipeline_config
    from medground.pipelines.factory import build_pipeline
    from medground.schema import Question

    store, retriever, items = eligible_medication_qa()
    ds = dialogues.generate(items, store.drugs(), n=args.n, seed=0)
    questions = [Question(qid=d.qid, dataset="dialogues", question=d.turns[-1],
                          context="\n".join(f"Patient: {t}" for t in d.turns[:-1])) for d in ds]
    texts = {d.qid: d.text for d in ds}

    cfg = load_pipeline_config(Path("configs/pipelines/drugrag.yaml"))
    cfg = cfg.model_copy(update={"llm": cfg.llm.model_copy(update={"model": args.model, "threads": args.threads})})
    shipped = build_pipeline(cfg)
    generate = build_pipeline(cfg.model_copy(update={"drugrag": cfg.drugrag.model_copy(update={"answer": "generate"})}))
    llm = shipped.llm
    answers: dict[str, dict[str, str]] = {"drugrag (extractive, shipped)": {}, "drugrag (generated answer)": {},
                                          "closed book": {}}
    for q, d in zip(questions, ds):
        for name, pipe in (("drugrag (extractive, shipped)", shipped), ("drugrag (generated answer)", generate)):
            a = pipe.answer(q)
            answers[name][q.qid] = a.text or f"[{a.outcome}]"
        r = llm.chat([{"role": "system", "content": CLOSED}, {"role": "user", "content": d.text}], max_tokens=120)
        answers["closed book"][q.qid] = r.text.strip()
        print(f"answered {q.qid}", file=sys.stderr, flush=True)

    judge_llm = create_llm(LLMSettings(backend="openai" if args.judge_url else "local", model=args.judge_model,
                                       base_url=args.judge_url, threads=args.threads))
    t = judge.run_tournament(judge_llm, texts, answers, seed=0)
    rows = judge.ratings(t, n_boot=1000, seed=0)
    save_section(RESULTS, "elo", {
        "dialogues": len(ds), "systems": sorted(answers), "judge": args.judge_url or args.judge_model,
        "pairs_judged": len(t.verdicts), "judge_failures": t.failures,
        "position_disagreements": t.position_disagreements(), "rows": rows,
        "limits": "local 1.5B judge: it wrote the answers (self-preference), small, position-biased "
                  "(disagreeing orders count as ties)" if not args.judge_url else "",
        "answers": answers,
        "verdicts": [[v.qid, v.a, v.b, v.first, v.second, v.winner] for v in t.verdicts]})
    print_table(f"Elo, {len(ds)} dialogues, judge {args.judge_url or args.judge_model}, "
                f"{t.position_disagreements()} of {len(t.verdicts)} pairs position-inconsistent", rows,
                ["system", "elo", "ci95", "wins", "ties", "losses"])


if __name__ == "__main__":
    main()
