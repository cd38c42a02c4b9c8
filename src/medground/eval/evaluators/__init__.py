"""Evaluators (sentence-transformers style): one base that runs the system under test and summarises
judged rows, one class per kind of evaluation. Benchmarks call these and compute no metric themselves."""

from medground.eval.evaluators.abstention import (
    AbstentionEvaluator,
    AbstentionItem,
    abstention_rates,
    fit_threshold,
    gate_rates,
    scored_rows,
)
from medground.eval.evaluators.base import (
    EvaluationResult,
    Evaluator,
    accuracy_fields,
    accuracy_row,
    mean,
    percentile,
    rate,
)
from medground.eval.evaluators.consultation import ConsultationEvaluator, ConsultItem, ConsultReference
from medground.eval.evaluators.reader import Paired, ReaderEvaluator, compare, mcnemar_row
from medground.eval.evaluators.retrieval import (
    RetrievalEvaluator,
    RetrievalItem,
    answer_hits,
    chunk_id,
    doc_id,
    known_item,
    mcq_items,
)

__all__ = ["AbstentionEvaluator", "AbstentionItem", "ConsultItem", "ConsultReference", "ConsultationEvaluator",
           "EvaluationResult", "Evaluator", "Paired", "ReaderEvaluator", "RetrievalEvaluator", "RetrievalItem",
           "abstention_rates", "accuracy_fields", "accuracy_row", "answer_hits", "chunk_id", "compare", "doc_id",
           "fit_threshold", "gate_rates", "known_item", "mcnemar_row", "mcq_items", "mean", "percentile", "rate",
           "scored_rows"]
