"""LLM layer speed and answer-method benchmark (local llama.cpp through xllamacpp).

Measures, on this machine:
  1. prompt and decode tokens/s for every pulled catalog model;
  2. on N seeded MedQA questions with one model: letter-logprob scoring (raw and calibrated)
     vs short generate-and-parse vs chain-of-thought-then-answer: wall time, accuracy with a
     Wilson 95 % CI, parse failures;
  3. prefix reuse: one question read with several passages, llama.cpp prompt cache on vs off;
  4. the persistent response cache: a rerun of the same requests;
  5. tool calls: consumer medication questions (MedInfo2019) sent with the OpenAI ``tools``
     list (search_engine), tool_choice "auto" (free output; calls recovered from the content)
     and "required" (schema-enforced): share of replies that are a valid search_engine call.

    python benchmarks/llm_speed.py --model qwen2.5-coder-1.5b --n 50 --n-cot 10
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

from statsmodels.stats.proportion import proportion_confint

from medground.llm import scoring
from medground.llm.base import LLMSettings, create_llm, free_cores
from medground.llm.models import CATALOG, installed_path
from medground.paths import data_root

RESULTS = Path(__file__).parent / "results" / "llm_speed.json"

def wilson(correct: list[bool]) -> dict:
    n, k = len(correct), sum(correct)
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson") if n else (0.0, 0.0)
    return {"n": n, "correct": k, "accuracy": k / n if n else 0.0, "ci95": [round(lo, 4), round(hi, 4)]}


def load_medqa(n: int, seed: int) -> list[dict]:
    path = data_root() / "benchmarks" / "medagents" / "medqa" / "test.jsonl"
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return random.Random(seed).sample(items, n)


def throughput(model: str, threads: int) -> dict:
    llm = create_llm(LLMSettings(model=model, threads=threads, cache=False, n_ctx=2048))
    text = " ".join(Path(__file__).read_text().split()[:220])  # ~300 tokens of fixed prose
    msgs = [{"role": "user", "content": f"Summarise this text:\n{text}"}]
    r = llm.chat(msgs, max_tokens=64, extra={"ignore_eos": True, "cache_prompt": False})
    t = r.timings
    return {"model": model, "prompt_tokens": r.prompt_tokens, "decode_tokens": r.completion_tokens,
            "prompt_tok_s": round(t.get("prompt_per_second", 0.0), 1),
            "decode_tok_s": round(t.get("predicted_per_second", 0.0), 1), "wall_s": round(r.seconds, 2)}


def run_method(llm, items: list[dict], method: str, calibration: dict | None = None) -> tuple[dict, list]:
    correct, outcomes, counter = [], [], scoring.ParseCounter()
    prompt_tok = completion_tok = 0
    t0 = time.perf_counter()
    for it in items:
        letters = list(it["options"])
        if method == "cot":
            msgs = scoring.mcq_messages(it["question"], it["options"], prompt="mcq_cot")
            s = scoring.generate_and_parse(llm, msgs, letters, max_tokens=320, options=it["options"])
        elif method == "generate":
            msgs = scoring.mcq_messages(it["question"], it["options"])
            s = scoring.generate_and_parse(llm, msgs, letters, max_tokens=8)
        else:
            msgs = scoring.mcq_messages(it["question"], it["options"])
            s = scoring.score_options(llm, msgs, letters, calibration=calibration)
        counter.add(s)
        correct.append(s.choice == it["answer_idx"])
        outcomes.append(s)
        if s.result:
            prompt_tok += s.result.prompt_tokens
            completion_tok += s.result.completion_tokens
    wall = time.perf_counter() - t0
    print(f"  {method}: {sum(correct)}/{len(items)} correct in {wall:.0f} s", file=sys.stderr, flush=True)
    return ({"method": method, **wilson(correct), "parse_failures": counter.failures,
             "failure_reasons": counter.reasons, "wall_s": round(wall, 1),
             "s_per_question": round(wall / max(1, len(items)), 2),
             "prompt_tokens": prompt_tok, "completion_tokens": completion_tok}, outcomes)


def prefix_reuse(model: str, threads: int, item: dict, passages: list[str]) -> dict:
    llm = create_llm(LLMSettings(model=model, threads=threads, cache=False, n_ctx=4096))
    opts = "\n".join(f"{k}. {v}" for k, v in item["options"].items())
    head = f"Question: {item['question']}\nOptions:\n{opts}\n\n"
    out = {}
    for mode in (False, True):
        llm.chat([{"role": "user", "content": "unrelated warm-up"}], max_tokens=1, extra={"cache_prompt": False})
        t0 = time.perf_counter()
        reused = 0
        for p in passages:
            msgs = [{"role": "system", "content": "You are a medical expert. Answer the multiple-choice question."},
                    {"role": "user", "content": head + f"Passage: {p}\n\nDoes the passage help? Answer yes or no."}]
            r = llm.chat(msgs, max_tokens=1, top_logprobs=5, extra={"cache_prompt": mode})
            reused += r.cached_prompt_tokens
        out["on" if mode else "off"] = {"wall_s": round(time.perf_counter() - t0, 2), "reused_prompt_tokens": reused}
    out["passages"] = len(passages)
    out["speedup"] = round(out["off"]["wall_s"] / max(1e-9, out["on"]["wall_s"]), 2)
    return out


def response_cache(model: str, threads: int, items: list[dict]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        llm = create_llm(LLMSettings(model=model, threads=threads, cache=str(Path(tmp) / "c.sqlite"),
                                     prompt_cache=False))
        walls = []
        for _ in range(2):
            t0 = time.perf_counter()
            for it in items:
                scoring.score_options(llm, scoring.mcq_messages(it["question"], it["options"]), list(it["options"]))
            walls.append(time.perf_counter() - t0)
        stats = llm.cache_stats()
        llm.cache.close()
    return {"questions": len(items), "first_s": round(walls[0], 2), "rerun_s": round(walls[1], 4),
            "speedup": round(walls[0] / max(1e-9, walls[1]), 1), **stats}


def tool_calls(model: str, threads: int, n: int, seed: int) -> dict:
    from medground.eval.datasets import load_dataset, subset
    from medground.llm.structured import SEARCH_ENGINE, StructuredFailure, validate_json

    questions = subset(load_dataset("medication-qa"), n, seed=seed)
    llm = create_llm(LLMSettings(model=model, threads=threads, cache=False))
    tools = [SEARCH_ENGINE.to_openai()]
    out: dict = {"questions": len(questions), "tool": "search_engine"}
    for choice in ("auto", "required"):
        valid, walls, examples = 0, [], []
        for q in questions:
            msgs = [{"role": "system", "content": "You answer medication questions. Search the medicine "
                     "database with the search_engine tool before answering."},
                    {"role": "user", "content": q.question}]
            r = llm.chat(msgs, tools=tools, tool_choice=choice, max_tokens=96)
            walls.append(r.seconds)
            call = r.tool_calls[0] if r.tool_calls else None
            valid += call is not None and call.name == "search_engine" and not isinstance(
                validate_json(call.arguments, SEARCH_ENGINE.parameters), StructuredFailure)
            if len(examples) < 3:
                examples.append({"question": q.question, "tool_calls": [c.to_openai() for c in r.tool_calls],
                                 "text": r.text[:200]})
        out[choice] = {"valid_calls": valid, "rate": round(valid / max(1, len(questions)), 3),
                       "s_per_call": round(sum(walls) / max(1, len(walls)), 2), "examples": examples}
        print(f"  tool_choice={choice}: {valid}/{len(questions)} valid search_engine calls", file=sys.stderr, flush=True)
    return out


def medline_passages(n: int) -> list[str]:
    path = data_root() / "corpora" / "medlineplus-topics" / "medline_cleaned.csv"
    with open(path, newline="") as f:
        rows = [r["summary"] for r in csv.DictReader(f) if len(r.get("summary", "")) > 400]
    return [" ".join(r.split()[:90]) for r in rows[:n]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b", help="model for the MedQA comparisons")
    ap.add_argument("--n", type=int, default=50, help="MedQA questions for letter scoring / generate")
    ap.add_argument("--n-cot", type=int, default=10, help="questions for chain-of-thought (expensive)")
    ap.add_argument("--passages", type=int, default=6, help="passages for the prefix-reuse test")
    ap.add_argument("--cache-n", type=int, default=10, help="questions for the response-cache rerun")
    ap.add_argument("--tool-n", type=int, default=20, help="medication questions for the tool-call test")
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: free cores)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-throughput", action="store_true")
    args = ap.parse_args()
    threads = args.threads or free_cores()
    report: dict = {
        "machine": {"cpu_count": os.cpu_count(), "threads": threads, "loadavg_start": os.getloadavg(),
                    "python": platform.python_version(), "platform": platform.platform(),
                    "date": dt.datetime.now().isoformat(timespec="seconds")},
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }
    pulled = [m for m in CATALOG if installed_path(m)]
    if not args.skip_throughput:
        report["throughput"] = []
        for m in pulled:
            row = throughput(m, threads)
            report["throughput"].append(row)
            print(f"{m:22s} prompt {row['prompt_tok_s']:7.1f} tok/s   decode {row['decode_tok_s']:6.1f} tok/s", flush=True)

    items = load_medqa(args.n, args.seed)
    # Prompt cache off: llama.cpp also keeps earlier prompts in RAM, which would let a later
    # method re-read the same question for free and flatter its time.
    llm = create_llm(LLMSettings(model=args.model, threads=threads, cache=False, prompt_cache=False))
    letters = ["A", "B", "C", "D"]
    calib = scoring.calibrate(llm, letters)
    methods = []
    letter_row, letter_scores = run_method(llm, items, "letter")
    methods.append(letter_row)
    # Calibration re-normalises the same log-probabilities: no second forward pass.
    calibrated = [scoring.normalise({x: lp - calib[x] for x, lp in s.logprobs.items()}) for s in letter_scores]
    cal_correct = [bool(p) and max(p, key=p.get) == it["answer_idx"] for p, it in zip(calibrated, items)]
    methods.append({**letter_row, "method": "letter+calibration", **wilson(cal_correct)})
    methods.append(run_method(llm, items, "generate")[0])
    methods.append(run_method(llm, items[: args.n_cot], "cot")[0])
    report["medqa"] = {"model": args.model, "seed": args.seed, "calibration": calib, "methods": methods}
    print(f"\nMedQA (4 options), model {args.model}, seed {args.seed}")
    print(f"{'method':20s} {'n':>3s} {'acc':>6s} {'95% CI':>15s} {'fail':>4s} {'s/q':>6s} {'wall s':>7s}")
    for m in methods:
        ci = f"[{m['ci95'][0]:.2f}, {m['ci95'][1]:.2f}]"
        print(f"{m['method']:20s} {m['n']:3d} {m['accuracy']:6.3f} {ci:>15s} {m['parse_failures']:4d} "
              f"{m['s_per_question']:6.2f} {m['wall_s']:7.1f}")

    report["prefix_reuse"] = prefix_reuse(args.model, threads, items[0], medline_passages(args.passages))
    pr = report["prefix_reuse"]
    print(f"\nprefix reuse ({pr['passages']} passages, one question): off {pr['off']['wall_s']} s, "
          f"on {pr['on']['wall_s']} s → {pr['speedup']}x ({pr['on']['reused_prompt_tokens']} prompt tokens reused)")
    report["response_cache"] = response_cache(args.model, threads, items[: args.cache_n])
    rc = report["response_cache"]
    print(f"response cache: first {rc['first_s']} s, rerun {rc['rerun_s']} s → {rc['speedup']}x "
          f"(hits {rc['hits']}, misses {rc['misses']})")
    report["tool_calls"] = tool_calls(args.model, threads, args.tool_n, args.seed)
    tc = report["tool_calls"]
    print(f"tool calls ({tc['questions']} medication questions): auto {tc['auto']['valid_calls']} valid, "
          f"required {tc['required']['valid_calls']} valid ({tc['required']['s_per_call']} s/call)")
    report["machine"]["loadavg_end"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2))
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
