"""`drugrag`: Distill-Retrieve-Read for medication consultation, in the manner of RagPULSE.

1. Distill: the LLM reads the (multi-turn) consultation and calls the tool
   ``search_engine(keywords)`` — drug name(s) plus what is asked.
2. Retrieve: the entity-oriented medicine database answers, drug first, then attribute
   (retriever ``drugs``), packed within the token budget.
3. Read: the answer from the evidence, citing database entries as [n]; or, for a
   multiple-choice question, the usual reader.
A failed tool call is counted (``distill_failure``) and the raw consultation is searched instead.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from medground.llm.base import LLM
from medground.llm.structured import SEARCH_ENGINE, call_tool
from medground.pipelines import prompts
from medground.pipelines.base import (
    INSUFFICIENT,
    ReaderSettings,
    Tally,
    chat_text,
    choice_answer,
    cited_numbers,
    evidence_block,
    read_choice,
)
from medground.retrieve.engine import RetrievalEngine
from medground.schema import Answer, Query, Question

# The medicine database as the only retriever; long label sections are cut at a sentence.
DRUG_RETRIEVE = {"retrievers": ["drugs"], "fusion": None, "top": 10, "final_k": 4, "budget_tokens": 1200,
                 "overflow": "truncate"}


class DrugRagSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # "auto": the OpenAI tools request (llama.cpp: schema-enforced, see llm/toolcalls.py; vLLM /
    # hosted models: their own tool calling), falling back to a JSON-schema prompt when the
    # server answers without tool_calls; "schema" skips straight to that prompt.
    tool_mode: Literal["auto", "native", "schema"] = "auto"
    distill_max_tokens: int = Field(64, ge=8)


def dialogue_of(question: Question) -> str:
    """The consultation as text: the dialogue in ``context`` (if any) ending with the question."""
    q = question.question.strip()
    ctx = question.context.strip()
    return f"{ctx}\n{q}" if ctx and not ctx.endswith(q) else (ctx or q)


class DrugRagPipeline:
    name = "drugrag"

    def __init__(self, llm: LLM, engine: RetrievalEngine, settings: DrugRagSettings | None = None,
                 reader: ReaderSettings | None = None) -> None:
        self.llm = llm
        self.engine = engine
        self.settings = settings or DrugRagSettings()
        self.reader = reader or ReaderSettings()

    def distill(self, dialogue: str, tally: Tally) -> tuple[Query, str | None]:
        with tally.stage("distill"):
            out = call_tool(self.llm, prompts.messages("drug_distill", dialogue=dialogue), [SEARCH_ENGINE],
                            max_tokens=self.settings.distill_max_tokens, mode=self.settings.tool_mode)
        tally.count(out.result)
        if out.arguments is None:
            return Query(dialogue, "original"), (out.failure.reason if out.failure else "no tool call")
        return Query(out.arguments.keywords.strip(), "distilled"), None

    def answer(self, question: Question) -> Answer:
        started, tally = time.perf_counter(), Tally()
        dialogue = dialogue_of(question)
        query, failure = self.distill(dialogue, tally)
        evidence = tally.evidence(self.engine, [query])
        meta = {"tool_call": {"name": "search_engine", "arguments": {"keywords": query.text}},
                "distill_failure": failure}
        if question.is_multiple_choice:
            with tally.stage("read"):
                scores = read_choice(self.llm, question, evidence_block(evidence), self.reader, tally)
            answer = choice_answer(scores, evidence.citations, **meta)
        elif not evidence.citations:
            answer = Answer(outcome="insufficient_evidence", text="The medicine database has no matching entry.",
                            metadata=meta)
        else:
            with tally.stage("read"):
                text = chat_text(self.llm, prompts.messages("drug_answer", evidence=evidence.render(),
                                                            dialogue=dialogue), tally,
                                 max_tokens=self.reader.freetext_max_tokens)
            by_number = {c.number: c for c in evidence.citations}
            cited = [by_number[n] for n in cited_numbers(text) if n in by_number]
            outcome = "insufficient_evidence" if INSUFFICIENT in text.upper() or not text else "answered"
            answer = Answer(outcome=outcome, text=text, citations=cited or evidence.citations,
                            metadata={**meta, "uncited": not cited})
        answer.queries = [query]
        return tally.finish(answer, started)
