"""Throughput against concurrency: a sweep run against an OpenAI-compatible server.

The server is benchmarks/fake_openai.py in its own process (200 ms + 2 ms per completion token
by default: a vLLM-like latency, with no GPU), which records how many requests were in flight
and each request's latency. The sweep is the ``direct`` pipeline (letter scoring, one request
per question, LLM cache off) over 64 MMLU-Med questions at each concurrency; every run's
records must equal the concurrency-1 run's (timing fields aside).

    python benchmarks/llm_concurrency.py                 # -> benchmarks/results/llm_concurrency.json
    python benchmarks/llm_concurrency.py --slots 8       # a server that serves 8 at a time (its own entry)
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "llm_concurrency.json"
TIMING = {"seconds", "timings"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url: str, method: str = "GET") -> dict:
    req = urllib.request.Request(url, method=method, data=b"{}" if method == "POST" else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def start_server(port: int, base_ms: float, per_token_ms: float, slots: int | None) -> subprocess.Popen:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "fake_openai.py"), "--port", str(port),
           "--base-ms", str(base_ms), "--per-token-ms", str(per_token_ms)]
    if slots:
        cmd += ["--slots", str(slots)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            http(f"http://127.0.0.1:{port}/stats")
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"fake server did not start: {proc.stderr.read().decode() if proc.stderr else ''}")


def comparable(run_dir: Path) -> dict[str, dict]:
    from medground.eval.records import read_records

    return {r.qid: {k: v for k, v in r.to_dict().items() if k not in TIMING}
            for r in read_records(run_dir / "results.jsonl")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=64)
    ap.add_argument("--concurrency", default="1,2,4,8,16,32")
    ap.add_argument("--base-ms", type=float, default=200.0)
    ap.add_argument("--per-token-ms", type=float, default=2.0)
    ap.add_argument("--slots", type=int, default=None, help="server: requests served at once (default: no limit)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()

    from medground.eval.datasets import load_dataset, subset
    from medground.eval.sweep import SweepSettings, run_sweep
    from medground.pipelines.factory import make_pipeline

    questions = subset(load_dataset("mirage/mmlu"), args.questions, seed=0)
    port = free_port()
    server = start_server(port, args.base_ms, args.per_token_ms, args.slots)
    base_url = f"http://127.0.0.1:{port}/v1"
    load_before = os.getloadavg()
    rows, reference = [], None
    try:
        grid = {"name": "llm-concurrency", "datasets": [{"name": "mirage/mmlu", "subset": args.questions}],
                "base": {"pipeline": "direct", "reader": {"prompt": "zeroshot", "scoring": "logprob"},
                         "llm": {"backend": "openai", "model": "fake", "base_url": base_url, "cache": False,
                                 "retries": 0}}}
        with tempfile.TemporaryDirectory(prefix="llm-conc-") as tmp:
            # Imports (the SDK's response types, the summary's statistics) happen here, untimed.
            run_sweep(SweepSettings.model_validate(grid), make_pipeline, Path(tmp) / "warmup",
                      load_questions=lambda spec: questions[:2], progress=False)
            for c in [int(x) for x in args.concurrency.split(",")]:
                settings = SweepSettings.model_validate({**grid, "concurrency": c})
                runs = Path(tmp) / f"c{c}"
                http(f"http://127.0.0.1:{port}/stats/reset", "POST")
                t0 = time.perf_counter()
                result = run_sweep(settings, make_pipeline, runs, load_questions=lambda spec: questions,
                                   progress=False)
                wall = time.perf_counter() - t0
                stats = http(f"http://127.0.0.1:{port}/stats")
                (summary,) = result.summaries
                records = comparable(runs / summary.run_id)
                reference = reference or records
                rows.append({"concurrency": c, "questions": summary.n_done, "errors": summary.errors,
                             "wall_s": round(wall, 3), "questions_per_s": round(summary.n_done / wall, 2),
                             "requests": stats["requests"], "latency_p50_ms": round(stats["latency_p50_ms"], 1),
                             "latency_p95_ms": round(stats["latency_p95_ms"], 1),
                             "max_in_flight": stats["max_in_flight"],
                             "mean_in_flight": round(stats["mean_in_flight"], 2),
                             "records_equal_serial": records == reference})
                r = rows[-1]
                print(f"c={c:>3}  {r['questions_per_s']:>7.2f} q/s  p50 {r['latency_p50_ms']:>7.1f} ms  "
                      f"p95 {r['latency_p95_ms']:>7.1f} ms  in flight max {r['max_in_flight']:>3} "
                      f"mean {r['mean_in_flight']:>5.2f}  same records: {r['records_equal_serial']}", flush=True)
    finally:
        server.terminate()
        server.wait(10)
    out = {"benchmark": "llm_concurrency", "questions": args.questions, "dataset": "mirage/mmlu (seed 0)",
           "pipeline": "direct, zero-shot letter scoring (1 request per question), LLM cache off",
           "server": {"base_ms": args.base_ms, "per_token_ms": args.per_token_ms, "slots": args.slots},
           "machine": {"cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
                       "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
           "rows": rows}
    print(f"{'concurrency':>11} {'q/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'max in flight':>14} {'same records':>13}")
    for r in rows:
        print(f"{r['concurrency']:>11} {r['questions_per_s']:>7.2f} {r['latency_p50_ms']:>8.1f} "
              f"{r['latency_p95_ms']:>8.1f} {r['max_in_flight']:>14} {str(r['records_equal_serial']):>13}")
    # One entry per server configuration, so the unlimited and the slots curves sit side by side.
    key = f"slots={args.slots or 'unlimited'}"
    saved = json.loads(args.out.read_text()) if args.out.exists() else {}
    saved[key] = out
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(saved, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
