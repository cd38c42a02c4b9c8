"""Which chunk store a run reads: the embedded SQLite file (default) or PostgreSQL.

    retrieve: {store: {backend: postgres, url: "postgresql://user@db/medground"}}
    retrieve: {store: {backend: postgres}}            # embedded PostgreSQL under $MEDGROUND_HOME
    MEDGROUND_STORE=postgresql://…  medground index build …   # the process-wide default

With a Postgres store, dense indexes live in the same database (pgvector) and BM25/SPLADE/section
indexes stay files built from its chunks (bm25s ranks; nothing in Postgres has to).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from medground import paths
from medground.store.postgres import EMBEDDED
from medground.store.protocol import ChunkStoreProtocol

STORE_ENV = "MEDGROUND_STORE"


class StoreSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["sqlite", "postgres"] = "sqlite"
    path: str | None = Field(None, description="sqlite: the store file (default $MEDGROUND_HOME/store.sqlite)")
    url: str | None = Field(None, description="postgres: a postgresql:// URL, or 'embedded' (the default)")

    @model_validator(mode="after")
    def _fits_backend(self) -> StoreSettings:
        if self.backend == "sqlite" and self.url:
            raise ValueError("url: only for backend postgres (sqlite takes path)")
        if self.backend == "postgres" and self.path:
            raise ValueError("path: only for backend sqlite (postgres takes url)")
        if self.url and self.url != EMBEDDED and not self.url.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"url: expected postgresql://… or '{EMBEDDED}', got {self.url[:40]!r}")
        return self

    @classmethod
    def parse(cls, spec: str) -> StoreSettings:
        """A CLI/env spelling: a postgresql:// URL, 'postgres' (embedded) or a SQLite file path."""
        text = spec.strip()
        if text.startswith(("postgresql://", "postgres://")):
            return cls(backend="postgres", url=text)
        if text in ("postgres", "postgresql", EMBEDDED):
            return cls(backend="postgres", url=EMBEDDED)
        return cls(backend="sqlite", path=text)


def default_store_settings() -> StoreSettings:
    spec = os.environ.get(STORE_ENV, "").strip()
    return StoreSettings.parse(spec) if spec else StoreSettings()


class StoreMissingError(FileNotFoundError):
    """Reading a chunk store that does not exist: never re-create it empty behind the reader's back."""


def open_store(settings: StoreSettings | str | None = None, *, must_exist: bool = False) -> ChunkStoreProtocol:
    """The chunk store named by ``settings`` (a StoreSettings, a spec string, or None for
    $MEDGROUND_STORE, else the SQLite file under $MEDGROUND_HOME). ``must_exist``: a SQLite file
    that is not there is an error naming the command that builds it (readers), not a new empty
    store (only ingestion creates one)."""
    if settings is None:
        settings = default_store_settings()
    elif isinstance(settings, str):
        settings = StoreSettings.parse(settings)
    if settings.backend == "postgres":
        from medground.store.postgres import PgChunkStore

        return PgChunkStore(settings.url or EMBEDDED)
    from medground.store.chunks import ChunkStore

    path = Path(settings.path) if settings.path else paths.home() / "store.sqlite"
    if must_exist and not path.exists():
        raise StoreMissingError(f"no chunk store at {path}: build it with `medground corpus ingest` "
                                "(or name another with $MEDGROUND_STORE)")
    return ChunkStore(path)


def is_postgres(source: object) -> bool:
    return getattr(source, "backend", None) == "postgres"
