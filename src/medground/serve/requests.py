"""The HTTP API's request bodies: their limits, the cleaning of their text, and their parsing off
the event loop (serve/api.py routes them)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from medground.schema import Passage


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
