"""Fusion of several ranked lists of passages into one (deduplicated by ``chunk_id``).

Two fusers, both registered under kind ``"fuser"``:

``norm`` — normalized-score sum (the HybTextR fusion of LLM-AMT). Each list's scores are
    min-max normalized to [0, 1]: ``(s - min) / (max - min)``. A list whose scores are all
    equal (including a one-item list) normalizes every score to 1.0: each item was retrieved
    and none is worse than another. A passage *missing* from a list gets that list's minimum,
    i.e. 0 after normalization (a list with no items contributes nothing). The fused score is
    ``sum_i w_i * norm_i``. Raw scores of different retrievers (BM25 ~ 0..40, cosine ~ 0..1)
    are only comparable after this normalization; the price is that the list's weakest hit
    counts exactly as much as a miss.

``rrf`` — reciprocal-rank fusion: ``sum_i w_i / (k + rank_i)`` with 1-based ranks within each
    list (the position in the list; the ``rank`` field is not trusted) and ``k`` = 60 by
    default (Cormack et al., 2009). A passage missing from a list gets nothing from it.

Ties are broken deterministically: higher fused score, then the best (lowest) rank the
passage had in any list, then the lowest list index where that rank occurred, then chunk_id.

Each fused passage records its provenance in ``metadata["hits"]``: one entry per list that
contained it, ``{"list": i, "source": ..., "rank": r, "score": raw}`` (plus whatever the
caller attached to the list via ``labels``; multiquery.py adds the query there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from medground.registry import register
from medground.schema import Chunk, Passage


class FusionSettings(BaseModel):
    """How to fuse ranked lists. ``weights`` (one per list, default all 1.0)."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["norm", "rrf"] = "rrf"
    rrf_k: float = Field(60.0, gt=0, description="RRF smoothing constant k in w / (k + rank)")
    weights: list[float] | None = Field(None, description="one weight per ranked list")


@dataclass(slots=True)
class _Acc:
    chunk: Chunk
    score: float = 0.0
    best: tuple[int, int] = (1 << 30, 1 << 30)  # (rank, list index) of the best appearance
    hits: list[dict[str, Any]] = field(default_factory=list)


def _weights(weights: Sequence[float] | None, n: int) -> list[float]:
    if weights is None:
        return [1.0] * n
    if len(weights) != n:
        raise ValueError(f"fusion got {n} ranked lists but {len(weights)} weights; give one weight per list")
    return [float(w) for w in weights]


def min_max(scores: Sequence[float]) -> list[float]:
    """Min-max normalize to [0, 1]; all-equal scores (or a single score) map to 1.0."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi == lo:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def reciprocal_rank(rank: int, k: float) -> float:
    """RRF's contribution of a 1-based ``rank``: ``1 / (k + rank)``."""
    return 1.0 / (k + rank)


class BaseFuser:
    name = "base"

    def __init__(self, weights: Sequence[float] | None = None) -> None:
        self.weights = list(weights) if weights is not None else None

    def _contributions(self, ranked: Sequence[Passage]) -> list[float]:
        raise NotImplementedError

    def fuse(
        self,
        ranked_lists: Sequence[Sequence[Passage]],
        k: int,
        *,
        weights: Sequence[float] | None = None,
        labels: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[Passage]:
        """Fuse ``ranked_lists`` (each best first) and return the top ``k``.

        ``weights`` overrides the constructor's weights for this call; ``labels`` (one mapping
        per list) is copied into each passage's ``metadata["hits"]`` entries.
        """
        w = _weights(weights if weights is not None else self.weights, len(ranked_lists))
        if labels is not None and len(labels) != len(ranked_lists):
            raise ValueError(f"fusion got {len(ranked_lists)} ranked lists but {len(labels)} labels")
        acc: dict[str, _Acc] = {}
        for li, ranked in enumerate(ranked_lists):
            seen: set[str] = set()
            contributions = self._contributions(ranked)
            for pos, (p, c) in enumerate(zip(ranked, contributions, strict=True), start=1):
                cid = p.chunk.chunk_id
                if cid in seen:  # a list that repeats a chunk counts it once, at its best rank
                    continue
                seen.add(cid)
                a = acc.get(cid)
                if a is None:
                    a = acc[cid] = _Acc(chunk=p.chunk)
                a.score += w[li] * c
                a.best = min(a.best, (pos, li))
                hit: dict[str, Any] = {"list": li, "source": p.source, "rank": pos, "score": p.score}
                if labels is not None:
                    hit.update(labels[li])
                a.hits.append(hit)
        ordered = sorted(acc.values(), key=lambda a: (-a.score, a.best, a.chunk.chunk_id))
        return [
            Passage(chunk=a.chunk, score=a.score, source=self.name, rank=r, metadata={"hits": a.hits})
            for r, a in enumerate(ordered[:k], start=1)
        ]


class NormFuser(BaseFuser):
    """Weighted sum of min-max normalized scores; a miss counts as the list's minimum (0)."""

    name = "norm"

    def _contributions(self, ranked: Sequence[Passage]) -> list[float]:
        return min_max([p.score for p in ranked])


class RRFFuser(BaseFuser):
    """Weighted reciprocal-rank fusion ``sum_i w_i / (k + rank_i)``."""

    name = "rrf"

    def __init__(self, k: float = 60.0, weights: Sequence[float] | None = None) -> None:
        if k <= 0:
            raise ValueError(f"rrf k must be > 0, got {k}")
        super().__init__(weights)
        self.k = float(k)

    def _contributions(self, ranked: Sequence[Passage]) -> list[float]:
        return [reciprocal_rank(pos, self.k) for pos in range(1, len(ranked) + 1)]


@register("fuser", "norm")
def make_norm(settings: FusionSettings | None = None, weights: Sequence[float] | None = None) -> NormFuser:
    return NormFuser(weights=weights if weights is not None else (settings.weights if settings else None))


@register("fuser", "rrf")
def make_rrf(
    settings: FusionSettings | None = None, k: float | None = None, weights: Sequence[float] | None = None
) -> RRFFuser:
    s = settings or FusionSettings(method="rrf")
    return RRFFuser(k=k if k is not None else s.rrf_k, weights=weights if weights is not None else s.weights)


def make_fuser(settings: FusionSettings) -> NormFuser | RRFFuser:
    return make_norm(settings) if settings.method == "norm" else make_rrf(settings)
