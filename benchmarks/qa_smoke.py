"""QA smoke benchmark: every pipeline on a fixed seeded sample of MedQA and MMLU-Med questions.

    python benchmarks/qa_smoke.py [--model qwen2.5-coder-1.5b] [--n 30] [--n-amt 10] [--n-imedrag 6]

Each pipeline runs from its shipped config (configs/pipelines/<name>.yaml) with the model
overridden; per-question records go to $MEDGROUND_HOME/runs/qa_smoke/ (resumable: rerun the
same command after an interruption and only the missing questions are answered). Prints a
table and writes benchmarks/results/qa_smoke.json. Accuracy comes with a Wilson 95 % interval
and the parse-failure rate; seconds per question is wall time per answer on this machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from medground import paths
from medground.eval.datasets import load_dataset, subset
from medground.eval.runner import run_questions
from medground.pipelines.config import load_pipeline_config
from medground.pipelines.factory import build_pipeline

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "qa_smoke.json"
DATASETS = {"medqa": "medagents/medqa", "mmlu": "medagents/mmlu"}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--pipelines", default="direct,rag,amt,imedrag")
    ap.add_argument("--n", type=int, default=30, help="questions per dataset (direct and rag)")
    ap.add_argument("--n-rag", type=int, default=None, help="questions per dataset for rag (default --n)")
    ap.add_argument("--n-amt", type=int, default=10, help="questions per dataset for amt (slow: 6 LLM calls each)")
    ap.add_argument("--n-imedrag", type=int, default=6, help="questions per dataset for imedrag (slowest)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    command = "python benchmarks/qa_smoke.py " + " ".join(argv if argv is not None else sys.argv[1:])
    sizes = {"amt": args.n_amt, "imedrag": args.n_imedrag, "rag": args.n_rag or args.n}
    runs_root = paths.home() / "runs" / "qa_smoke"
    rows = []
    previous = json.loads(args.out.read_text())["rows"] if args.out.exists() else []
    for name in args.pipelines.split(","):
        cfg = load_pipeline_config(ROOT / "configs" / "pipelines" / f"{name}.yaml")
        # The response cache is off so that seconds per question are real reads, not cache hits.
        llm = cfg.llm.model_copy(update={"model": args.model, "cache": False,
                                         **({"threads": args.threads} if args.threads else {})})
        cfg = cfg.model_copy(update={"llm": llm})
        pipe = None
        for short, dataset in DATASETS.items():
            n = sizes.get(name, args.n)
            # The same seeded sample for every pipeline; smaller samples are prefixes-by-rank of it.
            questions = subset(load_dataset(dataset), n, seed=args.seed)
            meta = {"name": f"{name}-{short}", "config": cfg.model_dump(mode="json"), "dataset": dataset,
                    "config_hash": f"{name}-{args.model}-{args.seed}-{n}"}

            def factory():
                nonlocal pipe
                pipe = pipe or build_pipeline(cfg)
                return pipe

            run = run_questions(factory, questions, runs_root / f"{name}-{short}-{args.model}-n{n}", meta)
            rows.append({"pipeline": name, "dataset": short, "n": run.n_done, "command": command, "correct": run.n_correct,
                         "accuracy": run.accuracy, "ci95": [run.ci_low, run.ci_high],
                         "parse_failures": run.parse_failures, "parse_failure_rate": run.parse_failures / max(1, run.n_done),
                         "errors": run.errors, "seconds_per_question": run.runtime_s / max(1, run.n_done)})
    # Rows of pipelines not run this time are kept from the previous results file.
    ran = {r["pipeline"] for r in rows}
    rows = [r for r in previous if r["pipeline"] not in ran] + rows
    result = {
        "benchmark": "qa_smoke",
        "command": command,
        "model": args.model, "seed": args.seed,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "loadavg_at_end": os.getloadavg()},
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    table = Table("pipeline", "dataset", "n", "accuracy", "95% CI", "parse fail", "errors", "s/question",
                  title=f"QA smoke ({args.model}, seed {args.seed})")
    for r in rows:
        acc = f"{r['accuracy']:.3f}" if r["accuracy"] is not None else "—"
        ci = f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]" if r["ci95"][0] is not None else "—"
        table.add_row(r["pipeline"], r["dataset"], str(r["n"]), acc, ci, f"{r['parse_failure_rate']:.1%}",
                      str(r["errors"]), f"{r['seconds_per_question']:.1f}")
    Console().print(table)
    return result


if __name__ == "__main__":
    main()
