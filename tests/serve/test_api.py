"""The HTTP API with pipelines replaced by recording fakes (the real ones are tested in pipelines/)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from medground.protocols import EmptyQueryError
from medground.schema import Answer, ChoiceDetail, Chunk, Citation, FreeTextDetail, Passage, Query, Question, Vote
from medground.serve.api import CONFIGS, ServeSettings, create_app

CITATION = Citation(number=1, chunk_id="c1", book="Pharmacology", chapter="Anticoagulants", section="Warfarin",
                    title="Warfarin", text="Foods rich in vitamin K reduce the effect of warfarin.", score=1.0)


class FakeEngine:
    def __init__(self):
        self.calls = []

    def retrieve(self, query, k=None):
        if not query.strip():
            raise EmptyQueryError("query is empty or whitespace")
        self.calls.append((query, k))
        chunk = Chunk(chunk_id="c1", doc_id="d1", corpus="openstax", title="Warfarin",
                      section_path=("Anticoagulants", "Warfarin"), text="Vitamin K and warfarin.",
                      source_path="pharm.xml")
        return [Passage(chunk, 2.5, "bm25", 1)][:k]


class FakePipe:
    def __init__(self, cfg, fail=False):
        self.cfg, self.fail, self.questions = cfg, fail, []
        self.engine = FakeEngine() if cfg.pipeline != "direct" else None

    def answer(self, q: Question) -> Answer:
        if self.fail:
            raise RuntimeError("llama.cpp crashed")
        self.questions.append(q)
        choice = "B" if q.options else None
        return Answer(outcome="answered", choice=choice, text="Keep vitamin K intake steady [1].",
                      citations=[CITATION], queries=[Query("warfarin spinach", "distilled")],
                      timings={"retrieve": 0.1, "read": 1.2})


@pytest.fixture
def built():
    return {}


@pytest.fixture
def client(built):
    def build(cfg):
        built[cfg.pipeline] = built.get(cfg.pipeline, 0) + 1
        pipe = FakePipe(cfg)
        built[f"pipe:{cfg.pipeline}"] = pipe
        return pipe

    return TestClient(create_app(ServeSettings(), build=build))


def test_ask_returns_answer_with_citations_and_builds_pipeline_once(client, built):
    r = client.post("/v1/ask", json={"question": "Which electrolyte raises digoxin toxicity?",
                                     "options": {"a": "Hyperkalemia", "B": "Hypokalemia"}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["pipeline"] == "rag" and body["answer"]["choice"] == "B"
    assert body["answer"]["citations"][0]["label"] == "Pharmacology / Anticoagulants / Warfarin"
    assert body["question"]["options"] == {"A": "Hyperkalemia", "B": "Hypokalemia"}  # letters normalised
    client.post("/v1/ask", json={"question": "Why pyridoxine with isoniazid?"})
    assert built["rag"] == 1  # loaded on first use, then reused
    assert client.get("/health").json()["loaded"] == ["rag"]


def test_typed_details_reach_the_json_under_the_metadata_keys_it_always_had():
    details = {"mcq": ChoiceDetail(scoring="logprob", letter_logprobs={"A": -2.0, "B": -0.1}, evidence_tokens=420,
                                   voted=True, votes=[Vote("B", 7.0, "c1", {"A": 3.0, "B": 7.0})]),
               "free": FreeTextDetail(passages_shown=1, support=0.9, supporting_passage=1, extractive=True,
                                      quoted="Vitamin K and warfarin.", quote_reason="extractive mode")}

    class DetailPipe(FakePipe):
        def answer(self, q: Question) -> Answer:
            return Answer(outcome="answered", choice="B" if q.options else None, citations=[CITATION],
                          detail=details["mcq" if q.options else "free"])

    client = TestClient(create_app(ServeSettings(), build=DetailPipe))
    mcq = client.post("/v1/ask", json={"question": "Which?", "options": {"A": "x", "B": "y"}}).json()["answer"]
    assert "detail" not in mcq
    assert mcq["metadata"] == {"scoring": "logprob", "letter_logprobs": {"A": -2.0, "B": -0.1}, "evidence_tokens": 420,
                               "voted": True, "votes": [{"chunk_id": "c1", "choice": "B", "confidence": 7.0,
                                                         "scores": {"A": 3.0, "B": 7.0}}]}
    free = client.post("/v1/ask", json={"question": "Why?"}).json()["answer"]
    assert free["metadata"] == {"passages_shown": 1, "support": 0.9, "supporting_passage": 1, "extractive": True,
                                "quoted": "Vitamin K and warfarin.", "quote_reason": "extractive mode"}


def test_consult_turns_become_the_dialogue(client, built):
    msgs = [{"role": "user", "content": "I started Coumadin last week."},
            {"role": "assistant", "content": "How can I help?"},
            {"role": "user", "content": "Can I still eat spinach salads?"}]
    r = client.post("/v1/consult", json={"messages": msgs})
    assert r.status_code == 200, r.text
    q = built["pipe:drugrag"].questions[0]
    assert q.question == "Can I still eat spinach salads?"
    assert q.context == "Patient: I started Coumadin last week.\nPharmacist: How can I help?"
    q0 = r.json()["answer"]["queries"][0]
    assert (q0["text"], q0["kind"]) == ("warfarin spinach", "distilled")


def test_search_uses_the_pipelines_engine(client, built):
    r = client.post("/v1/search", json={"query": "warfarin vitamin K", "k": 3})
    assert r.status_code == 200, r.text
    p = r.json()["passages"][0]
    assert (p["rank"], p["chunk_id"], p["section_path"]) == (1, "c1", ["Anticoagulants", "Warfarin"])
    assert built["pipe:rag"].engine.calls == [("warfarin vitamin K", 3)]


@pytest.mark.parametrize("path,body,needle", [
    ("/v1/ask", {"question": "   "}, "empty"),
    ("/v1/ask", {"question": "x", "colour": "red"}, "colour"),
    ("/v1/ask", {"question": "x", "options": {"A": ""}}, "option"),
    ("/v1/ask", {"question": "x" * 5000}, "at most 4000"),
    ("/v1/consult", {"messages": []}, "messages"),
    ("/v1/consult", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"}]},
     "last turn"),
    ("/v1/consult", {"messages": [{"role": "doctor", "content": "hi"}]}, "role"),
    ("/v1/search", {"query": "aspirin", "k": 0}, "k"),
])
def test_bad_requests_name_the_field(client, path, body, needle):
    r = client.post(path, json=body)
    assert r.status_code == 422
    assert needle in r.text


def test_unknown_pipeline_is_404_and_failure_is_500_not_an_answer():
    app = create_app(ServeSettings(), build=lambda cfg: FakePipe(cfg, fail=True))
    c = TestClient(app)
    assert c.post("/v1/ask", json={"question": "x", "pipeline": "nope"}).status_code == 404
    r = c.post("/v1/ask", json={"question": "Why?"})
    # 500, naming the failure's kind; its text (which may hold paths) stays in the server's log
    assert r.status_code == 500 and "RuntimeError" in r.json()["detail"] and "crashed" not in r.json()["detail"]


def test_closed_book_pipeline_cannot_search():
    settings = ServeSettings(pipelines={"rag": CONFIGS / "direct.yaml", "consult": CONFIGS / "drugrag.yaml"})
    c = TestClient(create_app(settings, build=FakePipe))
    r = c.post("/v1/search", json={"query": "aspirin"})
    assert r.status_code == 400 and "closed book" in r.json()["detail"]


def test_settings_refuse_unknown_default():
    with pytest.raises(ValueError, match="default: 'x' is not one of"):
        ServeSettings(default="x")


def test_pipelines_listing_and_page(client):
    names = {p["name"]: p for p in client.get("/v1/pipelines").json()}
    assert names["rag"]["default"] and names["consult"]["pipeline"] == "drugrag"
    page = client.get("/")
    assert page.status_code == 200 and "/v1/consult" in page.text and "textContent" in page.text


def test_page_script_parses():
    import re
    import shutil
    import subprocess
    from importlib import resources

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    html = resources.files("medground.serve").joinpath("static/consult.html").read_text(encoding="utf-8")
    script = re.search(r"<script>(.*)</script>", html, re.S).group(1)
    r = subprocess.run([node, "--check", "-"], input=script, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "innerHTML" not in script  # model output goes in as text only


@pytest.mark.parametrize("body,needle", [
    ({"question": "\ud800 digoxin?"}, "unicode"),
    ({"question": "\u200b\u200b\ufeff"}, "invisible"),
    ({"question": "x", "options": {"a": "one", "A": "two"}}, "twice"),
    ({"question": "x", "options": {"AA": "one", "B": "two"}}, "one letter"),
    ({"question": "x", "options": {"1": "one", "B": "two"}}, "one letter"),
    ({"question": "x", "options": {"A": "only one"}}, "at least 2"),
    ({"question": "x", "options": {chr(65 + i): "o" for i in range(11)}}, "at most 10"),
    ({"question": "x", "options": {"A": "y" * 600, "B": "z"}}, "at most 500"),
    ({"question": "x", "options": {"A": "\ud800", "B": "z"}}, "surrogate"),
])
def test_hostile_ask_bodies_are_422_naming_why(client, body, needle):
    import json

    # Sent as raw JSON: a lone surrogate is legal in JSON escapes but not in text.
    r = client.post("/v1/ask", content=json.dumps(body), headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert needle in r.text


@pytest.mark.parametrize("path,body,needle", [
    ("/v1/search", {"query": "aspirin", "k": "5"}, "k"),
    ("/v1/search", {"query": "aspirin", "k": True}, "k"),
    ("/v1/search", {"query": "aspirin", "k": 100}, "50"),
    ("/v1/search", {"query": "\u200b"}, "invisible"),
    ("/v1/consult", {"messages": [{"role": "user", "content": "hi"}] * 41}, "40"),
    ("/v1/consult", {"messages": [{"role": "user", "content": "\ud800"}]}, "unicode"),
    ("/v1/consult", {"messages": [{"role": "user", "content": "y" * 3900}] * 2}, "6000"),
    ("/v1/ask", {"question": "q" * 3000, "options": {k: "o" * 450 for k in "ABCDEFGH"}}, "6000"),
])
def test_limits_are_checked_before_any_model_runs(client, built, path, body, needle):
    import json

    r = client.post(path, content=json.dumps(body), headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert needle in r.text
    assert not [k for k in built if k.startswith("pipe:")]  # nothing was built or called


def test_security_headers_and_no_cdn_docs(client):
    r = client.get("/")
    csp = r.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "'sha256-" in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert client.get("/docs").status_code == 404  # the docs page pulls its assets from a CDN: off by default
    assert client.get("/openapi.json").status_code == 200


class SlowPipe(FakePipe):
    """Answers only when the test releases it."""

    release = None
    started = None

    def answer(self, q):
        SlowPipe.started.set()
        SlowPipe.release.wait(10)
        return super().answer(q)


def test_a_full_queue_is_503_with_retry_after_and_health_never_waits():
    import asyncio
    import threading

    import httpx

    SlowPipe.release, SlowPipe.started = threading.Event(), threading.Event()
    app = create_app(ServeSettings(max_waiting=1), build=SlowPipe)

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            running = asyncio.create_task(c.post("/v1/ask", json={"question": "first?"}))
            await asyncio.to_thread(SlowPipe.started.wait, 5)
            waiting = asyncio.create_task(c.post("/v1/ask", json={"question": "second?"}))
            await asyncio.sleep(0.1)
            refused = await c.post("/v1/ask", json={"question": "third?"})
            health = await asyncio.wait_for(c.get("/health"), timeout=2)
            search = await asyncio.wait_for(c.post("/v1/search", json={"query": "warfarin"}), timeout=5)
            SlowPipe.release.set()
            return await running, await waiting, refused, health, search

    first, second, refused, health, search = asyncio.run(scenario())
    assert refused.status_code == 503 and int(refused.headers["Retry-After"]) >= 1
    assert "busy" in refused.json()["detail"]
    assert health.status_code == 200 and health.json()["queued"]["rag"] == 2
    assert search.status_code == 200  # retrieval does not queue behind answers
    assert first.status_code == 200 and second.status_code == 200


def test_a_queued_request_whose_client_left_is_dropped_before_it_runs():
    import asyncio
    import threading

    from medground.serve.api import ClientGone, PipelinePool

    ran = []
    gate = threading.Event()

    def build(cfg):
        class P(FakePipe):
            def answer(self, q):
                ran.append(q.question)
                gate.wait(5)
                return super().answer(q)
        return P(cfg)

    pool = PipelinePool(ServeSettings(), build)
    q1 = Question(qid="1", dataset="t", question="one")
    q2 = Question(qid="2", dataset="t", question="two")

    async def gone():
        return True

    async def scenario():
        first = asyncio.create_task(pool.run("rag", lambda p: p.answer(q1)))
        await asyncio.sleep(0.2)
        try:
            await pool.run("rag", lambda p: p.answer(q2), gone)
        except ClientGone:
            outcome = "dropped"
        gate.set()
        await first
        return outcome

    assert asyncio.run(scenario()) == "dropped"
    assert ran == ["one"] and pool.dropped == 1


def test_answers_are_delivered_as_they_finish():
    import asyncio
    import threading
    import time as _time

    import httpx

    gate = threading.Event()

    class Mixed(FakePipe):
        def answer(self, q):
            if self.cfg.pipeline != "drugrag":
                gate.wait(5)  # the slow textbook answer
            return super().answer(q)

    app = create_app(ServeSettings(), build=Mixed)

    async def scenario():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as c:
            slow = asyncio.create_task(c.post("/v1/ask", json={"question": "slow?"}))
            await asyncio.sleep(0.1)
            t0 = _time.perf_counter()
            fast = await c.post("/v1/consult", json={"messages": [{"role": "user", "content": "Dose of ibuprofen?"}]})
            fast_s = _time.perf_counter() - t0
            assert not slow.done()  # the consultation came back while the other answer still ran
            gate.set()
            return fast, fast_s, await slow

    fast, fast_s, slow = asyncio.run(scenario())
    assert fast.status_code == 200 and slow.status_code == 200 and fast_s < 2
