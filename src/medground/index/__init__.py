"""Retrieval indexes built from the chunk store (BM25, dense FAISS, SPLADE, section summaries),
all through one registry kind, "index".

Its public names are importable from here (``from medground.index import build_index``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and IDEs: the names, without importing anything at run time
    from medground.index.build import (
        build_index as build_index,
        IndexBuildOptions as IndexBuildOptions,
        BuiltIndex as BuiltIndex,
        index_kinds as index_kinds,
    )

_EXPORTS = {
    "build_index": "medground.index.build",
    "IndexBuildOptions": "medground.index.build",
    "BuiltIndex": "medground.index.build",
    "index_kinds": "medground.index.build",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
