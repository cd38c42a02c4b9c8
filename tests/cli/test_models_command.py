from __future__ import annotations

import json

from typer.testing import CliRunner

from medground.llm import models
from medground.cli.models import app

runner = CliRunner()


def test_list_json_shows_catalog_and_pull_state(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDGROUND_MODELS", str(tmp_path))
    res = runner.invoke(app, ["list", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["name"] for r in rows] == list(models.CATALOG)
    assert not any(r["pulled"] for r in rows)


def test_pull_unknown_model_fails_with_json_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDGROUND_MODELS", str(tmp_path))
    res = runner.invoke(app, ["pull", "gpt-5", "--json"])
    assert res.exit_code == 1
    assert "unknown model 'gpt-5'" in json.loads(res.stdout)["error"]


def test_pull_json_reports_path(monkeypatch, tmp_path):
    target = tmp_path / "SmolLM2.gguf"
    monkeypatch.setattr("medground.cli.models.pull", lambda name, d, progress, verify: target)
    res = runner.invoke(app, ["pull", "smollm2-135m", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["path"] == str(target) and out["sha256"] == models.CATALOG["smollm2-135m"].sha256
