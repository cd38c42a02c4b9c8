"""Hostile clients against a real `medground serve` on 127.0.0.1 (issue 30's rows).

Starts the server as a subprocess (no request reaches a model: every one below is refused or is
/health), then, while /health is polled every 50 ms:

  1. 48 concurrent hostile bodies: many-key JSON of 27 MB with its Content-Length, the same
     sent chunked without one, one 27 MB string, and JSON nested 100,000 deep (under the cap: 200 KB
     are sent, so over the 64 KB cap too) and 20,000 deep within 40 KB; and 4,000 keys within
     the cap (read, then parsed on a worker thread and refused 422);
  2. 200 slow clients that open a connection and trickle a header byte every 0.5 s for 20 s.

Reports status counts (target: every oversized request refused, 0 × 5xx), /health p50 / p95 / max
(target p95 <= 100 ms), the server's idle and peak RSS (target peak <= 2 x idle) and the addresses
its process tree listens on (target: only the served port on 127.0.0.1). Loopback only; bounded.

    python benchmarks/serve_limits.py            # -> benchmarks/results/serve_limits.json
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "serve_limits.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_tree(proc: psutil.Process) -> int:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def listening(proc: psutil.Process) -> list[str]:
    out = set()
    for p in [proc, *proc.children(recursive=True)]:
        try:
            out |= {f"{c.laddr.ip}:{c.laddr.port}" for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN}
        except psutil.NoSuchProcess:
            pass
    return sorted(out)


def bodies() -> list[tuple[str, dict, bytes | None]]:
    many_keys = json.dumps({f"k{i}": i for i in range(1_500_000)}).encode()  # ~27 MB
    long_string = json.dumps({"question": "x" * 27_000_000}).encode()
    deep_big = b"[" * 100_000 + b"]" * 100_000
    deep_small = b'{"question": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"
    # under the 64 KB cap: read, then parsed and validated on a worker thread (422, unknown keys)
    keys_in_cap = json.dumps({"question": "Why?", **{f"k{i}": i for i in range(4_000)}}).encode()
    return [("many keys, Content-Length", {}, many_keys), ("many keys, chunked", {"chunked": True}, many_keys),
            ("one long string", {}, long_string), ("nested 100,000 deep", {}, deep_big),
            ("nested 20,000 deep in 40 KB", {}, deep_small), ("4,000 keys within the cap", {}, keys_in_cap)]


async def main_async(base: str, port: int, server: psutil.Process) -> dict:
    statuses: dict[str, Counter] = {}
    health_ms: list[float] = []
    peak = [rss_tree(server)]
    stop = asyncio.Event()

    async def poll(client: httpx.AsyncClient) -> None:
        while not stop.is_set():
            t = time.perf_counter()
            try:
                r = await client.get(f"{base}/health", timeout=10)
                ok = r.status_code == 200
            except httpx.HTTPError:
                ok = False
            health_ms.append((time.perf_counter() - t) * 1000 if ok else 10_000.0)
            peak[0] = max(peak[0], rss_tree(server))
            await asyncio.sleep(0.05)

    async def oversized(client: httpx.AsyncClient, name: str, how: dict, body: bytes) -> None:
        async def chunks():
            for i in range(0, len(body), 65536):
                yield body[i:i + 65536]
        try:
            if how.get("chunked"):
                r = await client.post(f"{base}/v1/ask", content=chunks(), headers={"content-type": "application/json"},
                                      timeout=60)
            else:
                r = await client.post(f"{base}/v1/ask", content=body, headers={"content-type": "application/json"},
                                      timeout=60)
            code = str(r.status_code)
        except httpx.HTTPError as exc:  # the server closed the connection after refusing
            code = f"closed ({type(exc).__name__})"
        statuses.setdefault(name, Counter())[code] += 1

    async def slow_client(seconds: float) -> str:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError as exc:
            return f"refused ({exc.errno})"
        header = b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 100
        ended = "held to the end"
        try:
            for i in range(int(seconds / 0.5)):
                writer.write(header[i:i + 1] if i < len(header) else b"a")
                await writer.drain()
                await asyncio.sleep(0.5)
                if reader.at_eof():
                    ended = f"closed by the server after {i * 0.5:.1f} s"
                    break
        except (ConnectionError, OSError):
            ended = "closed by the server"
        finally:
            writer.close()
        return ended

    limits = httpx.Limits(max_connections=100)
    async with httpx.AsyncClient(limits=limits) as client, httpx.AsyncClient() as health_client:
        poller = asyncio.create_task(poll(health_client))
        await asyncio.sleep(1.0)
        payloads = bodies()
        tasks = [oversized(client, name, how, body) for _ in range(8) for name, how, body in payloads]
        await asyncio.gather(*tasks)
        phase1 = list(health_ms)
        slow = await asyncio.gather(*(slow_client(20.0) for _ in range(200)))
        stop.set()
        await poller
    return {"statuses": {k: dict(v) for k, v in statuses.items()}, "slow_clients": dict(Counter(slow)),
            "health_ms": health_ms, "health_ms_oversized_phase": phase1, "peak_rss": peak[0]}


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, int(q * len(s)))], 1) if s else float("nan")


def main() -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    home = tempfile.mkdtemp(prefix="mg-limits-")
    env = {**os.environ, "MEDGROUND_HOME": home}
    proc = subprocess.Popen([sys.executable, "-m", "medground.cli", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        server = psutil.Process(proc.pid)
        time.sleep(1.0)
        idle = rss_tree(server)
        addresses = listening(server)
        out = asyncio.run(main_async(base, port, server))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    h = out.pop("health_ms")
    h1 = out.pop("health_ms_oversized_phase")
    five = sum(n for v in out["statuses"].values() for k, n in v.items() if k.isdigit() and int(k) >= 500)
    report = {
        "benchmark": "serve_limits", "listening": addresses, "idle_rss_mb": round(idle / 2**20, 1),
        "peak_rss_mb": round(out["peak_rss"] / 2**20, 1), "peak_over_idle": round(out["peak_rss"] / idle, 2),
        "statuses": out["statuses"], "responses_5xx": five, "slow_clients": out["slow_clients"],
        "health": {"n": len(h), "p50_ms": pct(h, 0.5), "p95_ms": pct(h, 0.95), "max_ms": round(max(h), 1) if h else None,
                   "oversized_phase_p95_ms": pct(h1, 0.95)},
        "machine": {"cpus": os.cpu_count(), "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                    "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")},
        "command": "python benchmarks/serve_limits.py",
    }
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
