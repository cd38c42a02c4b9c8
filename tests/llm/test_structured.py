from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from medground.llm.base import ChatResult
from medground.llm.structured import (
    SEARCH_ENGINE,
    StructuredFailure,
    Tool,
    call_tool,
    generate_json,
    generate_queries,
    json_schema_format,
    option_confidence,
    option_confidence_model,
    query_list_model,
    validate_json,
)

from ._fakes import FakeLLM, tool_result

MSG = [{"role": "user", "content": "q"}]


class Point(BaseModel):
    x: int
    y: int


def test_json_schema_format_is_openai_shape():
    rf = json_schema_format(Point)
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "Point"
    assert rf["json_schema"]["schema"]["required"] == ["x", "y"]


@pytest.mark.parametrize(("text", "reason"), [("{x: 1}", "invalid json"), ('{"x": 1}', "schema violation"),
                                              ('{"x": "one", "y": 2}', "schema violation"), ("", "invalid json")])
def test_validate_json_failures(text, reason):
    out = validate_json(text, Point)
    assert isinstance(out, StructuredFailure) and out.reason == reason and out.text == text


def test_generate_json_sends_schema_and_marks_truncation():
    llm = FakeLLM('{"x": 1, "y": 2}', ChatResult(text='{"x": 1, "y"', finish_reason="length"))
    ok = generate_json(llm, MSG, Point)
    assert ok.ok and ok.value == Point(x=1, y=2)
    assert llm.requests[0].response_format["json_schema"]["schema"]["title"] == "Point"
    cut = generate_json(llm, MSG, Point)
    assert not cut.ok and cut.failure.reason == "truncated"


def test_option_confidence_table_bounds_and_choice():
    model = option_confidence_model(["A", "B", "C"])
    schema = model.model_json_schema()
    assert schema["properties"]["A"]["maximum"] == 10 and schema["properties"]["choice"]["enum"] == ["A", "B", "C"]
    llm = FakeLLM('{"A": 2, "B": 9, "C": 0, "choice": "B"}', '{"A": 11, "B": 9, "C": 0, "choice": "B"}',
                  '{"A": 1, "B": 2, "C": 3, "choice": "D"}')
    assert option_confidence(llm, MSG, ["A", "B", "C"]).value.B == 9
    assert option_confidence(llm, MSG, ["A", "B", "C"]).failure.reason == "schema violation"  # 11 > 10
    assert option_confidence(llm, MSG, ["A", "B", "C"]).failure.reason == "schema violation"  # D not an option


def test_query_list_exact_count_and_no_duplicates():
    assert query_list_model(2).model_json_schema()["properties"]["queries"]["minItems"] == 2
    llm = FakeLLM('{"queries": ["aspirin dose", "aspirin overdose"]}', '{"queries": ["a b", "A B"]}',
                  '{"queries": ["only one"]}')
    assert generate_queries(llm, MSG, 2).value.queries == ["aspirin dose", "aspirin overdose"]
    assert generate_queries(llm, MSG, 2).failure.detail == "empty or duplicate queries"
    assert generate_queries(llm, MSG, 2).failure.reason == "schema violation"
    with pytest.raises(ValueError):
        query_list_model(0)


def test_tool_to_openai_format():
    spec = SEARCH_ENGINE.to_openai()
    assert spec["type"] == "function" and spec["function"]["name"] == "search_engine"
    assert spec["function"]["parameters"]["required"] == ["keywords"]


def test_call_tool_native_path_validates_arguments():
    llm = FakeLLM(tool_result("search_engine", '{"keywords": "warfarin interactions"}'))
    out = call_tool(llm, MSG, [SEARCH_ENGINE])
    assert out.native and out.arguments.keywords == "warfarin interactions"
    assert out.call.to_openai() == {"id": "call_1", "type": "function", "function": {
        "name": "search_engine", "arguments": '{"keywords": "warfarin interactions"}'}}
    assert llm.requests[0].tool_choice == "required" and llm.requests[0].tools[0]["function"]["name"] == "search_engine"


def test_call_tool_falls_back_to_schema_when_server_has_no_tool_support():
    llm = FakeLLM("I would search for it.", '{"name": "search_engine", "arguments": {"keywords": "aspirin"}}')
    out = call_tool(llm, MSG, [SEARCH_ENGINE])
    assert not out.native and out.call.name == "search_engine"
    assert json.loads(out.call.arguments) == {"keywords": "aspirin"}
    name_schema = llm.requests[1].response_format["json_schema"]["schema"]["properties"]["name"]
    assert name_schema.get("const", name_schema.get("enum", [None])[0]) == "search_engine"


def test_call_tool_modes():
    llm = FakeLLM("plain text", '{"name": "search_engine", "arguments": {"keywords": "x"}}')
    native = call_tool(llm, MSG, [SEARCH_ENGINE], mode="native")
    assert native.failure.reason == "no tool call" and native.failure.text == "plain text"
    schema = call_tool(llm, MSG, [SEARCH_ENGINE], mode="schema")
    assert schema.arguments.keywords == "x" and len(llm.requests) == 2


def test_call_tool_bad_calls_are_counted_failures():
    other = Tool("lookup_drug", "Look up a drug", Point)
    llm = FakeLLM(tool_result("delete_db", "{}"), tool_result("search_engine", '{"keywords": ""}'),
                  "no", '{"name": "search_engine"}')
    assert call_tool(llm, MSG, [SEARCH_ENGINE, other]).failure.reason == "no tool call"
    assert call_tool(llm, MSG, [SEARCH_ENGINE]).failure.reason == "schema violation"  # empty keywords
    assert call_tool(llm, MSG, [SEARCH_ENGINE]).failure.reason == "schema violation"
