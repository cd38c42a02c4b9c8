"""The one chunk-store protocol both backends implement: what ingest writes and what indexes,
retrievers and reports read. ``open_store`` returns either backend; code that takes a store
types it as ``ChunkStoreProtocol`` (indexes need only its read side, ``index.fingerprint.ChunkSource``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from medground.schema import Chunk, Document
    from medground.store.chunks import ManifestEntry, StoredDocument
    from medground.store.stats import CorpusStats


@runtime_checkable
class ChunkStoreProtocol(Protocol):
    # --- reads -------------------------------------------------------------------------------
    def iter_chunks(self, corpora: Sequence[str] | None = None) -> Iterator[Chunk]: ...

    def iter_unit_chunks(self, unit: str) -> Iterator[Chunk]: ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]: ...

    def count(self, corpora: Sequence[str] | None = None) -> int: ...

    def corpora(self) -> list[str]: ...

    def fingerprint(self, corpora: Sequence[str] | None = None) -> str: ...

    def manifest(self) -> list[ManifestEntry]: ...

    def manifest_entry(self, unit: str) -> ManifestEntry | None: ...

    def documents(self, corpora: Sequence[str] | None = None, *, unit: str | None = None
                  ) -> Iterator[StoredDocument]: ...

    def stats(self, corpora: Sequence[str] | None = None) -> CorpusStats: ...

    # --- writes (one unit at a time, each in one transaction) ---------------------------------
    def replace_unit(self, entry: ManifestEntry, documents: Iterable[Document], chunks: Iterable[Chunk]) -> None: ...

    def remove_unit(self, unit: str) -> None: ...

    def close(self) -> None: ...
