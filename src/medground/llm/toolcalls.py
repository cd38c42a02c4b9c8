"""OpenAI ``tools`` semantics for llama.cpp models whose output its tool-call parser misses.

llama.cpp renders ``tools`` into the prompt with the GGUF's own chat template, then parses
``tool_calls`` only from the exact markup it expects (e.g. ``<tool_call>…</tool_call>``).
Small models often answer with the right JSON but without the markup (Qwen2.5-Coder 0.5B/1.5B
write ``{"name": …, "arguments": …}``, sometimes in a Markdown fence), and llama.cpp returns
it as plain content. Two steps close the gap, both visible in ``payload["medground"]``:

* ``constrain``: for ``tool_choice`` "required" or a named function the body gets a JSON
  schema (one ``{"name", "arguments"}`` shape per allowed tool), so the model cannot answer
  anything else; the template still renders the tools, so the prompt is the model's own.
* ``recover``: a reply whose whole content is such a call naming a tool that was offered is
  rewritten into ``message.tool_calls`` (``finish_reason`` "tool_calls"). Anything else is
  left alone; ``tool_choice`` "none" is never rewritten.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def _offered(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tool name → JSON schema of its parameters, for the tools this request allows."""
    tools = {t["function"]["name"]: t["function"].get("parameters") or {"type": "object"}
             for t in body.get("tools") or [] if t.get("type") == "function"}
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        return {name: tools[name]} if name in tools else {}
    return {} if choice == "none" else tools


def call_schema(tools: dict[str, dict[str, Any]]) -> dict[str, Any]:
    shapes = [{"type": "object", "properties": {"name": {"const": name}, "arguments": params},
               "required": ["name", "arguments"], "additionalProperties": False}
              for name, params in tools.items()]
    return shapes[0] if len(shapes) == 1 else {"anyOf": shapes}


def constrain(body: dict[str, Any]) -> dict[str, Any]:
    choice = body.get("tool_choice")
    forced = choice == "required" or isinstance(choice, dict)
    tools = _offered(body)
    if forced and tools and "response_format" not in body:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "tool_call", "schema": call_schema(tools)}}
        # part of the cache key, dropped before sending
        body["medground"] = {**(body.get("medground") or {}), "tool_calls": "constrained"}
    return body


def parse_calls(text: str, names: set[str]) -> list[dict[str, Any]] | None:
    """The calls in ``text`` if the whole text is one or more tool calls to ``names``, else None."""
    text = text.strip()
    tagged = _TAGGED.findall(text)
    if tagged:
        if _TAGGED.sub("", text).strip():
            return None  # prose around the tags: not a pure call
        pieces = tagged
    else:
        fence = _FENCE.match(text)
        pieces = [fence.group(1) if fence else text]
    calls: list[dict[str, Any]] = []
    for piece in pieces:
        try:
            value = json.loads(piece)
        except json.JSONDecodeError:
            return None
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict) or item.get("name") not in names:
                return None
            args = item.get("arguments", item.get("parameters"))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    return None
            if not isinstance(args, dict):
                return None
            calls.append({"id": f"call_{len(calls)}", "type": "function",
                          "function": {"name": item["name"], "arguments": json.dumps(args, ensure_ascii=False)}})
    return calls or None


def recover(body: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    tools = _offered(body)
    try:
        choice = payload["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        return payload  # malformed: parse_completion reports it
    if not tools or message.get("tool_calls") or not isinstance(message.get("content"), str):
        return payload
    calls = parse_calls(message["content"], set(tools))
    if calls is None:
        return payload
    choice["message"] = {**message, "content": None, "tool_calls": calls}
    choice["finish_reason"] = "tool_calls"
    payload["medground"] = {"tool_calls": (body.get("medground") or {}).get("tool_calls", "recovered"),
                            "raw_content": message["content"]}
    return payload
