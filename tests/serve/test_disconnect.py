"""Over real HTTP (uvicorn on 127.0.0.1): a queued request whose client went away never runs."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from medground.schema import Answer  # noqa: E402
from medground.serve.api import ServeSettings, create_app  # noqa: E402


from contextlib import contextmanager  # noqa: E402


@contextmanager
def serving(build):
    """A real uvicorn server on a free 127.0.0.1 port, stopped afterwards; yields its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(ServeSettings(), build=build), host="127.0.0.1", port=port,
                                        log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(5)


class SlowPipe:
    answered: list[str] = []

    def __init__(self, cfg):
        self.engine = None

    def answer(self, q):
        time.sleep(1.5)
        SlowPipe.answered.append(q.question)
        return Answer(outcome="answered", text="ok")


def test_a_departed_clients_queued_request_is_dropped():
    async def scenario(base):
        async with httpx.AsyncClient(base_url=base, timeout=30) as c:
            first = asyncio.create_task(c.post("/v1/ask", json={"question": "stays"}))
            await asyncio.sleep(0.3)
            with pytest.raises(httpx.TimeoutException):
                async with httpx.AsyncClient(base_url=base, timeout=0.3) as gone:
                    await gone.post("/v1/ask", json={"question": "leaves"})
            await first
            await asyncio.sleep(0.5)
            return (await c.get("/health")).json()

    with serving(SlowPipe) as base:
        health = asyncio.run(scenario(base))
    assert health["dropped_for_disconnect"] == 1 and health["queued"]["rag"] == 0
    assert SlowPipe.answered == ["stays"]  # the departed client's question never reached the model


class StepPipe:
    """Five model calls of 0.3 s each, each preceded by the client's cancellation check."""

    steps: list[int] = []

    def __init__(self, cfg):
        self.engine = None

    def answer(self, q):
        from medground.llm import cancel

        for i in range(5):
            cancel.check()  # what every real model call does first (llm/client.py)
            time.sleep(0.3)
            StepPipe.steps.append(i)
        return Answer(outcome="answered", text="done")


def test_a_running_request_stops_at_its_next_model_call_when_the_client_leaves():
    async def scenario(base):
        with pytest.raises(httpx.TimeoutException):
            async with httpx.AsyncClient(base_url=base, timeout=0.5) as gone:
                await gone.post("/v1/ask", json={"question": "leaves while answered"})
        await asyncio.sleep(2.0)
        async with httpx.AsyncClient(base_url=base, timeout=5) as c:
            return (await c.get("/health")).json()

    with serving(StepPipe) as base:
        health = asyncio.run(scenario(base))
    assert health["cancelled_for_disconnect"] == 1
    assert len(StepPipe.steps) < 5  # the remaining model calls never ran
