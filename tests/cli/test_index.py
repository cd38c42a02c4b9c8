import json

import pytest
from typer.testing import CliRunner

from medground.cli import index as commands
from medground.index.fingerprint import ChunkList, index_dir
from medground.schema import Chunk

runner = CliRunner()


@pytest.fixture
def source(monkeypatch):
    src = ChunkList(Chunk(chunk_id=f"c{i}", doc_id=f"d{i % 2}", corpus="openstax", source_path="x", text=t,
                          title=f"Page {i % 2}", section_path=(f"S{i % 3}",))
                    for i, t in enumerate(["Scurvy comes from vitamin C deficiency.", "Insulin lowers glucose.",
                                           "Asthma is treated with albuterol.", "Iron deficiency causes anemia."]))
    monkeypatch.setattr(commands, "default_chunk_source", lambda: src)
    return src


def test_build_and_info_json(source):
    res = runner.invoke(commands.app, ["build", "--retrievers", "bm25,sections,dense", "--embedder", "onnx-minilm",
                                       "--json"])
    assert res.exit_code == 0, res.output
    built = {r["retriever"]: r for r in json.loads(res.stdout)["built"]}
    assert set(built) == {"bm25", "sections", "dense"}
    assert built["bm25"]["chunks"] == 4 and built["bm25"]["chunks_fingerprint"] == source.fingerprint()
    assert built["dense"]["embedded"] == 4 and built["dense"]["embedder"].startswith("onnx-minilm:")
    assert built["sections"]["sections"] == 4  # (doc, section) pairs
    assert (index_dir("bm25") / "fingerprint.json").is_file()

    # rebuilding reuses every cached embedding
    res = runner.invoke(commands.app, ["build", "--retrievers", "dense", "--embedder", "onnx-minilm", "--json"])
    assert json.loads(res.stdout)["built"][0]["embedded"] == 0

    res = runner.invoke(commands.app, ["info", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)["indexes"]}
    # A non-default embedder's dense index lives in its own directory (dense-<kind>-<hash>).
    dense = next(n for n in rows if n.startswith("dense-onnx-minilm-"))
    assert set(rows) == {"bm25", "sections", dense}
    assert rows["bm25"]["chunk_count"] == 4 and rows["bm25"]["bytes"] > 0
    assert rows[dense]["settings"]["index_type"] == "flat"


def test_unknown_retriever_rejected(source):
    res = runner.invoke(commands.app, ["build", "--retrievers", "bm25,colbert"])
    assert res.exit_code != 0
    assert "colbert" in res.output


def test_empty_store_says_what_to_do(monkeypatch):
    monkeypatch.setattr(commands, "default_chunk_source", lambda: ChunkList([]))
    res = runner.invoke(commands.app, ["build", "--retrievers", "bm25"])
    assert res.exit_code == 1
    assert "medground corpus ingest" in res.output


def test_info_without_indexes():
    res = runner.invoke(commands.app, ["info", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["indexes"] == []



def test_precision_option_checked(source):
    res = runner.invoke(commands.app, ["build", "--retrievers", "dense", "--precision", "int4"])
    assert res.exit_code != 0 and "fp32, bf16 or auto" in res.output


def test_progress_bar_shows_an_eta():
    from rich.progress import TimeRemainingColumn

    assert any(isinstance(c, TimeRemainingColumn) for c in commands._progress_columns())
    ticks = []
    with commands._progress(True, 10, "embedding chunks") as advance:
        advance(3)
        ticks.append(3)
    assert ticks == [3]


def test_corpus_filter_and_alias(source):
    res = runner.invoke(commands.app, ["build", "--retrievers", "bm25", "--corpora", "textbooks", "--json"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.stdout)["built"][0]
    assert row["directory"] == str(index_dir("bm25", ["openstax"])) and row["chunks"] == 4
    res = runner.invoke(commands.app, ["build", "--retrievers", "bm25", "--corpora", "medquad"])
    assert res.exit_code == 1 and "no chunks for medquad" in res.output


def test_the_default_dense_build_is_the_index_the_shipped_configs_read(source, monkeypatch):
    """On a CPU with native bf16 the old default (auto) built a bf16 variant beside the index `ask
    -p rag` reads, so the first question embedded the corpus again."""
    from medground.index import embedders
    from medground.index.dense import DenseSettings, dense_dir
    from medground.pipelines.config import load_pipeline_config

    monkeypatch.setattr(embedders, "bf16_native", lambda: True)
    seen = {}

    def capture(kind, chunks, corpora, options, **_):
        seen[kind] = options
        return {"retriever": kind, "chunks": 4, "directory": "-"}

    monkeypatch.setattr(commands, "build_index", capture)
    res = runner.invoke(commands.app, ["build", "--retrievers", "dense", "--json"])
    assert res.exit_code == 0, res.output
    opts = seen["dense"]
    built = DenseSettings(embedder=embedders.embedder_settings_from(opts.embedder, opts.threads, opts.precision))
    spec = next(r for r in load_pipeline_config("rag").retrieve.retrievers if r.name == "dense")
    assert dense_dir(built, ["openstax"]) == dense_dir(DenseSettings(**spec.settings), ["openstax"])
    # asking for bf16 still builds the faster variant, side by side
    runner.invoke(commands.app, ["build", "--retrievers", "dense", "--precision", "auto", "--json"])
    opts = seen["dense"]
    faster = DenseSettings(embedder=embedders.embedder_settings_from(opts.embedder, opts.threads, opts.precision))
    assert faster.embedder.precision == "bf16" and dense_dir(faster, ["openstax"]) != dense_dir(built, ["openstax"])
