"""Sources → typed Documents → Chunks: readers, sentence splitting, chunkers, ingest with a
manifest, and the medicine database's builders.

Its public names are importable from here (``from medground.corpus import ChunkerSettings``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and IDEs: the names, without importing anything at run time
    from medground.corpus.chunking import ChunkerSettings as ChunkerSettings, make_chunker as make_chunker
    from medground.corpus.sentences import split_sentences as split_sentences, split_spans as split_spans
    from medground.corpus.ingest import (
        IngestReport as IngestReport,
        SourceSpec as SourceSpec,
        parse_sources as parse_sources,
    )

_EXPORTS = {
    "ChunkerSettings": "medground.corpus.chunking",
    "make_chunker": "medground.corpus.chunking",
    "split_sentences": "medground.corpus.sentences",
    "split_spans": "medground.corpus.sentences",
    "IngestReport": "medground.corpus.ingest",
    "SourceSpec": "medground.corpus.ingest",
    "parse_sources": "medground.corpus.ingest",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
