from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from medground.cli import search as commands
from medground.retrieve.engine import RetrievalEngine

from ._fakes import KeywordRetriever, chunk

CHUNKS = [
    chunk("c1", "insulin lowers blood glucose", book="Anatomy", chapter="The Endocrine System",
          section=("The Pancreas", "Insulin")),
    chunk("c2", "glucagon raises blood glucose", section=("The Pancreas",)),
    chunk("c3", "aspirin inhibits platelets", section=("Antiplatelets",)),
]

runner = CliRunner()


@pytest.fixture
def seen(monkeypatch):
    """Replace the indexes with keyword retrievers; record the settings the command built."""
    got = []

    def fake_engine(settings):
        got.append(settings)
        fakes = {name: KeywordRetriever(CHUNKS, name=name) for name in ("bm25", "dense", "splade")}
        return RetrievalEngine(settings, retrievers=fakes, count_tokens=lambda t: len(t.split()))

    monkeypatch.setattr(commands, "make_engine", fake_engine)
    return got


def test_json_output(seen):
    res = runner.invoke(commands.app, ["blood glucose insulin", "--json", "--k", "2"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [p["chunk_id"] for p in out["passages"]] == ["c1", "c2"]
    assert out["passages"][0]["section"] == "The Pancreas > Insulin"
    assert out["passages"][0]["book"] == "Anatomy" and out["passages"][0]["score"] == 3.0
    assert out["settings"]["fusion"] is None and out["settings"]["final_k"] == 2
    assert "first_stage" in out["timings"]


def test_hybrid_defaults_to_rrf_and_table(seen):
    res = runner.invoke(commands.app, ["aspirin", "--retriever", "hybrid"])
    assert res.exit_code == 0, res.output
    s = seen[0]
    assert [r.name for r in s.retrievers] == ["bm25", "dense"] and s.fusion == "rrf" and s.sections is None
    assert "Antiplatelets" in res.stdout and "aspirin inhibits platelets" in res.stdout


def test_fusion_and_rerank_flags_reach_settings(seen):
    runner.invoke(commands.app, ["x", "-r", "hybrid", "--fusion", "norm", "--rerank", "maxsim", "--json"])
    s = seen[0]
    assert s.fusion == "norm" and s.rerank.name == "maxsim" and s.rerank.model is None


@pytest.mark.parametrize("q", ["", "   \t "])
def test_empty_query_exits_2(q, seen):
    res = runner.invoke(commands.app, [q])
    assert res.exit_code == 2
    assert "query is empty" in res.output
    assert seen == []  # no engine was built


def test_sections_without_a_section_index_is_a_clear_error(seen):
    from medground import paths
    from medground.store.chunks import ChunkStore

    res = runner.invoke(commands.app, ["aspirin", "--sections", "3"])
    assert res.exit_code == 1 and "no chunk store" in res.output and "medground corpus ingest" in res.output
    ChunkStore(paths.home() / "store.sqlite").close()  # an (empty) store, still no section index
    res = runner.invoke(commands.app, ["aspirin", "--sections", "3"])
    assert seen[-1].sections == 3
    assert res.exit_code == 1 and "no section index" in res.output


def test_missing_index_is_a_clear_error(monkeypatch):
    def no_index(settings):
        raise FileNotFoundError("no BM25 index at /x; build it with `medground index build`")

    monkeypatch.setattr(commands, "make_engine", no_index)
    res = runner.invoke(commands.app, ["insulin"])
    assert res.exit_code == 1 and "medground index build" in res.output


def test_corpus_and_config_choose_what_is_searched(seen, tmp_path):
    runner.invoke(commands.app, ["aspirin", "--corpus", "openstax", "--json"])
    assert seen[-1].corpora == ["openstax"]
    res = runner.invoke(commands.app, ["aspirin", "--config", "configs/pipelines/rag.yaml", "--json"])
    assert res.exit_code == 0, res.output
    s = seen[-1]
    assert s.fusion == "rrf" and s.top == 50 and s.final_k == 8 and s.corpora == ["openstax"]  # rag.yaml's section
    runner.invoke(commands.app, ["aspirin", "--config", "configs/pipelines/rag.yaml", "-k", "3", "--json"])
    assert seen[-1].final_k == 3
