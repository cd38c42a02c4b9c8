"""Datasets, resumable runs, statistics, sweeps, reports and the evaluators benchmarks call.

Its public names are importable from here (``from medground.eval import load_dataset``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and IDEs: the names, without importing anything at run time
    from medground.eval.datasets import load_dataset as load_dataset
    from medground.eval.records import (
        RunRecord as RunRecord,
        read_records as read_records,
        read_run as read_run,
    )
    from medground.eval.runner import run_questions as run_questions
    from medground.eval.metrics import wilson_ci as wilson_ci, mcnemar_test as mcnemar_test
    from medground.eval.evaluators import (
        ReaderEvaluator as ReaderEvaluator,
        RetrievalEvaluator as RetrievalEvaluator,
        AbstentionEvaluator as AbstentionEvaluator,
        ConsultationEvaluator as ConsultationEvaluator,
        rate as rate,
    )

_EXPORTS = {
    "load_dataset": "medground.eval.datasets",
    "RunRecord": "medground.eval.records",
    "read_records": "medground.eval.records",
    "read_run": "medground.eval.records",
    "run_questions": "medground.eval.runner",
    "wilson_ci": "medground.eval.metrics",
    "mcnemar_test": "medground.eval.metrics",
    "ReaderEvaluator": "medground.eval.evaluators",
    "RetrievalEvaluator": "medground.eval.evaluators",
    "AbstentionEvaluator": "medground.eval.evaluators",
    "ConsultationEvaluator": "medground.eval.evaluators",
    "rate": "medground.eval.evaluators",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
