"""Elo ratings from pairwise judgments (e.g. an LLM judge comparing two systems' answers).

Conventions (documented because papers differ): every system starts at ``initial`` = 1000,
the K-factor is 32, and an expected score uses the 400-point logistic scale. Elo depends on
the order of judgments, so ``elo_bootstrap`` resamples judgments with replacement (which also
shuffles their order) and reports percentile intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Winner = Literal["a", "b", "tie"]
_SCORE = {"a": 1.0, "b": 0.0, "tie": 0.5}


@dataclass(frozen=True, slots=True)
class Judgment:
    a: str
    b: str
    winner: Winner


@dataclass(frozen=True, slots=True)
class EloInterval:
    rating: float  # from the judgments in their given order
    median: float
    low: float
    high: float


def expected_score(r_a: float, r_b: float) -> float:
    return 1.0 / (1.0 + 10 ** ((r_b - r_a) / 400.0))


def elo_ratings(judgments: Sequence[Judgment], k: float = 32.0, initial: float = 1000.0) -> dict[str, float]:
    """Sequential Elo updates, in the order given."""
    ratings: dict[str, float] = {}
    for j in judgments:
        if j.winner not in _SCORE:
            raise ValueError(f"judgment winner must be 'a', 'b' or 'tie', got {j.winner!r}")
        ra, rb = ratings.setdefault(j.a, initial), ratings.setdefault(j.b, initial)
        ea = expected_score(ra, rb)
        s = _SCORE[j.winner]
        ratings[j.a] = ra + k * (s - ea)
        ratings[j.b] = rb + k * ((1 - s) - (1 - ea))
    return ratings


def elo_bootstrap(
    judgments: Sequence[Judgment],
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    k: float = 32.0,
    initial: float = 1000.0,
) -> dict[str, EloInterval]:
    if not judgments:
        raise ValueError("Elo needs at least one judgment")
    point = elo_ratings(judgments, k, initial)
    rng = np.random.default_rng(seed)
    samples: dict[str, list[float]] = {m: [] for m in point}
    for _ in range(n_boot):
        idx = rng.integers(0, len(judgments), size=len(judgments))
        r = elo_ratings([judgments[i] for i in idx], k, initial)
        for m in samples:
            samples[m].append(r.get(m, initial))  # a system absent from a resample keeps its start
    alpha = (1 - level) / 2
    out = {}
    for m, xs in samples.items():
        lo, med, hi = np.quantile(xs, [alpha, 0.5, 1 - alpha])
        out[m] = EloInterval(point[m], float(med), float(lo), float(hi))
    return out
