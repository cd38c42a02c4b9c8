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
