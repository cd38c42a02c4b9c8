"""Questions answered N at a time on threads: the same records as a serial run, the same
abort and resume semantics, and the driver as the only writer of results.jsonl."""

import json
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from .eval_fakes import FakePipeline, make_fake, make_questions, sweep_killed_midway

from medground.cli.eval import app
from medground.eval.records import read_records
from medground.eval.runner import RunAbortedError, SerialExecutor, ThreadExecutor, make_executor, run_questions
from medground.eval.sweep import SweepSettings, run_sweep

REPO = Path(__file__).resolve().parents[2]
TIMING = {"seconds", "timings"}


def comparable(run_dir: Path) -> dict[str, dict]:
    """Records by qid without the fields that measure time."""
    return {r.qid: {k: v for k, v in r.to_dict().items() if k not in TIMING}
            for r in read_records(run_dir / "results.jsonl")}


class BarrierPipeline(FakePipeline):
    """Each answer waits until ``parties`` answers are in flight: proves the concurrency."""

    def __init__(self, name: str, parties: int):
        super().__init__(name, skill=0.6, parse_fail_every=7)
        self.barrier = threading.Barrier(parties)

    def answer(self, q):
        self.barrier.wait(timeout=30)  # broken (an error) if fewer are ever in flight together
        return super().answer(q)


def test_make_executor():
    assert isinstance(make_executor(1), SerialExecutor) and make_executor(4).concurrency == 4
    with pytest.raises(ValueError, match="at least 1"):
        ThreadExecutor(0)


def test_threads_record_the_same_as_serial(tmp_path):
    qs = make_questions(24)
    serial = run_questions(FakePipeline("p", skill=0.6, parse_fail_every=7), qs, tmp_path / "serial", progress=False)
    threaded = run_questions(BarrierPipeline("p", parties=4), qs, tmp_path / "threads", progress=False,
                             executor=ThreadExecutor(4))
    assert comparable(tmp_path / "serial") == comparable(tmp_path / "threads")
    assert (threaded.n_done, threaded.n_correct, threaded.parse_failures, threaded.errors) == \
        (serial.n_done, serial.n_correct, serial.parse_failures, 0)


def test_sweep_concurrency_setting_is_not_part_of_the_run(tmp_path):
    grid = {"datasets": [{"name": "fake"}], "base": {"skill": 0.5},
            "axes": {"skill": {"low": {"skill": 0.3}, "high": {"skill": 0.9}}}}
    one = run_sweep(SweepSettings.model_validate(grid), make_fake, tmp_path / "a",
                    load_questions=lambda s: make_questions(10), progress=False)
    many = run_sweep(SweepSettings.model_validate({**grid, "concurrency": 3}), make_fake, tmp_path / "b",
                     load_questions=lambda s: make_questions(10), progress=False)
    assert [s.run_id for s in one.summaries] == [s.run_id for s in many.summaries]
    for s in one.summaries:
        assert comparable(tmp_path / "a" / s.run_id) == comparable(tmp_path / "b" / s.run_id)


def test_consecutive_errors_abort_and_nothing_more_is_handed_out(tmp_path):
    qs = make_questions(40)
    pipe = FakePipeline("p", fail_all=True)
    with pytest.raises(RunAbortedError, match="3 questions in a row"):
        run_questions(pipe, qs, tmp_path / "r", max_consecutive_errors=3, progress=False, executor=ThreadExecutor(4))
    assert len(read_records(tmp_path / "r" / "results.jsonl")) == 3
    assert len(pipe.calls) <= 3 + 4  # the questions in flight at the abort, never the rest
    s = run_questions(FakePipeline("p", skill=1.0), qs, tmp_path / "r", retry_errors=True, progress=False,
                      executor=ThreadExecutor(4))
    assert (s.n_done, s.errors, s.accuracy) == (40, 0, 1.0)


class InterruptingPipeline(FakePipeline):
    """Raises KeyboardInterrupt (not an Exception: not recorded) at one question."""

    def __init__(self, name: str, at: str):
        super().__init__(name, skill=0.6)
        self.at = at

    def answer(self, q):
        if q.qid == self.at:
            raise KeyboardInterrupt
        return super().answer(q)


def test_interrupt_mid_run_keeps_every_completed_record(tmp_path):
    qs = make_questions(30)
    with pytest.raises(KeyboardInterrupt):
        run_questions(InterruptingPipeline("p", at="q015"), qs, tmp_path / "r", progress=False,
                      executor=ThreadExecutor(3))
    raw = read_records(tmp_path / "r" / "results.jsonl", latest=False)
    assert raw and "q015" not in {r.qid for r in raw} and len(raw) == len({r.qid for r in raw})
    s = run_questions(FakePipeline("p", skill=0.6), qs, tmp_path / "r", progress=False, executor=ThreadExecutor(3))
    assert s.n_done == 30 and s.n_new == 30 - len(raw)
    run_questions(FakePipeline("p", skill=0.6), qs, tmp_path / "serial", progress=False)
    assert comparable(tmp_path / "r") == comparable(tmp_path / "serial")


SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from eval_fakes import make_fake, make_questions
    from medground.eval.sweep import SweepSettings, run_sweep
    settings = SweepSettings.model_validate({{"datasets": [{{"name": "fake"}}], "base": {{"sleep": 0.02}},
                                             "axes": {{"skill": {{"low": {{"skill": 0.3}}, "high": {{"skill": 0.9}}}}}},
                                             "concurrency": 4}})
    res = run_sweep(settings, make_fake, sys.argv[1], load_questions=lambda s: make_questions(200), progress=False)
    print("DONE", len(res.summaries))
""")


def test_sigkill_with_threads_then_resume_loses_and_duplicates_nothing(tmp_path):
    script = tmp_path / "sweep.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent)))
    runs = tmp_path / "runs"
    n_lines, env = sweep_killed_midway(script, runs, 60, poll=0.02)
    assert 60 <= n_lines() < 400
    out = subprocess.run([sys.executable, str(script), str(runs)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "DONE 2" in out.stdout, out.stderr
    for d in (p for p in runs.iterdir() if p.is_dir()):
        raw = read_records(d / "results.jsonl", latest=False)
        assert Counter(r.qid for r in raw) == Counter(q.qid for q in make_questions(200)), d.name


def test_cli_concurrency_gives_the_serial_records(tmp_path, monkeypatch):
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": q.question, "options": q.options, "answer_idx": q.answer}) + "\n"
                            for q in make_questions(12)))
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    cfg = tmp_path / "p.yaml"
    cfg.write_text("pipeline: rag\nskill: 0.5\n")
    runs = {}
    for n in ("1", "4"):
        res = CliRunner().invoke(app, ["eval", "-d", "medqa-jsonl", "--path", str(data), "-p", str(cfg),
                                       "--runs-dir", str(tmp_path / n), "--factory", "eval.eval_fakes:make_fake",
                                       "--concurrency", n, "--json"])
        assert res.exit_code == 0, res.output
        (summary,) = json.loads(res.output)["runs"]
        runs[n] = tmp_path / n / summary["run_id"]
    assert runs["1"].name == runs["4"].name  # concurrency is not part of the run's identity
    assert comparable(runs["1"]) == comparable(runs["4"])
