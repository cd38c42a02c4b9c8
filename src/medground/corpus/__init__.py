"""Sources → typed Documents → Chunks: readers, sentence splitting, chunkers, ingest with a
manifest, and the medicine database's builders.

Its public names are importable from here (``from medground.corpus import ChunkerSettings``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medground.lazy import lazy_exports

if TYPE_CHECKING:  # the exported names (lazy_exports reads this block), for type checkers and IDEs too
    from medground.corpus.chunking import ChunkerSettings as ChunkerSettings, make_chunker as make_chunker
    from medground.corpus.sentences import split_sentences as split_sentences, split_spans as split_spans
    from medground.corpus.ingest import (
        IngestReport as IngestReport,
        SourceSpec as SourceSpec,
        parse_sources as parse_sources,
    )

__getattr__, __all__ = lazy_exports(__name__, __file__)
