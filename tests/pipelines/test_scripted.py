"""Scripted LLMs: answers chosen by the test, so pipeline arithmetic can be checked exactly. The
pipeline tests import these doubles; the tests at the end check that they behave as those tests
assume (a letter read scores the scripted log-probabilities, a yes/no prompt gets its pair)."""

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


def test_a_letter_read_returns_the_scripted_logprobs_and_other_calls_the_reply():
    llm = ScriptedLLM(lambda user, kw: f"echo: {user}", {"A": -2.0, "B": -0.5})
    letter = llm.chat([{"role": "user", "content": "Which?"}], max_tokens=1, top_logprobs=5)
    assert letter.text == "B" and letter.logprobs[0].top == [("B", -0.5), ("A", -2.0)]
    assert llm.chat([{"role": "user", "content": "Say it"}], max_tokens=50).text == "echo: Say it"
    assert [c["user"] for c in llm.calls] == ["Which?", "Say it"]


def test_a_yes_no_double_answers_only_the_prompts_holding_its_marker():
    class Judge(YesNoScriptedLLM):
        marker = "Does the passage"

        def yes_no(self, user):
            return (-0.1, -2.3) if "cough" in user else (-3.0, -0.05)

    llm = Judge(lambda user, kw: "free text")
    assert llm.chat([{"role": "user", "content": "Does the passage say cough?"}]).text == "yes"
    assert llm.chat([{"role": "user", "content": "Does the passage say rash?"}]).text == "no"
    assert llm.chat([{"role": "user", "content": "Answer freely"}]).text == "free text"
    assert yes_no_result(-0.2, -1.0).logprobs[0].top == [("yes", -0.2), ("no", -1.0)]
    assert confidence_json({"A": 7}, "A") == '{"A": 7, "choice": "A"}'
