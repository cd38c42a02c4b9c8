from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from medground.cli.drugs import app

runner = CliRunner()


def test_stats_on_missing_database_says_to_build(tmp_path):
    result = runner.invoke(app, ["stats", "--json", "--db", str(tmp_path / "none.sqlite")])
    assert result.exit_code != 0
    assert "medground drugs build" in str(result.exception)


def test_build_stats_search(shared_data, tmp_path):
    pytest.importorskip("drug_named_entity_recognition", reason="extra [drugs] links brands")
    db = str(tmp_path / "drugs.sqlite")
    built = runner.invoke(app, ["build", "--data", str(shared_data), "--db", db, "--json"])
    assert built.exit_code == 0, built.output
    assert json.loads(built.output)["build"]["prototype_tables"] == 207
    stats = json.loads(runner.invoke(app, ["stats", "--json", "--db", db]).output)
    assert stats["drugs"] >= 700 and stats["drugs_by_source"]["fda-tac2017"] == 200
    found = runner.invoke(app, ["search", "advil dose", "--k", "2", "--json", "--db", db])
    hits = json.loads(found.output)
    assert [h["drug_id"] for h in hits] == ["ibuprofen", "ibuprofen"]
    assert hits[0]["attribute"]["type"] == "dosage"
    assert hits[0]["matched"] == "exact brand 'advil'"
