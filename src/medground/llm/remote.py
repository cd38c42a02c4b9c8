"""Any OpenAI-compatible server (vLLM, Ollama, llama.cpp server, hosted APIs) via the openai SDK.

The SDK's own retries are off: retries, backoff and their counting live in BaseLLM so both
backends behave alike. The API key is read from the environment variable the settings name.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from medground.llm.base import LLMRequestError, LLMSettings
from medground.llm.client import BaseLLM, RetryableError
from medground.registry import register

_EXTRA_FIELDS = ("timings",)  # non-standard fields some servers add (llama.cpp)


class OpenAICompatibleLLM(BaseLLM):
    backend = "openai"

    def __init__(self, settings: LLMSettings):
        try:
            import openai
        except ImportError as exc:
            raise ImportError("the openai LLM backend needs the openai SDK: pip install 'medground[llm]'") from exc
        super().__init__(settings, model_id=settings.model, fingerprint=settings.model)
        key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        # Local servers accept any key; the SDK insists on one.
        key = key or "sk-no-key"
        common = {"base_url": settings.base_url, "api_key": key, "timeout": settings.timeout_s, "max_retries": 0}
        self._openai = openai
        self._client = openai.OpenAI(**common)
        self._async_client_args = common
        # Per thread: questions answered on several threads each run chat_many on their own loop.
        self._aclients = threading.local()

    def _split(self, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Standard arguments for the SDK; the rest travels as extra_body."""
        standard = {"model", "messages", "max_tokens", "temperature", "seed", "logprobs", "top_logprobs",
                    "tools", "tool_choice", "response_format", "stop"}
        args = {k: v for k, v in body.items() if k in standard}
        # "medground" holds this library's own request flags (cache key only), never sent.
        extra = {k: v for k, v in body.items() if k not in standard and k != "medground"}
        if extra:
            args["extra_body"] = extra
        return args, extra

    def _convert(self, response: Any) -> dict[str, Any]:
        try:
            payload = response.model_dump(exclude_none=True)
        except Exception as exc:  # the SDK parses lazily: a garbled body surfaces here
            raise RetryableError(f"malformed response body: {exc}") from exc
        if not payload.get("choices"):
            raise RetryableError(f"malformed response body (no choices): {str(payload)[:200]}")
        return payload

    def _classify(self, exc: Exception) -> Exception:
        o = self._openai
        if isinstance(exc, o.APITimeoutError):
            return RetryableError(f"timed out after {self.settings.timeout_s:g} s")
        if isinstance(exc, o.APIConnectionError):
            return RetryableError(f"cannot connect to {self.settings.base_url}: {exc}")
        if isinstance(exc, o.RateLimitError):
            return RetryableError("rate limited (HTTP 429)", status=429)
        if isinstance(exc, o.APIStatusError):
            if exc.status_code >= 500 or exc.status_code == 408:
                return RetryableError(f"server error HTTP {exc.status_code}: {exc.message}", status=exc.status_code)
            return LLMRequestError(f"{self.name}: HTTP {exc.status_code}: {exc.message}", status=exc.status_code)
        if isinstance(exc, (ValueError, TypeError)):  # undecodable JSON
            return RetryableError(f"malformed response body: {exc}")
        return exc

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        args, _ = self._split(body)
        try:
            response = self._client.chat.completions.create(**args)
        except Exception as exc:  # mapped to retryable / fatal below
            raise self._classify(exc) from exc
        return self._convert(response)

    async def _asend(self, body: dict[str, Any]) -> dict[str, Any]:
        args, _ = self._split(body)
        try:
            response = await self._async_client().chat.completions.create(**args)
        except Exception as exc:
            raise self._classify(exc) from exc
        return self._convert(response)

    def _async_client(self) -> Any:
        # An async client is bound to its event loop; chat_many runs a fresh loop per call.
        loop = asyncio.get_running_loop()
        bound = getattr(self._aclients, "bound", None)
        if bound is None or bound[0] is not loop:
            bound = self._aclients.bound = (loop, self._openai.AsyncOpenAI(**self._async_client_args))
        return bound[1]


@register("llm", "openai")
def make_openai(settings: LLMSettings | None = None, **kwargs: Any) -> OpenAICompatibleLLM:
    settings = settings or LLMSettings(backend="openai", **kwargs)
    return OpenAICompatibleLLM(settings)
