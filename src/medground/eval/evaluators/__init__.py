"""Evaluators (sentence-transformers style): one base that runs a pipeline and summarises judged
rows, one class per kind of evaluation. Benchmarks call these and compute no metric themselves."""

from medground.eval.evaluators.base import EvaluationResult, Evaluator, percentile, rate
from medground.eval.evaluators.consultation import ConsultationEvaluator, ConsultItem, ConsultReference

__all__ = ["ConsultItem", "ConsultReference", "ConsultationEvaluator", "EvaluationResult", "Evaluator",
           "percentile", "rate"]
