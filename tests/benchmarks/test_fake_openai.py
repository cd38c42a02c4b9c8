"""The fake OpenAI-compatible server records concurrency; the LLM client and its SQLite cache
serve questions answered on several threads, with the serial run's records."""

import sys
from pathlib import Path

import pytest

from medground.eval.records import read_records
from medground.eval.runner import ThreadExecutor, run_questions
from medground.llm.base import LLMSettings, create_llm
from medground.schema import Question

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from fake_openai import FakeOpenAIServer, Recorder  # noqa: E402

pytest.importorskip("openai")


def test_recorder_peak_and_time_weighted_mean(monkeypatch):
    clock = iter([0.0, 0.0, 1.0, 3.0, 4.0, 4.0])  # reset, enter a, enter b, leave a, leave b, stats
    monkeypatch.setattr("fake_openai.time.perf_counter", lambda: next(clock))
    rec = Recorder()
    a = rec.enter()
    b = rec.enter()
    rec.leave(a)
    rec.leave(b)
    stats = rec.stats()
    # in flight: 1 for 1 s, 2 for 2 s, 1 for 1 s -> mean 6/4 while busy
    assert (stats["requests"], stats["max_in_flight"], stats["mean_in_flight"]) == (2, 2, 1.5)
    assert (stats["latency_p50_ms"], stats["latency_p95_ms"]) == (3000.0, 3000.0)  # a: 0-3 s, b: 1-4 s


def _direct(url: str, cache: str | bool):
    from medground.pipelines.base import ReaderSettings
    from medground.pipelines.direct import DirectPipeline

    llm = create_llm(LLMSettings(backend="openai", model="fake", base_url=url, cache=cache, retries=0))
    return DirectPipeline(llm, ReaderSettings(prompt="zeroshot", scoring="logprob"))


def _records(run_dir: Path) -> dict:
    return {r.qid: {k: v for k, v in r.to_dict().items() if k not in {"seconds", "timings"}}
            for r in read_records(run_dir / "results.jsonl")}


def _questions(n: int) -> list[Question]:
    return [Question(qid=f"q{i:02d}", dataset="fake", question=f"Which organ makes insulin ({i})?",
                     options={"A": "liver", "B": "pancreas", "C": "kidney", "D": "spleen"}, answer="B")
            for i in range(n)]


def test_threads_share_client_and_cache_and_server_sees_them_in_flight(tmp_path):
    qs = _questions(12)
    cache = str(tmp_path / "llm_cache.sqlite")
    with FakeOpenAIServer(base_ms=1, per_token_ms=0) as srv:
        run_questions(_direct(srv.url, False), qs, tmp_path / "serial", progress=False)
        assert srv.stats()["max_in_flight"] == 1
    # The server answers only when 4 requests have arrived together: 4 were in flight.
    with FakeOpenAIServer(base_ms=1, per_token_ms=0, gather=4) as srv:
        s = run_questions(_direct(srv.url, cache), qs, tmp_path / "threads", progress=False,
                          executor=ThreadExecutor(4))
        stats = srv.stats()
    assert s.errors == 0 and (stats["requests"], stats["max_in_flight"]) == (12, 4)
    assert _records(tmp_path / "threads") == _records(tmp_path / "serial")
    # Answered again from the cache the threads filled: no request reaches a server.
    with FakeOpenAIServer(base_ms=1, per_token_ms=0) as srv:
        pipe = _direct(srv.url, cache)
        run_questions(pipe, qs, tmp_path / "cached", progress=False, executor=ThreadExecutor(4))
        assert srv.stats()["requests"] == 0 and pipe.llm.cache_stats()["hits"] == 12
    assert _records(tmp_path / "cached") == _records(tmp_path / "serial")


def test_letters_through_chat_and_completions(tmp_path):
    import json
    import urllib.request

    with FakeOpenAIServer(base_ms=1, per_token_ms=0) as srv:
        llm = create_llm(LLMSettings(backend="openai", model="fake", base_url=srv.url, cache=False, retries=0))
        res = llm.chat([{"role": "user", "content": "Which? A or B"}], max_tokens=1, top_logprobs=5)
        assert res.first_top[0][0] in "ABCD" and len(res.first_top) == 5
        body = json.dumps({"model": "fake", "prompt": "Q: ...\nAnswer:", "max_tokens": 1, "logprobs": 3}).encode()
        req = urllib.request.Request(srv.url + "/completions", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            out = json.loads(resp.read())
        assert len(out["choices"][0]["logprobs"]["top_logprobs"][0]) == 3
        assert srv.stats()["requests"] == 2
