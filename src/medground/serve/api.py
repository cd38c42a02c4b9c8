"""The HTTP API: questions, consultations and searches over the configured pipelines.

    POST /v1/ask       {"question", "options"?, "pipeline"?}       → an Answer with citations
    POST /v1/consult   {"messages": [{"role", "content"}, …]}       → the consultation pipeline's Answer
    POST /v1/search    {"query", "k"?, "pipeline"?}                  → ranked passages with citation labels
    GET  /v1/pipelines                                               → names, kinds, models
    GET  /health                                                     → liveness, what is loaded
    GET  /                                                           → the consultation web page

Pipelines are named in ``ServeSettings`` (name → YAML config) and built on first use, since
loading an LLM takes seconds; each runs one request at a time because a local llama.cpp model
serves one (serve/pool.py). Request bodies, their limits and parsing: serve/requests.py. Bad requests get 422 with the offending field named (pydantic); a
pipeline that fails mid-answer returns 500 with the error text, never a made-up answer.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import logging
import re
import sqlite3
from collections.abc import Callable
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from medground.store.settings import StoreMissingError
from medground.llm.base import LLMError, PromptTooLongError
from medground.pipelines.base import Pipeline
from medground.paths import SHIPPED_CONFIGS as CONFIGS
from medground.pipelines.base import answer_dict
from medground.pipelines.config import PipelineConfig
from medground.protocols import EmptyQueryError
from medground.schema import Passage, Question
from medground.serve.limits import MAX_BODY_BYTES, BodyLimit
from medground.serve.pool import Busy, ClientGone, PipelinePool
from medground.serve.requests import (
    AskRequest,
    ConsultRequest,
    SearchRequest,
    _body_schema,
    dialogue_text,
    parsed,
    passage_json,
)

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


# --- the app ----------------------------------------------------------------------------------
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
