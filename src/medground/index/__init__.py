"""Retrieval indexes built from the chunk store (BM25, dense FAISS, SPLADE, section summaries),
all through one registry kind, "index".

Its public names are importable from here (``from medground.index import build_index``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medground.lazy import lazy_exports

if TYPE_CHECKING:  # the exported names (lazy_exports reads this block), for type checkers and IDEs too
    from medground.index.build import (
        build_index as build_index,
        IndexBuildOptions as IndexBuildOptions,
        BuiltIndex as BuiltIndex,
        index_kinds as index_kinds,
    )

__getattr__, __all__ = lazy_exports(__name__, __file__)
