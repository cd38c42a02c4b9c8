"""Retrieval quality per query: Recall@k, MRR, nDCG@k, and the strict hit rate HR@k.

``ranked`` is the retrieved ids in rank order; ``relevant`` the gold ids (a set, or a mapping
id → graded gain for nDCG). Averages over queries are plain means (``mean_over``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def answer_words(text: str) -> str:
    """Lower-case alphanumeric words, space-separated and space-padded, so ``answer_words(a) in
    answer_words(t)`` is a whole-word containment test (the answer@k check)."""
    return " " + _NON_ALNUM.sub(" ", text.lower()).strip() + " "


def contains_answer(text: str, answer: str, *, normalized: bool = False) -> bool:
    """The answer's words appear in ``text`` as a whole-word run; an answer without words never does.
    ``normalized``: ``text`` is already ``answer_words`` output (normalise a large text once)."""
    needle = answer_words(answer)
    return bool(needle.strip()) and needle in (text if normalized else answer_words(text))


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def recall_at_k(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float:
    """|relevant ∩ top k| / |relevant| (0 when there is nothing relevant)."""
    _check_k(k)
    rel = set(relevant)
    if not rel:
        return 0.0
    return len(rel & set(ranked[:k])) / len(rel)


def reciprocal_rank(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int | None = None) -> float:
    """1 / rank of the first relevant item (within the first k when given), else 0."""
    rel = set(relevant)
    for i, item in enumerate(ranked[:k] if k else ranked, 1):
        if item in rel:
            return 1.0 / i
    return 0.0


def ndcg_at_k(ranked: Sequence[Hashable], relevant: Iterable[Hashable] | Mapping[Hashable, float], k: int) -> float:
    """nDCG@k with gain/log2(rank+1); binary gains for a set, graded for a mapping.

    A repeated id gains only at its first rank, so duplicates cannot inflate the score.
    """
    _check_k(k)
    gains = dict(relevant) if isinstance(relevant, Mapping) else {r: 1.0 for r in relevant}
    seen: set[Hashable] = set()
    dcg = 0.0
    for i, item in enumerate(ranked[:k], 1):
        if item in gains and item not in seen:
            dcg += gains[item] / math.log2(i + 1)
            seen.add(item)
    ideal = sorted(gains.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


def hit_at_k(ranked: Sequence[Hashable], gold: Iterable[Hashable], k: int) -> bool:
    """Strict set hit (RagPULSE's HR@k): True only if ALL gold items are in the top k.

    A question needing two drugs' documents is a miss when only one of them is retrieved;
    this is stricter than "any relevant in the top k" and than Recall@k.
    """
    _check_k(k)
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("HR@k needs at least one gold item")
    return gold_set <= set(ranked[:k])


def hit_rate_at_k(rankings: Sequence[Sequence[Hashable]], golds: Sequence[Iterable[Hashable]], k: int) -> float:
    """Share of queries with a strict hit at k."""
    if len(rankings) != len(golds) or not rankings:
        raise ValueError(f"need one gold set per ranking and at least one: {len(rankings)} vs {len(golds)}")
    return sum(hit_at_k(r, g, k) for r, g in zip(rankings, golds)) / len(rankings)


def drug_attribute_hits(
    ranked: Sequence[tuple[str, str]], gold: Iterable[tuple[str, str]], k: int
) -> dict[str, bool]:
    """HR@k at two levels for a medicine database ranked as (drug, attribute) entries.

    drug level: every gold drug is the drug of one of the top-k entries;
    attribute level: every gold (drug, attribute) pair is among the top-k entries.
    Both look at the same top-k entries (no re-ranking of drugs after deduplication).
    """
    gold = [tuple(g) for g in gold]
    top = [tuple(e) for e in ranked[:k]]
    return {
        "drug": hit_at_k([d for d, _ in top], {d for d, _ in gold}, k),
        "attribute": hit_at_k(top, set(gold), k),
    }


def mean_over(metric: Callable[..., float], rankings: Sequence[Sequence[Any]], golds: Sequence[Any], **kw: Any) -> float:
    """Mean of a per-query metric, e.g. ``mean_over(recall_at_k, runs, golds, k=10)``."""
    if len(rankings) != len(golds) or not rankings:
        raise ValueError(f"need one gold set per ranking and at least one: {len(rankings)} vs {len(golds)}")
    return sum(metric(r, g, **kw) for r, g in zip(rankings, golds)) / len(rankings)
