"""The retrieval engine: queries → first-stage retrievers → fusion → rerank → packed Evidence.

This is what the QA pipelines call::

    engine = RetrievalEngine(RetrieveSettings(retrievers=["bm25", "dense"], fusion="norm",
                                              rerank={"name": "maxsim"}))
    passages = engine.retrieve([Query("What lowers blood glucose?")])   # top final_k
    evidence = engine.evidence(queries)                                 # numbered, in budget
    engine.timings   # seconds per stage of the last call

Stages (each optional except the first):

1. every retriever × every query returns ``top`` candidates (restricted to the chunks of the
   ``sections`` best sections when set);
2. ``fusion`` fuses all those lists (needed whenever there is more than one);
3. ``rerank`` re-scores the first ``rerank.candidates`` against the original query;
4. ``evidence`` packs the ranked passages, best first, into at most ``final_k`` citations
   within ``budget_tokens`` (duplicates and passages that do not fit are replaced by the next).

Retrievers are built lazily from the registry (kind ``"retriever"``) over the chunk store, or
injected (``retrievers={"bm25": my_retriever}``) by tests and benchmarks.
"""

from __future__ import annotations

import inspect
import logging
import time
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from medground import registry
from medground.store.settings import StoreSettings
from medground.retrieve.base import Reranker, Retriever
from medground.retrieve.fusion import FusionSettings
from medground.retrieve.multiquery import (
    MultiQueryRetriever,
    WeightedRetriever,
    as_queries,
    primary_query,
)
from medground.retrieve.pack import TokenCount, default_token_counter, pack
from medground.retrieve.rerank import RerankSettings
from medground.schema import Evidence, Passage, Query

log = logging.getLogger(__name__)


class RetrieverSpec(BaseModel):
    """One first-stage retriever: its registry name, fusion weight, and its own settings
    (validated against the settings model of the registered factory, e.g. DenseSettings)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    weight: float = Field(1.0, ge=0)
    settings: dict[str, Any] = Field(default_factory=dict)


class RetrieveSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    retrievers: list[RetrieverSpec] = Field(default_factory=lambda: [RetrieverSpec(name="bm25")])
    fusion: Literal["norm", "rrf"] | None = "rrf"
    rrf_k: float = Field(60.0, gt=0)
    top: int = Field(150, ge=1, description="candidates per retriever and query")
    sections: int | None = Field(None, ge=1, description="restrict to the top-K sections first")
    rerank: RerankSettings | None = None
    final_k: int = Field(6, ge=1, description="passages returned / cited")
    budget_tokens: int = Field(1200, ge=1)
    overflow: Literal["skip", "truncate"] = "skip"
    tokenizer: str | None = Field(None, description="token counting for the budget; None = MiniLM")
    kind_weights: dict[str, float] = Field(
        default_factory=dict, description="fusion weight per query kind (original, rewrite, ...)"
    )
    corpora: list[str] | None = None
    store: StoreSettings | None = Field(
        None, description="the chunk store to read (default: $MEDGROUND_STORE, else the SQLite file); "
                          "a Postgres store keeps dense vectors in pgvector")

    @field_validator("retrievers", mode="before")
    @classmethod
    def _names_are_specs(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = [v]
        return [{"name": x} if isinstance(x, str) else x for x in v] if isinstance(v, list) else v

    @field_validator("rerank", mode="before")
    @classmethod
    def _rerank_name(cls, v: Any) -> Any:
        return {"name": v} if isinstance(v, str) else v

    @model_validator(mode="after")
    def _check(self) -> RetrieveSettings:
        if not self.retrievers:
            raise ValueError("retrievers: give at least one (bm25, dense, splade, ...)")
        if self.fusion is None and len(self.retrievers) > 1:
            raise ValueError("fusion: several retrievers need a fusion method ('rrf' or 'norm')")
        return self


def _settings_model(factory: Callable[..., Any]) -> type[BaseModel] | None:
    """The pydantic model a registered factory takes as ``settings`` (from its type hints)."""
    try:
        hint = typing.get_type_hints(factory).get("settings")
    except (NameError, TypeError):  # unresolvable annotations: the caller passes a plain dict
        return None
    for t in (hint, *typing.get_args(hint)):
        if inspect.isclass(t) and issubclass(t, BaseModel):
            return t
    return None


def make_reranker(rs: RerankSettings) -> Reranker:
    """Build the named reranker. Factories that take RerankSettings get it whole; one with its
    own settings model (llm-yesno) gets ``rs.options`` validated against that model."""
    factory = registry.get("reranker", rs.name)
    model = _settings_model(factory)
    if model is None or issubclass(model, RerankSettings):
        if rs.options:
            raise ValueError(f"rerank.options: reranker {rs.name!r} takes no options; use the rerank fields")
        return factory(settings=rs)
    return factory(settings=model.model_validate(rs.options))


class RetrievalEngine:
    def __init__(
        self,
        settings: RetrieveSettings | Mapping[str, Any] | None = None,
        *,
        retrievers: Mapping[str, Retriever] | None = None,
        reranker: Reranker | None = None,
        chunks: Any = None,
        section_index: Any = None,
        count_tokens: TokenCount | None = None,
        build_if_missing: bool = False,
        defer_builds: Sequence[str] = (),
    ) -> None:
        """``defer_builds``: retrievers whose missing index is NOT built on first use (a dense
        index over the textbooks takes ~13 min on 2 cores): when one is missing it is left out,
        named in ``left_out`` with the command that builds it, as long as another retriever
        remains. For interactive answers only — an evaluation must build or fail, never degrade."""
        if settings is None:
            settings = RetrieveSettings()
        elif not isinstance(settings, RetrieveSettings):
            settings = RetrieveSettings.model_validate(settings)
        self.settings = settings
        self._given = dict(retrievers or {})
        self._reranker = reranker
        if chunks is None and settings.store is not None:
            from medground.store.settings import open_store

            chunks = open_store(settings.store, must_exist=True)
        self._chunks = chunks
        self._section_index = section_index
        self._count = count_tokens
        self._build_if_missing = build_if_missing
        self._mq: MultiQueryRetriever | None = None
        self._defer = frozenset(defer_builds)
        self.left_out: dict[str, str] = {}  # retriever name → why (its index is missing)
        self.timings: dict[str, float] = {}  # seconds per stage of the last call

    # --- construction (lazy: nothing heavy happens until the first query) ------------------
    def _build_retriever(self, spec: RetrieverSpec) -> Retriever:
        if spec.name in self._given:
            return self._given[spec.name]
        factory = registry.get("retriever", spec.name)
        model = _settings_model(factory)
        build = self._build_if_missing and spec.name not in self._defer
        kwargs: dict[str, Any] = {"corpora": self.settings.corpora, "build_if_missing": build}
        if self._chunks is not None:
            kwargs["chunks"] = self._chunks
        if spec.settings:
            kwargs["settings"] = model.model_validate(spec.settings) if model else spec.settings
        return factory(**kwargs)

    def _sectioned(self, inner: Retriever) -> Retriever:
        """``sections: K``: the registry's section filter around ``inner``, one section index shared."""
        from medground.index.sections import SectionSettings

        kwargs: dict[str, Any] = {"corpora": self.settings.corpora, "build_if_missing": self._build_if_missing}
        if self._chunks is not None:
            kwargs["chunks"] = self._chunks
        filtered = registry.create("retriever", "sections", settings=SectionSettings(top_sections=self.settings.sections),
                                   inner=inner, section_index=self._section_index, **kwargs)
        self._section_index = filtered.section_index
        return filtered

    @property
    def first_stage(self) -> MultiQueryRetriever:
        if self._mq is None:
            s = self.settings
            from medground.index.fingerprint import IndexNotFoundError

            weighted = []
            for spec in s.retrievers:
                try:
                    r = self._build_retriever(spec)
                except IndexNotFoundError as exc:
                    if spec.name not in self._defer or len(s.retrievers) - len(self.left_out) <= 1:
                        raise
                    self.left_out[spec.name] = str(exc)
                    log.warning("answering without %s: %s", spec.name, exc)
                    continue
                if s.sections:
                    r = self._sectioned(r)
                weighted.append(WeightedRetriever(r, spec.weight, label=spec.name))
            # the registry names the fuser, as it does the retrievers and the reranker
            fuser = (registry.get("fuser", s.fusion)(settings=FusionSettings(method=s.fusion, rrf_k=s.rrf_k))
                     if s.fusion else None)
            self._mq = MultiQueryRetriever(weighted, fuser, top=s.top, kind_weights=s.kind_weights)
        return self._mq

    def retriever(self, name: str) -> Retriever | None:
        """The first-stage retriever configured as ``name`` (unwrapped), or None."""
        for weighted in self.first_stage.retrievers:
            if weighted.name == name:
                return weighted.retriever
        return None

    @property
    def reranker(self) -> Reranker | None:
        if self._reranker is None and self.settings.rerank is not None:
            self._reranker = make_reranker(self.settings.rerank)
        return self._reranker

    @property
    def count_tokens(self) -> TokenCount:
        if self._count is None:
            self._count = default_token_counter(self.settings.tokenizer)
        return self._count

    # --- the stages -----------------------------------------------------------------------------
    def ranked(self, queries: str | Query | Sequence[str | Query]) -> list[Passage]:
        """Every candidate, best first: fused first-stage results, reranked when configured."""
        qs = as_queries(queries)
        timings: dict[str, float] = {}
        mq = self.first_stage
        passages = mq.retrieve(qs, k=self.settings.top)
        timings.update(mq.timings)
        rr = self.reranker
        if rr is not None and passages:
            t = time.perf_counter()
            pool = passages[: self.settings.rerank.candidates if self.settings.rerank else len(passages)]
            passages = rr.rerank(primary_query(qs).text, pool, k=len(pool))
            timings["rerank"] = time.perf_counter() - t
        self.timings = timings
        return passages

    def retrieve(self, queries: str | Query | Sequence[str | Query], k: int | None = None) -> list[Passage]:
        """The top ``k`` (default ``final_k``) passages for the queries."""
        return self.ranked(queries)[: k or self.settings.final_k]

    def evidence(self, queries: str | Query | Sequence[str | Query],
                 prefer: Callable[[Sequence[Passage]], list[bool]] | None = None, *,
                 preferred_only: bool = False) -> Evidence:
        """Ranked passages packed into at most ``final_k`` citations within the token budget.
        ``prefer``: per ranked passage, whether it goes first (the order kept within each part);
        ``preferred_only``: the others are left out, when any passage is preferred."""
        qs = as_queries(queries)
        passages = self.ranked(qs)
        t = time.perf_counter()
        reordered = False
        if prefer is not None and passages:
            first = prefer(passages)
            if any(first):
                rest = [] if preferred_only else [p for p, f in zip(passages, first) if not f]
                passages = [p for p, f in zip(passages, first) if f] + rest
                reordered = True
        ev = pack(
            passages,
            budget_tokens=self.settings.budget_tokens,
            count_tokens=self.count_tokens,
            max_passages=self.settings.final_k,
            overflow=self.settings.overflow,
            queries=qs,
            keep_order=reordered,
        )
        self.timings["pack"] = time.perf_counter() - t
        return ev
