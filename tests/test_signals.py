"""SIGTERM ends a medground command through its exit handlers (socket directory, embedded
PostgreSQL), not by the default kill that leaves them behind."""

import signal
import subprocess
import sys
import time


def test_sigterm_runs_exit_handlers(tmp_path):
    marker = tmp_path / "cleaned"
    script = (
        "import atexit, pathlib, time\n"
        "from medground.cli import exit_on_signals\n"
        f"atexit.register(pathlib.Path({str(marker)!r}).touch)\n"
        "exit_on_signals()\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert marker.exists()
