"""Tool-call adaptation for llama.cpp replies (pure JSON in, OpenAI tool_calls out)."""

from __future__ import annotations

import json

from medground.llm.base import parse_completion
from medground.llm.toolcalls import call_schema, constrain, parse_calls, recover

SEARCH = {"type": "function", "function": {"name": "search_engine", "parameters": {
    "type": "object", "properties": {"keywords": {"type": "string"}}, "required": ["keywords"]}}}
LOOKUP = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
NAMES = {"search_engine", "lookup"}


def reply(content: str, finish: str = "stop") -> dict:
    return {"choices": [{"finish_reason": finish, "message": {"role": "assistant", "content": content}}]}


def test_parse_bare_fenced_tagged_and_listed_calls():
    bare = '{"name": "search_engine", "arguments": {"keywords": "ibuprofen dose"}}'
    assert parse_calls(bare, NAMES)[0]["function"] == {"name": "search_engine",
                                                       "arguments": '{"keywords": "ibuprofen dose"}'}
    assert parse_calls(f"```json\n{bare}\n```\n\n\n", NAMES)[0]["function"]["name"] == "search_engine"
    two = f"<tool_call>\n{bare}\n</tool_call>\n<tool_call>{{\"name\": \"lookup\", \"parameters\": {{}}}}</tool_call>"
    calls = parse_calls(two, NAMES)
    assert [c["function"]["name"] for c in calls] == ["search_engine", "lookup"]
    assert [c["id"] for c in calls] == ["call_0", "call_1"]
    as_string = '[{"name": "lookup", "arguments": "{\\"x\\": 1}"}]'
    assert json.loads(parse_calls(as_string, NAMES)[0]["function"]["arguments"]) == {"x": 1}


def test_parse_refuses_anything_that_is_not_purely_a_call():
    assert parse_calls("The answer is ibuprofen.", NAMES) is None
    assert parse_calls('{"name": "delete_db", "arguments": {}}', NAMES) is None  # not offered
    assert parse_calls('{"name": "lookup", "arguments": [1]}', NAMES) is None
    assert parse_calls('{"name": "lookup", "arguments": {"x": 1}', NAMES) is None  # truncated
    assert parse_calls('Sure! <tool_call>{"name": "lookup", "arguments": {}}</tool_call>', NAMES) is None
    assert parse_calls('{"answer": "A"}', NAMES) is None


def test_constrain_only_forced_choices():
    forced = constrain({"tools": [SEARCH, LOOKUP], "tool_choice": "required"})
    schema = forced["response_format"]["json_schema"]["schema"]
    assert [s["properties"]["name"]["const"] for s in schema["anyOf"]] == ["search_engine", "lookup"]
    named = constrain({"tools": [SEARCH, LOOKUP], "tool_choice": {"type": "function", "function": {"name": "lookup"}}})
    assert named["response_format"]["json_schema"]["schema"] == call_schema({"lookup": {"type": "object"}})
    assert "response_format" not in constrain({"tools": [SEARCH], "tool_choice": "auto"})
    assert "response_format" not in constrain({"tools": [SEARCH]})
    own = {"type": "json_object"}
    assert constrain({"tools": [SEARCH], "tool_choice": "required", "response_format": own})["response_format"] is own


def test_recover_rewrites_into_openai_tool_calls():
    body = {"tools": [SEARCH], "tool_choice": "auto"}
    payload = recover(body, reply('```json\n{"name": "search_engine", "arguments": {"keywords": "aspirin"}}\n```'))
    r = parse_completion(payload)
    assert r.text == "" and r.finish_reason == "tool_calls"
    assert r.tool_calls[0].name == "search_engine" and r.tool_calls[0].parsed_arguments() == {"keywords": "aspirin"}
    assert payload["medground"]["tool_calls"] == "recovered" and "aspirin" in payload["medground"]["raw_content"]


def test_recover_leaves_text_and_tool_choice_none_alone():
    call = '{"name": "search_engine", "arguments": {"keywords": "aspirin"}}'
    assert parse_completion(recover({"tools": [SEARCH], "tool_choice": "none"}, reply(call))).text == call
    assert parse_completion(recover({}, reply(call))).text == call  # no tools offered
    assert parse_completion(recover({"tools": [SEARCH]}, reply("Aspirin."))).text == "Aspirin."
    bad = {"choices": []}
    assert recover({"tools": [SEARCH]}, bad) is bad
