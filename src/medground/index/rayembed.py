"""Chunk embedding on workers (`medground index build --ray ADDRESS`): Ray actors of a named
cluster, or local worker processes for ``--ray local``.

``RayEmbedder`` is an ``Embedder`` whose ``encode_passages`` cuts each batch it is given into
one part per worker and encodes the parts on the workers, each holding its own copy of the
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
from medground.localworkers import BrokenProcessPool
from medground.raycluster import RayCluster

_RETRIES = 2  # encoding is idempotent, so a part on a worker that died is encoded again


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


_LOCAL_EMBEDDERS: dict[str, Embedder] = {}  # in a local worker process: by settings


def _encode_local(settings: EmbedderSettings, texts: Sequence[str]) -> np.ndarray:
    key = settings.model_dump_json()
    if key not in _LOCAL_EMBEDDERS:
        _LOCAL_EMBEDDERS[key] = load_embedder(settings)
    return np.asarray(_LOCAL_EMBEDDERS[key].encode_passages(list(texts)), dtype=np.float32)


class RayEmbedder:
    """Passages on Ray workers, queries locally; same ``name`` and ``dim`` as ``local``."""

    def __init__(self, local: Embedder, settings: EmbedderSettings, cluster: RayCluster):
        self.name, self.dim = local.name, local.dim
        self._local = local
        self._ray = cluster.ray
        self._local = cluster.local
        self._settings = settings
        self._step = settings.batch_size
        if self._local is not None:
            self._actors: list[Any] = list(range(self._local.n))
            return
        actor = cluster.ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=_RETRIES)(EmbedWorker)
        self._actors = [actor.remote(settings) for _ in range(cluster.workers)]

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
        if self._local is not None:
            return np.concatenate(self._encode_parts_local(texts, ranges), axis=0)
        refs = [self._actors[i % len(self._actors)].encode.remote(texts[a:b]) for i, (a, b) in enumerate(ranges)]
        return np.concatenate(self._ray.get(refs), axis=0)

    def _encode_parts_local(self, texts: list[str], ranges: list[tuple[int, int]]) -> list[np.ndarray]:
        local = self._local
        assert local is not None
        parts: list[np.ndarray | None] = [None] * len(ranges)
        tries = [0] * len(ranges)
        todo = list(range(len(ranges)))
        while todo:
            futures = []
            for j in todo:
                a, b = ranges[j]
                worker = j % local.n
                futures.append((j, worker, *local.submit(worker, _encode_local, self._settings, texts[a:b])))
            todo = []
            for j, worker, fut, gen in futures:
                try:
                    parts[j] = fut.result()
                except BrokenProcessPool:
                    local.restart(worker, gen)
                    tries[j] += 1
                    if tries[j] > _RETRIES:
                        raise RuntimeError(f"a local embedding worker died {tries[j]} times on the same "
                                           f"{ranges[j][1] - ranges[j][0]} passages") from None
                    todo.append(j)
        return [p for p in parts if p is not None]

    def close(self) -> None:
        if self._ray is not None:
            for actor in self._actors:
                self._ray.kill(actor)
        self._actors = []
