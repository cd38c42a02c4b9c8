"""Multiple-choice readers judged per question (right or not, parse failure, seconds, prompt
tokens) and summarised: accuracy as a `rate`, macro-F1 and the share of each predicted label,
parse failures and errors, cost per question. `compare` pairs an arm with a baseline arm on the
same questions (exact McNemar); `mcnemar_row` is that comparison as the result files store it.

Rows come from a pipeline's answers (``evaluator(pipeline, questions)``), from bare predictions
(`ReaderEvaluator.row`, for a benchmark that reads with its own loop) or from a run's stored
records (`ReaderEvaluator.from_record`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from medground.eval.evaluators.base import Evaluator, rate
from medground.eval.metrics import macro_f1, mcnemar_test
from medground.eval.records import RunRecord
from medground.schema import Answer, Question


@dataclass(frozen=True)
class Paired:
    """One arm against a baseline arm on the same questions (exact McNemar on the discordant pairs)."""

    n: int
    baseline_right: int
    this_right: int
    only_baseline_right: int
    only_this_right: int
    pvalue: float

    @property
    def delta_pts(self) -> float:
        """Accuracy of this arm minus the baseline's, in points (one decimal)."""
        return round(100 * (self.this_right - self.baseline_right) / self.n, 1)

    def row(self) -> dict[str, Any]:
        # six significant figures, not six decimals: a p of 4.3e-7 must not be stored as 0.0
        return {"only_baseline_right": self.only_baseline_right, "only_this_right": self.only_this_right,
                "p_value": float(f"{self.pvalue:.6g}")}


def compare(baseline: Sequence[bool], this: Sequence[bool]) -> Paired:
    """``this`` against ``baseline``: one flag per question, the same questions in the same order."""
    m = mcnemar_test(baseline, this)
    return Paired(m.n, sum(map(bool, baseline)), sum(map(bool, this)), m.a_only, m.b_only, m.pvalue)


def mcnemar_row(baseline: Sequence[bool], this: Sequence[bool]) -> dict[str, Any]:
    """`compare` as the result files store it: only_baseline_right, only_this_right, p_value."""
    return compare(baseline, this).row()


class ReaderEvaluator(Evaluator[Question, Answer]):
    """``labels``: the option letters macro-F1 and the prediction shares are taken over (none: neither)."""

    name = "reader"

    def __init__(self, labels: Sequence[str] | None = None):
        self.labels = list(labels) if labels else None

    def question(self, item: Question) -> Question:
        return item

    def judge(self, item: Question, answer: Answer) -> dict[str, Any]:
        return self.row(item.qid, item.answer, answer.choice, outcome=answer.outcome,
                        seconds=answer.timings.get("total", 0.0), prompt_tokens=answer.tokens.get("prompt", 0))

    @staticmethod
    def row(qid: str, gold: str | None, pred: str | None, *, outcome: str | None = None, seconds: float = 0.0,
            prompt_tokens: int = 0) -> dict[str, Any]:
        """One judged question. No prediction is a parse failure (never a default letter) and wrong."""
        return {"qid": qid, "gold": gold, "pred": pred, "correct": pred is not None and pred == gold,
                "outcome": outcome or ("answered" if pred is not None else "parse_failure"),
                "seconds": seconds, "prompt_tokens": prompt_tokens}

    @staticmethod
    def from_record(record: RunRecord) -> dict[str, Any]:
        """A row from a run's stored record (eval/records.py): its own ``correct`` is kept, so a
        re-scored record (metrics.recalibrate) is judged as it was re-scored."""
        return {"qid": record.qid, "gold": record.gold, "pred": record.choice, "correct": bool(record.correct),
                "outcome": record.outcome, "seconds": record.seconds, "prompt_tokens": record.tokens.get("prompt", 0)}

    def summarize(self, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        n = len(rows)
        out: dict[str, Any] = {"n": n, "accuracy": rate([r["correct"] for r in rows])}
        if self.labels:
            gold, pred = [r["gold"] for r in rows], [r["pred"] for r in rows]
            out["macro_f1"] = round(macro_f1(gold, pred, self.labels), 4) if n else None
            out["pred_share"] = {lab: round(pred.count(lab) / n, 3) for lab in self.labels} if n else None
        out["parse_failures"] = sum(r.get("outcome") == "parse_failure" for r in rows)
        out["errors"] = sum(r.get("outcome") == "error" for r in rows)
        # summed in row order: the per-question cost the result files have always stored
        out["seconds_per_q"] = round(sum(r.get("seconds", 0.0) for r in rows) / n, 2) if n else None
        out["prompt_tokens_per_q"] = round(sum(r.get("prompt_tokens", 0) for r in rows) / n, 1) if n else None
        return out

    @staticmethod
    def paired(rows: Sequence[dict[str, Any]], baseline: Mapping[str, bool]) -> Paired:
        """These rows against a baseline arm's correctness by question id, on the questions both
        answered (an arm still running has fewer)."""
        shared = [r for r in rows if r["qid"] in baseline]
        return compare([baseline[r["qid"]] for r in shared], [bool(r["correct"]) for r in shared])
