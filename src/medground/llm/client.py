"""What every backend shares: the cache, retries with exponential backoff, bounded concurrency.

A client may be shared by threads (a run's ``concurrency``): the cache serialises its SQLite
connection, and ``max_concurrency`` bounds each ``chat_many`` batch, so at most
concurrency x max_concurrency requests are in flight. A backend implements ``_send(body) -> dict`` (and optionally ``_asend``) returning the
OpenAI chat-completions JSON; it raises ``RetryableError`` for failures worth another try
(timeouts, 429, 5xx, a garbled body) and ``LLMRequestError`` for the rest.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from pathlib import Path
from typing import Any

from medground import paths
from medground.llm import cancel
from medground.llm.base import (
    ChatRequest,
    ChatResult,
    LLMError,
    LLMRequestError,
    LLMSettings,
    Message,
    build_body,
    parse_completion,
)
from medground.llm.cache import LLMCache, cache_key

log = logging.getLogger(__name__)


class RetryableError(LLMError):
    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status


def open_cache(setting: bool | str) -> LLMCache | None:
    if setting is False:
        return None
    path = Path(setting) if isinstance(setting, str) else paths.home() / "llm_cache.sqlite"
    return LLMCache(path)


class BaseLLM:
    backend: str = ""

    def __init__(self, settings: LLMSettings, *, model_id: str, fingerprint: str):
        self.settings = settings
        self.model_id = model_id  # what goes into the body's "model" field
        self.fingerprint = fingerprint
        self.name = f"{self.backend}:{settings.model}"
        self.cache = open_cache(settings.cache)
        self.retries_made = 0  # attempts beyond the first, over this client's life
        self._count_lock = threading.Lock()  # questions answered on several threads share a client

    # --- backend hooks -------------------------------------------------------------------
    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def _asend(self, body: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(self._send, body)

    def _prepare(self, body: dict[str, Any]) -> dict[str, Any]:
        """Backend-specific body fields (part of the cache key)."""
        return body

    def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` with the model's own tokenizer, special-token strings read as text;
        None where the backend cannot say (a check then falls back to characters)."""
        return None

    # --- public API -------------------------------------------------------------------------
    def chat(
        self,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        max_tokens: int = 256,
        temperature: float | None = None,
        seed: int | None = None,
        top_logprobs: int | None = None,
        stop: list[str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> ChatResult:
        return self.complete(
            ChatRequest(messages=messages, tools=tools, tool_choice=tool_choice, response_format=response_format,
                        max_tokens=max_tokens, temperature=temperature, seed=seed, top_logprobs=top_logprobs,
                        stop=stop, extra=dict(extra or {}))
        )

    def complete(self, request: ChatRequest) -> ChatResult:
        cancel.check()  # a request whose client went away makes no further model calls
        body, key = self._body_and_key(request)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        t0 = time.perf_counter()
        attempt = 0
        while True:
            try:
                payload = self._send(body)
                result = parse_completion(payload, seconds=time.perf_counter() - t0)
                break
            except RetryableError as exc:
                attempt = self._after_failure(exc, attempt)
                time.sleep(self._delay(attempt))
        self._store(key, payload, result.seconds)
        return result

    async def acomplete(self, request: ChatRequest) -> ChatResult:
        body, key = self._body_and_key(request)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        t0 = time.perf_counter()
        attempt = 0
        while True:
            try:
                payload = await self._asend(body)
                result = parse_completion(payload, seconds=time.perf_counter() - t0)
                break
            except RetryableError as exc:
                attempt = self._after_failure(exc, attempt)
                await asyncio.sleep(self._delay(attempt))
        self._store(key, payload, result.seconds)
        return result

    async def achat_many(
        self, requests: list[ChatRequest], *, return_exceptions: bool = False
    ) -> list[ChatResult | LLMError]:
        sem = asyncio.Semaphore(self.settings.concurrency())

        async def one(req: ChatRequest) -> ChatResult:
            async with sem:
                return await self.acomplete(req)

        results = await asyncio.gather(*(one(r) for r in requests), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException) and (not return_exceptions or not isinstance(r, LLMError)):
                raise r
        return list(results)

    def chat_many(self, requests: list[ChatRequest], *, return_exceptions: bool = False) -> list[ChatResult | LLMError]:
        """Run requests concurrently (at most ``max_concurrency`` in flight), results in order."""
        def run() -> list[ChatResult | LLMError]:
            return asyncio.run(self.achat_many(requests, return_exceptions=return_exceptions))

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run()
        # Called from inside an event loop (e.g. a web server): run on a private loop.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(run).result()

    def cache_stats(self) -> dict[str, int]:
        return self.cache.stats() if self.cache is not None else {"hits": 0, "misses": 0, "entries": 0}

    # --- internals ----------------------------------------------------------------------
    def _body_and_key(self, request: ChatRequest) -> tuple[dict[str, Any], str | None]:
        body = self._prepare(build_body(request, self.settings, self.model_id))
        key = cache_key(self.backend, self.fingerprint, body) if self.cache is not None else None
        return body, key

    def _lookup(self, key: str | None) -> ChatResult | None:
        if key is None or self.cache is None:
            return None
        t0 = time.perf_counter()
        payload = self.cache.get(key)
        if payload is None:
            return None
        return parse_completion(payload, seconds=time.perf_counter() - t0, cached=True)

    def _store(self, key: str | None, payload: dict[str, Any], seconds: float) -> None:
        if key is not None and self.cache is not None:
            self.cache.put(key, payload, backend=self.backend, fingerprint=self.fingerprint, seconds=seconds)

    def _after_failure(self, exc: RetryableError, attempt: int) -> int:
        attempt += 1
        if attempt > self.settings.retries:
            raise LLMRequestError(
                f"{self.name}: request failed after {attempt} attempt(s): {exc}", status=exc.status, attempts=attempt
            ) from exc
        with self._count_lock:
            self.retries_made += 1
        log.warning("%s: attempt %d failed (%s); retrying", self.name, attempt, exc)
        return attempt

    def _delay(self, attempt: int) -> float:
        return self.settings.backoff_s * (2 ** (attempt - 1))
