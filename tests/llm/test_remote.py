"""The OpenAI-compatible backend against a scripted HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from medground.llm.base import ChatRequest, LLMRequestError, LLMSettings, create_llm
from medground.llm.scoring import score_options


def completion(text: str = "B", top: list[tuple[str, float]] | None = None) -> dict:
    choice: dict = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
    if top:
        choice["logprobs"] = {"content": [{"token": top[0][0], "logprob": top[0][1], "bytes": None,
                                           "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in top]}]}
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "served", "choices": [choice],
            "usage": {"prompt_tokens": 11, "completion_tokens": 1, "total_tokens": 12}}


class Scripted:
    """Answers each POST with the next scripted step: a dict (200 JSON), an int status,
    "malformed" (200 with a broken body) or ("sleep", seconds, dict)."""

    def __init__(self):
        self.steps: list = []
        self.bodies: list[dict] = []
        self.times: list[float] = []
        self.lock = threading.Lock()

    def next(self):
        with self.lock:
            return self.steps.pop(0) if self.steps else 500


@pytest.fixture(scope="module")
def server():
    script = Scripted()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.bodies.append(body)
            script.times.append(time.monotonic())
            step = script.next()
            if isinstance(step, tuple) and step[0] == "sleep":
                time.sleep(step[1])
                step = step[2]
            if isinstance(step, int):
                self._send(step, json.dumps({"error": {"message": f"scripted {step}"}}).encode())
            elif step == "malformed":
                self._send(200, b'{"choices": [ {"message": ')
            else:
                self._send(200, json.dumps(step).encode())

        def _send(self, status, data):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield script, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


@pytest.fixture()
def scripted(server, monkeypatch):
    script, url = server
    script.steps.clear()
    script.bodies.clear()
    script.times.clear()
    monkeypatch.setenv("MG_TEST_KEY", "sk-test")

    def make(**kw):
        settings = {"backend": "openai", "model": "served", "base_url": url, "api_key_env": "MG_TEST_KEY",
                    "timeout_s": 0.5, "retries": 2, "backoff_s": 0.05, "cache": False}
        return create_llm(LLMSettings(**{**settings, **kw}))

    return script, make


MSG = [{"role": "user", "content": "Which letter?"}]


def test_success_and_request_body(scripted):
    script, make = scripted
    script.steps[:] = [completion("Answer: C")]
    r = make().chat(MSG, max_tokens=5, seed=3)
    assert r.text == "Answer: C" and (r.prompt_tokens, r.completion_tokens) == (11, 1)
    assert script.bodies[0]["model"] == "served" and script.bodies[0]["max_tokens"] == 5
    assert script.bodies[0]["seed"] == 3 and script.bodies[0]["temperature"] == 0.0


@pytest.mark.parametrize("failure", [500, 429, "malformed", ("sleep", 1.0, completion("late"))],
                         ids=["http500", "rate-limit", "malformed-body", "timeout"])
def test_transient_failure_is_retried_then_succeeds(scripted, failure):
    script, make = scripted
    script.steps[:] = [failure, completion("A")]
    llm = make()
    assert llm.chat(MSG).text == "A"
    assert len(script.bodies) == 2 and llm.retries_made == 1


def test_persistent_failure_backs_off_then_raises_clear_error(scripted):
    script, make = scripted
    script.steps[:] = [500, 429, 503]
    llm = make(retries=2, backoff_s=0.1)
    with pytest.raises(LLMRequestError, match=r"failed after 3 attempt\(s\).*HTTP 503") as e:
        llm.chat(MSG)
    assert e.value.attempts == 3 and e.value.status == 503
    gaps = [b - a for a, b in zip(script.times, script.times[1:])]
    assert gaps[0] >= 0.1 and gaps[1] >= 0.2  # exponential backoff: 0.1 s, then 0.2 s


def test_timeouts_exhaust_retries(scripted):
    script, make = scripted
    script.steps[:] = [("sleep", 1.0, completion()), ("sleep", 1.0, completion())]
    with pytest.raises(LLMRequestError, match="timed out after 0.5 s"):
        make(retries=1).chat(MSG)


def test_client_error_is_not_retried(scripted):
    script, make = scripted
    script.steps[:] = [400, completion()]
    with pytest.raises(LLMRequestError, match="HTTP 400"):
        make().chat(MSG)
    assert len(script.bodies) == 1


def test_letter_scoring_over_http(scripted):
    script, make = scripted
    script.steps[:] = [completion("B", [("B", -0.3), (" A", -1.6), ("C", -2.9), ("The", -3.0), ("D", -4.0)])]
    s = score_options(make(), MSG, ["A", "B", "C", "D"])
    assert s.choice == "B" and s.method == "logprob"
    assert sum(s.probs.values()) == pytest.approx(1.0) and s.probs["A"] > s.probs["C"] > s.probs["D"]
    assert script.bodies[0]["logprobs"] is True and script.bodies[0]["top_logprobs"] == 20
    assert script.bodies[0]["max_tokens"] == 1


def test_chat_many_keeps_order_and_reports_failures(scripted):
    script, make = scripted
    script.steps[:] = [completion("x")] * 3
    llm = make(max_concurrency=1, retries=0)
    reqs = [ChatRequest([{"role": "user", "content": f"q{i}"}]) for i in range(4)]
    out = llm.chat_many(reqs, return_exceptions=True)
    assert [type(o).__name__ for o in out] == ["ChatResult"] * 3 + ["LLMRequestError"]
    assert [b["messages"][0]["content"] for b in script.bodies] == ["q0", "q1", "q2", "q3"]


def test_extra_fields_travel_in_the_body_and_cache_serves_reruns(scripted, tmp_path):
    script, make = scripted
    script.steps[:] = [completion("A")]
    llm = make(cache=str(tmp_path / "c.sqlite"))
    first = llm.chat(MSG, extra={"guided_choice": ["A", "B"]})
    second = llm.chat(MSG, extra={"guided_choice": ["A", "B"]})
    assert script.bodies[0]["guided_choice"] == ["A", "B"] and len(script.bodies) == 1
    assert (first.cached, second.cached, second.text) == (False, True, "A")
    assert llm.cache_stats()["hits"] == 1
