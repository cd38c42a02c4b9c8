import os
import subprocess
import sys


def _preallocate_after_import(env: dict) -> str:
    code = "import medground, os; print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'])"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_import_stops_jax_from_preallocating_the_gpu():
    env = {k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"}
    assert _preallocate_after_import(env) == "false"


def test_a_value_the_user_set_is_kept():
    assert _preallocate_after_import({**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "true"}) == "true"
