"""Sweeps on workers: local worker processes (``--ray local``, no Ray and no network socket) and
Ray actors of a cluster this process is connected to. Identical records to a serial run, a lost
worker loses nothing written, and a bad address is a clear error."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medground.cli.eval import app
from medground.eval.distributed import RayExecutor, RayExecutorSettings, WorkerLostError
from medground.eval.records import read_records
from medground.eval.runner import run_questions
from medground.eval.sweep import SweepSettings, expand, run_sweep
from medground.raycluster import RayCluster, RaySettings, RayUnavailableError, check_reachable, host_port

from .eval_fakes import FakePipeline, make_fake, make_questions
from .test_runner_parallel import comparable

GRID = {"datasets": [{"name": "fake"}], "base": {"skill": 0.5, "parse_fail_every": 5},
        "axes": {"skill": {"low": {"skill": 0.3}, "high": {"skill": 0.9}}}}


@pytest.fixture(scope="module")
def ray_connected():
    """A Ray this process is already connected to (as in a notebook), used through ``auto``.
    The project never starts one itself (its servers would listen on every interface)."""
    ray = pytest.importorskip("ray")
    import os
    import sys

    path = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))  # workers import eval.eval_fakes
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=256 * 1024**2,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    try:
        with RayCluster(RaySettings(address="auto", workers=2)) as cluster:
            yield cluster
    finally:
        ray.shutdown()


def _listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every listening TCP socket of ``pid`` and its descendants."""
    psutil = pytest.importorskip("psutil")
    root = psutil.Process(pid)
    out = set()
    for proc in [root, *root.children(recursive=True)]:
        try:
            conns = proc.net_connections(kind="inet")
        except psutil.NoSuchProcess:
            continue
        out |= {(c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN}
    return out


def test_local_workers_listen_on_nothing(tmp_path, monkeypatch):
    import os

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    before = _listening(os.getpid())
    with RayExecutor(RayExecutorSettings(ray=RaySettings(address="local", workers=2))) as ex:
        records = list(ex.answers("k", lambda: make_fake({"skill": 0.5}), make_questions(6)))
        assert len(ex._cluster.local.pids()) == 2  # the workers are up while we look
        assert _listening(os.getpid()) == before
        assert ex._cluster.ray is None
    assert sorted(r.qid for r in records) == [q.qid for q in make_questions(6)]


def test_host_port_and_unreachable_address_is_named():
    assert host_port("10.0.0.1:6380") == ("10.0.0.1", 6380)
    assert host_port("ray://head") == ("head", 10001)
    with pytest.raises(RayUnavailableError, match="127.0.0.1:1"):
        check_reachable("127.0.0.1:1", timeout_s=2)


def test_cli_bad_ray_address_fails_before_writing_and_keeps_records(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    grid = tmp_path / "grid.yaml"
    grid.write_text(json.dumps(GRID))
    runs = tmp_path / "runs"
    settings = SweepSettings.model_validate(GRID)
    first = expand(settings)[0]
    run_questions(make_fake(first.config), make_questions(5), runs / first.run_id, first.meta(), progress=False)
    before = {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()}
    res = CliRunner().invoke(app, ["sweep", str(grid), "--runs-dir", str(runs), "--factory", "eval.eval_fakes:make_fake",
                                   "--ray", "127.0.0.1:1", "--json"])
    assert res.exit_code == 2, res.output
    msg = json.loads(res.output)["error"]
    assert "cannot reach the Ray cluster at '127.0.0.1:1'" in msg
    assert {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("address", ["local", "auto"])
def test_sweep_on_workers_records_identical_to_serial(address, request, tmp_path, monkeypatch):
    if address == "auto":
        request.getfixturevalue("ray_connected")
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    settings = SweepSettings.model_validate(GRID)
    load = lambda spec: make_questions(30)  # noqa: E731
    serial = run_sweep(settings, make_fake, tmp_path / "serial", load_questions=load, progress=False)
    with RayExecutor(RayExecutorSettings(ray=RaySettings(address=address, workers=2), concurrency=2,
                                         shard_size=4)) as ex:
        assert ex.workers == 2
        assert (ex._cluster.ray is None) == (address == "local")
        dist = run_sweep(settings, make_fake, tmp_path / "ray", load_questions=load, progress=False, executor=ex)
    assert not dist.failures and [s.run_id for s in dist.summaries] == [s.run_id for s in serial.summaries]
    for s in serial.summaries:
        assert comparable(tmp_path / "serial" / s.run_id) == comparable(tmp_path / "ray" / s.run_id)
    if address == "auto":
        import ray

        assert ray.is_initialized()  # an executor does not stop a Ray it did not start


@pytest.mark.parametrize("address", ["local", "auto"])
def test_lost_worker_loses_nothing_written_and_resume_completes(address, request, tmp_path, monkeypatch):
    if address == "auto":
        request.getfixturevalue("ray_connected")
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    flag = tmp_path / "crash.flag"
    flag.touch()
    qs = make_questions(16)
    config = {"skill": 0.6, "crash": {"at": "q006", "flag": str(flag)}}
    run_dir = tmp_path / "r"
    with RayExecutor(RayExecutorSettings(ray=RaySettings(address=address, workers=2), shard_size=4)) as ex:
        # Worker 0 holds shards q000-q003 and q004-q007; q006 kills it, and again on Ray's retry.
        # Its shard q004-q007 is lost. The shard before it may be lost too: its reply can still be
        # on its way when the worker dies (seen in CI), and its retry races the same crash.
        # Worker 1's shards (q008-q015) are recorded.
        with pytest.raises(WorkerLostError, match="workers that died"):
            run_questions(lambda: make_fake(config), qs, run_dir, {"run_id": "r"}, progress=False, executor=ex)
        done = [r.qid for r in read_records(run_dir / "results.jsonl", latest=False)]
        assert len(done) == len(set(done)) and not {"q004", "q005", "q006", "q007"} & set(done)
        assert {f"q{i:03d}" for i in range(8, 16)} <= set(done)
        # Worker killed once: it is restarted and the shard retried.
        flag.touch()
        once = {**config, "crash": {**config["crash"], "once": True}}
        s = run_questions(lambda: make_fake(once), qs, run_dir, {"run_id": "r"}, progress=False, executor=ex)
    assert (s.n_done, s.n_new) == (16, 16 - len(done)) and not flag.exists()
    raw = read_records(run_dir / "results.jsonl", latest=False)
    assert sorted(r.qid for r in raw) == [q.qid for q in qs]  # each question exactly once
    run_questions(FakePipeline("fake", skill=0.6), qs, tmp_path / "serial", progress=False)
    assert comparable(run_dir) == comparable(tmp_path / "serial")


def test_cli_sweep_with_local_workers(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": q.question, "options": q.options, "answer_idx": q.answer}) + "\n"
                            for q in make_questions(12)))
    grid = tmp_path / "grid.yaml"
    grid.write_text(json.dumps({**GRID, "datasets": [{"name": "medqa-jsonl", "path": str(data)}]}))
    out = {}
    for name, extra in (("serial", []), ("ray", ["--ray", "local", "--ray-workers", "2"])):
        res = CliRunner().invoke(app, ["sweep", str(grid), "--runs-dir", str(tmp_path / name),
                                       "--factory", "eval.eval_fakes:make_fake", "--json", *extra])
        assert res.exit_code == 0, res.output
        out[name] = json.loads(res.output)["runs"]
    assert [r["run_id"] for r in out["serial"]] == [r["run_id"] for r in out["ray"]]
    for r in out["serial"]:
        assert comparable(tmp_path / "serial" / r["run_id"]) == comparable(tmp_path / "ray" / r["run_id"])
