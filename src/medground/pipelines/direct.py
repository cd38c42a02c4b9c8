"""`direct`: no retrieval — the closed-book baseline every RAG number is compared with."""

from __future__ import annotations

import time

from medground.llm.base import LLM
from medground.pipelines.base import ReaderSettings, Tally, chat_text, choice_answer, read_choice
from medground.schema import Answer, FreeTextDetail, Question


class DirectPipeline:
    name = "direct"

    def __init__(self, llm: LLM, reader: ReaderSettings | None = None) -> None:
        self.llm = llm
        self.reader = reader or ReaderSettings()

    def answer(self, question: Question) -> Answer:
        started, tally = time.perf_counter(), Tally()
        if not question.is_multiple_choice:
            msgs = [{"role": "system", "content": "You are a careful medical expert. Answer briefly."},
                    {"role": "user", "content": question.question.strip()}]
            with tally.stage("read"):
                text = chat_text(self.llm, msgs, tally, max_tokens=self.reader.freetext_max_tokens)
            # Closed book: nothing to cite, and the answer says so in its detail.
            return tally.finish(Answer(outcome="answered", text=text, detail=FreeTextDetail(closed_book=True)), started)
        with tally.stage("read"):
            scores = read_choice(self.llm, question, "", self.reader, tally)
        return tally.finish(choice_answer(scores, []), started)
