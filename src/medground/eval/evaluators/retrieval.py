"""A retriever's ranked passages judged per query, by the functions of eval/retrieval_metrics.py:

- against gold relevant ids: R@k (recall), MRR@k, nDCG@k (graded when the gold ids carry gains),
  HR@k (every gold id in the top k);
- against a gold answer text: answer@k (its words in the top-k passages' text) and, given the
  wrong options, distractor@k (the share of them found there: a retriever that targets the answer
  shows answer@k above distractor@k).

Ids are read off each passage by ``key`` (the chunk id, or the document id to collapse passages to
documents) and deduplicated keeping the first rank. Means are plain means over queries; HR@k and
answer@k are per-query hits, summarised as a `rate` with its Wilson interval.

    ev = RetrievalEvaluator(recall_at=(1, 5, 10), mrr_at=10, key=doc_id)
    ev(retriever, items)                      # retriever.search(query, k=depth)
    ev.evaluate(items, rankings)              # rankings made elsewhere (a timed engine loop)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from medground.eval.evaluators.base import Evaluator, mean, rate
from medground.eval.retrieval_metrics import (
    answer_words,
    contains_answer,
    hit_at_k,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)
from medground.protocols import Retriever
from medground.schema import Passage


def chunk_id(p: Passage) -> str:
    return p.chunk.chunk_id


def doc_id(p: Passage) -> str:
    return p.chunk.doc_id


@dataclass(frozen=True)
class RetrievalItem:
    """One query with what counts as found: ``relevant`` gold ids (a mapping id → gain for graded
    nDCG), and/or the gold ``answer`` text with the wrong options as ``distractors``."""

    id: str
    query: str
    relevant: frozenset[Hashable] | Mapping[Hashable, float] = frozenset()
    answer: str | None = None
    distractors: tuple[str, ...] = field(default_factory=tuple)


class RetrievalEvaluator(Evaluator[RetrievalItem, Sequence[Passage]]):
    """``*_at``: the cut-offs to report (empty or None: not reported); ``depth``: how many passages
    ``__call__`` asks the retriever for (at least the largest cut-off)."""

    name = "retrieval"

    def __init__(self, recall_at: Sequence[int] = (1, 5, 10), mrr_at: int | None = 10,
                 ndcg_at: Sequence[int] = (), hit_at: Sequence[int] = (), answer_at: Sequence[int] = (),
                 key: Callable[[Passage], Hashable] = chunk_id, depth: int | None = None):
        self.recall_at, self.mrr_at, self.ndcg_at = tuple(recall_at), mrr_at, tuple(ndcg_at)
        self.hit_at, self.answer_at, self.key = tuple(hit_at), tuple(answer_at), key
        cuts = [*self.recall_at, *self.ndcg_at, *self.hit_at, *self.answer_at, *([mrr_at] if mrr_at else [])]
        self.depth = depth or max(cuts, default=10)

    def produce(self, system: Retriever, item: RetrievalItem) -> Sequence[Passage]:
        return system.search(item.query, k=self.depth)

    def judge(self, item: RetrievalItem, output: Sequence[Passage]) -> dict[str, Any]:
        row: dict[str, Any] = {"id": item.id}
        if item.relevant:
            ids = list(dict.fromkeys(self.key(p) for p in output))
            gold = set(item.relevant)
            row.update({f"R@{k}": recall_at_k(ids, gold, k) for k in self.recall_at})
            if self.mrr_at:
                row[f"MRR@{self.mrr_at}"] = reciprocal_rank(ids, gold, self.mrr_at)
            row.update({f"nDCG@{k}": ndcg_at_k(ids, item.relevant, k) for k in self.ndcg_at})
            row.update({f"HR@{k}": hit_at_k(ids, gold, k) for k in self.hit_at})
        if item.answer is not None:
            for k in self.answer_at:
                text = answer_words(" ".join(p.chunk.text for p in output[:k]))  # once for all options
                row[f"answer@{k}"] = contains_answer(text, item.answer, normalized=True)
                if item.distractors:
                    row[f"distractor@{k}"] = (sum(contains_answer(text, d, normalized=True) for d in item.distractors)
                                              / len(item.distractors))
        return row

    def summarize(self, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        names = list(dict.fromkeys(k for r in rows for k in r if k != "id"))
        out: dict[str, Any] = {"n": len(rows)}
        for name in names:
            values = [r[name] for r in rows if name in r]
            out[name] = rate(values) if name.startswith(("HR@", "answer@")) else mean(values)
        return out

    @staticmethod
    def answer_in_corpus(items: Sequence[RetrievalItem], texts: Sequence[str]) -> dict[str, Any]:
        """The ceiling of answer@k: items whose gold answer text occurs anywhere in ``texts``."""
        whole = answer_words(" ".join(texts))
        return rate([contains_answer(whole, it.answer or "", normalized=True) for it in items])


# --- the summaries as the retrieval result files store them ---------------------------------------
def known_item(ranked: Sequence[Sequence[Passage]], gold: Sequence[str]) -> dict[str, float]:
    """Known-item search (one gold document per query): R@1/5/10 and MRR@10 with passages collapsed
    to their documents, first occurrence kept."""
    ev = RetrievalEvaluator(recall_at=(1, 5, 10), mrr_at=10, key=doc_id)
    s = ev.evaluate([RetrievalItem(g, "", frozenset({g})) for g in gold], ranked).summary
    return {k: s[k] for k in ("R@1", "R@5", "R@10", "MRR@10")}


def mcq_items(rows: Sequence[Mapping[str, Any]]) -> list[RetrievalItem]:
    """Multiple-choice rows ({"question", "options", "answer_idx", "answer": the gold text}) as
    answer@k items, the wrong options as distractors."""
    return [RetrievalItem(str(i), r["question"], answer=r["answer"],
                          distractors=tuple(v for key, v in r["options"].items() if key != r["answer_idx"]))
            for i, r in enumerate(rows)]


def answer_hits(ranked: Sequence[Sequence[Passage]], rows: Sequence[Mapping[str, Any]], k: int) -> dict[str, Any]:
    """answer@k with its Wilson 95 % CI, distractor@k, and the per-question hits as a "0"/"1" string
    (so a later paired test can read them back from the results file)."""
    res = RetrievalEvaluator(recall_at=(), mrr_at=None, answer_at=(k,)).evaluate(mcq_items(rows), ranked)
    hit = res.summary[f"answer@{k}"]
    return {f"answer@{k}": hit["k"] / hit["n"], f"answer@{k}_ci95": hit["ci95"],
            f"distractor@{k}": res.summary[f"distractor@{k}"],
            f"hits@{k}": "".join("1" if r[f"answer@{k}"] else "0" for r in res.rows)}
