"""`rag`: the systematic study's pipeline.

Optional keyword reformulation (an EXTRA query, never a replacement) → dense or hybrid
retrieval (optionally restricted to the top sections; for multiple choice optionally one query per
option, reading/options.py) → rerank 150 → 6 → pack ≤ 1,200 tokens → zero-shot or
chain-of-thought reader. Everything but the reader lives in RetrievalEngine.
"""

from __future__ import annotations

import logging
import re
import time

from medground.llm.base import LLM
from medground.llm import prompts
from medground.pipelines.base import (
    ReaderSettings,
    Tally,
    chat_text,
    choice_answer,
    evidence_block,
    focus,
    free_text_answer,
    read_grounded_choice,
)
from medground.reading.entities import EntityGate, entity_gate
from medground.reading.options import evidence_decides_twins, option_queries, options_covered
from medground.retrieve.engine import RetrievalEngine
from medground.schema import Answer, ChoiceDetail, Query, Question


def clean_keyword_query(text: str, max_words: int = 16) -> str:
    """The first line of a reformulation, without labels, quotes or list markers."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^\s*(query|search query|keywords)\s*:\s*", "", line, flags=re.IGNORECASE)
    line = line.strip(" \"'`*-•")
    return " ".join(line.split()[:max_words])


log = logging.getLogger(__name__)


def medicine_database_drugs() -> list:
    """The built medicine database's drugs (their names widen the entity check), else none."""
    from medground.store.drugs import DrugStore, default_path

    if not default_path().is_file():
        return []
    with DrugStore(default_path()) as store:
        return store.drugs()


class RagPipeline:
    name = "rag"

    def __init__(self, llm: LLM, engine: RetrievalEngine, reader: ReaderSettings | None = None,
                 *, reformulate: bool = False) -> None:
        self.llm = llm
        self.engine = engine
        self.reader = reader or ReaderSettings()
        self.reformulate = reformulate
        self._gate: EntityGate | None | bool = False  # False: not built yet

    def entity_gate(self) -> EntityGate | None:
        """The entity-consistency check for free text (built on first use), or None when it is
        off or this engine has no BM25 index to tell a specific name from a generic one."""
        if self._gate is False:
            self._gate = None
            bm25 = self.engine.retriever("bm25") if self.reader.freetext_entity_max_df is not None else None
            index = getattr(bm25, "index", None)
            if index is not None:
                self._gate = entity_gate(index.doc_freq, len(index), self.reader.freetext_entity_max_df,
                                         drugs=medicine_database_drugs(),
                                         names_outside=self.reader.freetext_entity_words,
                                         asking_only=self.reader.freetext_entity_scope == "asking",
                                         classes=self.reader.freetext_entity_classes)
            elif self.reader.freetext_entity_max_df is not None:
                log.warning("freetext_entity_max_df is set but the retrieval has no bm25 index: no entity check")
        return self._gate

    def book_words(self, text: str) -> dict[str, str]:
        """The lay phrases of ``text`` the books hardly use, mapped to the words they use instead
        (corpus/lay_vocabulary.py ``book_words``); empty without a BM25 index to count them in."""
        from medground.pipelines.base import lay_vocabulary

        index = getattr(self.engine.retriever("bm25"), "index", None)
        if index is None:
            log.warning("lay_query is set but the retrieval has no bm25 index: no lay query")
            return {}
        return lay_vocabulary().book_words(text, index.doc_freq, len(index))

    def naming_entities(self, question: Question):
        """With ``freetext_entity_passages`` on, for a free-text question: ranked passages → whether
        each names every specific entity of the question (heading and text, as the entity check
        reads a passage); else None."""
        gate = (self.entity_gate() if not question.is_multiple_choice and self.reader.freetext_entity_passages != "any"
                else None)
        if gate is None:
            return None
        return lambda passages: gate.names_all(question.question, [  # noqa: E731
            f"{p.chunk.book} / {p.chunk.chapter} / {' > '.join(p.chunk.section_path)} {p.chunk.title} {p.chunk.text}"
            for p in passages])

    def queries(self, question: Question, tally: Tally) -> list[Query]:
        if self.reader.option_queries and question.is_multiple_choice:
            queries = option_queries(question.question, question.options)
        else:
            queries = [Query(question.question.strip(), "original")]
        if self.reader.synonym_query:
            gate = self.entity_gate()
            names = gate.other_names(question.question) if gate is not None else []
            if names:
                queries.append(Query(f"{question.question.strip()} ({'; '.join(names)})", "synonyms"))
        if self.reader.lay_query and not question.is_multiple_choice:
            said = self.book_words(question.question)
            if said:
                queries.append(Query(f"{question.question.strip()} ({'; '.join(dict.fromkeys(said.values()))})", "lay"))
        if self.reformulate:
            with tally.stage("reformulate"):
                msgs = prompts.messages("reformulate", question=question.question.strip(),
                                        options=prompts.format_options(question.options))
                keywords = clean_keyword_query(chat_text(self.llm, msgs, tally, max_tokens=40))
            if keywords:
                queries.append(Query(keywords, "keywords"))
        return queries

    def answer(self, question: Question) -> Answer:
        started, tally = time.perf_counter(), Tally()
        queries = self.queries(question, tally)
        packed = tally.evidence(self.engine, queries, self.naming_entities(question),
                                self.reader.freetext_entity_passages == "only")
        named = next((q.text for q in queries if q.kind == "synonyms"), None)
        evidence = focus(packed, question, self.reader, self.engine, tally, asked=named)
        if not question.is_multiple_choice:
            gate = self.entity_gate()
            # whole passages, not their compressed sentences: "the passages do not mention X" must
            # hold of what was found (a chunk on azathioprine whose kept sentence says only "TPMT")
            absent = None
            if gate is not None:
                whole = {c.number: f"{c.label} {c.title} {c.text}" for c in packed.citations}
                absent = lambda passages: gate.absent(  # noqa: E731
                    question.question, [whole.get(c.number, c.text) for c in passages])
            answer = free_text_answer(self.llm, question, evidence, self.reader, tally,
                                      count_tokens=self.engine.count_tokens, absent_entities=absent)
        else:
            with tally.stage("read"):
                scores = read_grounded_choice(self.llm, question, evidence_block(evidence), self.reader, tally)
            covered = options_covered(evidence.citations, question.options)
            if self.reader.twin_evidence:
                scores = evidence_decides_twins(scores, question.options, covered)
            answer = choice_answer(scores, evidence.citations, ChoiceDetail(
                evidence_tokens=evidence.token_count, options_in_evidence=covered))
        answer.queries = queries
        return tally.finish(answer, started)
