"""Multiple-choice reading: letter scores from the LLM given a context block (evidence, a history or
nothing), optionally mixed with a per-option check and the closed-book read, and the Answer."""

from __future__ import annotations

from dataclasses import replace

from medground.llm import prompts
from medground.llm.base import LLM, Message
from medground.llm.scoring import (
    OptionScores,
    generate_and_parse,
    mcq_messages,
    score_options,
    score_options_permuted,
    score_options_verify,
    weigh_prior,
)
from medground.reading.reader import ReaderSettings, Tally
from medground.schema import Answer, ChoiceDetail, Citation, Evidence, Question


def read_choice(
    llm: LLM, question: Question, context_block: str, settings: ReaderSettings, tally: Tally
) -> OptionScores:
    """Answer a multiple-choice question given a context block (evidence, history or nothing)."""
    letters = list(question.options)

    def build(shown: dict[str, str], prompt: str = "mcq_zeroshot") -> list[Message]:
        # the one multiple-choice prompt, shared with the feedback labeller (train/feedback.py)
        return mcq_messages(question.question, shown, block=context_block, prompt=prompt)  # type: ignore[arg-type]

    if settings.prompt == "cot":
        scores = generate_and_parse(llm, build(question.options, "mcq_cot"), letters,
                                    max_tokens=settings.cot_max_tokens, options=question.options)
    elif settings.scoring == "verify":
        def check(option: str) -> list[Message]:
            return prompts.messages("mcq_verify", evidence_block=context_block, question=question.question.strip(),
                                    option=option)

        scores = score_options_verify(llm, check, question.options)
    elif settings.scoring == "logprob" and settings.debias == "permute":
        scores = score_options_permuted(llm, build, question.options, shifts=settings.permutations,
                                        calibration=settings.calibration, stop_at=settings.permute_stop_at)
    elif settings.scoring == "logprob":
        scores = score_options(llm, build(question.options), letters, calibration=settings.calibration)
    else:
        scores = generate_and_parse(llm, build(question.options), letters, max_tokens=16, options=question.options)
    tally.count(scores.result)
    tally.tokens["llm_calls"] += scores.calls - 1
    if scores.method == "generate" and settings.prompt == "zeroshot" and settings.scoring == "logprob":
        # The one-token pass found no letter, so the fallback generated: both calls cost tokens.
        tally.tokens["llm_calls"] += 1
    return scores


def read_grounded_choice(llm: LLM, question: Question, context_block: str, settings: ReaderSettings,
                         tally: Tally) -> OptionScores:
    """``read_choice`` with the evidence, mixed with the per-option check when
    ``settings.check_weight`` > 0, and weighed against the closed-book read when
    ``settings.evidence_weight`` is not 1 (and there is evidence): below 1 the prior tempers the
    evidence, above 1 the evidence is contrasted with it."""
    scores = read_choice(llm, question, context_block, settings, tally)
    parts: dict[str, dict[str, float]] = {"letters": dict(scores.probs)}
    if settings.check_weight > 0.0 and settings.scoring != "verify" and scores.outcome == "answered":
        check = read_choice(llm, question, context_block, settings.model_copy(update={"scoring": "verify"}), tally)
        parts["check"] = dict(check.probs)
        scores = weigh_prior(scores, check, 1.0 - settings.check_weight)
    if settings.evidence_weight != 1.0 and context_block and scores.outcome == "answered":
        closed = read_choice(llm, question, "", settings, tally)
        parts["closed_book"] = dict(closed.probs)
        scores = weigh_prior(scores, closed, settings.evidence_weight)
    if len(parts) > 1:  # what was combined, so a report can re-weigh after the fact
        scores = replace(scores, parts=parts)
    return scores


def evidence_block(evidence: Evidence) -> str:
    if not evidence.citations:
        return ""
    return prompts.fill("evidence_block", evidence=evidence.render())


def choice_answer(scores: OptionScores, citations: list[Citation], detail: ChoiceDetail | None = None) -> Answer:
    """The Answer of a letter read. ``detail``: what the pipeline adds (evidence, votes, follow-ups,
    a consultation's search); the read's own fields are filled in here."""
    base = detail or ChoiceDetail()
    if scores.outcome != "answered":
        reason = scores.failure.reason if scores.failure else "unparsed"
        return Answer(outcome="parse_failure", text=scores.text, citations=citations,
                      detail=replace(base, parse_failure=reason))
    read = replace(base, scoring=scores.method, letter_logprobs=dict(scores.logprobs) or None,
                   blank_passes=scores.blank_passes or None, score_parts=scores.parts or None)
    return Answer(outcome="answered", choice=scores.choice, text=scores.text, option_scores=dict(scores.probs),
                  rationale=scores.text if scores.method == "generate" else "", citations=citations,
                  detail=read)
