from __future__ import annotations

import pytest

from medground.configio import ConfigError
from medground.pipelines.config import load_pipeline_config, pipeline_config
from medground.pipelines.factory import build_pipeline
from .test_scripted import ScriptedLLM


def test_amt_defaults_to_its_published_retriever():
    c = pipeline_config({"pipeline": "amt"})
    assert [r.name for r in c.retrieve.retrievers] == ["bm25", "dense"]
    assert c.retrieve.fusion == "norm" and c.retrieve.top == 32
    # An explicit retrieve section wins.
    c = pipeline_config({"pipeline": "amt", "retrieve": {"retrievers": ["bm25"], "fusion": None}})
    assert [r.name for r in c.retrieve.retrievers] == ["bm25"]


def test_bad_key_names_file_line_and_path(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("pipeline: rag\nretrieve:\n  retrievers: [bm25]\n  fusoin: rrf\n")
    with pytest.raises(ConfigError) as e:
        load_pipeline_config(p)
    assert f"{p}:4: retrieve.fusoin" in str(e.value)


def test_unknown_pipeline_is_refused():
    with pytest.raises(ConfigError, match="unknown pipeline 'ragg'"):
        pipeline_config({"pipeline": "ragg"})


def test_shipped_configs_load():
    from pathlib import Path

    configs = sorted(Path(__file__).resolve().parents[2].joinpath("configs", "pipelines").rglob("*.yaml"))
    assert len(configs) >= 4
    for path in configs:
        load_pipeline_config(path)


def test_build_pipeline_from_config(tiny_chunks):
    pipe = build_pipeline({"pipeline": "direct", "name": "closed-book"}, llm=ScriptedLLM(lambda u, k: ""))
    assert pipe.name == "closed-book"


def test_every_run_of_the_shipped_sweeps_is_a_valid_pipeline_config():
    from pathlib import Path

    from medground.eval.sweep import expand, load_sweep

    grids = sorted(Path(__file__).resolve().parents[2].joinpath("configs", "sweeps").glob("*.yaml"))
    assert grids
    for grid in grids:
        runs = expand(load_sweep(grid))
        assert runs, grid
        for spec in runs:
            cfg = pipeline_config(spec.config, source=f"{grid.name}:{spec.name}")
            assert cfg.pipeline in {"direct", "rag", "amt", "imedrag"}
    study = expand(load_sweep(grids[[g.name for g in grids].index("study.yaml")]))
    assert sum(1 for s in study if s.config["pipeline"] == "rag") == 40
