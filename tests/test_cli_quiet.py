"""Normal CLI output is quiet: no library DEBUG lines, no per-file tables; -v shows them."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def _cli(home, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEDGROUND_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "medground.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_ingest_and_bm25_build_are_quiet_unless_verbose(tmp_path):
    src = tmp_path / "notes.jsonl"
    src.write_text("".join(json.dumps({"doc_id": f"d{i}", "title": f"T{i}", "section": "S", "book": "B",
                                       "chapter": "C", "text": f"Digoxin toxicity and hypokalemia note {i}."})
                           + "\n" for i in range(5)), encoding="utf-8")
    ingest = _cli(tmp_path, "corpus", "ingest", "--sources", f"jsonl:{src}")
    assert ingest.returncode == 0, ingest.stderr
    assert "1 ingested" in ingest.stdout and "unit" not in ingest.stdout.split("\n")[0]
    build = _cli(tmp_path, "index", "build", "--retrievers", "bm25")
    assert build.returncode == 0, build.stderr
    out = build.stdout + build.stderr
    assert "DEBUG" not in out and "bm25s" not in out.replace("bm25s index", "")
    verbose = _cli(tmp_path, "-v", "corpus", "ingest", "--sources", f"jsonl:{src}")
    assert "notes.jsonl" in verbose.stdout  # the per-file table
