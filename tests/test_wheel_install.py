"""A regular install works, not only an editable checkout: build the wheel, install it into a
fresh virtual environment and answer with a shipped config from a directory outside the checkout
(the shipped configs are package data, read through importlib.resources)."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert res.returncode == 0, f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_wheel_in_fresh_venv_answers_with_a_shipped_config(tmp_path, small_llm):
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation", "-q", "-w", str(dist)])
    (wheel,) = dist.glob("medground-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in ("medground/configs/pipelines/direct.yaml", "medground/configs/pipelines/rag.yaml",
                    "medground/configs/sweeps/study.yaml"):
        assert shipped in names

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    _run([str(venv / "bin" / "pip"), "install", "-q", f"{wheel}[llm]"])

    elsewhere = tmp_path / "elsewhere"  # nothing of the checkout is on the path here
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env |= {"MEDGROUND_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    res = _run([str(venv / "bin" / "medground"), "ask", "Which vitamin deficiency causes scurvy?",
                "-o", "A=Vitamin C", "-o", "B=Vitamin D", "-p", "direct", "--model", "smollm2-135m", "--json"],
               cwd=elsewhere, env=env)
    out = json.loads(res.stdout)
    assert out["config"]["pipeline"] == "direct"
    assert out["answer"]["outcome"] == "answered" and out["answer"]["choice"] in {"A", "B"}
    where = _run([str(venv / "bin" / "python"), "-c", "import medground; print(medground.__file__)"],
                 cwd=elsewhere, env=env).stdout.strip()
    assert str(venv) in where  # the wheel's copy answered, not the checkout
