"""Is a claim stated by a passage? The judges the reader and the eval lab share.

``LLMClaimJudge`` reads P(yes) from one forward pass of the ``claim_support`` prompt; its
threshold was fitted on the labelled claims' development half (benchmarks/attribution.py;
reader.json ``attribution_judge``: 88.3 % agreement on the test half, kappa 0.76).
``LexicalClaimJudge`` is the share of the claim's content terms found in the passage.
"""

from __future__ import annotations

from typing import Protocol

from medground.llm.base import LLM
from medground.llm.scoring import yes_probability
from medground.llm import prompts

LEXICAL_THRESHOLD = 0.7  # the share of content terms the reader's own support check asks for
# fitted on the labelled claims' dev half (benchmarks/attribution.py; reader.json attribution_judge)
LLM_THRESHOLD = 0.6033


class ClaimJudge(Protocol):
    name: str

    def p_supported(self, claim: str, passage: str) -> float | None: ...


class LLMClaimJudge:
    """P(yes) from one forward pass of the ``claim_support`` prompt (None: neither yes nor no)."""

    name = "llm"

    def __init__(self, llm: LLM):
        self.llm = llm

    def p_supported(self, claim: str, passage: str) -> float | None:
        result = self.llm.chat(prompts.messages("claim_support", passage=passage, claim=claim), max_tokens=1,
                               temperature=0.0, top_logprobs=20)
        return yes_probability(result)


class LexicalClaimJudge:
    """The share of the claim's content terms (stemmed, stop words dropped) in the passage."""

    name = "lexical"

    def p_supported(self, claim: str, passage: str) -> float | None:
        from medground.index.text import text_tokenizer

        tok = text_tokenizer()
        want = set(tok.tokenize(claim))
        return None if not want else len(want & set(tok.tokenize(passage))) / len(want)
