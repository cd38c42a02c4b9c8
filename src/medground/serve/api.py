"""The HTTP API: questions, consultations and searches over the configured pipelines.

    POST /v1/ask       {"question", "options"?, "pipeline"?}       → an Answer with citations
    POST /v1/consult   {"messages": [{"role", "content"}, …]}       → the consultation pipeline's Answer
    POST /v1/search    {"query", "k"?, "pipeline"?}                  → ranked passages with citation labels
    GET  /v1/pipelines                                               → names, kinds, models
    GET  /health                                                     → liveness, what is loaded
    GET  /                                                           → the consultation web page

Pipelines are named in ``ServeSettings`` (name → YAML config) and built on first use, since
loading an LLM takes seconds; each is guarded by a lock because a local llama.cpp model serves
one request at a time. Bad requests get 422 with the offending field named (pydantic); a
pipeline that fails mid-answer returns 500 with the error text, never a made-up answer.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import hashlib
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from medground.store.settings import StoreMissingError
from medground.llm import cancel
from medground.llm.base import LLMError, PromptTooLongError
from medground.pipelines.base import Pipeline
from medground.paths import SHIPPED_CONFIGS as CONFIGS
from medground.pipelines.base import answer_dict
from medground.pipelines.config import PipelineConfig, load_pipeline_config
from medground.protocols import EmptyQueryError
from medground.schema import Passage, Question
from medground.serve.limits import MAX_BODY_BYTES, BodyLimit

log = logging.getLogger(__name__)


class ServeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pipelines: dict[str, Path] = Field(
        default_factory=lambda: {"rag": CONFIGS / "rag.yaml", "consult": CONFIGS / "drugrag.yaml"},
        description="name → pipeline YAML config (the CLI's `-p rag` is the same rag.yaml)")
    default: str = "rag"  # for /v1/ask and /v1/search when the request names none
    consult: str = "consult"  # the pipeline behind /v1/consult and the web page
    max_chars: int = Field(4000, ge=10, description="longest question, message or query accepted")
    # Counted with the model's own tokenizer before any retrieval or generation: characters do not
    # bound tokens (4,000 emoji or combining marks are 4,000+ tokens). With the evidence budget
    # (1,200), the prompt and the answer this stays inside the 4,096-token context of the shipped configs.
    max_request_tokens: int = Field(1500, ge=16, description="most tokens a request's own text may bring")
    docs: bool = Field(False, description="serve /docs and /redoc (their pages load assets from a CDN)")
    max_waiting: int = Field(4, ge=0, description="requests queued per pipeline beyond the one running; more get 503")
    max_body_bytes: int = Field(MAX_BODY_BYTES, ge=1024, le=1024**2, description="larger request bodies get 413, unread")
    # Host headers answered (DNS rebinding: a page on another name must not read responses). "testserver"
    # is the test client's name; it resolves nowhere, so it opens nothing.
    allowed_hosts: list[str] = Field(default_factory=lambda: ["localhost", "127.0.0.1", "[::1]", "testserver"],
                                     description="Host header values accepted; '*' accepts any")

    @model_validator(mode="after")
    def _known_names(self) -> ServeSettings:
        for field in ("default", "consult"):
            name = getattr(self, field)
            if name not in self.pipelines:
                raise ValueError(f"{field}: {name!r} is not one of the configured pipelines {sorted(self.pipelines)}")
        return self


# --- request and response bodies ----------------------------------------------------------------
MAX_OPTIONS = 10
MAX_OPTION_CHARS = 500
MAX_TURNS = 40
# What a request may add to the prompt, in characters (~4 per token): with the evidence and the
# answer this stays inside the 4,096-token context of the shipped configs.
MAX_DIALOGUE_CHARS = 6000
MAX_ASK_CHARS = 6000
MAX_K = 50  # the engines keep at most 50 candidates per query in the shipped configs
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_OPTION_KEY = re.compile(r"[A-Z]")


# Characters that render as nothing: separators, controls, format, unassigned, private use,
# surrogates and marks (by Unicode category), and the letters that are blank fillers.
_BLANK_CATEGORIES = {"Zs", "Zl", "Zp", "Cc", "Cf", "Cn", "Co", "Cs", "Mn", "Me"}
_FILLERS = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\ufffc", "\ufffd"}


def blank(v: str) -> bool:
    import unicodedata

    return all(c in _FILLERS or unicodedata.category(c) in _BLANK_CATEGORIES for c in v)


def clean_text(v: str, what: str) -> str:
    """Text a model can read: no lone surrogates (not encodable), not only characters that render as nothing."""
    if _SURROGATE.search(v):
        raise ValueError(f"{what} contains a lone UTF-16 surrogate (invalid Unicode text)")
    if blank(v):
        raise ValueError(f"{what} is empty, whitespace, control or invisible characters only")
    return v.strip()


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1)
    options: dict[str, str] = Field(default_factory=dict, description='{"A": "text", …}; empty = free text')
    pipeline: str | None = None

    @field_validator("question")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        return clean_text(v, "the question")

    @field_validator("options")
    @classmethod
    def _options(cls, v: dict[str, str]) -> dict[str, str]:
        if len(v) > MAX_OPTIONS:
            raise ValueError(f"{len(v)} options; at most {MAX_OPTIONS} accepted")
        if len(v) == 1:
            raise ValueError("a multiple-choice question needs at least 2 options (or none for free text)")
        out: dict[str, str] = {}
        for raw, text in v.items():
            key = raw.strip().upper()
            if not _OPTION_KEY.fullmatch(raw.strip().upper()) or not raw.strip().isascii():  # "ſ".upper() is "S"
                raise ValueError(f"option key {raw!r}: expected one letter A-Z")
            if key in out:
                raise ValueError(f"option keys: {key!r} is given twice (letters are case-insensitive)")
            if len(text) > MAX_OPTION_CHARS:
                raise ValueError(f"option {key}: {len(text)} characters, at most {MAX_OPTION_CHARS} accepted")
            out[key] = clean_text(text, f"option {key}")
        return out

    @model_validator(mode="after")
    def _total(self) -> AskRequest:
        total = len(self.question) + sum(len(v) for v in self.options.values())
        if total > MAX_ASK_CHARS:
            raise ValueError(f"question and options: {total} characters in all, at most {MAX_ASK_CHARS} accepted "
                             "(the model's context holds the question, the options and the evidence)")
        return self


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: str = Field(min_length=1)

    @field_validator("content")
    @classmethod
    def _text(cls, v: str) -> str:
        return clean_text(v, "content")


class ConsultRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: list[Turn] = Field(min_length=1, max_length=MAX_TURNS)

    @model_validator(mode="after")
    def _ends_with_user(self) -> ConsultRequest:
        if self.messages[-1].role != "user" or not self.messages[-1].content.strip():
            raise ValueError("messages: the last turn must be the patient's (role 'user') and not empty")
        total = sum(len(t.content) for t in self.messages)
        if total > MAX_DIALOGUE_CHARS:
            raise ValueError(f"messages: {total} characters in all, at most {MAX_DIALOGUE_CHARS} accepted")
        return self


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1)
    k: StrictInt = Field(6, ge=1, le=MAX_K)
    pipeline: str | None = None

    @field_validator("query")
    @classmethod
    def _text(cls, v: str) -> str:
        return clean_text(v, "the query")


def passage_json(rank: int, p: Passage) -> dict[str, Any]:
    c = p.chunk
    return {"rank": rank, "score": p.score, "source": p.source, "chunk_id": c.chunk_id, "doc_id": c.doc_id,
            "title": c.title, "section_path": list(c.section_path), "text": c.text}


def dialogue_text(turns: list[Turn]) -> tuple[str, str]:
    """(earlier turns as 'Patient: … / Pharmacist: …' lines, the last patient message)."""
    who = {"user": "Patient", "assistant": "Pharmacist"}
    history = "\n".join(f"{who[t.role]}: {t.content.strip()}" for t in turns[:-1])
    return history, turns[-1].content.strip()


# --- request bodies, parsed off the event loop --------------------------------------------------
def parsed(model: type[BaseModel]) -> Callable[[Request], Any]:
    """A dependency that reads the (already size-capped) body and parses and validates it on a
    worker thread: JSON parsing and validation never hold the event loop that answers /health.
    Errors read as FastAPI's own (422, ``loc`` starting with "body"), without the input."""
    import json

    import anyio
    from pydantic import ValidationError

    def parse(raw: bytes) -> Any:
        try:
            data = json.loads(raw)
        except ValueError as exc:  # not JSON (UnicodeDecodeError is one too)
            raise RequestValidationError([{"loc": ("body",), "msg": f"JSON decode error: {exc}",
                                           "type": "json_invalid"}]) from None
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise RequestValidationError([{**e, "loc": ("body", *e["loc"])}
                                          for e in exc.errors(include_input=False, include_url=False)]) from None

    async def dependency(request: Request) -> Any:
        return await anyio.to_thread.run_sync(parse, await request.body())

    return dependency


def _body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The request body in the OpenAPI document (the dependency hides it from FastAPI)."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


# --- the app ----------------------------------------------------------------------------------
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


def create_app(settings: ServeSettings | None = None,
               build: Callable[[PipelineConfig], Pipeline] | None = None) -> FastAPI:
    """The API over ``settings``' pipelines; ``build`` makes a pipeline from its config (tests inject fakes)."""
    from importlib.metadata import version

    __version__ = version("medground")
    settings = settings or ServeSettings()
    if build is None:
        from medground.pipelines.factory import build_pipeline as build
    pool = PipelinePool(settings, build)
    docs = {} if settings.docs else {"docs_url": None, "redoc_url": None}
    app = FastAPI(title="MedGround", version=__version__,
                  description="Grounded medical question answering with cited evidence.", **docs)
    app.state.pool = pool
    page_html = resources.files("medground.serve").joinpath("static/consult.html").read_text(encoding="utf-8")
    csp = content_security_policy(page_html)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # The default handler echoes the input, which fails to encode for a lone surrogate
        # (500 and a dropped connection): say where and what, without the input.
        errors = exc.errors()
        detail = [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": e.get("type", "")}
                  for e in errors[:20]]  # thousands of unknown keys must not make a 600 KB answer
        if len(errors) > 20:
            detail.append({"loc": [], "msg": f"and {len(errors) - 20} more errors", "type": "truncated"})
        return JSONResponse({"detail": detail}, status_code=422)

    # A plain ASGI middleware, not @app.middleware("http"): Starlette's BaseHTTPMiddleware wraps
    # `receive` so that routes never see the client's disconnect (queued work would run anyway).
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_hosts)
    app.add_middleware(SecurityHeaders, csp=csp)  # added last: outermost, so every refusal carries it too

    def too_long(text: str, field: str) -> None:
        if len(text) > settings.max_chars:
            raise HTTPException(422, f"{field}: {len(text)} characters, at most {settings.max_chars} accepted")

    async def run(name: str, fn: Callable[[Pipeline], Any], request: Request, exclusive: bool = True) -> Any:
        try:
            return await pool.run(name, fn, request.is_disconnected, exclusive=exclusive)
        except HTTPException:
            raise
        except Busy as busy:
            raise HTTPException(503, f"pipeline {name!r} is busy ({settings.max_waiting} requests already waiting); "
                                     f"retry after {busy.retry_after} s",
                                headers={"Retry-After": str(busy.retry_after)}) from None
        except ClientGone:
            raise HTTPException(499, "client closed the request") from None
        except (EmptyQueryError, PromptTooLongError) as exc:  # the request's own fault
            raise HTTPException(422, str(exc)) from exc
        except Exception as exc:  # the pipeline failed: say so, never invent an answer
            if isinstance(exc, LLMError) and context_overflow(exc):
                # the prompt outgrew the model's window: a fault of the request's size, not the server's
                raise HTTPException(422, "the request is too long for the model's context window once "
                                         "tokenized; shorten the question or the dialogue") from None
            if transient(exc):  # a locked database, a full disk: the service, not the request
                log.warning("pipeline %r: %s: %s", name, type(exc).__name__, exc)
                raise HTTPException(503, f"pipeline {name!r} is temporarily unavailable ({reason(exc)}); retry later",
                                    headers={"Retry-After": "30"}) from None
            log.exception("pipeline %r failed", name)  # the details stay in the server's log
            raise HTTPException(500, f"pipeline {name!r} failed ({type(exc).__name__}); see the server log") from None

    def within_tokens(pipe: Pipeline, field: str, texts: list[str]) -> None:
        """Refuse a request whose own text is more tokens than ``max_request_tokens``, counted by
        the pipeline's model before it does any work (no count: the character limit stands)."""
        count = getattr(getattr(pipe, "llm", None), "count_tokens", None)
        # one tokenizer call for the request (40 turns are one call, not 40)
        total = count("\n".join(texts)) if count is not None else None
        if total is not None and total > settings.max_request_tokens:
            raise PromptTooLongError(field, total, settings.max_request_tokens)

    async def answered(name: str, question: Question, request: Request, field: str,
                       texts: list[str]) -> dict[str, Any]:
        def answer_it(pipe: Pipeline) -> Any:
            within_tokens(pipe, field, texts)
            return pipe.answer(question)

        answer = await run(name, answer_it, request)
        return {"pipeline": name, "question": asdict(question), "answer": answer_dict(answer)}

    @app.get("/health")
    async def health() -> dict[str, Any]:
        # async: answered on the event loop, never behind a worker thread busy with a model.
        return {"status": "ok", "version": __version__, "pipelines": sorted(settings.pipelines),
                "loaded": pool.loaded(), "queued": pool.queue(), "dropped_for_disconnect": pool.dropped,
                "cancelled_for_disconnect": pool.cancelled}

    @app.get("/v1/pipelines")
    def pipelines() -> list[dict[str, Any]]:
        out = []
        for name in settings.pipelines:
            cfg = pool.config(name)
            out.append({"name": name, "pipeline": cfg.pipeline, "label": cfg.label, "llm": cfg.llm.model,
                        "retrievers": list(cfg.retrieve.retrievers), "default": name == settings.default,
                        "consult": name == settings.consult})
        return out

    @app.post("/v1/ask", openapi_extra=_body_schema(AskRequest))
    async def ask(request: Request, req: AskRequest = Depends(parsed(AskRequest))) -> dict[str, Any]:
        too_long(req.question, "question")
        q = Question(qid="api", dataset="api", question=req.question, options=dict(req.options))
        return await answered(req.pipeline or settings.default, q, request, "question and options",
                              [req.question, *req.options.values()])

    @app.post("/v1/consult", openapi_extra=_body_schema(ConsultRequest))
    async def consult(request: Request, req: ConsultRequest = Depends(parsed(ConsultRequest))) -> dict[str, Any]:
        for i, t in enumerate(req.messages):
            too_long(t.content, f"messages[{i}].content")
        history, last = dialogue_text(req.messages)
        q = Question(qid="consult", dataset="api", question=last, context=history)
        return await answered(settings.consult, q, request, "messages", [t.content for t in req.messages])

    @app.post("/v1/search", openapi_extra=_body_schema(SearchRequest))
    async def search(request: Request, req: SearchRequest = Depends(parsed(SearchRequest))) -> dict[str, Any]:
        too_long(req.query, "query")
        name = req.pipeline or settings.default

        def retrieve(pipe: Pipeline) -> list[Passage]:
            engine = getattr(pipe, "engine", None)
            if engine is None:
                raise HTTPException(400, f"pipeline {name!r} has no retriever (closed book)")
            return engine.retrieve(req.query, k=req.k)

        # Retrieval never calls the model: it does not wait behind answers in the pipeline's queue.
        passages = await run(name, retrieve, request, exclusive=False)
        return {"pipeline": name, "query": req.query,
                "passages": [passage_json(i + 1, p) for i, p in enumerate(passages)]}

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return page_html

    return app


# How llama.cpp and OpenAI-compatible servers say a prompt outgrew the model's window.
_CONTEXT_OVERFLOW = re.compile(r"exceeds the available context size|maximum context length|context length exceeded|"
                               r"context_length_exceeded|too many tokens", re.IGNORECASE)


def context_overflow(exc: BaseException) -> bool:
    return bool(_CONTEXT_OVERFLOW.search(str(exc)))


def transient(exc: BaseException) -> bool:
    """A fault of the service's resources (retry later), not of the request."""
    if isinstance(exc, StoreMissingError):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return "locked" in text or "full" in text or "disk i/o" in text or "unable to open" in text
    return isinstance(exc, OSError) and exc.errno in {errno.ENOSPC, errno.EDQUOT, errno.EMFILE, errno.ENFILE}


def reason(exc: BaseException) -> str:
    """What went wrong, without paths or exception text."""
    if isinstance(exc, StoreMissingError):
        return "the chunk store is missing: rebuild it with `medground corpus ingest`"
    if isinstance(exc, OSError) and exc.errno in {errno.ENOSPC, errno.EDQUOT}:
        return "the disk is full"
    if isinstance(exc, OSError):
        return "too many open files"
    text = str(exc).lower()
    return "the disk is full" if "full" in text else "a database is locked" if "locked" in text else "a storage fault"


class SecurityHeaders:
    """Adds the Content-Security-Policy, nosniff, frame and referrer headers to every response."""

    def __init__(self, app: Any, csp: str):
        self.app = app
        self.headers = [(b"content-security-policy", csp.encode()), (b"x-content-type-options", b"nosniff"),
                        (b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer")]

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.headers]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def content_security_policy(page_html: str) -> str:
    """Same-origin only; the page's inline script and style allowed by their sha256, nothing else
    inline; no framing by other sites."""
    def hashes(tag: str) -> str:
        bodies = re.findall(rf"<{tag}>(.*?)</{tag}>", page_html, flags=re.DOTALL)
        return " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(b.encode()).digest()).decode()}'" for b in bodies)

    return (f"default-src 'self'; script-src 'self' {hashes('script')}; style-src 'self' {hashes('style')}; "
            "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
