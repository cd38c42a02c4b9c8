"""`imedrag`: iterative follow-up queries in the manner of i-MedRAG.

For ``rounds`` rounds the LLM writes ``queries_per_round`` follow-up queries given the question
and the query–answer history; each query is answered by plain RAG over the corpus (``k``
passages). The history — not the raw passages — is what the final reader sees.
"""

from __future__ import annotations

import time
from dataclasses import replace

from pydantic import BaseModel, ConfigDict, Field

from medground.llm.base import LLM
from medground.llm.structured import generate_queries
from medground.llm import prompts
from medground.pipelines.base import (
    ReaderSettings,
    Tally,
    chat_text,
    choice_answer,
    free_text_answer,
    read_choice,
)
from medground.retrieve.engine import RetrievalEngine
from medground.retrieve.pack import citation_for
from medground.schema import (
    Answer,
    ChoiceDetail,
    Citation,
    Evidence,
    FollowUp,
    FreeTextDetail,
    Passage,
    Query,
    Question,
)


class IMedRagSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(2, ge=1, description="m: rounds of follow-up queries")
    queries_per_round: int = Field(3, ge=1, description="n: follow-up queries per round")
    k: int = Field(3, ge=1, description="passages retrieved to answer each follow-up query")
    query_max_tokens: int = Field(200, ge=16)
    subanswer_max_tokens: int = Field(96, ge=8)


def render_history(history: list[tuple[str, str]]) -> str:
    if not history:
        return "(nothing yet)"
    return "\n".join(f"Q{i}: {q}\nA{i}: {a}" for i, (q, a) in enumerate(history, 1))


class IMedRagPipeline:
    name = "imedrag"

    def __init__(self, llm: LLM, engine: RetrievalEngine, settings: IMedRagSettings | None = None,
                 reader: ReaderSettings | None = None) -> None:
        self.llm = llm
        self.engine = engine
        self.settings = settings or IMedRagSettings()
        self.reader = reader or ReaderSettings()

    def answer(self, question: Question) -> Answer:
        started, tally = time.perf_counter(), Tally()
        s = self.settings
        q = question.question.strip()
        opts = prompts.format_options(question.options) if question.options else ""
        history: list[tuple[str, str]] = []
        issued: list[Query] = []
        cited: dict[str, Citation] = {}
        query_failures = 0
        for _ in range(s.rounds):
            with tally.stage("followup"):
                msgs = prompts.messages("imedrag_queries", question=q, options=opts,
                                        history=render_history(history), n=s.queries_per_round)
                out = generate_queries(self.llm, msgs, s.queries_per_round, max_tokens=s.query_max_tokens)
                tally.count(out.result)
            if out.value is None:
                query_failures += 1
                continue  # the round is lost, and counted; the next round may still produce queries
            for text in out.value.queries:
                query = Query(text.strip(), "followup")
                issued.append(query)
                with tally.stage("retrieve"):
                    passages = self.engine.retrieve([query], k=s.k)
                evidence = _numbered(passages)
                with tally.stage("subanswer"):
                    msgs = prompts.messages("imedrag_subanswer", evidence=evidence.render(), query=query.text)
                    history.append((query.text, chat_text(self.llm, msgs, tally, max_tokens=s.subanswer_max_tokens)))
                for c in evidence.citations:
                    cited.setdefault(c.chunk_id, c)
        citations = [replace(c, number=i) for i, c in enumerate(cited.values(), 1)]
        trail = [FollowUp(a, b) for a, b in history]
        if not question.is_multiple_choice:
            ev = Evidence(citations=citations, token_count=0, budget=0, queries=issued)
            answer = free_text_answer(self.llm, question, ev, self.reader, tally, count_tokens=self.engine.count_tokens,
                                      detail=FreeTextDetail(history=trail, query_failures=query_failures))
        else:
            block = prompts.fill("imedrag_history_block", history=render_history(history)) if history else ""
            with tally.stage("read"):
                scores = read_choice(self.llm, question, block, self.reader, tally)
            answer = choice_answer(scores, citations, ChoiceDetail(history=trail, query_failures=query_failures))
        answer.queries = issued
        return tally.finish(answer, started)


def _numbered(passages: list[Passage]) -> Evidence:
    return Evidence(citations=[citation_for(i, p) for i, p in enumerate(passages, 1)], token_count=0, budget=0)


