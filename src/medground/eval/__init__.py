"""Datasets, resumable runs, statistics, sweeps, reports and the evaluators benchmarks call.

Its public names are importable from here (``from medground.eval import load_dataset``); each is
imported on first use, so importing the package stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medground.lazy import lazy_exports

if TYPE_CHECKING:  # the exported names (lazy_exports reads this block), for type checkers and IDEs too
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

__getattr__, __all__ = lazy_exports(__name__, __file__)
