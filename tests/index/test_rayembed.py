"""`index build --ray local`: chunks embedded on local worker processes give the serial build's vectors."""

import json
from pathlib import Path

import faiss
import numpy as np
import pytest
from typer.testing import CliRunner

from medground.cli import index as commands
from medground.index.fingerprint import ChunkList
from medground.index.rayembed import split_aligned
from medground.schema import Chunk

runner = CliRunner()
WORDS = "scurvy vitamin insulin glucose asthma albuterol iron anemia warfarin bleeding statin liver".split()


@pytest.fixture
def source(monkeypatch):
    src = ChunkList(Chunk(chunk_id=f"c{i}", doc_id=f"d{i % 5}", corpus="openstax", source_path="x",
                          text=" ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 4 + i % 9)) + f" case {i}.",
                          title=f"Page {i % 5}", section_path=(f"S{i % 3}",)) for i in range(70))
    monkeypatch.setattr(commands, "default_chunk_source", lambda: src)
    return src


def test_split_aligned():
    assert split_aligned(70, 2, 32) == [(0, 64), (64, 70)]
    assert split_aligned(10, 4, 32) == [(0, 10)]
    assert split_aligned(256, 8, 32) == [(i, i + 32) for i in range(0, 256, 32)]


def _vectors(directory) -> np.ndarray:
    index = faiss.read_index(str(directory / "index.faiss"))
    return index.reconstruct_n(0, index.ntotal)


def test_build_dense_on_local_workers_equals_serial(source, tmp_path, monkeypatch):
    args = ["build", "--retrievers", "dense", "--embedder", "onnx-minilm", "--json"]
    res = runner.invoke(commands.app, [*args, "--ray", "local", "--ray-workers", "2"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)["built"]
    assert row["embedded"] == 70 and row["ray_workers"] == 2
    on_ray = _vectors(Path(row["directory"]))
    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path / "serial"))  # a cold embedding cache
    res = runner.invoke(commands.app, args)
    assert res.exit_code == 0, res.output
    (serial_row,) = json.loads(res.stdout)["built"]
    assert serial_row["embedded"] == 70
    assert serial_row["directory"] != row["directory"]
    assert np.array_equal(on_ray, _vectors(Path(serial_row["directory"])))


def test_unreachable_ray_address_is_named(source):
    res = runner.invoke(commands.app, ["build", "--retrievers", "dense", "--embedder", "onnx-minilm",
                                       "--ray", "127.0.0.1:1", "--json"])
    assert res.exit_code == 2
    assert "cannot reach the Ray cluster at '127.0.0.1:1'" in res.output
