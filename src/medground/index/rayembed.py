"""Chunk embedding on Ray workers (`medground index build --ray ADDRESS`).

``RayEmbedder`` is an ``Embedder`` whose ``encode_passages`` cuts each batch it is given into
one part per worker and encodes the parts on Ray actors, each holding its own copy of the
model (loaded once per actor). Everything else stays in this process: ``embed_chunks``
still hands out the batches, reads and writes the embedding cache (so a lost worker loses at
most the batch in flight: what was cached stays cached) and builds the FAISS or pgvector
index; queries are encoded locally. Parts are whole multiples of the embedder's own
``batch_size``, so every model call sees the same batches as a serial build: the same vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medground.index.embedders import EmbedderSettings, load_embedder
from medground.protocols import Embedder
from medground.raycluster import RayCluster


class EmbedWorker:
    """Ray actor body: one embedder per worker."""

    def __init__(self, settings: EmbedderSettings):
        self._embedder = load_embedder(settings)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._embedder.encode_passages(list(texts)), dtype=np.float32)


def split_aligned(n: int, parts: int, step: int) -> list[tuple[int, int]]:
    """(start, end) ranges covering ``n`` items, at most ``parts`` of them, each a multiple of
    ``step`` long (except the last)."""
    size = max(step, -(-n // (parts * step)) * step)
    return [(i, min(n, i + size)) for i in range(0, n, size)]


class RayEmbedder:
    """Passages on Ray workers, queries locally; same ``name`` and ``dim`` as ``local``."""

    def __init__(self, local: Embedder, settings: EmbedderSettings, cluster: RayCluster):
        self.name, self.dim = local.name, local.dim
        self._local = local
        self._ray = cluster.ray
        self._step = settings.batch_size
        # Encoding is idempotent, so a shard on a worker that died is simply encoded again.
        actor = cluster.ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=2)(EmbedWorker)
        self._actors: list[Any] = [actor.remote(settings) for _ in range(cluster.workers)]

    @property
    def workers(self) -> int:
        return len(self._actors)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._local.encode_queries(texts)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        ranges = split_aligned(len(texts), len(self._actors), self._step)
        refs = [self._actors[i % len(self._actors)].encode.remote(texts[a:b]) for i, (a, b) in enumerate(ranges)]
        return np.concatenate(self._ray.get(refs), axis=0)

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
