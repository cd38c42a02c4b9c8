"""`medground serve` for real: the CLI starts uvicorn, and a closed-book pipeline answers with the 135M model."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def test_serve_answers_over_http(tmp_path, small_llm):
    cfg = tmp_path / "direct.yaml"
    cfg.write_text("pipeline: direct\nllm: {backend: local, model: smollm2-135m, threads: 1, cache: false}\n")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "medground.cli", "serve", "--pipeline", f"direct={cfg}",
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=2) as r:
                    health = json.loads(r.read())
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail(f"server exited: {proc.stdout.read()}")
                time.sleep(0.2)
        else:
            pytest.fail("server did not come up in 20 s")
        assert health["pipelines"] == ["direct"] and health["loaded"] == []
        out = _post(f"{base}/v1/ask", {"question": "Which drug is an NSAID?",
                                       "options": {"A": "Ibuprofen", "B": "Insulin"}})
        answer = out["answer"]
        assert out["pipeline"] == "direct"
        # A junk model may fail to answer, but then it says so: never a silent default letter.
        assert (answer["outcome"] == "answered" and answer["choice"] in {"A", "B"}) or \
            (answer["outcome"] != "answered" and answer["choice"] is None)
        assert answer["tokens"]["prompt"] > 0
        # With the model loaded, the server process listens on the one TCP port it was given
        # (llama.cpp's own listener is a private Unix socket).
        import shutil

        if shutil.which("ss"):
            out_ss = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout
            ports = {ln.split()[3].rsplit(":", 1)[-1] for ln in out_ss.splitlines() if f"pid={proc.pid}," in ln}
            assert ports == {str(port)}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
