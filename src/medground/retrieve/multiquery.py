"""Fan several queries out over several retrievers and fuse every ranked list into one.

A query set is the original question plus its rewrites / expansions / keywords (schema.Query
kinds). Each (retriever, query) pair yields one ranked list; all lists are fused at once, so a
passage found by three queries and two retrievers is rewarded five times (RRF) or five
normalized scores are summed (norm). Each list's weight is the retriever's weight times the
query kind's weight (default 1.0).

Every fused passage records who found it in ``metadata["hits"]``: one entry per list with the
retriever, the query text and kind, its rank and raw score in that list. ``metadata["queries"]``
lists the distinct query texts that hit it, in the order the queries were given.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from medground.retrieve.base import Fuser, Retriever, check_query
from medground.retrieve.fusion import BaseFuser
from medground.schema import Passage, Query


@dataclass(slots=True)
class WeightedRetriever:
    retriever: Retriever
    weight: float = 1.0
    label: str = ""  # name shown in provenance; defaults to retriever.name

    @property
    def name(self) -> str:
        return self.label or self.retriever.name


def as_queries(queries: str | Query | Sequence[str | Query]) -> list[Query]:
    """Normalize user input to a non-empty list of Query; the first plain string is "original"."""
    if isinstance(queries, (str, Query)):
        queries = [queries]
    out: list[Query] = []
    for i, q in enumerate(queries):
        if isinstance(q, Query):
            out.append(Query(text=check_query(q.text), kind=q.kind))
        else:
            out.append(Query(text=check_query(q), kind="original" if i == 0 else "rewrite"))
    if not out:
        raise ValueError("no queries given: pass at least the question")
    # The same text twice would be counted twice by fusion; keep the first occurrence.
    seen: set[str] = set()
    return [q for q in out if not (q.text in seen or seen.add(q.text))]


def primary_query(queries: Sequence[Query]) -> Query:
    """The query a reranker scores against: the first "original", else the first one."""
    return next((q for q in queries if q.kind == "original"), queries[0])


class MultiQueryRetriever:
    """Retrieve ``top`` per (retriever, query) and fuse. Also a Retriever for a single query.

    With exactly one list and ``fuser=None`` the list is passed through unchanged (its passages
    still get provenance); more than one list without a fuser is an error.
    """

    def __init__(
        self,
        retrievers: Sequence[WeightedRetriever | Retriever],
        fuser: Fuser | None,
        *,
        top: int = 150,
        kind_weights: Mapping[str, float] | None = None,
    ) -> None:
        if not retrievers:
            raise ValueError("MultiQueryRetriever needs at least one retriever")
        self.retrievers = [r if isinstance(r, WeightedRetriever) else WeightedRetriever(r) for r in retrievers]
        self.fuser = fuser
        self.top = top
        self.kind_weights = dict(kind_weights or {})
        self.timings: dict[str, float] = {}  # seconds of the last retrieve(): first_stage, fusion
        parts = "+".join(r.name for r in self.retrievers)
        self.name = f"{fuser.name}({parts})" if fuser is not None else parts

    def lists(self, queries: Sequence[Query], top: int | None = None) -> tuple[list[list[Passage]], list[dict], list[float]]:
        """The ranked lists, one per (retriever, query), with their labels and weights."""
        top = top or self.top
        lists: list[list[Passage]] = []
        labels: list[dict] = []
        weights: list[float] = []
        texts = [q.text for q in queries]
        for wr in self.retrievers:
            results = wr.retriever.batch_search(texts, k=top)
            if len(results) != len(texts):
                raise RuntimeError(f"retriever {wr.name!r} returned {len(results)} lists for {len(texts)} queries")
            for q, ranked in zip(queries, results, strict=True):
                lists.append(list(ranked))
                labels.append({"retriever": wr.name, "query": q.text, "kind": q.kind})
                weights.append(wr.weight * self.kind_weights.get(q.kind, 1.0))
        return lists, labels, weights

    def retrieve(self, queries: str | Query | Sequence[str | Query], k: int | None = None) -> list[Passage]:
        qs = as_queries(queries)
        k = k or self.top
        t0 = time.perf_counter()
        lists, labels, weights = self.lists(qs)
        t1 = time.perf_counter()
        if self.fuser is None:
            if len(lists) != 1:
                raise ValueError(
                    f"{len(lists)} ranked lists ({len(self.retrievers)} retrievers x {len(qs)} queries) "
                    "need a fusion method: set fusion to 'rrf' or 'norm'"
                )
            out = [
                Passage(p.chunk, p.score, p.source, rank=i, metadata={**p.metadata, "hits": [
                    {"list": 0, "source": p.source, "rank": i, "score": p.score, **labels[0]}]})
                for i, p in enumerate(lists[0][:k], start=1)
            ]
        else:
            if isinstance(self.fuser, BaseFuser):
                out = self.fuser.fuse(lists, k, weights=weights, labels=labels)
            else:  # a third-party Fuser knows only the protocol: its own weights, no labels
                out = self.fuser.fuse(lists, k)
        self.timings = {"first_stage": t1 - t0, "fusion": time.perf_counter() - t1}
        order = {q.text: i for i, q in enumerate(qs)}
        for p in out:
            hit_queries = {h["query"] for h in p.metadata.get("hits", ())}
            p.metadata["queries"] = sorted(hit_queries, key=order.__getitem__)
        return out

    # Retriever protocol: one query in, one fused list out.
    def search(self, query: str, k: int = 10) -> list[Passage]:
        return self.retrieve([Query(query)], k)

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        return [self.search(q, k) for q in queries]
