from __future__ import annotations

import math

import pytest

from medground import registry
from medground.llm.base import ChatResult, LLMSettings, TokenLogprob
from medground.retrieve.base import EmptyQueryError, Reranker
from medground.llm.rerank import LLMRerankSettings, LLMYesNoReranker, make_llm_yesno
from medground.schema import Chunk, Passage


def chunk(cid: str, text: str = "") -> Chunk:
    return Chunk(chunk_id=cid, doc_id="doc", corpus="test", source_path="doc.xml", text=text or f"text of {cid}",
                 title="Title doc", book="Book", chapter="Ch 1", section_path=("Sec",), char_start=0, char_end=0)


def _yes_no(p_yes: float | None, p_no: float | None, extra: tuple[str, float] = ("The", -5.0)) -> ChatResult:
    top = [(t, math.log(p)) for t, p in (("Yes", p_yes), (" no", p_no)) if p]
    top.append(extra)
    top.sort(key=lambda t: -t[1])
    return ChatResult(text=top[0][0], logprobs=[TokenLogprob(top[0][0], top[0][1], top)])


class ScriptedLLM:
    """Answers each passage's request by looking up a word of the passage in ``by_word``."""

    name = "fake"
    fingerprint = "fake"

    def __init__(self, by_word: dict[str, ChatResult]):
        self.settings = LLMSettings(backend="openai", model="fake", cache=False)
        self.by_word = by_word
        self.requests = []

    def chat_many(self, requests, *, return_exceptions=False):
        self.requests.extend(requests)
        out = []
        for r in requests:
            text = r.messages[-1]["content"]
            out.append(next(v for w, v in self.by_word.items() if w in text.split("Passage:")[1]))
        return out


def passages(*texts: str) -> list[Passage]:
    return [Passage(chunk(f"c{i}", t), score=1.0 / i, source="bm25", rank=i) for i, t in enumerate(texts, 1)]


def test_orders_by_probability_of_yes():
    llm = ScriptedLLM({"alpha": _yes_no(0.2, 0.6), "beta": _yes_no(0.9, 0.05), "gamma": _yes_no(None, 0.7)})
    rr = LLMYesNoReranker(llm)
    assert isinstance(rr, Reranker)
    out = rr.rerank("which drug?", passages("alpha text", "beta text", "gamma text"), k=3)
    assert [p.chunk.chunk_id for p in out] == ["c2", "c1", "c3"]
    assert out[0].score == pytest.approx(0.9 / 0.95) and out[1].score == pytest.approx(0.25)
    assert out[2].score == 0.0 and [p.rank for p in out] == [1, 2, 3]
    assert all(p.source == "rerank:llm-yesno" for p in out)
    req = llm.requests[0]
    assert req.max_tokens == 1 and req.top_logprobs == 20
    assert req.messages[-1]["content"].startswith("Question: which drug?")  # shared prefix first


def test_unscored_pairs_rank_last_and_are_counted_and_k_cuts():
    llm = ScriptedLLM({"alpha": _yes_no(None, None, ("Maybe", -0.1)), "beta": _yes_no(0.6, 0.3)})
    rr = LLMYesNoReranker(llm)
    out = rr.rerank("q", passages("alpha", "beta"), k=1)
    assert [p.chunk.chunk_id for p in out] == ["c2"] and rr.unscored == 1


def test_passages_are_cut_and_empty_inputs():
    llm = ScriptedLLM({"x": _yes_no(0.5, 0.5)})
    rr = LLMYesNoReranker(llm, LLMRerankSettings(llm=llm.settings, max_passage_chars=60))
    rr.rerank("q", passages("x " * 200), k=1)
    assert llm.requests[0].messages[-1]["content"].count("x ") <= 30
    assert rr.rerank("q", [], k=3) == []
    with pytest.raises(EmptyQueryError):
        rr.rerank("  ", passages("x"), k=1)


def test_registered_as_reranker():
    assert registry._FACTORIES[("reranker", "llm-yesno")] is make_llm_yesno


@pytest.mark.slow
def test_real_small_model_scores_are_probabilities():
    pytest.importorskip("xllamacpp")
    from medground.llm.models import pull

    pull("smollm2-135m", progress=False)
    rr = make_llm_yesno({"llm": {"model": "smollm2-135m", "threads": 1, "n_ctx": 2048, "cache": False}})
    ps = passages("Aspirin irreversibly inhibits cyclooxygenase.", "The Eiffel Tower is in Paris.")
    out = rr.rerank("How does aspirin work?", ps, k=2)
    assert len(out) == 2 and all(0.0 <= p.score <= 1.0 for p in out)
    assert rr.unscored == 0
