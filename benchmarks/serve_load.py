"""Load, bad input and disconnects against a real `medground serve` on 127.0.0.1.

Starts the server as a subprocess with the real small model (SmolLM2-135M through llama.cpp;
answers are junk, the serving mechanics are real) and BM25 over the chunk store, then:

  1. 200 concurrent POST /v1/search on a cold server (nothing loaded yet);
  2. 1,000 sequential /v1/search;
  3. 20 concurrent /v1/ask with 25 /v1/search mixed in, while /health is polled every 50 ms;
  4. 10 /v1/ask whose clients disconnect after 0.2 s (the server must drop them unstarted);
  5. the bad-input list (surrogates, invisible text, option and dialogue limits, k).

Reports status counts (target: zero 5xx; every refusal a 4xx or 503 that says why), /health p50 /
p95 / max during the load (target p95 <= 100 ms), the server's peak RSS, and how many queued
requests were dropped for disconnected clients. Only loopback traffic; every loop is bounded.

    python benchmarks/serve_load.py            # -> benchmarks/results/serve_load.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "serve_load.json"

BAD = [
    ("/v1/ask", {"question": "\ud800 digoxin?"}),
    ("/v1/ask", {"question": "\u200b\u200b"}),
    ("/v1/ask", {"question": "x", "options": {"a": "one", "A": "two"}}),
    ("/v1/ask", {"question": "x", "options": {"AA": "one", "B": "two"}}),
    ("/v1/ask", {"question": "x", "options": {"1": "one", "B": "two"}}),
    ("/v1/ask", {"question": "x", "options": {f"K{i}": "o" for i in range(10_000)}}),
    ("/v1/ask", {"question": "x", "options": {"A": "y" * 1_000_000, "B": "z"}}),
    ("/v1/consult", {"messages": [{"role": "user", "content": "hi"}] * 10_000}),
    ("/v1/consult", {"messages": [{"role": "user", "content": "\ud800"}]}),
    ("/v1/search", {"query": "aspirin", "k": "5"}),
    ("/v1/search", {"query": "aspirin", "k": True}),
    ("/v1/search", {"query": "aspirin", "k": 100}),
    ("/v1/search", {"query": "\u200b"}),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


async def main_async(base: str, pid: int) -> dict:
    out: dict = {}
    peak = [rss_mb(pid)]
    stop = asyncio.Event()

    async def watch_rss():
        while not stop.is_set():
            peak.append(rss_mb(pid))
            await asyncio.sleep(0.2)

    watcher = asyncio.create_task(watch_rss())
    limits = httpx.Limits(max_connections=300, max_keepalive_connections=50)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as c:
        async def search(q: str = "digoxin toxicity hypokalemia"):
            return (await c.post("/v1/search", json={"query": q, "k": 5})).status_code

        t = time.perf_counter()
        codes = await asyncio.gather(*(search() for _ in range(200)))
        out["cold_concurrent_search"] = {"n": 200, "status": count(codes), "seconds": round(time.perf_counter() - t, 2)}

        t = time.perf_counter()
        codes = [await search(f"warfarin vitamin K {i % 7}") for i in range(1000)]
        out["sequential_search"] = {"n": 1000, "status": count(codes), "seconds": round(time.perf_counter() - t, 2)}

        health: list[float] = []
        done = asyncio.Event()

        async def poll_health():
            async with httpx.AsyncClient(base_url=base, timeout=30) as h:
                while not done.is_set():
                    t0 = time.perf_counter()
                    r = await h.get("/health")
                    health.append((time.perf_counter() - t0) * 1000)
                    assert r.status_code == 200
                    await asyncio.sleep(0.05)

        async def ask(i: int):
            t0 = time.perf_counter()
            r = await c.post("/v1/ask", json={"question": f"Which vitamin prevents isoniazid neuropathy? ({i})",
                                              "options": {"A": "Vitamin C", "B": "Vitamin B6"}})
            return r.status_code, round(time.perf_counter() - t0, 2), r.headers.get("retry-after")

        poller = asyncio.create_task(poll_health())
        t = time.perf_counter()
        results = await asyncio.gather(*(ask(i) for i in range(20)), *(search() for _ in range(25)))
        done.set()
        await poller
        asks = results[:20]
        out["mixed_ask_search"] = {
            "asks": {"n": 20, "status": count([a[0] for a in asks]),
                     "seconds_each": sorted(a[1] for a in asks if a[0] == 200),
                     "retry_after": sorted({a[2] for a in asks if a[2]})},
            "searches": {"n": 25, "status": count(list(results[20:]))},
            "seconds": round(time.perf_counter() - t, 2),
            "health_ms": {"n": len(health), "p50": round(percentile(health, 0.5), 1),
                          "p95": round(percentile(health, 0.95), 1), "max": round(max(health), 1)},
        }

        before = (await c.get("/health")).json().get("dropped_for_disconnect", 0)

        async def abandoned(i: int):
            try:
                async with httpx.AsyncClient(base_url=base, timeout=0.2) as a:
                    await a.post("/v1/ask", json={"question": f"Abandoned question {i}?"})
            except httpx.TimeoutException:
                return "left"
            return "answered"

        left = await asyncio.gather(*(abandoned(i) for i in range(10)))
        await asyncio.sleep(5)
        h = (await c.get("/health")).json()
        out["disconnects"] = {"clients_left": left.count("left"),
                              "dropped_unstarted": h.get("dropped_for_disconnect", 0) - before,
                              "queued_after_5s": h.get("queued")}

        bad = []
        for path, body in BAD:
            r = await c.post(path, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
            bad.append({"path": path, "status": r.status_code, "why": r.text[:160]})
        out["bad_input"] = bad
    stop.set()
    await watcher
    out["server_peak_rss_mb"] = round(max(peak), 1)
    return out


def count(codes: list[int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in codes:
        out[str(c)] = out.get(str(c), 0) + 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="serve-load-"))
    rag = tmp / "rag.yaml"
    rag.write_text(f"pipeline: rag\nllm: {{backend: local, model: {args.model}, threads: 1, cache: false}}\n"
                   "retrieve: {retrievers: [bm25], fusion: null, top: 50, final_k: 4, budget_tokens: 900, "
                   "corpora: [openstax]}\n")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "medground.cli", "serve", "--pipeline", f"rag={rag}",
                             "--pipeline", "consult=drugrag", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        result = asyncio.run(main_async(base, proc.pid))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    statuses = [result["cold_concurrent_search"]["status"], result["sequential_search"]["status"],
                result["mixed_ask_search"]["asks"]["status"], result["mixed_ask_search"]["searches"]["status"]]
    fivexx = sum(n for s in statuses for code, n in s.items() if code.startswith("5") and code != "503")
    fivexx += sum(1 for b in result["bad_input"] if str(b["status"]).startswith("5"))
    result.update({"model": args.model, "five_xx_other_than_503": fivexx, "load_1min_at_end": os.getloadavg()[0],
                   "command": "python " + " ".join(sys.argv)})
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "bad_input"}, indent=2))
    print("bad input:", [(b["path"], b["status"]) for b in result["bad_input"]])


if __name__ == "__main__":
    main()
