"""What every evaluator shares: run a pipeline over items, judge each answer, summarise the rows
with honest uncertainty. Benchmarks call evaluators; they compute no metric of their own.

    evaluator = ConsultationEvaluator(reference)
    result = evaluator(pipeline, items)      # EvaluationResult: rows (one per item) and summary
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from medground.eval.metrics import wilson_ci
from medground.pipelines.base import Pipeline
from medground.schema import Answer, Question

ItemT = TypeVar("ItemT")


def rate(flags: Sequence[bool]) -> dict[str, Any]:
    """k of n with its Wilson 95 % interval, as every result file stores a rate (``n`` 0: no rate)."""
    n = len(flags)
    if not n:
        return {"n": 0, "k": 0, "rate": None, "ci95": None}
    ci = wilson_ci(flags)
    k = int(sum(bool(f) for f in flags))
    return {"n": n, "k": k, "rate": round(k / n, 4), "ci95": [round(ci.low, 4), round(ci.high, 4)]}


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile by rank (the value at index ⌊q·n⌋ of the sorted values, capped): what
    the result files call p50 and p95."""
    if not values:
        return None
    s = sorted(values)
    return round(s[min(len(s) - 1, int(q * len(s)))], 3)


@dataclass
class EvaluationResult:
    rows: list[dict[str, Any]]  # one judged row per item, in item order
    summary: dict[str, Any] = field(default_factory=dict)


class Evaluator(Generic[ItemT]):
    """Subclasses say how an item becomes a question, how one answer is judged and how the rows
    are summarised; running the pipeline is shared."""

    name = "evaluator"

    def question(self, item: ItemT) -> Question:
        raise NotImplementedError

    def judge(self, item: ItemT, answer: Answer) -> dict[str, Any]:
        raise NotImplementedError

    def summarize(self, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError

    def __call__(self, pipeline: Pipeline, items: Iterable[ItemT]) -> EvaluationResult:
        rows = [self.judge(item, pipeline.answer(self.question(item))) for item in items]
        return EvaluationResult(rows, self.summarize(rows))
