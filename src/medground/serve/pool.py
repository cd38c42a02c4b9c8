"""Pipelines by name for the HTTP API, built on first use, one request at a time each, with a
bounded queue and cancellation when the client leaves (serve/api.py)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import HTTPException

from medground.llm import cancel
from medground.pipelines.base import Pipeline
from medground.pipelines.config import PipelineConfig, load_pipeline_config

if TYPE_CHECKING:
    from medground.serve.api import ServeSettings


class Busy(Exception):
    def __init__(self, retry_after: int):
        self.retry_after = retry_after


class ClientGone(Exception):
    pass


class PipelinePool:
    """Pipelines by name, built on first use. A local model answers one request at a time, so
    each pipeline runs one request and queues at most ``max_waiting`` more; past that a request
    is refused at once (503 with Retry-After) rather than parked on a worker thread. A queued
    request whose client went away is dropped before it starts. The work itself runs on a
    worker thread, so the event loop (and /health) never waits on a model."""

    def __init__(self, settings: ServeSettings, build: Callable[[PipelineConfig], Pipeline]):
        self.settings = settings
        self._build = build
        self._configs: dict[str, PipelineConfig] = {}
        self._pipes: dict[str, Pipeline] = {}
        self._guard = threading.Lock()
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._pending: dict[str, int] = {name: 0 for name in settings.pipelines}
        self._seconds: dict[str, float] = {}  # moving average of a request's run time
        self.dropped = 0  # queued requests dropped because their client disconnected
        self.cancelled = 0  # running requests whose remaining model calls were cancelled

    def config(self, name: str) -> PipelineConfig:
        if name not in self.settings.pipelines:
            raise HTTPException(404, f"unknown pipeline {name!r}; configured: {sorted(self.settings.pipelines)}")
        if name not in self._configs:
            self._configs[name] = load_pipeline_config(self.settings.pipelines[name])
        return self._configs[name]

    def _pipe(self, name: str) -> Pipeline:
        with self._guard:
            pipe = self._pipes.get(name)
            if pipe is None:
                pipe = self._pipes[name] = self._build(self.config(name))
            return pipe

    def retry_after(self, name: str) -> int:
        per = self._seconds.get(name, 30.0)
        return max(1, int(per * (self._pending[name] + 1) + 0.5))

    async def run(self, name: str, fn: Callable[[Pipeline], Any],
                  disconnected: Callable[[], Any] | None = None, *, exclusive: bool = True) -> Any:
        """``fn(pipeline)`` on a worker thread; ``exclusive`` work (anything that calls the model)
        takes the pipeline's one slot, other work (a search) runs beside it."""
        self.config(name)  # 404 before queueing
        if not exclusive:
            return await asyncio.to_thread(lambda: fn(self._pipe(name)))
        if self._pending[name] > self.settings.max_waiting:
            raise Busy(self.retry_after(name))
        slot = self._slots.setdefault(name, asyncio.Semaphore(1))
        self._pending[name] += 1
        try:
            while True:
                try:
                    await asyncio.wait_for(slot.acquire(), timeout=0.25)
                    break
                except asyncio.TimeoutError:
                    if disconnected is not None and await disconnected():
                        self.dropped += 1
                        raise ClientGone() from None
            try:
                started = time.perf_counter()
                result = await self._run_watched(name, fn, disconnected)
                took = time.perf_counter() - started
                self._seconds[name] = took if name not in self._seconds else 0.7 * self._seconds[name] + 0.3 * took
                return result
            finally:
                slot.release()
        finally:
            self._pending[name] -= 1

    async def _run_watched(self, name: str, fn: Callable[[Pipeline], Any],
                           disconnected: Callable[[], Any] | None) -> Any:
        """Run on a worker thread; if the client leaves meanwhile, cancel the request's
        remaining model calls (llm.cancel) and report the client gone."""
        event = threading.Event()

        def work() -> Any:
            cancel.bind(event)
            return fn(self._pipe(name))

        task = asyncio.ensure_future(asyncio.to_thread(work))
        while not task.done():
            await asyncio.wait({task}, timeout=0.25)
            if not task.done() and disconnected is not None and await disconnected():
                event.set()
                try:
                    await task
                except cancel.RequestCancelled:
                    pass
                self.cancelled += 1
                raise ClientGone()
        return task.result()

    def loaded(self) -> list[str]:
        with self._guard:
            return sorted(self._pipes)

    def queue(self) -> dict[str, int]:
        return dict(self._pending)
