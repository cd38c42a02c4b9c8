from __future__ import annotations

import json

import pytest

from medground.pipelines.imedrag import IMedRagPipeline, IMedRagSettings, render_history
from medground.retrieve.engine import RetrievalEngine
from .test_scripted import ScriptedLLM


class CountingEngine(RetrievalEngine):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.retrieve_calls: list[str] = []

    def retrieve(self, queries, k=None):
        self.retrieve_calls.append(queries[0].text)
        return super().retrieve(queries, k)


def _engine(chunks):
    return CountingEngine({"retrievers": ["bm25"], "fusion": None, "top": 8, "final_k": 3},
                          chunks=chunks, build_if_missing=True)


def test_render_history():
    assert render_history([]) == "(nothing yet)"
    assert render_history([("q1", "a1"), ("q2", "a2")]) == "Q1: q1\nA1: a1\nQ2: q2\nA2: a2"


@pytest.mark.parametrize("n,m", [(1, 1), (2, 3), (3, 2)])
def test_issues_n_times_m_queries_and_feeds_history(tiny_chunks, mcq, n, m):
    rounds_seen = []

    def reply(user: str, kwargs: dict) -> str:
        if "Write" in user and "look up" in user:
            r = len(rounds_seen)
            rounds_seen.append(user)
            return json.dumps({"queries": [f"round {r} query {i} isoniazid" for i in range(n)]})
        return "pyridoxine prevents it"

    engine = _engine(tiny_chunks)
    llm = ScriptedLLM(reply)
    ans = IMedRagPipeline(llm, engine, IMedRagSettings(rounds=m, queries_per_round=n, k=2)).answer(mcq)
    assert len(ans.queries) == n * m
    assert len(engine.retrieve_calls) == n * m
    assert all(q.kind == "followup" for q in ans.queries)
    assert len(ans.metadata["history"]) == n * m
    # The second round's prompt carries the first round's query–answer pairs.
    if m > 1:
        assert "round 0 query 0" in rounds_seen[1] and "pyridoxine prevents it" in rounds_seen[1]
    # The final reader sees the history, not raw passages.
    final_prompt = llm.calls[-1]["user"]
    assert "What was looked up" in final_prompt and "Passages from medical textbooks" not in final_prompt
    ids = {c.chunk_id for c in tiny_chunks.iter_chunks()}
    assert ans.citations and all(c.chunk_id in ids for c in ans.citations)
    assert [c.number for c in ans.citations] == list(range(1, len(ans.citations) + 1))
    assert ans.choice == "A"  # the scripted letter log-probabilities favour A
    assert ans.metadata["query_failures"] == 0


def test_failed_query_generation_is_counted(tiny_chunks, mcq):
    ans = IMedRagPipeline(ScriptedLLM(lambda u, k: "nope"), _engine(tiny_chunks),
                          IMedRagSettings(rounds=2, queries_per_round=2)).answer(mcq)
    assert ans.metadata["query_failures"] == 2
    assert ans.queries == []


@pytest.mark.slow
def test_imedrag_end_to_end_with_real_model(small_llm, tiny_chunks, mcq):
    s = IMedRagSettings(rounds=2, queries_per_round=2, k=2, query_max_tokens=80, subanswer_max_tokens=24)
    ans = IMedRagPipeline(small_llm, _engine(tiny_chunks), s).answer(mcq)
    issued = len(ans.queries)
    assert issued == 2 * (2 - ans.metadata["query_failures"])
    assert ans.outcome in {"answered", "parse_failure"}
