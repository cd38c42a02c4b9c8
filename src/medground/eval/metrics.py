"""Accuracy with honest uncertainty, and paired comparisons of two configurations.

Every function takes plain sequences of booleans (one per question, in a shared order for the
paired tests). A parse failure is a wrong answer here AND is counted on its own by
``outcome_rates``: it is never mapped to a letter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np

from medground.eval.records import RunRecord


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float
    low: float
    high: float
    method: str
    level: float = 0.95


def accuracy(correct: Sequence[bool]) -> float:
    if len(correct) == 0:
        raise ValueError("accuracy of zero questions is undefined")
    return sum(bool(c) for c in correct) / len(correct)


def wilson_ci(correct: Sequence[bool], level: float = 0.95) -> Interval:
    """Wilson score interval (statsmodels): sane near 0 and 1, unlike the normal interval."""
    from statsmodels.stats.proportion import proportion_confint

    k, n = sum(bool(c) for c in correct), len(correct)
    if n == 0:
        raise ValueError("a confidence interval of zero questions is undefined")
    low, high = proportion_confint(k, n, alpha=1 - level, method="wilson")
    return Interval(k / n, float(low), float(high), "wilson", level)


def bootstrap_ci(correct: Sequence[bool], level: float = 0.95, n_boot: int = 10_000, seed: int = 0) -> Interval:
    """Percentile bootstrap of accuracy: resample questions with replacement (seeded)."""
    x = np.asarray(correct, dtype=float)
    if x.size == 0:
        raise ValueError("a confidence interval of zero questions is undefined")
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Interval(float(x.mean()), float(low), float(high), "bootstrap-percentile", level)


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """2x2 table over the same questions: rows = A right/wrong, columns = B right/wrong."""

    table: tuple[tuple[int, int], tuple[int, int]]
    statistic: float  # exact test: the smaller discordant count
    pvalue: float
    n: int

    @property
    def a_only(self) -> int:  # A right, B wrong
        return self.table[0][1]

    @property
    def b_only(self) -> int:  # A wrong, B right
        return self.table[1][0]


def _paired(a: Sequence[bool], b: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    if len(a) != len(b):
        raise ValueError(f"paired tests need the same questions: {len(a)} vs {len(b)} results")
    if len(a) == 0:
        raise ValueError("paired tests need at least one question")
    return np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)


def mcnemar_test(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """Exact McNemar (binomial test on the discordant pairs), via statsmodels."""
    from statsmodels.stats.contingency_tables import mcnemar

    x, y = _paired(a, b)
    table = (
        (int(np.sum(x & y)), int(np.sum(x & ~y))),
        (int(np.sum(~x & y)), int(np.sum(~x & ~y))),
    )
    if table[0][1] + table[1][0] == 0:  # no discordant pairs: no evidence of a difference
        return McNemarResult(table, 0.0, 1.0, len(x))
    res = mcnemar(np.array(table), exact=True)
    return McNemarResult(table, float(res.statistic), float(res.pvalue), len(x))


@dataclass(frozen=True, slots=True)
class PairedDelta:
    """Accuracy of B minus accuracy of A on the same questions, with a bootstrap CI."""

    delta: float
    low: float
    high: float
    n: int
    level: float = 0.95


def paired_bootstrap(
    a: Sequence[bool], b: Sequence[bool], level: float = 0.95, n_boot: int = 10_000, seed: int = 0
) -> PairedDelta:
    """Resample questions (the same indices for both systems) and take percentile bounds."""
    x, y = _paired(a, b)
    diff = y.astype(float) - x.astype(float)
    rng = np.random.default_rng(seed)
    boots = diff[rng.integers(0, diff.size, size=(n_boot, diff.size))].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(boots, [alpha, 1 - alpha])
    return PairedDelta(float(diff.mean()), float(low), float(high), diff.size, level)


def macro_f1(gold: Sequence[str | None], pred: Sequence[str | None], labels: Sequence[str]) -> float:
    """Unweighted mean over ``labels`` of each label's F1 = 2tp / (2tp + fp + fn), 0 where tp is 0:
    a reader that says "yes" to everything scores its majority rate in accuracy, not here."""
    if len(gold) != len(pred):
        raise ValueError(f"one prediction per gold label: {len(gold)} vs {len(pred)}")
    if not labels:
        raise ValueError("macro-F1 needs at least one label")
    f1s = []
    for lab in labels:
        tp = sum(g == lab and p == lab for g, p in zip(gold, pred))
        fp = sum(g != lab and p == lab for g, p in zip(gold, pred))
        fn = sum(g == lab and p != lab for g, p in zip(gold, pred))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / len(f1s)


def balanced_accuracy(labels: Sequence[bool], preds: Sequence[bool]) -> float:
    """Mean of the true-positive and true-negative rates (over the classes present in ``labels``)."""
    pos = [p for lab, p in zip(labels, preds) if lab]
    neg = [not p for lab, p in zip(labels, preds) if not lab]
    parts = [sum(x) / len(x) for x in (pos, neg) if x]
    if not parts:
        raise ValueError("balanced accuracy of zero labels is undefined")
    return sum(parts) / len(parts)


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two binary labelings of the same items: agreement beyond chance. None when
    chance agreement is total (both labelings constant and equal), where kappa is undefined."""
    if len(a) != len(b) or not a:
        raise ValueError(f"two labelings of the same items, at least one: {len(a)} vs {len(b)}")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return None if chance == 1 else (observed - chance) / (1 - chance)


def fit_cut(labels: Sequence[bool], scores: Sequence[float]) -> float:
    """The cut on a judge's score (``score >= cut`` says True) with the best balanced accuracy
    against ``labels``: midpoints between adjacent distinct scores (the score itself when all are
    equal); ties go to the lower cut."""
    cands = sorted(set(scores))
    cuts = [(a + b) / 2 for a, b in zip(cands, cands[1:])] or cands
    return max(cuts, key=lambda c: (balanced_accuracy(labels, [s >= c for s in scores]), -c))


def outcome_rates(outcomes: Iterable[str]) -> dict[str, float]:
    """Share of each outcome (answered, parse_failure, insufficient_evidence, error)."""
    counts = Counter(outcomes)
    n = sum(counts.values())
    return {k: v / n for k, v in sorted(counts.items())} if n else {}


def parse_failure_rate(outcomes: Iterable[str]) -> float:
    return outcome_rates(outcomes).get("parse_failure", 0.0)


def vote_curve(records: Sequence[RunRecord], max_k: int | None = None) -> list[tuple[int, float]]:
    """Accuracy of the weighted vote over the first k votes, k = 1..K (records with ``votes``)."""
    from medground.pipelines.amt import weighted_vote

    rows = [r for r in records if r.votes is not None and r.gold]
    if not rows:
        return []
    top = max(len(r.votes or []) for r in rows)
    top = min(top, max_k) if max_k else top
    return [(k, sum(weighted_vote(r.votes or [], k) == r.gold for r in rows) / len(rows)) for k in range(1, top + 1)]


_Rec = TypeVar("_Rec", RunRecord, Mapping[str, Any])


def recalibrate(records: Sequence[_Rec]) -> list[_Rec]:
    """Records re-scored with each letter's mean log-probability subtracted (label-free).

    Uses the raw per-letter log-probabilities a letter-scored run stores
    (``RunRecord.letter_logprobs``); the means are taken over the records themselves (their
    inputs, never their answers). A record without log-probabilities keeps no choice and
    counts as wrong, as its parse failure did. Plain dicts with the same keys work too (the
    reader benchmark builds them without a run).
    """
    def field_of(r: _Rec, name: str) -> Any:
        return getattr(r, name) if isinstance(r, RunRecord) else r.get(name)

    def rescored(r: _Rec, choice: str | None) -> _Rec:
        correct = choice is not None and choice == field_of(r, "gold")
        return replace(r, choice=choice, correct=correct) if isinstance(r, RunRecord) else \
            {**r, "choice": choice, "correct": correct}

    rows = [r for r in records if field_of(r, "letter_logprobs")]
    if not rows:
        return []
    letters = sorted(field_of(rows[0], "letter_logprobs"))
    mean = {x: sum(field_of(r, "letter_logprobs")[x] for r in rows) / len(rows) for x in letters}
    out = []
    for r in records:
        lp = field_of(r, "letter_logprobs")
        out.append(rescored(r, max(letters, key=lambda x: lp[x] - mean[x]) if lp else None))
    return out
