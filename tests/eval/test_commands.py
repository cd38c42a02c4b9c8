import json
from pathlib import Path

from .eval_fakes import make_questions
from typer.testing import CliRunner

from medground.cli import eval as commands
from medground.cli.eval import app
from medground.eval.records import read_records

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_sweep_dry_run_lists_study_runs():
    res = runner.invoke(app, ["sweep", str(REPO / "configs/sweeps/study.yaml"), "--dry-run", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert len(rows) == 44 and len({r["run_id"] for r in rows}) == 44


def test_missing_factory_is_a_clear_message(tmp_path, monkeypatch):
    monkeypatch.setattr(commands, "PIPELINE_FACTORY", "medground.no_such_module:make_pipeline")
    cfg = tmp_path / "p.yaml"
    cfg.write_text("pipeline: rag\n")
    res = runner.invoke(app, ["eval", "--dataset", "mirage/medqa", "--pipeline", str(cfg), "--json"])
    assert res.exit_code == 2
    msg = json.loads(res.output)["error"]
    assert "no pipeline factory" in msg and "--factory" in msg


def _fake_eval_args(tmp_path, skill: str = "1.0", questions: int = 6, n: int = 6):
    """`eval` on ``questions`` fake MCQs (a subset of ``n``) with the fake pipeline factory."""
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": q.question, "options": q.options, "answer_idx": q.answer}) + "\n"
                            for q in make_questions(questions)))
    cfg = tmp_path / "p.yaml"
    cfg.write_text(f"pipeline: rag\nskill: {skill}\n")
    return ["eval", "-d", "medqa-jsonl", "--path", str(data), "-p", str(cfg), "-n", str(n), "--runs-dir",
            str(tmp_path / "runs"), "--factory", "eval.eval_fakes:make_fake", "--json"]


def test_eval_with_factory_then_report(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    runs = tmp_path / "runs"
    res = runner.invoke(app, _fake_eval_args(tmp_path, questions=12, n=8))
    assert res.exit_code == 0, res.output
    (summary,) = json.loads(res.output)["runs"]
    assert summary["n_done"] == 8 and summary["accuracy"] == 1.0
    assert len(read_records(runs / summary["run_id"] / "results.jsonl")) == 8
    res = runner.invoke(app, ["report", str(runs), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["tables"][0]["rows"][0][-1] == summary["run_id"]
    assert (runs / "report" / "report.html").exists()


def test_eval_of_a_crossfit_fold_reads_only_that_folds_questions(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    base = _fake_eval_args(tmp_path, questions=12, n=10)
    done = [json.loads(runner.invoke(app, [*base, "--crossfit-fold", f]).output)["runs"][0] for f in ("0", "1")]
    assert sum(s["n_done"] for s in done) == 10 and done[0]["run_id"] != done[1]["run_id"]
    bad = runner.invoke(app, [*base, "--crossfit-fold", "2"])
    assert bad.exit_code == 2 and "not one of the 2 folds" in bad.output


def test_report_on_missing_dir_fails_cleanly(tmp_path):
    res = runner.invoke(app, ["report", str(tmp_path), "--json"])
    assert res.exit_code == 2 and "no run directories" in json.loads(res.output)["error"]


def test_a_locked_run_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    from medground.eval import sweep
    from medground.eval.records import RunLockedError

    monkeypatch.syspath_prepend(str(Path(__file__).parent))

    def locked(*a, **k):
        raise RunLockedError("runs/abc/results.jsonl is being written by another process")

    monkeypatch.setattr(commands, "run_sweep", locked)
    res = runner.invoke(app, _fake_eval_args(tmp_path))
    assert res.exit_code == 2
    assert "another `medground eval` or `sweep`" in json.loads(res.output)["error"]
    assert sweep  # imported: the module the command uses


def test_report_on_a_run_with_nothing_right(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    res = runner.invoke(app, _fake_eval_args(tmp_path, skill="0.0"))
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["runs"][0]["accuracy"] == 0.0
    res = runner.invoke(app, ["report", str(tmp_path / "runs"), "--json"])
    assert res.exit_code == 0, res.output


def test_eval_config_typo_names_file_line_and_key(tmp_path):
    cfg = tmp_path / "typo.yaml"
    cfg.write_text("pipeline: rag\nretrieve:\n  retrievers: [bm25]\n  finalk: 4\n")
    res = runner.invoke(app, ["eval", "-d", "mirage/medqa", "-p", str(cfg), "--json"])
    assert res.exit_code == 2
    msg = json.loads(res.output)["error"]
    assert "typo.yaml:4" in msg and "retrieve.finalk" in msg


def test_pipeline_is_a_shipped_name_or_a_path_everywhere(tmp_path):
    from medground.configio import ConfigError
    from medground.pipelines.config import SHIPPED, resolve_pipeline

    assert resolve_pipeline("rag") == SHIPPED / "rag.yaml"
    own = tmp_path / "mine.yaml"
    own.write_text("pipeline: direct\n")
    assert resolve_pipeline(str(own)) == own
    import pytest

    with pytest.raises(ConfigError, match="neither a shipped pipeline config"):
        resolve_pipeline("no-such-pipeline")
    with pytest.raises(ConfigError, match="not found"):
        resolve_pipeline(str(tmp_path / "missing.yaml"))
    # The server's "rag" is the CLI's "rag".
    from medground.serve.api import ServeSettings

    assert ServeSettings().pipelines["rag"] == resolve_pipeline("rag")


def test_only_with_a_trailing_dollar_matches_the_name_end():
    grid = str(REPO / "configs/sweeps/grounding.yaml")
    names = lambda only: [r["name"] for r in json.loads(runner.invoke(app, ["sweep", grid, "--dry-run", "--json",
                                                                           "--only", only]).output)]
    assert names("mmlu/llm=qwen2.5-coder-1.5b,config=rag-focus$") == ["mirage/mmlu/llm=qwen2.5-coder-1.5b,config=rag-focus"]
    assert len(names("mmlu/llm=qwen2.5-coder-1.5b,config=rag-focus")) == 3  # substring: -tuned and -mined too


def test_only_anchors_at_an_axis_value_and_matching_nothing_is_an_error():
    grid = str(REPO / "configs/sweeps/study.yaml")
    listed = json.loads(runner.invoke(app, ["sweep", grid, "--dry-run", "--json"]).output)
    name = listed[0]["name"]
    middle = name.split(",")[0]  # an axis in the middle of the name, anchored
    res = runner.invoke(app, ["sweep", grid, "--dry-run", "--json", "--only", middle + "$"])
    assert res.exit_code == 0 and name in [r["name"] for r in json.loads(res.output)]
    none = runner.invoke(app, ["sweep", grid, "--dry-run", "--json", "--only", "no-such-run"])
    assert none.exit_code != 0 and "--only" in none.output
