import json
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from .eval_fakes import FakePipeline, make_fake, make_questions, sweep_killed_midway

from medground.eval.records import read_records
from medground.eval.runner import RunAbortedError, run_questions
from medground.eval.sweep import SweepSettings, deep_merge, expand, load_sweep, run_sweep

REPO = Path(__file__).resolve().parents[2]


def test_deep_merge():
    assert deep_merge({"a": {"b": 1, "c": [1]}, "d": 1}, {"a": {"c": [2]}, "e": 2}) == {
        "a": {"b": 1, "c": [2]}, "d": 1, "e": 2}


def _grid(**kw):
    data = {
        "datasets": [{"name": "fake"}],
        "base": {"pipeline": "rag", "retrieve": {"top": 8}},
        "base_axes": {"family": "rag"},
        "axes": {
            "retrieval": {"dense": {"retrieve": {"r": ["dense"]}}, "hybrid": {"retrieve": {"r": ["bm25", "dense"]}}},
            "reranker": {False: None, True: {"retrieve": {"rerank": "ce"}}},  # YAML on/off arrive as booleans
            "prompt": {"key": "reader.prompt", "values": ["zero-shot", "cot"]},
        },
    }
    data.update(kw)
    return SweepSettings.model_validate(data)


def test_expand_product_exclude_include_and_stable_ids():
    runs = expand(_grid(exclude=[{"retrieval": "dense", "reranker": "on"}],
                        include=[{"axes": {"family": "no-rag", "prompt": "*"}, "set": {"pipeline": "direct"}}]))
    assert len(runs) == 2 * 2 * 2 - 2 + 2
    first = runs[0]
    assert first.axes == {"family": "rag", "retrieval": "dense", "reranker": "off", "prompt": "zero-shot"}
    assert first.config == {"pipeline": "rag", "retrieve": {"top": 8, "r": ["dense"]}, "reader": {"prompt": "zero-shot"}}
    hy = next(r for r in runs if r.axes.get("retrieval") == "hybrid" and r.axes.get("reranker") == "on"
              and r.axes.get("prompt") == "cot")
    assert hy.config["retrieve"] == {"top": 8, "r": ["bm25", "dense"], "rerank": "ce"}
    assert hy.name == "fake/family=rag,retrieval=hybrid,reranker=on,prompt=cot"
    base = [r for r in runs if r.axes["family"] == "no-rag"]
    assert [r.config["reader"]["prompt"] for r in base] == ["zero-shot", "cot"]
    assert base[0].config["pipeline"] == "direct"
    assert len({r.run_id for r in runs}) == len(runs)
    assert [r.run_id for r in expand(_grid(exclude=[{"retrieval": "dense", "reranker": "on"}],
                                           include=[{"axes": {"family": "no-rag", "prompt": "*"},
                                                     "set": {"pipeline": "direct"}}]))] == [r.run_id for r in runs]
    assert first.axis_labels["reranker"] == ["off", "on"]


def test_bad_rules_are_errors():
    with pytest.raises(ValueError, match="no label 'sparse'"):
        expand(_grid(exclude=[{"retrieval": "sparse"}]))
    with pytest.raises(ValueError, match="same config"):
        expand(_grid(axes={"x": {"a": None, "b": None}}))


def test_study_grid_expands():
    runs = expand(load_sweep(REPO / "configs/sweeps/study.yaml"))
    fam = Counter(r.axes["family"] for r in runs)
    assert fam == {"rag": 40, "no-rag": 4}


def test_run_resumes_without_duplicates(tmp_path):
    qs = make_questions(12)
    p1 = FakePipeline("p", skill=0.7)
    s1 = run_questions(p1, qs[:5], tmp_path / "r", {"run_id": "r"}, progress=False)
    assert (s1.n_done, s1.n_new) == (5, 5)
    p2 = FakePipeline("p", skill=0.7)
    s2 = run_questions(p2, qs, tmp_path / "r", {"run_id": "r"}, progress=False)
    assert p2.calls == [q.qid for q in qs[5:]] and s2.n_done == 12 and s2.n_new == 7
    recs = read_records(tmp_path / "r" / "results.jsonl", latest=False)
    assert sorted(r.qid for r in recs) == sorted(q.qid for q in qs)
    assert s2.n_correct == sum(r.correct for r in recs)
    # A factory is not called when nothing is left to do (no model load for a finished run).
    called = []
    run_questions(lambda: called.append(1) or p2, qs, tmp_path / "r", {"run_id": "r"}, progress=False)
    assert called == []


def test_parse_failures_count_wrong_and_are_reported(tmp_path):
    qs = make_questions(10)
    s = run_questions(FakePipeline("p", skill=1.0, parse_fail_every=5), qs, tmp_path / "r", progress=False)
    assert (s.parse_failures, s.n_correct, s.n_scored, s.accuracy) == (2, 8, 10, 0.8)


def test_failing_pipeline_aborts_then_retry(tmp_path):
    qs = make_questions(10)
    with pytest.raises(RunAbortedError, match="3 questions in a row"):
        run_questions(FakePipeline("p", fail_all=True), qs, tmp_path / "r", max_consecutive_errors=3, progress=False)
    assert len(read_records(tmp_path / "r" / "results.jsonl")) == 3
    s = run_questions(FakePipeline("p", skill=1.0), qs, tmp_path / "r", retry_errors=True, progress=False)
    assert (s.n_done, s.errors, s.accuracy) == (10, 0, 1.0)


def test_config_mismatch_refused(tmp_path):
    qs = make_questions(2)
    run_questions(FakePipeline("p"), qs, tmp_path / "r", {"config_hash": "aaa"}, progress=False)
    with pytest.raises(RunAbortedError, match="different config"):
        run_questions(FakePipeline("p"), qs, tmp_path / "r", {"config_hash": "bbb"}, progress=False)


def test_run_sweep_with_fake_factory(tmp_path):
    settings = _grid(base={"skill": 0.5})
    res = run_sweep(settings, make_fake, tmp_path, load_questions=lambda spec: make_questions(8), progress=False)
    assert len(res.summaries) == 8 and not res.failures
    for s in res.summaries:
        meta = json.loads((tmp_path / s.run_id / "config.json").read_text())
        assert meta["run_id"] == s.run_id and meta["axes"]["family"] == "rag"
        assert len(read_records(tmp_path / s.run_id / "results.jsonl")) == 8


SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from eval_fakes import make_fake, make_questions
    from medground.eval.sweep import SweepSettings, run_sweep
    settings = SweepSettings.model_validate({{
        "datasets": [{{"name": "fake"}}],
        "base": {{"sleep": 0.02}},
        "axes": {{"skill": {{"low": {{"skill": 0.3}}, "high": {{"skill": 0.9}}}},
                  "prompt": {{"key": "prompt", "values": ["zero-shot", "cot"]}}}},
    }})
    res = run_sweep(settings, make_fake, sys.argv[1], load_questions=lambda s: make_questions(40), progress=False)
    print("DONE", len(res.summaries))
""")


def test_sigkill_mid_sweep_then_resume_loses_and_duplicates_nothing(tmp_path):
    script = tmp_path / "sweep.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent)))
    runs = tmp_path / "runs"
    n_lines, env = sweep_killed_midway(script, runs, 50, poll=0.05)
    before = n_lines()
    assert 50 <= before < 160
    out = subprocess.run([sys.executable, str(script), str(runs)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "DONE 4" in out.stdout
    run_dirs = sorted(p for p in runs.iterdir() if p.is_dir())
    assert len(run_dirs) == 4
    for d in run_dirs:
        raw = read_records(d / "results.jsonl", latest=False)  # every line, not deduplicated
        assert Counter(r.qid for r in raw) == Counter(q.qid for q in make_questions(40)), d.name
        assert (d / "results.jsonl").read_bytes().endswith(b"\n")


def test_a_crossfit_fold_keeps_the_subsets_questions_of_that_fold_and_old_run_ids_stand(tmp_path):
    import hashlib

    from medground.eval.sweep import DatasetSpec, config_hash, default_loader
    from medground.train.feedback import fold_of, question_key

    path = tmp_path / "qs.jsonl"
    path.write_text("".join(json.dumps({"question": f"Question {i}?", "options": {"A": "a", "B": "b"}, "answer_idx": "A",
                                        "realidx": f"q{i}"}) + "\n" for i in range(30)))
    spec = {"name": "medqa-jsonl", "path": str(path), "subset": 20, "seed": 0}
    whole = default_loader(DatasetSpec(**spec))
    folds = [default_loader(DatasetSpec(**spec, crossfit={"fold": f})) for f in (0, 1)]
    assert sorted(q.qid for f in folds for q in f) == sorted(q.qid for q in whole) and all(folds)
    assert all(fold_of(question_key(q), 2, 0) == f for f, qs in enumerate(folds) for q in qs)
    # a spec without cross-fitting hashes as before the field existed: old runs resume
    blob = json.dumps({"config": {"p": 1}, "dataset": spec}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert config_hash({"p": 1}, DatasetSpec(**spec)) == hashlib.sha256(blob.encode()).hexdigest()[:12]
    assert config_hash({"p": 1}, DatasetSpec(**spec, crossfit={"fold": 0})) != config_hash({"p": 1}, DatasetSpec(**spec))
    with pytest.raises(ValueError, match="not one of the 2 folds"):
        DatasetSpec(**spec, crossfit={"fold": 2})
