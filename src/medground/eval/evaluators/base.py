"""What every evaluator shares: run the system under test over items, judge each output, summarise
the rows with honest uncertainty. Benchmarks call evaluators; they compute no metric of their own.

    evaluator = ConsultationEvaluator(reference)
    result = evaluator(pipeline, items)      # EvaluationResult: rows (one per item) and summary
    result = evaluator.evaluate(items, outputs)   # outputs made elsewhere (a timed loop, stored runs)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from medground.eval.metrics import wilson_ci
from medground.schema import Question

ItemT = TypeVar("ItemT")
OutT = TypeVar("OutT")


def rate(flags: Sequence[bool]) -> dict[str, Any]:
    """k of n with its Wilson 95 % interval, as every result file stores a rate (``n`` 0: no rate)."""
    n = len(flags)
    if not n:
        return {"n": 0, "k": 0, "rate": None, "ci95": None}
    ci = wilson_ci(flags)
    k = int(sum(bool(f) for f in flags))
    return {"n": n, "k": k, "rate": round(k / n, 4), "ci95": [round(ci.low, 4), round(ci.high, 4)]}


def accuracy_fields(r: Mapping[str, Any]) -> dict[str, Any]:
    """A `rate` under the keys the older result files use (n, correct, accuracy, ci95), so their
    rows stay comparable."""
    return {"n": r["n"], "correct": r["k"], "accuracy": r["rate"], "ci95": r["ci95"]}


def accuracy_row(correct: Sequence[bool]) -> dict[str, Any]:
    return accuracy_fields(rate(correct))


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile by rank (the value at index ⌊q·n⌋ of the sorted values, capped): what
    the result files call p50 and p95."""
    if not values:
        return None
    s = sorted(values)
    return round(s[min(len(s) - 1, int(q * len(s)))], 3)


def mean(values: Sequence[float]) -> float | None:
    """Plain mean, summed in order (so a summary equals the loop it replaced to the last bit)."""
    return sum(values) / len(values) if values else None


@dataclass
class EvaluationResult:
    rows: list[dict[str, Any]]  # one judged row per item, in item order
    summary: dict[str, Any] = field(default_factory=dict)


class Evaluator(Generic[ItemT, OutT]):
    """Subclasses say how an item becomes a question (or what the system is asked), how one output
    is judged and how the rows are summarised; running the system is shared."""

    name = "evaluator"

    def question(self, item: ItemT) -> Question:
        raise NotImplementedError

    def produce(self, system: Any, item: ItemT) -> OutT:
        """What the system under test (a pipeline, a retriever, …) gives for one item: a
        pipeline's answer unless overridden."""
        return system.answer(self.question(item))

    def judge(self, item: ItemT, output: OutT) -> dict[str, Any]:
        raise NotImplementedError

    def summarize(self, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError

    def evaluate(self, items: Iterable[ItemT], outputs: Iterable[OutT]) -> EvaluationResult:
        """Judge outputs made elsewhere (a timed loop, a stored run), one per item, in order."""
        rows = [self.judge(item, out) for item, out in zip(items, outputs, strict=True)]
        return EvaluationResult(rows, self.summarize(rows))

    def __call__(self, system: Any, items: Iterable[ItemT]) -> EvaluationResult:
        rows = [self.judge(item, self.produce(system, item)) for item in items]
        return EvaluationResult(rows, self.summarize(rows))
