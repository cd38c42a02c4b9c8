"""What every pipeline shares: the Pipeline protocol, the reader step, citations and accounting."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from medground.llm.base import LLM, ChatResult, Message
from medground.llm.scoring import (
    OptionScores,
    generate_and_parse,
    score_options,
    score_options_permuted,
    score_options_verify,
    weigh_prior,
)
from medground.llm import prompts
from medground.reading.claims import LLM_THRESHOLD
from medground.reading.support import cited_numbers
from medground.retrieve.engine import RetrievalEngine
from medground.schema import Answer, Citation, Evidence, Query, Question


@runtime_checkable
class Pipeline(Protocol):
    name: str

    def answer(self, question: Question) -> Answer: ...


class ReaderSettings(BaseModel):
    """How the final answer is read: the study's zero-shot vs chain-of-thought axis."""

    model_config = ConfigDict(extra="forbid")

    prompt: Literal["zeroshot", "cot"] = "zeroshot"
    # zero-shot: "logprob" reads the option letters' log-probabilities in one forward pass;
    # "generate" writes a short answer and parses it. Chain-of-thought always generates.
    # "verify" asks of each option on its own whether it is correct (P(yes) over one cached
    # prefix): no letters are shown, so no letter bias can enter.
    scoring: Literal["logprob", "generate", "verify"] = "logprob"
    calibration: dict[str, float] | None = Field(
        None, description="per-letter mean log-probability to subtract (see llm.scoring.calibrate)"
    )
    # Small models prefer some letters whatever the content, and evidence in the prompt can
    # amplify that. "permute" scores the letters once per cyclic shift of the option texts and
    # averages per option (the shifts share the evidence and question as a cached prefix).
    debias: Literal["none", "permute"] = "none"
    permutations: int | None = Field(None, ge=1, description="permute: shifts to use (default: one per option)")
    # Compress evidence to the sentences most related to the question and options
    # (retrieve.compress) within this many tokens; None = read the packed passages whole.
    evidence_tokens: int | None = Field(None, ge=32)
    # Compression context (retrieve.compress): a sentence also scores this share of its best
    # neighbour's score, and sentences of passage i are weighted 1 + rank_weight / i.
    evidence_neighbor_weight: float = Field(0.0, ge=0.0)
    evidence_rank_weight: float = Field(0.0, ge=0.0)
    # Weigh the grounded option scores against the same reader's closed-book ones (one more read,
    # no evidence): argmax of w·log p(option | evidence) + (1 − w)·log p(option | none). 1.0 =
    # the evidence alone. Measured in docs/reports/grounding ("evidence_prior_mixture", holdout).
    evidence_weight: float = Field(1.0, ge=0.0, le=1.0)
    # Multiple choice, read per option (reading/options.py): retrieve with the question alone and
    # with each option joined to it, fused, so every option can bring its own passage ...
    option_queries: bool = False
    # ... and weigh the letter read against a per-option check that shows no letters (P(yes)
    # that option X is correct, over one cached prefix): w·log p_check + (1 − w)·log p_letters.
    check_weight: float = Field(0.0, ge=0.0, le=1.0)
    cot_max_tokens: int = Field(384, ge=16)
    freetext_max_tokens: int = Field(160, ge=16)
    # Free text. "generate": an answer citing passages as [n]. "extractive": the sentences of the
    # supporting passage most related to the question, quoted. "checked": generate, then check
    # every sentence against the passages it cites (pipelines.support.split_supported): the
    # unsupported ones are dropped (and reported), and when no claim is left the supporting
    # passage is quoted instead.
    freetext_answer: Literal["generate", "extractive", "checked"] = "generate"
    # Abstain when 1 - P(no passage answers) falls below this (one forward pass before
    # answering; fit it on a development split: benchmarks/reader.py freetext). None = never.
    freetext_abstain_below: float | None = Field(None, ge=0.0, le=1.0)
    freetext_quote_tokens: int = Field(120, ge=16)
    # checked answers: the cited passage's words quoted after the answer, within this many tokens
    freetext_support_tokens: int = Field(60, ge=16)
    # Entity consistency (reading/entities.py): a named entity of the question whose rarest term
    # is in at most this share of the corpus's chunks must be named by the passages the answer
    # rests on, else the reader says what they are about instead. None = no check.
    freetext_entity_max_df: float | None = Field(None, gt=0.0, le=1.0)
    # "checked" answers: who decides whether the first claim (the answer) is stated by the
    # passages it cites. "lexical": the share of its content terms found there, the question's
    # own words excused — blind to synonyms ("pyridoxine" for "vitamin B6") and fooled by a claim
    # about another drug that reuses the question's words. "llm": the claim judge of the eval lab
    # (reading/claims.py, P(yes) ≥ ``freetext_claim_threshold``), one more forward pass; the
    # other sentences keep the lexical check.
    freetext_claim_check: Literal["lexical", "llm"] = "lexical"
    freetext_claim_threshold: float = Field(LLM_THRESHOLD, ge=0.0, le=1.0)


@dataclass
class Tally:
    """Per-stage seconds and token counts of one answer."""

    timings: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0, "llm_calls": 0})

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t

    def count(self, result: ChatResult | None) -> None:
        if result is None:
            return
        self.tokens["prompt"] += result.prompt_tokens
        self.tokens["completion"] += result.completion_tokens
        self.tokens["llm_calls"] += 1

    def evidence(self, engine: RetrievalEngine, queries: list[Query]) -> Evidence:
        """Retrieve and pack evidence, recording the engine's per-stage seconds as retrieve.*."""
        with self.stage("retrieve"):
            evidence = engine.evidence(queries)
        for stage, seconds in engine.timings.items():
            self.timings[f"retrieve.{stage}"] = self.timings.get(f"retrieve.{stage}", 0.0) + seconds
        return evidence

    def finish(self, answer: Answer, started: float) -> Answer:
        self.timings["total"] = time.perf_counter() - started
        answer.timings = dict(self.timings)
        answer.tokens = dict(self.tokens)
        return answer


def chat_text(llm: LLM, messages: list[Message], tally: Tally, *, max_tokens: int) -> str:
    result = llm.chat(messages, max_tokens=max_tokens, temperature=0.0)
    tally.count(result)
    return result.text.strip()


def read_choice(
    llm: LLM, question: Question, context_block: str, settings: ReaderSettings, tally: Tally
) -> OptionScores:
    """Answer a multiple-choice question given a context block (evidence, history or nothing)."""
    letters = list(question.options)
    values = dict(evidence_block=context_block, question=question.question.strip(),
                  options=prompts.format_options(question.options))
    if settings.prompt == "cot":
        msgs = prompts.messages("mcq_cot", **values)
        scores = generate_and_parse(llm, msgs, letters, max_tokens=settings.cot_max_tokens,
                                    options=question.options)
    elif settings.scoring == "verify":
        def check(option: str) -> list[Message]:
            return prompts.messages("mcq_verify", evidence_block=context_block, question=values["question"],
                                    option=option)

        scores = score_options_verify(llm, check, question.options)
    elif settings.scoring == "logprob" and settings.debias == "permute":
        def build(shown: dict[str, str]) -> list[Message]:
            return prompts.messages("mcq_zeroshot", **{**values, "options": prompts.format_options(shown)})

        scores = score_options_permuted(llm, build, question.options, shifts=settings.permutations,
                                        calibration=settings.calibration)
    elif settings.scoring == "logprob":
        msgs = prompts.messages("mcq_zeroshot", **values)
        scores = score_options(llm, msgs, letters, calibration=settings.calibration)
    else:
        msgs = prompts.messages("mcq_zeroshot", **values)
        scores = generate_and_parse(llm, msgs, letters, max_tokens=16, options=question.options)
    tally.count(scores.result)
    tally.tokens["llm_calls"] += scores.calls - 1
    if scores.method == "generate" and settings.prompt == "zeroshot" and settings.scoring == "logprob":
        # The one-token pass found no letter, so the fallback generated: both calls cost tokens.
        tally.tokens["llm_calls"] += 1
    return scores


def read_grounded_choice(llm: LLM, question: Question, context_block: str, settings: ReaderSettings,
                         tally: Tally) -> OptionScores:
    """``read_choice`` with the evidence, mixed with the per-option check when
    ``settings.check_weight`` > 0, and tempered by the closed-book read when
    ``settings.evidence_weight`` < 1 (and there is evidence to temper)."""
    scores = read_choice(llm, question, context_block, settings, tally)
    parts: dict[str, dict[str, float]] = {"letters": dict(scores.probs)}
    if settings.check_weight > 0.0 and settings.scoring != "verify" and scores.outcome == "answered":
        check = read_choice(llm, question, context_block, settings.model_copy(update={"scoring": "verify"}), tally)
        parts["check"] = dict(check.probs)
        scores = weigh_prior(scores, check, 1.0 - settings.check_weight)
    if settings.evidence_weight < 1.0 and context_block and scores.outcome == "answered":
        closed = read_choice(llm, question, "", settings, tally)
        parts["closed_book"] = dict(closed.probs)
        scores = weigh_prior(scores, closed, settings.evidence_weight)
    if len(parts) > 1:  # what was combined, so a report can re-weigh after the fact
        scores = replace(scores, parts=parts)
    return scores


def focus(evidence: Evidence, question: Question, settings: ReaderSettings, engine: RetrievalEngine,
          tally: Tally) -> Evidence:
    """The evidence compressed to ``settings.evidence_tokens`` (unchanged when that is None)."""
    if settings.evidence_tokens is None:
        return evidence
    from medground.retrieve.compress import compress

    with tally.stage("compress"):
        return compress(evidence, question.question, question.options, budget_tokens=settings.evidence_tokens,
                        count_tokens=engine.count_tokens, neighbor_weight=settings.evidence_neighbor_weight,
                        rank_weight=settings.evidence_rank_weight)


def evidence_block(evidence: Evidence) -> str:
    if not evidence.citations:
        return ""
    return prompts.fill("evidence_block", evidence=evidence.render())


def choice_answer(scores: OptionScores, citations: list[Citation], **extra: object) -> Answer:
    if scores.outcome != "answered":
        reason = scores.failure.reason if scores.failure else "unparsed"
        return Answer(outcome="parse_failure", text=scores.text, citations=citations,
                      metadata={"parse_failure": reason, **extra})
    meta: dict[str, object] = {"scoring": scores.method, **extra}
    if scores.logprobs:
        # Raw per-letter log-probabilities: what a report needs to calibrate after the fact.
        meta["letter_logprobs"] = dict(scores.logprobs)
    if scores.blank_passes:
        meta["blank_passes"] = scores.blank_passes
    if scores.parts:
        meta["score_parts"] = scores.parts
    return Answer(outcome="answered", choice=scores.choice, text=scores.text, option_scores=dict(scores.probs),
                  rationale=scores.text if scores.method == "generate" else "", citations=citations,
                  metadata=meta)


INSUFFICIENT = "INSUFFICIENT EVIDENCE"


def with_support_quote(answer: str, passage: Citation, *, exclude: str, budget: int) -> str:
    """The checked answer, then the cited passage's words that support its first claim
    (reading/reply.py: one reply shape, shared with the consultation reader)."""
    from medground.reading import support as sup
    from medground.reading.reply import answer_with_quote, supporting_sentence

    if not cited_numbers(answer):  # its citation went with a cut restatement: the answer cites what it rests on
        body = answer.rstrip()
        answer = f"{body[:-1]} [{passage.number}]." if body.endswith(".") else f"{body} [{passage.number}]"
    claim = sup.first_claim(answer, exclude=[exclude]) or answer
    quote = supporting_sentence(passage.text, claim, max_words=max(8, budget * 2 // 3))  # ~1.5 tokens a word
    return answer_with_quote(answer, passage.label, passage.number, quote)


def judge_first_claim(llm: LLM, text: str, question: str, cited: Sequence[Citation], kept: list[str],
                      dropped: list[str], settings: ReaderSettings, tally: Tally, meta: dict
                      ) -> tuple[list[str], list[str]]:
    """The LLM claim judge decides the first claim's fate against the passages it cites (all the
    cited ones when it cites none itself); the other sentences keep the lexical verdict."""
    from medground.reading import support as sup
    from medground.reading.claims import LLMClaimJudge

    first = sup.first_claim(text, exclude=[question])
    if first is None:
        return kept, dropped
    own = set(cited_numbers(first))
    passages = [c for c in cited if c.number in own] or list(cited)
    claim = sup.without_citations(first)
    with tally.stage("claim_check"):
        p = LLMClaimJudge(llm).p_supported(claim, "\n\n".join(f"{c.label}\n{c.text}" for c in passages))
    tally.tokens["llm_calls"] += 1
    supported = p is not None and p >= settings.freetext_claim_threshold
    meta["first_claim_judged"] = {"p": None if p is None else round(p, 4), "supported": supported,
                                  "lexical": first in kept}
    if supported and first in dropped:
        return [first, *kept], [d for d in dropped if d != first]
    if not supported and first in kept:
        return [k for k in kept if k != first], [first, *dropped]
    return kept, dropped


def free_text_answer(llm: LLM, question: Question, evidence: Evidence, settings: ReaderSettings,
                     tally: Tally, *, count_tokens: Callable[[str], int] | None = None,
                     absent_entities: Callable[[Sequence[Citation]], list[str]] | None = None,
                     **extra: object) -> Answer:
    """Free-text mode: an answer from the numbered passages with [n] citations, or an explicit
    insufficient-evidence outcome. Citations that name no passage are reported, not kept.

    With a support check (``freetext_abstain_below`` set, or an extractive/checked answer) one
    forward pass first asks which passage answers; below the threshold the reader abstains.
    ``absent_entities`` (reading/entities.py): the question's specific entities that the given
    passages never name; when the passages an answer cites miss one, the reader says what they
    are about instead of answering a near-miss entity (the answer is kept in the metadata)."""
    answer = _free_text_answer(llm, question, evidence, settings, tally, count_tokens=count_tokens, **extra)
    if absent_entities is None or answer.outcome != "answered":
        return answer  # a reply that already declines keeps its own words
    rests_on = answer.citations
    absent = absent_entities(rests_on) if rests_on else []
    if not absent:
        return answer
    topics = list(dict.fromkeys(c.section or c.chapter or c.title for c in rests_on))[:2]
    text = (f"The passages found do not mention {' or '.join(absent)}; they are about "
            f"{' and '.join(topics)}. The textbooks searched do not answer this question.")
    return Answer(outcome="insufficient_evidence", text=text, citations=rests_on,
                  metadata={**answer.metadata, "entity_missing": absent, "withheld": answer.text})


def _free_text_answer(llm: LLM, question: Question, evidence: Evidence, settings: ReaderSettings,
                      tally: Tally, *, count_tokens: Callable[[str], int] | None = None, **extra: object) -> Answer:
    from medground.reading import support as sup

    if not evidence.citations:
        return Answer(outcome="insufficient_evidence", text="No passage was retrieved for this question.",
                      metadata={**extra})
    q = question.question.strip()
    meta: dict[str, object] = {"passages_shown": len(evidence.citations), **extra}
    found: sup.Support | None = None
    if settings.freetext_abstain_below is not None or settings.freetext_answer != "generate":
        with tally.stage("support"):
            found, result = sup.passage_support(llm, evidence, "passage_support", question=q)
        tally.count(result)
        meta.update(support=found.score, supporting_passage=found.passage.number if found.passage else None)
        if found.below(settings.freetext_abstain_below):
            return Answer(outcome="insufficient_evidence", citations=evidence.citations, metadata=meta,
                          text="The passages found do not answer this question; the closest are listed.")

    def quoted(reason: str) -> Answer:
        passage = (found.passage if found else None) or evidence.citations[0]
        count = count_tokens or (lambda t: len(t.split()))
        text = sup.quote(passage, q, count, settings.freetext_quote_tokens)
        return Answer(outcome="answered", text=sup.quoted_answer(passage, text), citations=[passage],
                      metadata={**meta, "extractive": True, "quoted": text, "quote_reason": reason})

    if settings.freetext_answer == "extractive":
        return quoted("extractive mode")
    msgs = prompts.messages("freetext", evidence=evidence.render(), question=q)
    with tally.stage("read"):
        text = chat_text(llm, msgs, tally, max_tokens=settings.freetext_max_tokens)
    by_number = {c.number: c for c in evidence.citations}
    numbers = cited_numbers(text)
    cited = [by_number[n] for n in numbers if n in by_number]
    meta["dangling_citations"] = [n for n in numbers if n not in by_number]
    if INSUFFICIENT in text.upper() or not text:
        return Answer(outcome="insufficient_evidence", text=text, citations=evidence.citations, metadata=meta)
    if settings.freetext_answer == "checked":
        meta["generated"] = text
        if not cited:
            found_in = sup.attribute(text, evidence.citations, exclude=[q], clauses=True)
            if found_in is None:
                meta["generated_supported"] = False
                return quoted("generated answer cites no passage and no passage supports it")
            passage, claims, dropped = found_in
            meta.update(generated_supported=False, attributed_to=passage.number,
                        **({"dropped_sentences": dropped} if dropped else {}))
            if sup.first_claim(text, exclude=[q]) in dropped:
                return quoted("the generated answer's first claim is not supported by any passage")
            text = with_support_quote(" ".join(claims) + f" [{passage.number}]", passage, exclude=q,
                                      budget=settings.freetext_support_tokens)
            return Answer(outcome="answered", text=text, citations=[passage], metadata=meta)
        # what the reader saw of each passage: its heading (book / chapter / section) and text
        kept, dropped = sup.split_supported(text, " ".join(f"{c.label} {c.text}" for c in cited), exclude=[q],
                                            clauses=True)
        if settings.freetext_claim_check == "llm":
            kept, dropped = judge_first_claim(llm, text, q, cited, kept, dropped, settings, tally, meta)
        meta["generated_supported"] = not dropped
        if dropped:
            meta["dropped_sentences"] = dropped
        if not any(sup.makes_claim(k, exclude=[q]) for k in kept):  # no claim left
            return quoted("no sentence of the generated answer is supported by the passages it cites")
        if sup.first_claim(text, exclude=[q]) in dropped:
            # its answer is gone: what is left only restates the evidence ("passage [2] states
            # that …"), which would read as an answer that never names what was asked
            return quoted("the generated answer's first claim is not supported by the passages it cites")
        kept, restated = sup.drop_restatements(kept, question=q, passages={c.number: f"{c.label} {c.text}"
                                                                            for c in cited})
        if restated:
            meta["restatements_cut"] = restated
        text = " ".join(sup.fold_citations(kept))
        cited = [by_number[n] for n in cited_numbers(text) if n in by_number] or cited
        text = with_support_quote(text, cited[0], exclude=q, budget=settings.freetext_support_tokens)
    if not cited:
        # An answer that cites nothing is not grounded: say so, and show no evidence as if it had
        # been used (the retrieved passages stay in the metadata for whoever wants to look).
        meta["uncited"] = True
        meta["retrieved_not_cited"] = [c.label for c in evidence.citations]
    return Answer(outcome="answered", text=text, citations=cited, metadata=meta)
