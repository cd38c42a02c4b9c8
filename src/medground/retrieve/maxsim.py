"""Late-interaction MaxSim reranking (the ColBERT scoring rule) over any token-embedding model.

    score(q, d) = sum over query tokens i of  max over passage tokens j of  <q_i, d_j>

with every token vector L2-normalized. Registered as reranker ``"maxsim"``.

Honest labelling: the default model is all-MiniLM-L6-v2 (its contextual token vectors from
the last hidden layer, via ``transformers.AutoModel``). That is *MaxSim over MiniLM token
vectors*, not ColBERT: ColBERT trains its encoder (and a 128-d projection) for this rule, and no
ColBERT weights exist on these machines. Point ``model`` at any BERT-like encoder directory to
use another; a real ColBERT checkpoint's projection layer is not applied here.

Padding tokens are dropped; [CLS] and [SEP] are kept (as ColBERT does). Passage token matrices
are cached by chunk id (bounded LRU), so reranking the same candidates for several questions
encodes each passage once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from medground.registry import register
from medground.retrieve.rerank import RerankSettings, ScoringReranker, minilm_path
from medground.schema import Passage


def maxsim(query_tokens: np.ndarray, passage_tokens: np.ndarray) -> float:
    """Sum over query rows of the max dot product with any passage row. Inputs (m, d), (n, d)."""
    if query_tokens.size == 0 or passage_tokens.size == 0:
        return 0.0
    return float((query_tokens @ passage_tokens.T).max(axis=1).sum())


class TokenEncoder:
    """Per-token, L2-normalized vectors from a transformers encoder (padding removed)."""

    def __init__(self, model: str, *, max_length: int = 512, batch_size: int = 32, device: str = "cpu") -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.model = AutoModel.from_pretrained(model).to(device).eval()
        self.max_length = max_length
        self.batch_size = batch_size
        self.device = device

    def encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        torch = self._torch
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            enc = self.tokenizer(batch, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
            enc = {k: v.to(self.device) for k, v in enc.items()}
            with torch.inference_mode():
                hidden = self.model(**enc).last_hidden_state
            hidden = torch.nn.functional.normalize(hidden, p=2, dim=-1)
            mask = enc["attention_mask"].bool()
            for row, m in zip(hidden, mask, strict=True):
                out.append(row[m].float().cpu().numpy())
        return out


class MaxSimReranker(ScoringReranker):
    """Rerank by MaxSim between query and passage token vectors (see module docstring)."""

    name = "maxsim"

    def __init__(self, encoder: Any, *, candidates: int = 150, cache_size: int = 20_000) -> None:
        super().__init__(candidates)
        self.encoder = encoder  # anything with encode(texts) -> list[(n_tokens, dim) arrays]
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def _passage_tokens(self, passages: Sequence[Passage]) -> list[np.ndarray]:
        missing = [p for p in passages if p.chunk.chunk_id not in self._cache]
        # one chunk listed twice is encoded once
        todo = list({p.chunk.chunk_id: p for p in missing}.values())
        if todo:
            for p, mat in zip(todo, self.encoder.encode([p.chunk.text for p in todo]), strict=True):
                self._cache[p.chunk.chunk_id] = mat
        mats = []
        for p in passages:
            self._cache.move_to_end(p.chunk.chunk_id)
            mats.append(self._cache[p.chunk.chunk_id])
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return mats

    def score(self, query: str, passages: Sequence[Passage]) -> np.ndarray:
        q = self.encoder.encode([query])[0]
        return np.array([maxsim(q, d) for d in self._passage_tokens(passages)])


@register("reranker", "maxsim")
def make_maxsim(settings: RerankSettings | None = None, encoder: Any = None, **overrides: Any) -> MaxSimReranker:
    s = (settings or RerankSettings(name="maxsim")).model_copy(update=overrides)
    if encoder is None:
        encoder = TokenEncoder(s.model or minilm_path(), max_length=s.max_length, batch_size=s.batch_size,
                               device=s.device)
    return MaxSimReranker(encoder, candidates=s.candidates)
