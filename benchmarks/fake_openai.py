"""A fake OpenAI-compatible server that records concurrency and latency (for benchmarks and tests).

Answers ``POST /v1/chat/completions`` and ``POST /v1/completions`` after a simulated latency
(``base_ms`` + ``per_token_ms`` x completion tokens), with a deterministic answer derived from
the request: the same prompt always gets the same letter, so runs at any concurrency must
record the same answers. With ``logprobs``/``top_logprobs`` the first token's alternatives
carry the option letters (what letter scoring reads). ``slots`` bounds how many requests are
served at once, like vLLM's ``max_num_seqs``; the rest wait (their wait counts in latency).

It records the requests in flight over time (peak, and the time-weighted mean while any was)
and each request's latency: ``GET /stats``, ``POST /stats/reset``, or ``server.stats()``.

    python benchmarks/fake_openai.py --port 8011 --base-ms 200 --per-token-ms 2
    # in a test: with FakeOpenAIServer(base_ms=5) as srv: ... srv.url ... srv.stats()
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LETTERS = "ABCDE"


class Recorder:
    """Requests in flight over time and per-request latency, thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.in_flight = self.peak = self.requests = 0
            self.latencies_s: list[float] = []
            self._area = self._busy = 0.0  # integral of in_flight dt; time with >= 1 in flight
            self._last = time.perf_counter()

    def _tick(self, now: float) -> None:
        if self.in_flight:
            self._area += self.in_flight * (now - self._last)
            self._busy += now - self._last
        self._last = now

    def enter(self) -> float:
        now = time.perf_counter()
        with self._lock:
            self._tick(now)
            self.in_flight += 1
            self.requests += 1
            self.peak = max(self.peak, self.in_flight)
        return now

    def leave(self, started: float) -> None:
        now = time.perf_counter()
        with self._lock:
            self._tick(now)
            self.in_flight -= 1
            self.latencies_s.append(now - started)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            self._tick(time.perf_counter())
            lat = sorted(self.latencies_s)
            return {"requests": self.requests, "in_flight": self.in_flight, "max_in_flight": self.peak,
                    "mean_in_flight": self._area / self._busy if self._busy else 0.0,
                    "latency_p50_ms": _pct(lat, 50) * 1000, "latency_p95_ms": _pct(lat, 95) * 1000}


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, max(0, math.ceil(q / 100 * len(values)) - 1))]


def _letter(body: dict[str, Any]) -> str:
    prompt = json.dumps(body.get("messages") or body.get("prompt"), sort_keys=True)
    return LETTERS[int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) % 4]


def _top(letter: str, n: int) -> list[tuple[str, float]]:
    """The chosen letter most likely, the others after it, then filler tokens."""
    others = [x for x in LETTERS if x != letter]
    ranked = [(letter, -0.2)] + [(x, -2.0 - i) for i, x in enumerate(others)] + [("The", -7.0), ("\n", -8.0)]
    return ranked[:max(1, n)]


def chat_response(body: dict[str, Any], completion_tokens: int) -> dict[str, Any]:
    letter = _letter(body)
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop" if completion_tokens > 1 else "length",
                              "message": {"role": "assistant", "content": f"{letter}. The answer is {letter}."}}
    if body.get("logprobs"):
        top = _top(letter, int(body.get("top_logprobs") or 1))
        choice["logprobs"] = {"content": [{"token": letter, "logprob": top[0][1], "bytes": None,
                                           "top_logprobs": [{"token": t, "logprob": lp, "bytes": None}
                                                            for t, lp in top]}]}
        choice["message"]["content"] = letter
    prompt_tokens = len(json.dumps(body.get("messages"))) // 4
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"), "choices": [choice],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def completion_response(body: dict[str, Any], completion_tokens: int) -> dict[str, Any]:
    letter = _letter(body)
    choice: dict[str, Any] = {"index": 0, "text": f" {letter}", "finish_reason": "length"}
    if body.get("logprobs"):
        top = _top(letter, int(body["logprobs"]))
        choice["logprobs"] = {"tokens": [f" {letter}"], "token_logprobs": [top[0][1]], "text_offset": [0],
                              "top_logprobs": [{f" {t}": lp for t, lp in top}]}
    prompt_tokens = len(str(body.get("prompt"))) // 4
    return {"id": "cmpl-fake", "object": "text_completion", "created": int(time.time()),
            "model": body.get("model", "fake"), "choices": [choice],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


class FakeOpenAIServer:
    """The server on a background thread; a context manager. ``port=0`` picks a free port."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, base_ms: float = 200.0,
                 per_token_ms: float = 2.0, slots: int | None = None, gather: int | None = None):
        self.base_s, self.per_token_s = base_ms / 1000, per_token_ms / 1000
        self.recorder = Recorder()
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        # Tests: answer only once `gather` requests have arrived together (proves they were in flight).
        self._gather = threading.Barrier(gather) if gather else None
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self._httpd.request_queue_size = 128  # a burst of new connections must not be refused
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def stats(self) -> dict[str, Any]:
        return self.recorder.stats()

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.1)

    def __enter__(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        started = self.recorder.enter()
        try:
            max_tokens = int(body.get("max_tokens") or 16)
            tokens = 1 if body.get("logprobs") else min(max_tokens, 8)
            if self._gather:
                self._gather.wait(timeout=30)
            if self._slots:
                self._slots.acquire()
            try:
                time.sleep(self.base_s + self.per_token_s * tokens)
            finally:
                if self._slots:
                    self._slots.release()
            return (chat_response if path.endswith("/chat/completions") else completion_response)(body, tokens)
        finally:
            self.recorder.leave(started)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the openai SDK expects
            disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms stall

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/stats":
                    self._send(200, server.stats())
                elif self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "code": 404}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                path = self.path.rstrip("/")
                if path == "/stats/reset":
                    server.recorder.reset()
                    self._send(200, {"ok": True})
                elif path in ("/v1/chat/completions", "/v1/completions"):
                    self._send(200, server.answer(path, body))
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "code": 404}})

        return Handler


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8011)
    ap.add_argument("--base-ms", type=float, default=200.0)
    ap.add_argument("--per-token-ms", type=float, default=2.0)
    ap.add_argument("--slots", type=int, default=None, help="requests served at once (default: no limit)")
    args = ap.parse_args()
    srv = FakeOpenAIServer(args.host, args.port, base_ms=args.base_ms, per_token_ms=args.per_token_ms,
                           slots=args.slots)
    print(f"fake OpenAI server on {srv.url}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
