"""JSON-schema constrained outputs: tool calls, option-confidence tables, query lists.

The schema goes out as ``response_format = {"type": "json_schema", ...}``: llama.cpp turns it
into a grammar, vLLM and hosted APIs into guided decoding. The answer is validated with
pydantic; an invalid one is a counted StructuredFailure, never a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from medground.llm.base import LLM, ChatResult, Message, ToolCall

T = TypeVar("T", bound=BaseModel)


@dataclass(slots=True)
class StructuredFailure:
    reason: str  # "invalid json", "schema violation", "no tool call", "truncated"
    detail: str
    text: str


@dataclass(slots=True)
class Structured(Generic[T]):
    value: T | None
    failure: StructuredFailure | None
    result: ChatResult

    @property
    def ok(self) -> bool:
        return self.value is not None


def json_schema_format(model: type[BaseModel], name: str | None = None) -> dict[str, Any]:
    """The OpenAI ``response_format`` for a pydantic model."""
    return {"type": "json_schema",
            "json_schema": {"name": name or model.__name__, "schema": model.model_json_schema(), "strict": True}}


def validate_json(text: str, model: type[T]) -> T | StructuredFailure:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return StructuredFailure("invalid json", str(exc), text)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        return StructuredFailure("schema violation", str(exc), text)


def generate_json(llm: LLM, messages: list[Message], model: type[T], *, max_tokens: int = 256,
                  temperature: float | None = None, extra: dict[str, Any] | None = None) -> Structured[T]:
    """Constrained generation of one ``model`` instance."""
    result = llm.chat(messages, response_format=json_schema_format(model), max_tokens=max_tokens,
                      temperature=temperature, extra=extra)
    value = validate_json(result.text, model)
    if isinstance(value, StructuredFailure):
        if result.finish_reason == "length":
            value.reason = "truncated"
        return Structured(None, value, result)
    return Structured(value, None, result)


# --- option-confidence tables ---------------------------------------------------------------
def option_confidence_model(letters: list[str]) -> type[BaseModel]:
    """{"A": 0..10, "B": 0..10, ..., "choice": one of the letters}."""
    fields: dict[str, Any] = {x: (int, Field(ge=0, le=10)) for x in letters}
    fields["choice"] = (Literal[tuple(letters)], ...)
    return create_model("OptionConfidence", __config__=ConfigDict(extra="forbid"), **fields)


def option_confidence(llm: LLM, messages: list[Message], letters: list[str], *, max_tokens: int = 96
                      ) -> Structured[BaseModel]:
    return generate_json(llm, messages, option_confidence_model(letters), max_tokens=max_tokens)


# --- query lists ----------------------------------------------------------------------------
def query_list_model(n: int) -> type[BaseModel]:
    if n < 1:
        raise ValueError(f"need at least one query, got n={n}")
    query = (str, Field(min_length=2, max_length=300))
    return create_model(
        "QueryList", __config__=ConfigDict(extra="forbid"),
        queries=(list[query[0]], Field(min_length=n, max_length=n)),  # type: ignore[valid-type]
    )


def generate_queries(llm: LLM, messages: list[Message], n: int, *, max_tokens: int = 200) -> Structured[BaseModel]:
    """Exactly ``n`` search queries; empty or duplicate queries count as a failure."""
    out = generate_json(llm, messages, query_list_model(n), max_tokens=max_tokens)
    if out.value is not None:
        qs = [q.strip() for q in out.value.queries]
        if any(not q for q in qs) or len({q.lower() for q in qs}) != len(qs):
            return Structured(None, StructuredFailure("schema violation", "empty or duplicate queries",
                                                      out.result.text), out.result)
    return out


# --- tool calls -----------------------------------------------------------------------------
@dataclass(slots=True)
class Tool:
    name: str
    description: str
    parameters: type[BaseModel]

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": self.parameters.model_json_schema()}}


class SearchEngineArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # bounded so a constrained small model cannot loop inside the string until max_tokens
    keywords: str = Field(min_length=1, max_length=120, description="keywords to search the medical corpus for")


SEARCH_ENGINE = Tool("search_engine", "Search the medical knowledge base for passages.", SearchEngineArgs)


@dataclass(slots=True)
class ToolCallOutcome:
    call: ToolCall | None
    arguments: BaseModel | None
    failure: StructuredFailure | None
    native: bool  # the server produced tool_calls itself (else: schema-constrained fallback)
    result: ChatResult


def call_tool(llm: LLM, messages: list[Message], tools: list[Tool], *, max_tokens: int = 128,
              mode: Literal["auto", "native", "schema"] = "auto", extra: dict[str, Any] | None = None
              ) -> ToolCallOutcome:
    """Make the model call one of ``tools``; returns the call in OpenAI format, validated.

    Servers whose chat template supports tools answer with ``tool_calls`` ("native"); many
    small GGUFs do not, so "auto" then repeats the request with a JSON schema
    {"name", "arguments"} ("schema"). Pick "schema" to skip the wasted first attempt on such models.
    """
    if not tools:
        raise ValueError("call_tool needs at least one tool")
    by_name = {t.name: t for t in tools}
    if mode != "schema":
        result = llm.chat(messages, tools=[t.to_openai() for t in tools], tool_choice="required",
                          max_tokens=max_tokens, extra=extra)
        if result.tool_calls:
            return _validated(result.tool_calls[0], by_name, native=True, result=result)
        if mode == "native":
            failure = StructuredFailure("no tool call", "the server answered without tool_calls", result.text)
            return ToolCallOutcome(None, None, failure, native=True, result=result)
    envelope = create_model(
        "ToolChoice", __config__=ConfigDict(extra="forbid"),
        name=(Literal[tuple(by_name)], ...),
        arguments=(_union([t.parameters for t in tools]), ...),
    )
    hint = {"role": "system", "content": "Call exactly one tool. Tools:\n" + "\n".join(
        json.dumps(t.to_openai()["function"]) for t in tools)}
    out = generate_json(llm, [hint, *messages], envelope, max_tokens=max_tokens, extra=extra)
    if out.value is None:
        return ToolCallOutcome(None, None, out.failure, native=False, result=out.result)
    call = ToolCall(id="call_0", name=out.value.name, arguments=out.value.arguments.model_dump_json())
    return _validated(call, by_name, native=False, result=out.result)


def _union(models: list[type[BaseModel]]) -> Any:
    if len(models) == 1:
        return models[0]
    from typing import Union

    return Union[tuple(models)]  # noqa: UP007 - built dynamically


def _validated(call: ToolCall, by_name: dict[str, Tool], *, native: bool, result: ChatResult) -> ToolCallOutcome:
    tool = by_name.get(call.name)
    if tool is None:
        failure = StructuredFailure("no tool call", f"unknown tool {call.name!r}", call.arguments)
        return ToolCallOutcome(None, None, failure, native, result)
    args = validate_json(call.arguments, tool.parameters)
    if isinstance(args, StructuredFailure):
        return ToolCallOutcome(None, None, args, native, result)
    return ToolCallOutcome(call, args, None, native, result)
