"""Local llama.cpp backend through xllamacpp: the llama.cpp server in-process, OpenAI chat JSON.

``Server.handle_chat_completions(body)`` takes and returns the same JSON as an OpenAI-compatible
HTTP server, so this backend shares request building, parsing and caching with the remote one.
Loaded models are shared per process: two LocalLLMs with the same model and runtime settings
use one llama.cpp server (tests and rerankers would otherwise load the weights twice).
"""

from __future__ import annotations

import atexit
import http.client
import json
import os
import socket
import secrets
import shutil
import tempfile
import threading
from typing import Any

from medground.llm import toolcalls
from medground.llm.base import LLMRequestError, LLMSettings, free_cores
from medground.llm.client import BaseLLM
from medground.llm.models import model_fingerprint, resolve_model
from medground.registry import register

_SERVERS: dict[tuple, Any] = {}
_SERVERS_LOCK = threading.Lock()
_LISTENERS: dict[int, tuple[str, str]] = {}  # id(CommonParams) -> (socket path, API key)
_ADDRESSES: dict[int, tuple[str, str]] = {}  # id(Server) -> (socket path, API key)


def _server(path: str, n_ctx: int, threads: int, parallel: int, ram_cache_mib: int) -> Any:
    try:
        import xllamacpp
    except ImportError as exc:  # the [llm] extra is missing
        raise ImportError("the local LLM backend needs xllamacpp: pip install 'medground[llm]'") from exc
    key = (path, n_ctx, threads, parallel, ram_cache_mib)
    with _SERVERS_LOCK:
        if key not in _SERVERS:
            p = xllamacpp.CommonParams()
            p.model.path = path
            p.n_parallel = parallel
            p.n_ctx = n_ctx * parallel  # llama.cpp splits n_ctx across slots
            p.cpuparams.n_threads = threads
            p.cpuparams_batch.n_threads = threads
            # llama.cpp keeps old prompts' KV in RAM (8 GiB by default): bounded on shared machines.
            p.cache_ram_mib = ram_cache_mib
            p.use_jinja = True  # the GGUF's own chat template, with tools support where it has any
            p.warmup = False
            p.verbosity = -1  # llama.cpp logs to stderr otherwise, per token batch
            _private_listener(p)
            _SERVERS[key] = xllamacpp.Server(p)
            _ADDRESSES[id(_SERVERS[key])] = _LISTENERS.pop(id(p))
        return _SERVERS[key]


def _private_listener(p: Any) -> None:
    """We call the server in-process only, but xllamacpp always starts llama.cpp's HTTP listener
    (by default on a random 127.0.0.1 port, no key, CORS open to any origin with credentials:
    any local process or web page could use it). Bind it to a Unix socket in a directory only
    this user can enter, require a random API key, and turn CORS off."""
    sock_dir = tempfile.mkdtemp(prefix="medground-llama-")
    os.chmod(sock_dir, 0o700)
    atexit.register(shutil.rmtree, sock_dir, True)
    p.hostnames = [os.path.join(sock_dir, "llama.sock")]
    p.api_keys = [secrets.token_hex(24)]
    _LISTENERS[id(p)] = (p.hostnames[0], p.api_keys[0])
    p.cors_origins = ""
    p.cors_credentials = False
    p.n_threads_http = 1


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over the llama.cpp listener's Unix socket (see _private_listener)."""

    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


class LocalLLM(BaseLLM):
    backend = "local"

    def __init__(self, settings: LLMSettings):
        path = resolve_model(settings.model, settings.models_dir)
        super().__init__(settings, model_id=str(path), fingerprint=model_fingerprint(path, settings.models_dir))
        self.path = path
        self.threads = settings.threads or free_cores()
        self._server = _server(str(path), settings.n_ctx, self.threads, settings.concurrency(),
                               1024 if settings.prompt_cache else 0)

    def _prepare(self, body: dict[str, Any]) -> dict[str, Any]:
        if (body.get("medground") or {}).get("fresh_prefix"):
            # Reusing a cached prefix changes how the prompt is split into batches, and with it
            # the floating-point sums: greedy output would depend on what ran before.
            body["cache_prompt"] = False
        body.setdefault("cache_prompt", self.settings.prompt_cache)
        return toolcalls.constrain(body)

    def count_tokens(self, text: str) -> int | None:
        """llama.cpp's own tokenizer, through the server's ``/tokenize`` on its private socket
        (xllamacpp exposes no tokenize call): exact, ~10 ms, no second copy of the vocabulary."""
        address = _ADDRESSES.get(id(self._server))
        if address is None:
            return None
        path, key = address
        conn = _UnixHTTPConnection(path, timeout=10)
        try:
            conn.request("POST", "/tokenize", body=json.dumps({"content": text, "parse_special": False}),
                         headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
            reply = conn.getresponse()
            data = json.loads(reply.read() or b"{}")
        except (OSError, ValueError, http.client.HTTPException):
            return None  # the check falls back to characters; the call itself still guards the window
        finally:
            conn.close()
        tokens = data.get("tokens") if isinstance(data, dict) else None
        return len(tokens) if isinstance(tokens, list) else None

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        payload = self._server.handle_chat_completions({k: v for k, v in body.items() if k != "medground"})
        if not isinstance(payload, dict):
            raise LLMRequestError(f"{self.name}: llama.cpp returned {type(payload).__name__}, expected a dict")
        if "error" in payload:
            err = payload["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            raise LLMRequestError(f"{self.name}: llama.cpp rejected the request: {msg}",
                                  status=err.get("code") if isinstance(err, dict) else None)
        return toolcalls.recover(body, payload)


@register("llm", "local")
def make_local(settings: LLMSettings | None = None, **kwargs: Any) -> LocalLLM:
    settings = settings or LLMSettings(backend="local", **kwargs)
    return LocalLLM(settings)
