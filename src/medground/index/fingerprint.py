"""What a persisted index was built from, and the chunk sources indexes are built over.

Every index directory holds ``fingerprint.json``. Loading compares it with what the config
asks for and refuses a stale index (different settings, embedder or chunk set) with a
message that names the differing field and the command that rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from medground import paths
from medground.schema import Chunk, Passage

log = logging.getLogger(__name__)

FINGERPRINT_FILE = "fingerprint.json"


class StaleIndexError(RuntimeError):
    """A persisted index does not match what the configuration asks for."""


class IndexNotFoundError(FileNotFoundError):
    pass


@runtime_checkable
class ChunkSource(Protocol):
    """What indexes need from a chunk store (``medground.store.chunks.ChunkStore`` fits)."""

    def iter_chunks(self, corpora: Sequence[str] | None = None) -> Iterator[Chunk]: ...

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]: ...

    def count(self, corpora: Sequence[str] | None = None) -> int: ...

    def fingerprint(self, corpora: Sequence[str] | None = None) -> str: ...


class ChunkList:
    """An in-memory ChunkSource: tests, notebooks, and corpora that never touch the store."""

    def __init__(self, chunks: Iterable[Chunk]):
        self._chunks = list(chunks)
        self._by_id = {c.chunk_id: c for c in self._chunks}
        if len(self._by_id) != len(self._chunks):
            raise ValueError("ChunkList: duplicate chunk_id values")

    def _select(self, corpora: Sequence[str] | None) -> list[Chunk]:
        if not corpora:
            return self._chunks
        wanted = set(corpora)
        return [c for c in self._chunks if c.corpus in wanted]

    def iter_chunks(self, corpora: Sequence[str] | None = None) -> Iterator[Chunk]:
        return iter(self._select(corpora))

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        return [self._by_id[i] for i in ids if i in self._by_id]

    def count(self, corpora: Sequence[str] | None = None) -> int:
        return len(self._select(corpora))

    def fingerprint(self, corpora: Sequence[str] | None = None) -> str:
        return chunks_fingerprint(self._select(corpora))

    def add(self, chunks: Iterable[Chunk]) -> None:
        for c in chunks:
            if c.chunk_id in self._by_id:
                raise ValueError(f"ChunkList: duplicate chunk_id {c.chunk_id}")
            self._chunks.append(c)
            self._by_id[c.chunk_id] = c


def chunks_fingerprint(chunks: Iterable[Chunk]) -> str:
    h = hashlib.sha256()
    for c in chunks:
        h.update(c.chunk_id.encode())
        h.update(c.content_hash.encode())
    return h.hexdigest()[:32]


def resolve_chunks(source: ChunkSource, ids: Sequence[str]) -> list[Chunk]:
    """Chunks for ``ids`` in that order; a missing id means the index outlived its chunks."""
    try:
        found = {c.chunk_id: c for c in source.get_chunks(list(dict.fromkeys(ids)))}
    except KeyError as exc:  # ChunkStore names the missing ids
        found, detail = {}, str(exc.args[0]) if exc.args else ""
    else:
        detail = ""
    missing = [i for i in ids if i not in found]
    if missing:
        raise StaleIndexError(
            f"{len(missing)} chunk id(s) in the index are not in the chunk store "
            f"(e.g. {missing[0]}{'; ' + detail if detail else ''}): the store changed since the "
            "index was built; rebuild with `medground index build`"
        )
    return [found[i] for i in ids]


_VERSIONED = ("medground", "bm25s", "faiss-cpu", "sentence-transformers", "transformers",
              "torch", "onnxruntime", "scipy", "numpy", "PyStemmer")


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in _VERSIONED:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


@dataclass(slots=True)
class IndexFingerprint:
    kind: str  # "bm25", "dense", "splade", "sections"
    settings: dict[str, Any]
    chunks: str | None  # chunk-store fingerprint; None = not checked
    chunk_count: int | None
    embedder: str | None = None  # Embedder.name for dense indexes
    corpora: list[str] | None = None
    versions: dict[str, str] = field(default_factory=library_versions)
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat())

    def write(self, directory: Path) -> None:
        (directory / FINGERPRINT_FILE).write_text(json.dumps(asdict(self), indent=2, sort_keys=True))

    @classmethod
    def read(cls, directory: Path) -> IndexFingerprint:
        f = Path(directory) / FINGERPRINT_FILE
        if not f.is_file():
            raise IndexNotFoundError(f"no index at {directory} ({FINGERPRINT_FILE} missing)")
        try:
            data = json.loads(f.read_text())
            return cls(**data)
        except (json.JSONDecodeError, TypeError) as exc:
            raise StaleIndexError(f"{f}: unreadable fingerprint ({exc}); rebuild the index") from exc

    def check(self, expected: IndexFingerprint, directory: Path | str = "") -> None:
        """Raise StaleIndexError naming the first field where this (stored) differs from expected.

        Fields that are None in ``expected`` are not checked (e.g. no chunk store at hand).
        """
        rebuild = f"rebuild it with `medground index build --retrievers {expected.kind}`"
        where = f"index {directory}" if directory else f"{self.kind} index"

        def fail(fld: str, stored: Any, wanted: Any) -> None:
            raise StaleIndexError(
                f"{where} is stale: {fld} is {stored!r} in the index but {wanted!r} is asked for; "
                + rebuild
            )

        if self.kind != expected.kind:
            fail("kind", self.kind, expected.kind)
        for key in sorted(set(self.settings) | set(expected.settings)):
            if self.settings.get(key) != expected.settings.get(key):
                fail(f"settings.{key}", self.settings.get(key), expected.settings.get(key))
        for fld in ("embedder", "chunks", "chunk_count", "corpora"):
            wanted = getattr(expected, fld)
            if wanted is not None and getattr(self, fld) != wanted:
                fail(fld, getattr(self, fld), wanted)


def index_root() -> Path:
    return paths.home() / "indexes"


def index_dir(kind: str, corpora: Sequence[str] | None = None, variant: str | None = None) -> Path:
    """Default home of an index: <home>/indexes/<kind>[-<variant>][-<corpus>+<corpus>].

    ``variant`` names a non-default configuration of the same kind (another embedder, HNSW…),
    so indexes of two configurations live side by side instead of refusing each other as stale."""
    name = kind if not variant else f"{kind}-{variant}"
    name = name if not corpora else f"{name}-{'+'.join(sorted(corpora))}"
    return index_root() / name


def dir_size(directory: Path) -> int:
    return sum(p.stat().st_size for p in Path(directory).rglob("*") if p.is_file())


def to_passages(
    source: ChunkSource, ids: Sequence[str], scores: Sequence[float], label: str
) -> list[Passage]:
    """Ranked (chunk id, score) → Passages with 1-based ranks."""
    chunks = resolve_chunks(source, ids)
    return [
        Passage(chunk=c, score=float(s), source=label, rank=r)
        for r, (c, s) in enumerate(zip(chunks, scores), start=1)
    ]


def default_chunk_source(*, must_exist: bool = True) -> ChunkSource:
    """The project's chunk store (``medground corpus ingest`` fills it): $MEDGROUND_STORE when
    set (a Postgres URL or a SQLite path), else $MEDGROUND_HOME/store.sqlite. Readers require it
    to exist (``StoreMissingError`` names the command that builds it)."""
    from medground.store.settings import open_store  # imported late: stores import this module

    return open_store(must_exist=must_exist)


class PersistedIndex(Protocol):
    def save(self, directory: Path | str) -> Path: ...


IndexT = TypeVar("IndexT", bound=PersistedIndex)


def open_or_build(
    kind: str,
    label: str,
    *,
    load: Callable[[Path, str], IndexT],
    build: Callable[[Iterable[Chunk], str], IndexT],
    chunks: ChunkSource | None = None,
    corpora: Sequence[str] | None = None,
    directory: Path | str | None = None,
    build_if_missing: bool = False,
) -> tuple[IndexT, ChunkSource]:
    """Load the persisted ``kind`` index for ``chunks`` (default: the chunk store) from
    ``directory`` (default: :func:`index_dir`), or build and save it when missing and
    ``build_if_missing``. ``load(directory, chunks_fingerprint)`` checks staleness;
    ``build(chunks, chunks_fingerprint)`` builds. ``label`` names the index in messages
    ("BM25", "dense"). Returns the index and the chunk source it was resolved against."""
    source = chunks if chunks is not None else default_chunk_source()
    where = Path(directory) if directory else index_dir(kind, corpora)
    fp = source.fingerprint(corpora)
    try:
        return load(where, fp), source
    except IndexNotFoundError:
        if not build_if_missing:
            raise IndexNotFoundError(
                f"no {label} index at {where}; build it with `medground index build --retrievers {kind}`"
            ) from None
    import sys

    # Said on stderr whatever the log level: a first use can take minutes (a dense index over
    # the textbooks takes ~11 min on 2 cores) and a silent wait looks like a hang.
    print(f"building the {label} index at {where} (first use; `medground index build` does this ahead)",
          file=sys.stderr, flush=True)
    index = build(source.iter_chunks(corpora), fp)
    index.save(where)
    return index, source
