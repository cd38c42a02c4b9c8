"""The LLM seam: typed requests/results, the protocol, settings, and the shared OpenAI-JSON parsing.

Both backends speak the OpenAI chat-completions JSON (llama.cpp in-process via xllamacpp, and
any OpenAI-compatible server), so building the request body and parsing the response live
here, once. A backend only has to turn a body dict into a response dict.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

Message = dict[str, Any]  # {"role": "system"|"user"|"assistant"|"tool", "content": ...}


class LLMError(RuntimeError):
    """A request that failed for good (after retries where retrying made sense)."""


class PromptTooLongError(LLMError):
    """The user's text alone is more tokens than a request may bring (counted with the model's own
    tokenizer before any work): a fault of the request, never retried."""

    def __init__(self, field: str, tokens: int, limit: int):
        super().__init__(f"{field}: {tokens} tokens with the model's tokenizer, at most {limit} accepted")
        self.field, self.tokens, self.limit = field, tokens, limit


class LLMRequestError(LLMError):
    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.status = status
        self.attempts = attempts


def free_cores(sample_s: float = 0.2) -> int:
    """Cores other processes leave free right now (at least 1): llama.cpp threads spin-wait on a
    busy machine. Measured over ``sample_s`` from /proc (all CPUs' busy time minus this
    process's own), not from the load average: that lags by a minute, so an LLM started right
    after an index build or a previous job would get one thread on an idle machine."""
    n = os.cpu_count() or 1
    busy = _busy_cores_elsewhere(sample_s)
    if busy is None:  # no /proc: the load average (includes this process)
        try:
            busy = os.getloadavg()[0]
        except OSError:
            return n
    return max(1, min(n, int(n - busy + 0.5)))


def _busy_cores_elsewhere(sample_s: float) -> float | None:
    """CPUs' worth of time other processes used during ``sample_s`` (Linux /proc), else None."""
    import time

    def sample() -> tuple[float, float, float]:
        with open("/proc/stat") as f:
            fields = [float(x) for x in f.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
        own = os.times()
        return sum(fields) - idle, sum(fields), own.user + own.system

    try:
        busy0, total0, own0 = sample()
        time.sleep(sample_s)
        busy1, total1, own1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    ticks = total1 - total0
    if ticks <= 0:
        return None
    cpus = os.cpu_count() or 1
    all_busy = (busy1 - busy0) / ticks * cpus  # CPUs busy on average
    own_busy = (own1 - own0) / sample_s
    return max(0.0, all_busy - own_busy)


class LLMSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["local", "openai", "transformers"] = "local"
    # catalog name ("qwen2.5-coder-1.5b"), a GGUF path (local) or the served model name (openai)
    model: str = "qwen2.5-coder-1.5b"
    base_url: str | None = None  # openai backend: e.g. http://localhost:8000/v1 (vLLM)
    api_key_env: str | None = "OPENAI_API_KEY"  # name of the variable holding the key, never the key
    n_ctx: int = Field(4096, ge=256, description="context window per parallel slot (local)")
    threads: int | None = Field(None, ge=1, description="local: CPU threads; default = free cores")
    temperature: float = Field(0.0, ge=0.0)
    seed: int = 0
    max_concurrency: int | None = Field(None, ge=1, description="parallel requests; default local 1, openai 8")
    timeout_s: float = Field(120.0, gt=0, description="HTTP backends, per request; local generation is bounded by max_tokens")
    retries: int = Field(3, ge=0, description="extra attempts on timeouts, 429 and 5xx")
    backoff_s: float = Field(0.5, ge=0, description="first retry delay; doubles each attempt")
    prompt_cache: bool = Field(True, description="local: reuse the KV cache of a shared prompt prefix")
    cache: bool | str = Field(True, description="persistent response cache: on/off or a SQLite path")
    models_dir: str | None = None  # where catalog models live; default $MEDGROUND_MODELS
    device: str | None = Field(None, description="transformers: torch device; default cuda when available, else cpu")

    def concurrency(self) -> int:
        return self.max_concurrency or (1 if self.backend == "local" else 8)


@dataclass(slots=True)
class TokenLogprob:
    token: str
    logprob: float
    top: list[tuple[str, float]] = field(default_factory=list)  # alternatives, best first


@dataclass(slots=True)
class ToolCall:
    """One call in OpenAI format: ``arguments`` is the JSON string the model wrote."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any]:
        value = json.loads(self.arguments)
        if not isinstance(value, dict):
            raise ValueError(f"tool {self.name!r}: arguments are not a JSON object: {self.arguments!r}")
        return value

    def to_openai(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(slots=True)
class ChatRequest:
    messages: list[Message]
    max_tokens: int = 256
    temperature: float | None = None  # None: the settings' temperature
    seed: int | None = None
    top_logprobs: int | None = None  # alternatives per generated token (logprobs on when set)
    tools: list[dict[str, Any]] | None = None  # OpenAI "tools" list
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None  # e.g. {"type": "json_schema", "json_schema": {...}}
    stop: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # backend-specific body fields


@dataclass(slots=True)
class ChatResult:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    logprobs: list[TokenLogprob] = field(default_factory=list)
    finish_reason: str = ""
    seconds: float = 0.0  # wall time of the request (0 for a cache hit's own lookup)
    cached: bool = False  # served from the persistent cache
    cached_prompt_tokens: int = 0  # prompt tokens the server reused from its KV cache
    timings: dict[str, float] = field(default_factory=dict)  # server-reported (llama.cpp: prompt_ms, predicted_ms)
    model: str = ""

    @property
    def first_top(self) -> list[tuple[str, float]]:
        """Alternatives for the first generated token (what letter scoring reads)."""
        return self.logprobs[0].top if self.logprobs else []


@runtime_checkable
class LLM(Protocol):
    name: str  # backend:model, for logs and run configs
    fingerprint: str  # identity for caching: sha256 of the GGUF or the remote model name
    settings: LLMSettings

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
    ) -> ChatResult: ...

    def complete(self, request: ChatRequest) -> ChatResult: ...

    def chat_many(self, requests: list[ChatRequest], *, return_exceptions: bool = False) -> list[ChatResult | LLMError]: ...


def build_body(request: ChatRequest, settings: LLMSettings, model: str) -> dict[str, Any]:
    """The OpenAI chat-completions body for a request (also the cache key's content)."""
    _check_messages(request.messages)
    body: dict[str, Any] = {
        "model": model,
        "messages": [{**m, "content": as_text(m["content"])} if isinstance(m.get("content"), str) else m
                     for m in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": settings.temperature if request.temperature is None else request.temperature,
        "seed": settings.seed if request.seed is None else request.seed,
    }
    if request.top_logprobs is not None:
        body["logprobs"] = True
        body["top_logprobs"] = request.top_logprobs
    if request.tools:
        body["tools"] = request.tools
    if request.tool_choice is not None:
        body["tool_choice"] = request.tool_choice
    if request.response_format is not None:
        body["response_format"] = request.response_format
    if request.stop:
        body["stop"] = request.stop
    body.update(request.extra)
    return body


# Chat-template control tokens written as text ("<|im_end|><|im_start|>system" in a question or a
# passage): a server that parses special tokens in message content would open a real role. A
# space after the "<" keeps them text for every tokenizer and template (ChatML, Llama 3, Gemma,
# Mistral); our own templates never contain them, so only such injected text changes.
_CONTROL_TOKEN = re.compile(r"<(?=\||/?s>|start_of_turn>|end_of_turn>|/?(?:bos|eos)>)|\[(?=/?INST\])")


def as_text(content: str) -> str:
    """``content`` with chat control-token markup broken up, so it is tokenized as plain text."""
    return _CONTROL_TOKEN.sub(lambda m: m.group(0) + " ", content)


def _check_messages(messages: list[Message]) -> None:
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in {"system", "user", "assistant", "tool"}:
            raise ValueError(f"messages[{i}]: expected a dict with role system/user/assistant/tool, got {m!r:.120}")


def parse_completion(payload: dict[str, Any], *, seconds: float = 0.0, cached: bool = False) -> ChatResult:
    """Parse an OpenAI chat-completions response dict (from any backend) into a ChatResult."""
    if "error" in payload:
        err = payload["error"]
        msg = err.get("message", err) if isinstance(err, dict) else err
        status = err.get("code") if isinstance(err, dict) and isinstance(err.get("code"), int) else None
        raise LLMRequestError(f"LLM server error: {msg}", status=status)
    try:
        choice = payload["choices"][0]
        message = choice.get("message") or {}
        calls = [
            ToolCall(id=c.get("id") or f"call_{i}", name=c["function"]["name"],
                     arguments=c["function"].get("arguments") or "{}")
            for i, c in enumerate(message.get("tool_calls") or [])
        ]
        logprobs = [
            TokenLogprob(token=t["token"], logprob=float(t["logprob"]),
                         top=[(a["token"], float(a["logprob"])) for a in t.get("top_logprobs") or []])
            for t in ((choice.get("logprobs") or {}).get("content") or [])
        ]
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise LLMRequestError(f"malformed chat completion ({type(exc).__name__}: {exc}): {str(payload)[:300]}") from exc
    usage = payload.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    timings = {k: float(v) for k, v in (payload.get("timings") or {}).items() if isinstance(v, (int, float))}
    return ChatResult(
        text=message.get("content") or "",
        tool_calls=calls,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        logprobs=logprobs,
        finish_reason=choice.get("finish_reason") or "",
        seconds=seconds,
        cached=cached,
        cached_prompt_tokens=int(details.get("cached_tokens") or 0),
        timings=timings,
        model=str(payload.get("model") or ""),
    )


def create_llm(settings: LLMSettings | dict[str, Any] | None = None, **overrides: Any) -> LLM:
    """Build the backend named by ``settings.backend`` through the registry."""
    from medground import registry

    if settings is None:
        settings = LLMSettings(**overrides)
    elif isinstance(settings, dict):
        settings = LLMSettings(**{**settings, **overrides})
    elif overrides:
        settings = settings.model_copy(update=overrides)
    return registry.create("llm", settings.backend, settings=settings)
