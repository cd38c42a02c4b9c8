"""Protocols of the retrieval stages (the ground floor: index/ and retrieve/ both build on them).
Implementations register under the matching kind in the registry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from medground.schema import Passage


class EmptyQueryError(ValueError):
    pass


def check_query(query: str) -> str:
    if not isinstance(query, str) or not query.strip():
        raise EmptyQueryError("query is empty or whitespace: give the question or keywords to search for")
    return query.strip()


@runtime_checkable
class Embedder(Protocol):
    name: str  # fingerprint-relevant identity: model path/name + prefixes
    dim: int

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:  # (n, dim) float32, L2-normalized
        ...

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        ...


@runtime_checkable
class Retriever(Protocol):
    name: str

    def search(self, query: str, k: int = 10) -> list[Passage]:
        ...

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        ...


@runtime_checkable
class Reranker(Protocol):
    name: str

    def rerank(self, query: str, passages: Sequence[Passage], k: int) -> list[Passage]:
        ...


@runtime_checkable
class Fuser(Protocol):
    name: str

    def fuse(self, ranked_lists: Sequence[Sequence[Passage]], k: int) -> list[Passage]:
        ...
