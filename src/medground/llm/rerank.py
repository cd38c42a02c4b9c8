"""Pointwise LLM reranker: score = P(yes) for "is this passage helpful to answer the question?".

Works with any LLM backend that returns token log-probabilities (llama.cpp, vLLM, OpenAI).
The question comes before the passage, so the pairs of one query share a prompt prefix that
llama.cpp keeps in its KV cache instead of reading it again for every passage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from medground.llm.base import LLM, ChatRequest, LLMSettings, create_llm
from medground.llm.scoring import label_logprobs
from medground.registry import register
from medground.retrieve.base import check_query
from medground.schema import Passage

SYSTEM = "You judge whether a passage helps answer a medical question. Reply with yes or no only."
TEMPLATE = "Question: {query}\n\nPassage: {passage}\n\nIs this passage relevant and helpful to answer the question? Answer yes or no."


class LLMRerankSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    llm: LLMSettings = Field(default_factory=LLMSettings)
    max_passage_chars: int = Field(1500, ge=50, description="passages are cut to this length")
    top_logprobs: int = Field(20, ge=2)


class LLMYesNoReranker:
    name = "llm-yesno"

    def __init__(self, llm: LLM, settings: LLMRerankSettings | None = None):
        self.llm = llm
        self.settings = settings or LLMRerankSettings(llm=llm.settings)
        self.unscored = 0  # pairs where neither yes nor no was among the top alternatives

    def requests(self, query: str, passages: Sequence[Passage]) -> list[ChatRequest]:
        cut = self.settings.max_passage_chars
        return [
            ChatRequest(
                messages=[{"role": "system", "content": SYSTEM},
                          {"role": "user", "content": TEMPLATE.format(query=query, passage=p.chunk.text[:cut])}],
                max_tokens=1, temperature=0.0, top_logprobs=self.settings.top_logprobs,
            )
            for p in passages
        ]

    def scores(self, query: str, passages: Sequence[Passage]) -> list[float]:
        query = check_query(query)
        results = self.llm.chat_many(self.requests(query, passages))
        out = []
        for r in results:
            found = label_logprobs(r.first_top, ["yes", "no"], case_sensitive=False)
            if not found:
                self.unscored += 1
                out.append(0.0)  # no evidence of relevance: ranks last, counted above
                continue
            p_yes = math.exp(found.get("yes", -math.inf))
            p_no = math.exp(found.get("no", -math.inf))
            out.append(p_yes / (p_yes + p_no))
        return out

    def rerank(self, query: str, passages: Sequence[Passage], k: int) -> list[Passage]:
        if not passages:
            return []
        scores = self.scores(query, passages)
        order = sorted(range(len(passages)), key=lambda i: (-scores[i], passages[i].rank, i))[:k]
        return [replace(passages[i], score=scores[i], source=f"rerank:{self.name}", rank=r)
                for r, i in enumerate(order, 1)]


@register("reranker", "llm-yesno")
def make_llm_yesno(settings: LLMRerankSettings | dict[str, Any] | None = None, llm: LLM | None = None
                   ) -> LLMYesNoReranker:
    if isinstance(settings, dict):
        settings = LLMRerankSettings(**settings)
    settings = settings or LLMRerankSettings()
    return LLMYesNoReranker(llm or create_llm(settings.llm), settings)
