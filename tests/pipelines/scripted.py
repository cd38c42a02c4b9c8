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
