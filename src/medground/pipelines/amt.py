"""`amt`: textbook-augmented QA in the manner of LLM-AMT.

1. Query augmenter: the question rewritten in medical terminology + a chain-of-thought
   expansion of what it takes to answer it, concatenated into one retrieval query.
2. Hybrid retrieval (sparse + dense, normalized scores summed), top-32, optional rerank.
3. The reader reads the question once per passage (top-k, default 4) and returns a 0–10
   likelihood for every option plus its chosen option. The prompt is question, passage, then
   options: the reads of one question share the question as a prefix that llama.cpp keeps
   cached, and with ``reader.debias: permute`` the cyclic shifts of the options over one
   passage share question + passage.
4. Final answer = argmax over options of the summed confidence of the passages that chose it.

The ablation rows of the paper are settings: ``augment`` off (retrieve with the question as
is), ``vote`` off (one read over all passages together, like the rag reader).
"""

from __future__ import annotations

import time
from typing import Literal
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from medground.llm.base import LLM
from medground.llm.scoring import score_options, score_options_permuted
from medground.llm.structured import option_confidence
from medground.llm import prompts
from medground.pipelines.base import (
    ReaderSettings,
    Tally,
    chat_text,
    choice_answer,
    evidence_block,
    focus,
    free_text_answer,
    read_choice,
)
from medground.retrieve.engine import RetrievalEngine
from medground.schema import Answer, ChoiceDetail, Citation, Query, Question, Vote


class AmtSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    augment: bool = True  # rewrite + chain-of-thought expansion as the retrieval query
    vote: bool = True  # read once per passage and vote; off = one read over all passages
    passages: int = Field(4, ge=1, description="passages read one by one (top-k)")
    rewrite_max_tokens: int = Field(120, ge=8)
    expand_max_tokens: int = Field(200, ge=8)
    read_max_tokens: int = Field(96, ge=16)
    # "generated": the reader writes a 0-10 JSON table per passage (the paper's reader).
    # "logprob": the option letters' probabilities in one forward pass, x10 — small models'
    # generated tables collapse to one letter at 10, the probabilities do not.
    confidence: Literal["generated", "logprob"] = "generated"


def weighted_vote(votes: Sequence[Vote], k: int | None = None) -> str | None:
    """The choice with the largest summed confidence among the first ``k`` votes.

    ``votes`` are in retrieval rank order (LLM-AMT: one vote per passage). Votes without a choice
    (a passage whose reading failed to parse) are ignored. Ties go to the choice voted for first
    (the higher-ranked passage).
    """
    totals: dict[str, float] = {}
    first_seen: dict[str, int] = {}
    for i, v in enumerate(votes[:k] if k is not None else votes):
        if not v.choice:
            continue
        totals[v.choice] = totals.get(v.choice, 0.0) + v.confidence
        first_seen.setdefault(v.choice, i)
    if not totals:
        return None
    return max(totals, key=lambda c: (totals[c], -first_seen[c]))


def vote_totals(votes: Sequence[Vote]) -> dict[str, float]:
    """Summed confidence per chosen option (the quantity the final argmax runs over)."""
    totals: dict[str, float] = {}
    for v in votes:
        if v.choice:
            totals[v.choice] = totals.get(v.choice, 0.0) + v.confidence
    return totals


class AmtPipeline:
    name = "amt"

    def __init__(self, llm: LLM, engine: RetrievalEngine, settings: AmtSettings | None = None,
                 reader: ReaderSettings | None = None) -> None:
        self.llm = llm
        self.engine = engine
        self.settings = settings or AmtSettings()
        self.reader = reader or ReaderSettings()

    def augment(self, question: Question, tally: Tally) -> list[Query]:
        q = question.question.strip()
        if not self.settings.augment:
            return [Query(q, "original")]
        opts = prompts.format_options(question.options) if question.options else ""
        with tally.stage("augment"):
            rewrite = chat_text(self.llm, prompts.messages("amt_rewrite", question=q), tally,
                                max_tokens=self.settings.rewrite_max_tokens)
            expansion = chat_text(self.llm, prompts.messages("amt_expand", question=q, options=opts), tally,
                                  max_tokens=self.settings.expand_max_tokens)
        augmented = " ".join(part for part in (rewrite, expansion) if part) or q
        return [Query(augmented, "augmented")]

    def read_passage(self, question: Question, citation: Citation, tally: Tally) -> Vote:
        if self.settings.confidence == "logprob":
            return self.read_passage_logprob(question, citation, tally)
        letters = list(question.options)
        msgs = prompts.messages("amt_read", label=citation.label, passage=citation.text,
                                question=question.question.strip(),
                                options=prompts.format_options(question.options), letters=", ".join(letters))
        out = option_confidence(self.llm, msgs, letters, max_tokens=self.settings.read_max_tokens)
        tally.count(out.result)
        if out.value is None:
            return Vote(None, 0.0, chunk_id=citation.chunk_id, failure=out.failure.reason if out.failure else "unparsed")
        scores = {x: float(getattr(out.value, x)) for x in letters}
        choice = out.value.choice
        return Vote(choice, scores[choice], chunk_id=citation.chunk_id, scores=scores)

    def read_passage_logprob(self, question: Question, citation: Citation, tally: Tally) -> Vote:
        letters = list(question.options)

        def build(shown: dict[str, str]) -> list:
            return prompts.messages("amt_read_letter", label=citation.label, passage=citation.text,
                                    question=question.question.strip(), options=prompts.format_options(shown))

        if self.reader.debias == "permute":
            # One pass per cyclic shift of the option texts: a small model's per-passage letter
            # preference (it picked "B" on 65 % of reads) cancels out of the vote.
            scores = score_options_permuted(self.llm, build, question.options, shifts=self.reader.permutations,
                                            calibration=self.reader.calibration)
            tally.tokens["llm_calls"] += scores.calls - 1
        else:
            scores = score_options(self.llm, build(question.options), letters, calibration=self.reader.calibration)
        tally.count(scores.result)
        if scores.outcome != "answered":
            return Vote(None, 0.0, chunk_id=citation.chunk_id,
                        failure=scores.failure.reason if scores.failure else "unparsed")
        conf = {x: round(10 * scores.probs[x], 3) for x in letters}
        return Vote(scores.choice, conf[scores.choice], chunk_id=citation.chunk_id, scores=conf)

    def answer(self, question: Question) -> Answer:
        started, tally = time.perf_counter(), Tally()
        queries = self.augment(question, tally)
        evidence = focus(tally.evidence(self.engine, queries), question, self.reader, self.engine, tally)
        citations = evidence.citations[: self.settings.passages]

        if not question.is_multiple_choice:
            answer = free_text_answer(self.llm, question, evidence, self.reader, tally,
                                      count_tokens=self.engine.count_tokens)
        elif not self.settings.vote or not citations:
            with tally.stage("read"):
                scores = read_choice(self.llm, question, evidence_block(evidence), self.reader, tally)
            answer = choice_answer(scores, evidence.citations, ChoiceDetail(voted=False))
        else:
            with tally.stage("read"):
                votes = [self.read_passage(question, c, tally) for c in citations]
            choice = weighted_vote(votes)
            totals = vote_totals(votes)
            detail = ChoiceDetail(voted=True, votes=votes, vote_failures=sum(v.choice is None for v in votes))
            if choice is None:
                answer = Answer(outcome="parse_failure", citations=citations, detail=detail)
            else:
                answer = Answer(outcome="answered", choice=choice,
                                option_scores={x: totals.get(x, 0.0) for x in question.options},
                                citations=[c for c, v in zip(citations, votes) if v.choice == choice],
                                detail=detail)
        answer.queries = queries
        return tally.finish(answer, started)
