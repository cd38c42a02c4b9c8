"""`drugrag`: Distill-Retrieve-Read for medication consultation, in the manner of RagPULSE.

1. Distill: the LLM reads the (multi-turn) consultation and calls the tool
   ``search_engine(keywords)`` — drug name(s) plus what is asked.
2. Retrieve: the entity-oriented medicine database answers, drug first, then attribute
   (retriever ``drugs``), packed within the token budget.
3. Check support: one forward pass asks which entry answers the question ("0" = none) and
   reads the probability of each entry number. Below ``abstain_below`` the answer is an
   explicit ``insufficient_evidence`` outcome. The threshold is fitted on a development split
   (benchmarks/reader.py); the prompt never pushes the model to abstain.
4. Read: ``answer: extractive`` quotes the sentences of the supporting entry most related to the
   consultation (every claim is the record's own words, cited); ``answer: generate`` writes an
   answer citing entries as [n]. A multiple-choice question goes to the usual reader.
A failed tool call is counted (``distill_failure``) and the raw consultation is searched instead.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace

from medground.drug_schema import (
    ConsultChoiceDetail,
    ConsultDetail,
    ConsultReply,
    RankedEntry,
    SearchCall,
    SupportCheck,
    ToolCall,
)
from medground.llm.base import LLM, ChatRequest
from medground.llm.scoring import yes_probability
from medground.llm.structured import SEARCH_ENGINE, call_tool
from medground.llm import prompts
from medground.pipelines.base import (
    INSUFFICIENT,
    ReaderSettings,
    Tally,
    chat_text,
    choice_answer,
    evidence_block,
    read_choice,
)
# the settings live in their own module (drugrag_settings.py)
from medground.pipelines.drugrag_settings import DrugRagSettings
from medground.reading.addressing import asking_sentences, unaddressed_terms, vocabulary
from medground.reading.citations import cited_numbers
from medground.reading.support import Support, passage_support, quote, quoted_answer
from medground.retrieve.drug_subject import partial_only, user_turns
from medground.retrieve.drugs import PARTIAL_NAME
from medground.retrieve.engine import RetrievalEngine
from medground.schema import Answer, Citation, Evidence, Query, Question

# a word written as a name: capitalised, four letters or more ("Janewvia", not "walmart")
_WRITTEN_AS_NAME = re.compile(r"\b[A-Z][a-z]{3,}\w*")


def dialogue_of(question: Question) -> str:
    """The consultation as text: the dialogue in ``context`` (if any) ending with the question."""
    q = question.question.strip()
    ctx = question.context.strip()
    return f"{ctx}\n{q}" if ctx and not ctx.endswith(q) else (ctx or q)


def yes_probabilities(llm, prompt: str, fills: list[dict[str, str]]) -> list[float]:
    """P(yes) of one forward pass per filling of ``prompt``; no yes/no among the top tokens is 0."""
    requests = [ChatRequest(messages=prompts.messages(prompt, **fill), max_tokens=1, temperature=0.0,
                            top_logprobs=20) for fill in fills]
    return [p if (p := yes_probability(r)) is not None else 0.0 for r in llm.chat_many(requests)]


class DrugRagPipeline:
    name = "drugrag"

    def __init__(self, llm: LLM, engine: RetrievalEngine, settings: DrugRagSettings | None = None,
                 reader: ReaderSettings | None = None) -> None:
        self.llm = llm
        self.engine = engine
        self.settings = settings or DrugRagSettings()
        self.reader = reader or ReaderSettings()
        self._vocabulary: frozenset[str] | None = None  # the address check's, built on first use
        self._by_display: dict | None = None
        self._reader = None  # reading.consult.ConsultReader, built on first use
        self._vocabulary_words = None  # corpus.lay_vocabulary.LayVocabulary, loaded on first use
        self._book_mentions = None  # reading.book_mentions.BookMentions (False: no chunk store), built on first use
        self._drug_lexicon = None  # drug_schema.NameLexicon, loaded with it

    def subjects(self, dialogue: str) -> list:
        from medground.retrieve.drug_subject import Subject, resolve_subjects, staff_named, user_turns

        drugs = getattr(self.engine.retriever("drugs"), "retriever", None)
        if not self.settings.candidates or drugs is None:
            return []
        found = resolve_subjects(drugs, user_turns(dialogue), asked_weight=self.settings.asked_subject_weight,
                                 new_weight=self.settings.new_subject_weight)
        named = staff_named(drugs, dialogue) if self.settings.staff_named_subject else None
        if named is not None and (named[1] or not found):
            # "Is that the metformin?" — "Yes, that one. …" (or no medicine named by the patient at all)
            mention, _ = named
            top = found[0].score + 0.1 if found else 0.0
            found = [Subject(mention.drug_id, top, [mention]), *(s for s in found if s.drug_id != mention.drug_id)]
        return found

    def distill(self, dialogue: str, tally: Tally, subjects: list | None = None
                ) -> tuple[Query, str | None, ConsultDetail]:
        """The tool call's query, the failure (if any) and what was done to the call (the detail's
        ``candidates``, ``query_mode``, ``repaired``, ``model_keywords``); ``subjects``: the
        dialogue's resolved subjects when the caller has them already."""
        from medground.retrieve.drug_subject import repair_keywords, subject_name

        subjects = self.subjects(dialogue) if subjects is None else subjects
        if self.settings.query == "subject" and subjects:
            from medground.retrieve.drug_subject import subject_query, user_turns

            keywords = subject_query(subjects, user_turns(dialogue)[-1])
            return Query(keywords, "distilled"), None, ConsultDetail(candidates=[s.drug_id for s in subjects],
                                                                     query_mode="subject")
        block = ""
        if subjects:
            names = ", ".join(subject_name(s) for s in subjects)
            block = f"\n\nMedicines named in the consultation (the one asked about most likely first): {names}"
        with tally.stage("distill"):
            # A fresh prefix: the same consultation gives the same call whatever ran before.
            out = call_tool(self.llm, prompts.messages("drug_distill", dialogue=dialogue, candidates=block),
                            [SEARCH_ENGINE], max_tokens=self.settings.distill_max_tokens, mode=self.settings.tool_mode,
                            extra={"medground": {"fresh_prefix": True}})
        tally.count(out.result)
        info = ConsultDetail(candidates=[s.drug_id for s in subjects])
        if out.arguments is None:
            text = dialogue if not subjects else f"{subject_name(subjects[0])} {dialogue}"
            return Query(text, "original"), (out.failure.reason if out.failure else "no tool call"), info
        keywords = out.arguments.keywords.strip()
        if subjects:
            drugs = self.engine.retriever("drugs").retriever
            repaired, reason = repair_keywords(drugs, keywords, subjects[0])
            if reason:
                info = replace(info, repaired=reason, model_keywords=keywords)
                keywords = repaired
        return Query(keywords, "distilled"), None, info

    def fit(self, dialogue: str) -> tuple[str, int]:
        """The dialogue within ``max_dialogue_tokens``: oldest lines dropped first (the last turn
        is kept; alone over budget, its beginning is cut). Returns (text, lines dropped)."""
        count, budget = self.engine.count_tokens, self.settings.max_dialogue_tokens
        lines = [ln for ln in dialogue.splitlines() if ln.strip()]
        dropped = 0
        while len(lines) > 1 and count("\n".join(lines)) > budget:
            lines.pop(0)
            dropped += 1
        text = "\n".join(lines)
        while count(text) > budget and len(text) > 1:
            text = text[len(text) // 8:]  # cut from the start in eighths; a few passes at most
        return text, dropped

    def unknown_drug(self, keywords: str, detail: ConsultDetail, beside: float | None = None,
                     only: set[str] | None = None) -> Answer | None:
        """An answer saying the drug is not in the database, with the nearest entries, or None;
        ``beside``: the match score up to which a recognised drug does not count (DrugRetriever.unknown_names);
        ``only``: the lower-cased words of ``keywords`` that alone may be reported."""
        drugs = getattr(self.engine.retriever("drugs"), "retriever", None)
        unknown = drugs.unknown_names(keywords, beside=beside) if drugs is not None else {}
        if only is not None:
            unknown = {w: near for w, near in unknown.items() if w in only}
        if unknown and self.settings.unknown_skips_known_words:
            # a condition's name is no drug's ("pre-eclampsia" had been "not in the medicine database")
            # (a brand the sources mention, "Florinef", stays a drug: the name lexicon knows it)
            if self._vocabulary_words is None:
                from medground.corpus.lay_vocabulary import load_vocabulary
                from medground.drug_schema import load_drug_ner_lexicon

                self._vocabulary_words = load_vocabulary()
                self._drug_lexicon = load_drug_ner_lexicon()
            unknown = {w: near for w, near in unknown.items()
                       if not self._vocabulary_words.knows(w) or self._drug_lexicon.knows(w)}
        if not unknown:
            return None
        parts = [f"\u201c{w}\u201d is not in the medicine database; nearest entries: {', '.join(n)}."
                 for w, n in unknown.items()]
        return Answer(outcome="insufficient_evidence", text=" ".join(parts),
                      detail=replace(detail, unknown_drugs=unknown))

    def answer(self, question: Question) -> Answer:
        started, tally = time.perf_counter(), Tally()
        dialogue, dropped = self.fit(dialogue_of(question))
        subjects = self.subjects(dialogue)  # resolved once: the distiller and the reply's note read them
        query, failure, info = self.distill(dialogue, tally, subjects)
        search = SearchCall(query.text)
        detail = replace(info, search=search, distill_failure=failure, dropped_turns=dropped or None,
                         tool_call=None if info.query_mode == "subject" else ToolCall(search))
        if self.settings.answer == "reply" and not question.is_multiple_choice:
            if self.settings.unknown_beats_partial and partial_only(subjects):
                # "I started Janewvia for my sugar": mannitol's "manna sugar" is no medicine named.
                # Only a word written as a name is one ("Janewvia", not "walmart" or "didnt")
                said = " ".join(user_turns(dialogue))
                names = {w.lower() for w in _WRITTEN_AS_NAME.findall(said)}
                if names and (unknown := self.unknown_drug(said, detail, beside=PARTIAL_NAME, only=names)) is not None:
                    unknown.queries = [query]
                    return tally.finish(unknown, started)
            answer = self.reply_to(dialogue, info.candidates or [], detail, tally, subjects)
            answer.queries = [query]
            return tally.finish(answer, started)
        unknown = None if info.candidates else self.unknown_drug(query.text, detail)
        if unknown is not None:
            unknown.queries = [query]
            return tally.finish(unknown, started)
        evidence = tally.evidence(self.engine, [query])
        if question.is_multiple_choice:
            with tally.stage("read"):
                scores = read_choice(self.llm, question, evidence_block(evidence), self.reader, tally)
            # the letter read's fields (filled by choice_answer) and the consultation's, one flat JSON face
            answer = choice_answer(scores, evidence.citations, detail=ConsultChoiceDetail(consult=detail))
        elif not evidence.citations:
            answer = Answer(outcome="insufficient_evidence", text="The medicine database has no matching entry.",
                            detail=detail)
        else:
            answer = self.read(dialogue, evidence, tally, detail)
        answer.queries = [query]
        return tally.finish(answer, started)

    def consult_reader(self):
        if self._reader is None:
            from medground.reading.consult import ConsultReader
            from medground.reading.consult_typer import load_consult_typer
            from medground.reading.patient_condition import load_condition_reader

            typer = load_consult_typer(self.settings.reply.typer_model)
            self._reader = ConsultReader(self.engine.retriever("drugs").retriever, typer, typer.embedder,
                                         self.settings.reply, verifier=self.verify_entries,
                                         item_checker=self.check_items,
                                         conditions=load_condition_reader(embedder=typer.embedder,
                                                                          embedder_kind=typer.model.embedder),
                                         condition_checker=self.check_condition,
                                         term_writer=self.write_terms,
                                         book_mentions=self.book_mentions, book_check=self.book_answers)
        return self._reader

    def book_mentions(self):
        """The textbook's sentences naming each drug, from the chunk store (built once); None when
        no store has been ingested."""
        if self._book_mentions is None:
            from medground.reading.book_mentions import BookMentions
            from medground.store.settings import StoreMissingError, open_store

            try:
                store = open_store(self.engine.settings.store, must_exist=True)
            except StoreMissingError:
                self._book_mentions = False
            else:
                self._book_mentions = BookMentions(store.iter_chunks(), self.consult_reader().drugs.drugs)
        return self._book_mentions or None

    def book_answers(self, question: str, sentence: str) -> float:
        """P(yes) for "does this passage answer the question?" (the textbook reader's quote check)."""
        return yes_probabilities(self.llm, "quote_answers", [{"question": question, "passage": sentence}])[0]

    def verify_entries(self, dialogue: str, entries: list[Citation]) -> dict[int, float]:
        """The LLM as a verifier: P(entry n answers the consultation), one forward pass."""
        evidence = Evidence(citations=entries, token_count=0, budget=0)
        support, _ = passage_support(self.llm, evidence, "drug_support", dialogue=dialogue)
        return {int(k): p for k, p in support.probs.items() if k != "0"}

    def check_items(self, said: str, items: list[str]) -> list[float]:
        """P(yes) for "does the patient describe <item>?", one forward pass an item; the patient's
        words come first, so the items share a cached prompt prefix. No yes/no among the top
        tokens counts as 0 (not affirmed)."""
        return yes_probabilities(self.llm, "item_check", [{"said": said, "item": item} for item in items])

    def write_terms(self, said: str) -> str:
        """What the patient describes, in medical terms, comma-separated (a few generated tokens;
        the few-shot examples are a shared prompt prefix)."""
        request = ChatRequest(messages=prompts.messages("clinical_terms", said=said), max_tokens=24, temperature=0.0)
        return self.llm.complete(request).text

    def check_condition(self, said: str, drug: str, condition: str) -> float:
        """P(yes) for "is the patient asking whether <drug> is safe for them because they have
        <condition>?", one forward pass (0 when no yes/no is among the top tokens)."""
        return yes_probabilities(self.llm, "condition_check", [{"said": said, "drug": drug, "condition": condition}])[0]

    def reply_to(self, dialogue: str, candidates: list[str], detail: ConsultDetail, tally: Tally,
                 subjects: list | None = None) -> Answer:
        """The reply mode: no subject drug → the unknown-drug message or a question back.
        ``subjects``: the dialogue's resolved subjects (retrieve/drug_subject.resolve_subjects)."""
        from medground.reading.consult_which import asks_which_medicine, which_reply
        from medground.retrieve.drug_subject import co_named, named_before, read_as_note, user_turns

        turns = user_turns(dialogue) or [dialogue]
        if not candidates:
            unknown = self.unknown_drug(dialogue, detail)
            if unknown is not None:
                return unknown
        reader = self.consult_reader()
        subject = candidates[0] if candidates else None
        # Another drug named in the question: it is about taking them together.
        others = co_named(reader.drugs, turns, subject)
        # Drugs of earlier turns: the second drug of "… while I take this?" when no other is named now.
        context = [] if others else named_before(reader.drugs, turns, subject)
        with tally.stage("read"):
            r = reader.reply(turns, subject, others, context)
            if subject is not None and reader.settings.which_medicine and len(candidates) > 1 \
                    and asks_which_medicine(turns[-1]):
                # "which one is doing this?": each of the patient's medicines read alone
                which = which_reply(lambda c: reader.reply(turns, c), [subject, *candidates], reader.drugs.drugs, r)
                if which is not None:
                    r, subject = which, which.chosen.drug.drug_id
        ranked = [RankedEntry(c.drug.drug_id, c.attribute.type, round(c.p_type, 4), c.best.text if c.best else None,
                              round(c.best.similarity, 4) if c.best else None, round(c.score, 4))
                  for c in r.ranked[:5]]
        said = ConsultReply(r.first_sentence, list(r.matched), list(r.quotes), round(r.p_none, 4), r.reason, ranked,
                            condition=r.condition, terms=list(r.terms))
        # a subject found only through a misspelling's nearest name says what it was read as
        found = next((m for m in (self.subjects(dialogue) if subjects is None else subjects)
                      if m.drug_id == subject), None)
        note = read_as_note(found, reader.drugs.drugs[subject]) if found is not None else ""
        return Answer(outcome=r.outcome, text=r.text + note, citations=r.citations, detail=replace(detail, reply=said))

    def support(self, dialogue: str, evidence: Evidence, tally: Tally) -> Support:
        """Which entry answers the consultation ("0" = none), from one forward pass."""
        with tally.stage("support"):
            support, result = passage_support(self.llm, evidence, "drug_support", dialogue=dialogue)
        tally.count(result)
        return support

    def read(self, dialogue: str, evidence: Evidence, tally: Tally, detail: ConsultDetail) -> Answer:
        s = self.settings
        support = self.support(dialogue, evidence, tally)
        entry = support.passage
        detail = replace(detail, support_check=SupportCheck(support.score, entry.number if entry else None))
        if support.below(s.abstain_below):
            return Answer(outcome="insufficient_evidence", citations=evidence.citations, detail=detail,
                          text="The medicine database entries found do not answer this question; "
                               "the closest entries are listed.")
        if s.address_check:
            entry, missing = self.addressing_entry(dialogue, evidence, support)
            if missing:
                return Answer(outcome="insufficient_evidence", citations=evidence.citations,
                              detail=replace(detail, unaddressed=missing),
                              text=f"The medicine database entries found do not mention {', '.join(missing)}; "
                                   "the closest entries are listed.")
            if entry is not None and entry is not support.passage:
                detail = replace(detail, address_moved_to=entry.number)  # supporting_entry stays the gate's choice
        if s.answer == "extractive":
            return self.quote(dialogue, evidence, entry or evidence.citations[0], detail)
        with tally.stage("read"):
            text = chat_text(self.llm, prompts.messages("drug_answer", evidence=evidence.render(),
                                                        dialogue=dialogue), tally,
                             max_tokens=self.reader.freetext_max_tokens)
        by_number = {c.number: c for c in evidence.citations}
        cited = [by_number[n] for n in cited_numbers(text) if n in by_number]
        outcome = "insufficient_evidence" if INSUFFICIENT in text.upper() or not text else "answered"
        return Answer(outcome=outcome, text=text, citations=cited,  # never evidence it did not use
                      detail=replace(detail, uncited=not cited))

    def addressing_entry(self, dialogue: str, evidence: Evidence, support: Support) -> tuple[Citation | None, list[str]]:
        """(the entry to answer from, []) or (None, the specific words no entry mentions).

        The supporting entry when it mentions what the patient asks about (or nothing specific is
        asked); else the most probable other entry of its drug that does; else the supporting entry all the
        same unless it is a list (``address_check_types``)."""
        from medground.retrieve.drug_subject import user_turns

        turn = (user_turns(dialogue) or [dialogue])[-1]
        drugs = getattr(self.engine.retriever("drugs"), "retriever", None)
        named, expansion = self.named_drugs(drugs, turn)
        asked = f"{asking_sentences(turn)}{expansion}"
        vocab = self.record_vocabulary(drugs)
        ranked = sorted(evidence.citations, key=lambda c: -support.probs.get(str(c.number), 0.0))
        if support.passage is not None:
            # Entries of the supported drug or of a drug the patient named only: a co-retrieved
            # drug's list is no answer.
            ranked = [support.passage, *(c for c in ranked if c is not support.passage
                                         and (c.chapter == support.passage.chapter or c.chapter in named))]
        first_missing: list[str] = []
        for c in ranked:
            names = self.drug_names(drugs, c.chapter)
            missing = unaddressed_terms(asked, f"{c.text} {c.section.replace('_', ' ')}",
                                        exclude=[c.chapter, *names, *named.get(c.chapter, ())], vocabulary=vocab)
            if not missing:
                return c, []
            first_missing = first_missing or missing
        if support.passage is not None and support.passage.section not in self.settings.address_check_types:
            return support.passage, []
        return None, first_missing

    @staticmethod
    def named_drugs(drugs, turn: str) -> tuple[dict[str, list[str]], str]:
        """The drugs the patient names in ``turn`` (display name → the spans) and their generic
        names and classes as text. What another drug's entry must mention is any of those:
        ("I take Coumadin. Is aspirin safe?") aspirin's interactions entry "Anticoagulants"
        answers for warfarin; ibuprofen is asked about as a "nonsteroidal anti-inflammatory drug"."""
        named: dict[str, list[str]] = {}
        expansion = ""
        for m in drugs.find_drugs(turn) if drugs is not None else []:
            drug = drugs.drugs.get(m.drug_id)
            if drug is not None:
                named.setdefault(drug.display_name, []).append(m.span)
                expansion += f" {drug.generic_name.replace('/', ' ')} {drug.drug_class}"
        return named, expansion

    def record_vocabulary(self, drugs) -> frozenset[str] | None:
        """Stems of every record and drug name of the medicine database, computed once per pipeline."""
        if drugs is None:
            return None
        if self._vocabulary is None:
            self._vocabulary = vocabulary([*(a.text for a in drugs.attributes), *drugs.names])
        return self._vocabulary

    def drug_names(self, drugs, display_name: str) -> list[str]:
        """Every name (brands, synonyms) and the class of the drug an entry belongs to."""
        if drugs is None:
            return []
        if self._by_display is None:
            self._by_display = {d.display_name: d for d in drugs.drugs.values()}
        drug = self._by_display.get(display_name)
        return [drug.generic_name, *drug.brand_names, *drug.synonyms, drug.drug_class] if drug else []

    def quote(self, dialogue: str, evidence: Evidence, entry: Citation, detail: ConsultDetail) -> Answer:
        """The supporting entry's sentences most related to the consultation (and to the named
        drugs' generic names and classes: "ibuprofen" selects the NSAID line), quoted and cited."""
        from medground.retrieve.drug_subject import user_turns

        drugs = getattr(self.engine.retriever("drugs"), "retriever", None)
        _, expansion = self.named_drugs(drugs, (user_turns(dialogue) or [dialogue])[-1])
        quoted = quote(entry, dialogue + expansion, self.engine.count_tokens, self.settings.quote_tokens)
        return Answer(outcome="answered", text=quoted_answer(entry, quoted), citations=[entry],
                      detail=replace(detail, extractive=True, quoted=quoted))
