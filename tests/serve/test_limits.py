"""Limits before work: oversized bodies refused unread (413), bracket bombs refused before parsing,
Host headers checked, control-character-only text refused, and resource faults answered 503."""

from __future__ import annotations

import errno
import sqlite3

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from medground.serve.api import ServeSettings, create_app
from medground.serve.limits import json_depth

from .test_api import FakePipe


class Raising(FakePipe):
    def __init__(self, cfg, exc):
        super().__init__(cfg)
        self.exc = exc

    def answer(self, q):
        raise self.exc


def _client(**settings) -> TestClient:
    return TestClient(create_app(ServeSettings(**settings), build=FakePipe))


def test_json_depth_ignores_brackets_inside_strings():
    assert json_depth(b'{"a": [1, {"b": "[[[[{{{{"}]}') == 3
    assert json_depth(b"[" * 100 + b"]" * 100) == 100
    assert json_depth(b'{"a": "\\"[["}') == 1


def test_an_oversized_body_is_refused_before_it_is_read():
    c = _client(max_body_bytes=2048)
    big = {"question": "x" * 5000}
    r = c.post("/v1/ask", json=big)
    assert r.status_code == 413 and "at most 2048" in r.json()["detail"]
    assert "content-security-policy" in r.headers  # the refusal carries the security headers too

    sent = []

    def trickle():  # no Content-Length: refused once the cap is passed, the rest never read
        for _ in range(100):
            sent.append(1)
            yield b'{"question": "' + b"y" * 1000
    r = c.post("/v1/ask", content=trickle(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_a_bracket_bomb_is_refused_before_parsing():
    r = _client().post("/v1/ask", content=b"[" * 20000 + b"]" * 20000, headers={"content-type": "application/json"})
    assert r.status_code == 422 and "nested deeper" in r.json()["detail"]


def test_an_unknown_host_header_is_refused():
    c = _client()
    assert c.get("/health").status_code == 200
    assert c.get("/health", headers={"host": "localhost:8000"}).status_code == 200
    assert c.get("/health", headers={"host": "evil.example"}).status_code == 400
    assert _client(allowed_hosts=["medground.example"]).get(
        "/health", headers={"host": "medground.example"}).status_code == 200


@pytest.mark.parametrize("text", ["\x00\x00\x00", "\x01\x1f\x7f", " \u200b\x00 "])
def test_control_characters_only_are_refused(text):
    r = _client().post("/v1/ask", json={"question": text})
    assert r.status_code == 422 and "control" in str(r.json()["detail"])


@pytest.mark.parametrize("exc, said", [
    (sqlite3.OperationalError("database is locked"), "a database is locked"),
    (sqlite3.OperationalError("database or disk is full"), "the disk is full"),
    (OSError(errno.ENOSPC, "No space left on device", "/secret/path/cache.sqlite"), "the disk is full"),
])
def test_resource_faults_are_503_with_retry_after_and_no_paths(exc, said):
    c = TestClient(create_app(ServeSettings(), build=lambda cfg: Raising(cfg, exc)))
    r = c.post("/v1/ask", json={"question": "Why?"})
    assert r.status_code == 503 and r.headers["retry-after"] == "30"
    assert said in r.json()["detail"] and "/secret" not in r.text and "sqlite" not in r.text


def test_a_missing_chunk_store_is_503_naming_the_command_and_is_never_recreated(tmp_path, monkeypatch):
    from medground.store.settings import StoreMissingError, open_store

    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path))
    with pytest.raises(StoreMissingError, match="medground corpus ingest"):
        open_store(must_exist=True)
    assert not (tmp_path / "store.sqlite").exists()  # not re-created empty
    c = TestClient(create_app(ServeSettings(), build=lambda cfg: Raising(cfg, StoreMissingError("no chunk store at /x"))))
    r = c.post("/v1/ask", json={"question": "Why?"})
    assert r.status_code == 503 and "medground corpus ingest" in r.json()["detail"] and "/x" not in r.text


def test_a_prompt_over_the_context_window_is_422_not_500():
    from medground.llm.base import LLMRequestError

    exc = LLMRequestError("local: request failed: the request exceeds the available context size (8881 tokens)")
    c = TestClient(create_app(ServeSettings(), build=lambda cfg: Raising(cfg, exc)))
    r = c.post("/v1/ask", json={"question": "a\u0301" * 1500})
    assert r.status_code == 422 and "context window" in r.json()["detail"]


@pytest.mark.parametrize("text", ["\u3164\u3164", "\u2800", "\ufe0f\ufe0f", "\U000e0001\U000e0041", "\u034f\u0301",
                                  "\u2066\u2069", "\ufff9\ufffb", "\ue000", "\u180e"])
def test_text_that_renders_as_nothing_is_refused(text):
    r = _client().post("/v1/ask", json={"question": text})
    assert r.status_code == 422


def test_a_utf16_body_cannot_hide_its_nesting_from_the_scan():
    body = ('{"question":"\u2241","x":' + "[" * 5000 + "]" * 5000 + "}").encode("utf-16-le")
    r = _client().post("/v1/ask", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and "UTF-8" in r.json()["detail"]


def test_a_pipeline_value_error_is_500_without_its_text_and_only_overflow_is_422():
    from medground.llm.base import LLMRequestError

    leaky = ValueError("bad value in /srv/medground/data/index.sqlite")
    r = TestClient(create_app(ServeSettings(), build=lambda cfg: Raising(cfg, leaky))).post("/v1/ask", json={"question": "Why?"})
    assert r.status_code == 500 and "/srv" not in r.text and "ValueError" in r.json()["detail"]
    refused = LLMRequestError("connection refused at http://10.0.0.5:8080 (no context)")
    r = TestClient(create_app(ServeSettings(), build=lambda cfg: Raising(cfg, refused))).post("/v1/ask", json={"question": "Why?"})
    assert r.status_code == 500 and "10.0.0.5" not in r.text


def test_option_keys_are_ascii_letters_and_errors_are_truncated():
    r = _client().post("/v1/ask", json={"question": "q", "options": {"\u017f": "a", "B": "b"}})
    assert r.status_code == 422
    r = _client().post("/v1/search", json={"query": "q", **{f"k{i}": i for i in range(500)}})
    assert r.status_code == 422 and len(r.json()["detail"]) == 21


class Counting(FakePipe):
    """A pipeline whose model counts tokens: one token per character, as emoji and marks can be
    (the line breaks joining a request's texts for one count are free)."""

    class LLM:
        def __init__(self):
            self.calls = 0

        def count_tokens(self, text):
            self.calls += 1
            return len(text.replace("\n", ""))

    def __init__(self, cfg):
        super().__init__(cfg)
        self.llm = self.LLM()


def test_token_limits_are_checked_with_the_models_tokenizer_before_any_work():
    built: list[Counting] = []

    def build(cfg):
        built.append(Counting(cfg))
        return built[-1]

    c = TestClient(create_app(ServeSettings(max_request_tokens=100), build=build))
    r = c.post("/v1/ask", json={"question": "\U0001F600" * 60, "options": {"A": "x" * 30, "B": "y" * 30}})
    assert r.status_code == 422 and "120 tokens" in r.json()["detail"] and "at most 100" in r.json()["detail"]
    r = c.post("/v1/consult", json={"messages": [{"role": "user", "content": "a" * 60},
                                                 {"role": "assistant", "content": "b" * 30},
                                                 {"role": "user", "content": "c" * 20}]})
    assert r.status_code == 422 and "messages: 110 tokens" in r.json()["detail"]
    assert all(p.questions == [] for p in built)  # refused before the pipeline ran
    assert all(p.llm.calls == 1 for p in built)  # one count per request, however many turns
    assert c.post("/v1/ask", json={"question": "Why?"}).status_code == 200



def test_request_bodies_are_parsed_and_validated_off_the_event_loop(monkeypatch):
    import asyncio

    from medground.serve import api

    seen = []
    original = api.AskRequest.model_validate.__func__

    def recording(cls, data, *args, **kwargs):
        try:
            asyncio.get_running_loop()
            seen.append("event loop")
        except RuntimeError:
            seen.append("worker thread")
        return original(cls, data, *args, **kwargs)

    monkeypatch.setattr(api.AskRequest, "model_validate", classmethod(recording))
    c = _client()
    assert c.post("/v1/ask", json={"question": "Why?"}).status_code == 200
    r = c.post("/v1/ask", content=b'{"question": ', headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_invalid"
    assert seen == ["worker thread"]
