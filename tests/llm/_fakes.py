"""A scripted LLM for unit tests of the layers above the backends."""

from __future__ import annotations

from medground.llm.base import ChatRequest, ChatResult, LLMSettings, TokenLogprob, ToolCall


def first_token(top: list[tuple[str, float]], text: str | None = None) -> ChatResult:
    """A 1-token result whose first token has these alternatives."""
    tok = text if text is not None else top[0][0]
    return ChatResult(text=tok, logprobs=[TokenLogprob(tok, top[0][1], list(top))], completion_tokens=1)


class FakeLLM:
    """Returns scripted results in order and records every request."""

    name = "fake:scripted"
    fingerprint = "fake"

    def __init__(self, *results: ChatResult | str):
        self.settings = LLMSettings(backend="openai", model="fake", cache=False)
        self.script = [ChatResult(text=r) if isinstance(r, str) else r for r in results]
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        if not self.script:
            raise AssertionError("FakeLLM: no scripted result left")
        return self.script.pop(0)

    def chat(self, messages, **kw) -> ChatResult:
        return self.complete(ChatRequest(messages=messages, **{k: v for k, v in kw.items() if v is not None}))

    def chat_many(self, requests, *, return_exceptions=False):
        return [self.complete(r) for r in requests]


def tool_result(name: str, arguments: str) -> ChatResult:
    return ChatResult(text="", tool_calls=[ToolCall("call_1", name, arguments)])
