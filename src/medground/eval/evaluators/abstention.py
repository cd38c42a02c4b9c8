"""Abstention judged on both sides: wrong abstention on items the evidence answers, right
abstention on items it does not, each a `rate`; and the support threshold a gate abstains below,
fitted on a development split (`fit_threshold`) and reported on another (`gate_rates`).

A scored row is ``{"unanswerable": bool, "score": float | None, "supported": bool}`` (``supported``:
the answer given would be supported; answerable rows only, optional). A benchmark that reads each
question twice, with its gold and with a wrong record, turns each pair into two scored rows with
`scored_rows`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from medground.eval.evaluators.base import Evaluator, rate
from medground.schema import Answer, Question


def abstention_rates(answerable: Sequence[bool], unanswerable: Sequence[bool]) -> dict[str, dict[str, Any]]:
    """Flags say "abstained": wrong abstention where the item is answerable, right where it is not."""
    return {"wrong_abstention": rate(answerable), "right_abstention": rate(unanswerable)}


def scored_rows(pairs: Sequence[dict[str, Any]], score: str, *, unanswerable: bool,
                supported: str | None = None) -> list[dict[str, Any]]:
    """One side of paired readings as scored rows: ``score`` names the support field read (e.g.
    ``gold_support`` answerable, ``wrong_support`` unanswerable); ``supported`` the field saying
    whether the answer given would be supported."""
    return [{"unanswerable": unanswerable, "score": p[score],
             **({"supported": bool(p[supported])} if supported else {})} for p in pairs]


def _abstains(row: dict[str, Any], threshold: float) -> bool:
    return (row["score"] or 0.0) < threshold  # no score: the gate had nothing to answer with


def gate_rates(rows: Sequence[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """What a gate abstaining below ``threshold`` does on scored rows: both abstention rates, and
    the share of the answers it lets through on answerable rows that are supported."""
    answerable = [r for r in rows if not r["unanswerable"]]
    unanswerable = [r for r in rows if r["unanswerable"]]
    given = [r for r in answerable if not _abstains(r, threshold) and "supported" in r]
    return {"threshold": threshold,
            **abstention_rates([_abstains(r, threshold) for r in answerable],
                               [_abstains(r, threshold) for r in unanswerable]),
            "support_rate": rate([r["supported"] for r in given])}


def fit_threshold(rows: Sequence[dict[str, Any]]) -> float:
    """The support threshold maximising right abstention + (1 − wrong abstention) on scored rows,
    among 0 and every score seen; ties go to the lower threshold (answer rather than abstain).
    Compared as exact fractions: rounded rates could break a true tie either way."""
    answerable = [r for r in rows if not r["unanswerable"]]
    unanswerable = [r for r in rows if r["unanswerable"]]

    def share(part: list[dict[str, Any]], c: float) -> Fraction:
        return Fraction(sum(_abstains(r, c) for r in part), len(part)) if part else Fraction(0)

    best, best_score = 0.0, None
    for c in sorted({0.0, *((r["score"] or 0.0) for r in rows)}):
        score = share(unanswerable, c) - share(answerable, c)
        if best_score is None or score > best_score:
            best, best_score = c, score
    return round(best, 4)


@dataclass(frozen=True)
class AbstentionItem:
    question: Question
    unanswerable: bool  # no evidence the system can reach answers it


class AbstentionEvaluator(Evaluator[AbstentionItem, Answer]):
    """Did the system abstain where it should? ``score_key``: the answer's metadata field holding
    its support score, kept on each row so a threshold can be fitted on the rows afterwards."""

    name = "abstention"

    def __init__(self, score_key: str = "support"):
        self.score_key = score_key

    def question(self, item: AbstentionItem) -> Question:
        return item.question

    def judge(self, item: AbstentionItem, answer: Answer) -> dict[str, Any]:
        return {"qid": item.question.qid, "unanswerable": item.unanswerable, "outcome": answer.outcome,
                "abstained": answer.outcome != "answered", "score": answer.metadata.get(self.score_key)}

    def summarize(self, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        answerable = [r["abstained"] for r in rows if not r["unanswerable"]]
        unanswerable = [r["abstained"] for r in rows if r["unanswerable"]]
        return {"n": len(rows), "answerable": len(answerable), "unanswerable": len(unanswerable),
                **abstention_rates(answerable, unanswerable)}

    fit_threshold = staticmethod(fit_threshold)
    at_threshold = staticmethod(gate_rates)
