from __future__ import annotations

from medground.llm.cache import LLMCache, cache_key

BODY = {"model": "/a/model.gguf", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3, "seed": 0}


def test_key_covers_backend_fingerprint_and_every_parameter_but_not_the_path():
    k = cache_key("local", "abc", BODY)
    assert k == cache_key("local", "abc", {**BODY, "model": "/moved/model.gguf"})
    assert k == cache_key("local", "abc", dict(reversed(list(BODY.items()))))  # order-independent
    assert k != cache_key("openai", "abc", BODY)
    assert k != cache_key("local", "abd", BODY)
    assert k != cache_key("local", "abc", {**BODY, "max_tokens": 4})
    assert k != cache_key("local", "abc", {**BODY, "messages": [{"role": "user", "content": "hi!"}]})


def test_put_get_counters_and_persistence(tmp_path):
    path = tmp_path / "c.sqlite"
    c = LLMCache(path)
    assert len(c) == 0 and c.get("k") is None
    c.put("k", {"choices": [1]}, backend="local", fingerprint="f", seconds=0.5)
    assert c.get("k") == {"choices": [1]}
    assert c.stats() == {"hits": 1, "misses": 1, "entries": 1}
    c.close()
    again = LLMCache(path)
    assert again.get("k") == {"choices": [1]} and again.hits == 1


def test_cache_files_are_private_and_a_locked_cache_never_fails_an_answer(tmp_path, caplog):
    import sqlite3
    import stat
    import time

    from medground.llm import cache as cache_mod
    from medground.llm.cache import LLMCache

    c = LLMCache(tmp_path / "llm.sqlite")
    c.put("k1", {"x": 1}, backend="b", fingerprint="f", seconds=0.1)
    for f in tmp_path.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    other = sqlite3.connect(tmp_path / "llm.sqlite", timeout=0)
    other.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    started = time.perf_counter()
    c.put("k2", {"x": 2}, backend="b", fingerprint="f", seconds=0.1)  # skipped, not raised
    c.put("k3", {"x": 3}, backend="b", fingerprint="f", seconds=0.1)
    assert time.perf_counter() - started < 3 * cache_mod.BUSY_TIMEOUT_S + 1
    assert sum("could not be stored" in r.message for r in caplog.records) == 1  # logged once
    other.rollback()
    other.close()
    c.put("k4", {"x": 4}, backend="b", fingerprint="f", seconds=0.1)
    assert c.get("k4") == {"x": 4} and c.get("k2") is None
