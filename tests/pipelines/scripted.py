"""A scripted LLM: answers chosen by the test, so pipeline arithmetic can be checked exactly."""

from __future__ import annotations

import json
from collections.abc import Callable

from medground.llm.base import ChatResult, LLMSettings, TokenLogprob


class ScriptedLLM:
    name = "scripted"
    fingerprint = "scripted"

    def __init__(self, reply: Callable[[str, dict], str], letter_logprobs: dict[str, float] | None = None):
        self.reply = reply  # (last user message, call kwargs) -> text
        self.letter_logprobs = letter_logprobs or {"A": -0.1, "B": -2.5, "C": -3.0, "D": -4.0}
        self.settings = LLMSettings()
        self.calls: list[dict] = []

    def chat_many(self, requests, *, return_exceptions: bool = False) -> list[ChatResult]:
        return [self.chat(r.messages, max_tokens=r.max_tokens, top_logprobs=r.top_logprobs) for r in requests]

    def chat(self, messages, **kwargs) -> ChatResult:
        user = messages[-1]["content"]
        self.calls.append({"user": user, **kwargs})
        if kwargs.get("top_logprobs") and kwargs.get("max_tokens") == 1:
            top = sorted(self.letter_logprobs.items(), key=lambda kv: -kv[1])
            best = top[0][0]
            return ChatResult(text=best, prompt_tokens=len(user.split()), completion_tokens=1,
                              logprobs=[TokenLogprob(best, top[0][1], top)])
        return ChatResult(text=self.reply(user, kwargs), prompt_tokens=len(user.split()), completion_tokens=5)


def confidence_json(scores: dict[str, int], choice: str) -> str:
    return json.dumps({**scores, "choice": choice})


def yes_no_result(yes: float, no: float) -> ChatResult:
    """A one-token yes/no answer with these log-probabilities among its top alternatives."""
    top = sorted([("yes", yes), ("no", no)], key=lambda kv: -kv[1])
    return ChatResult(text=top[0][0], prompt_tokens=1, completion_tokens=1,
                      logprobs=[TokenLogprob(top[0][0], top[0][1], top)])


class YesNoScriptedLLM(ScriptedLLM):
    """A scripted LLM that answers yes/no to the prompts holding ``marker`` (a check or a judge),
    with the log-probabilities ``yes_no(user message)`` gives; other prompts as ScriptedLLM."""

    marker = ""

    def yes_no(self, user: str) -> tuple[float, float]:
        raise NotImplementedError

    def chat(self, messages, **kwargs) -> ChatResult:
        user = messages[-1]["content"]
        if self.marker not in user:
            return super().chat(messages, **kwargs)
        self.calls.append({"user": user, **kwargs})
        return yes_no_result(*self.yes_no(user))
