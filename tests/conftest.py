from __future__ import annotations

import os
from pathlib import Path

import pytest

from medground.paths import DataNotFoundError, data_root


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real shared data (../shared/data or $MEDGROUND_DATA); skip when it is absent."""
    try:
        return data_root()
    except DataNotFoundError as exc:
        pytest.skip(f"shared data not available: {exc}")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    # Tests never write into the user's working directory.
    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path_factory.mktemp("mghome")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
