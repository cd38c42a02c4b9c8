"""Multiple-choice answers: letter log-probabilities in one forward pass, or generate-then-parse.

Scoring reads the top alternatives of the first generated token and collects every variant of
an option letter ("A", " A", "(A", "A." ...). Parsing is strict: a recognised pattern or an
explicit ParseFailure, never eval() and never a default letter.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from collections.abc import Callable
from typing import Literal

from medground.llm import prompts
from medground.llm.base import LLM, ChatResult, Message

_STRIP = " \t\n\r()[]{}*:.,\"'`"


@dataclass(slots=True)
class ParseFailure:
    reason: str
    text: str


@dataclass(slots=True)
class OptionScores:
    outcome: Literal["answered", "parse_failure"]
    choice: str | None
    probs: dict[str, float] = field(default_factory=dict)  # over the option letters, sums to 1
    logprobs: dict[str, float] = field(default_factory=dict)  # raw (uncalibrated) per letter
    method: Literal["logprob", "generate"] = "logprob"
    missing: list[str] = field(default_factory=list)  # letters absent from the top alternatives
    letter_mass: float = 0.0  # probability the model put on any option letter at all
    text: str = ""
    failure: ParseFailure | None = None
    result: ChatResult | None = None
    calls: int = 1  # LLM requests behind these scores (permutation scoring makes several)
    blank_passes: int = 0  # permutation passes whose top alternatives held no option letter
    # When these scores combine several reads (letters, a per-option check, closed book): each
    # read's distribution, so a report can re-weigh them after the fact.
    parts: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass(slots=True)
class ParseCounter:
    """Counts outcomes so a report can say how often parsing failed."""

    total: int = 0
    failures: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def add(self, outcome: str | ParseFailure | OptionScores) -> None:
        self.total += 1
        failure = outcome if isinstance(outcome, ParseFailure) else getattr(outcome, "failure", None)
        if failure is not None:
            self.failures += 1
            self.reasons[failure.reason] = self.reasons.get(failure.reason, 0) + 1


def mcq_messages(question: str, options: dict[str, str], *, context: str = "", block: str | None = None,
                 prompt: Literal["mcq_zeroshot", "mcq_cot"] = "mcq_zeroshot") -> list[Message]:
    """THE multiple-choice prompt (templates llm/prompts/mcq_*.txt): what the reader sends
    (reading/choice.py) and what the feedback labeller judges passages with (train/feedback.py),
    so a retriever trained on those judgements learns from the prompt it serves.

    ``context``: rendered passages ("[1] (Book / Chapter) text"), wrapped in the evidence block;
    ``block``: a context block already wrapped (evidence, an i-MedRAG history) — it wins."""
    if block is None:
        block = prompts.fill("evidence_block", evidence=context.strip()) if context.strip() else ""
    return prompts.messages(prompt, evidence_block=block, question=question.strip(),
                            options=prompts.format_options(options))


# --- log-probability scoring ----------------------------------------------------------------
def token_label(token: str, labels: list[str], *, case_sensitive: bool = True) -> str | None:
    """The label a token spells, ignoring spaces and bracket/punctuation around it."""
    core = token.strip(_STRIP)
    if not case_sensitive:
        core = core.lower()
        labels = [label.lower() for label in labels]
    return core if core in labels else None


def label_logprobs(top: list[tuple[str, float]], labels: list[str], *,
                   case_sensitive: bool = True) -> dict[str, float]:
    """log P(label) summed (log-sum-exp) over the token variants found among the alternatives."""
    acc: dict[str, list[float]] = {}
    for token, lp in top:
        lab = token_label(token, labels, case_sensitive=case_sensitive)
        if lab is not None:
            acc.setdefault(lab, []).append(lp)
    return {lab: _logsumexp(v) for lab, v in acc.items()}


def _logsumexp(values: list[float]) -> float:
    m = max(values)
    return m + math.log(sum(math.exp(v - m) for v in values))


def normalise(logprobs: dict[str, float]) -> dict[str, float]:
    """Softmax over the given letters."""
    if not logprobs:
        return {}
    m = max(logprobs.values())
    exp = {k: math.exp(v - m) for k, v in logprobs.items()}
    z = sum(exp.values())
    return {k: v / z for k, v in exp.items()}


def scores_from_result(result: ChatResult, letters: list[str], calibration: dict[str, float] | None = None
                       ) -> OptionScores | None:
    """Letter distribution from a 1-token result; None when no option letter is among the alternatives."""
    top = result.first_top
    found = label_logprobs(top, letters)
    if not found:
        return None
    floor = min(lp for _, lp in top)  # letters outside the top-k got at most this
    missing = [x for x in letters if x not in found]
    raw = {x: found.get(x, floor) for x in letters}
    adjusted = {x: raw[x] - (calibration or {}).get(x, 0.0) for x in letters}
    probs = normalise(adjusted)
    choice = max(letters, key=lambda x: probs[x])
    return OptionScores(outcome="answered", choice=choice, probs=probs, logprobs=raw, method="logprob",
                        missing=missing, letter_mass=sum(math.exp(found[x]) for x in found), text=result.text,
                        result=result)


def score_options(llm: LLM, messages: list[Message], letters: list[str], *, top_logprobs: int = 20,
                  calibration: dict[str, float] | None = None, fallback_max_tokens: int = 16) -> OptionScores:
    """Score option letters from one forward pass; generate-then-parse when no letter shows up.

    ``calibration``: per-letter mean log-probability to subtract (see ``calibrate``), which removes
    a model's preference for a letter regardless of content.
    """
    _check_letters(letters)
    result = llm.chat(messages, max_tokens=1, temperature=0.0, top_logprobs=top_logprobs)
    scores = scores_from_result(result, letters, calibration)
    if scores is not None:
        return scores
    return generate_and_parse(llm, messages, letters, max_tokens=fallback_max_tokens)


def calibrate(llm: LLM, letters: list[str], prompts: list[list[Message]] | None = None, *,
              top_logprobs: int = 20) -> dict[str, float]:
    """Mean log-probability of each letter over calibration prompts (default: content-free "N/A")."""
    _check_letters(letters)
    if prompts is None:
        prompts = [mcq_messages("N/A", {x: "N/A" for x in letters})]
    sums = {x: 0.0 for x in letters}
    n = 0
    for messages in prompts:
        result = llm.chat(messages, max_tokens=1, temperature=0.0, top_logprobs=top_logprobs)
        top = result.first_top
        if not top:
            raise ValueError(f"{llm.name} returned no log-probabilities; calibration needs them")
        found = label_logprobs(top, letters)
        floor = min(lp for _, lp in top)
        for x in letters:
            sums[x] += found.get(x, floor)
        n += 1
    if n == 0:
        raise ValueError("calibrate needs at least one prompt")
    return {x: s / n for x, s in sums.items()}


def generate_and_parse(llm: LLM, messages: list[Message], letters: list[str], *, max_tokens: int = 16,
                       options: dict[str, str] | None = None) -> OptionScores:
    """Generate a short (or chain-of-thought) answer and parse the chosen letter strictly."""
    _check_letters(letters)
    result = llm.chat(messages, max_tokens=max_tokens, temperature=0.0)
    parsed = parse_choice(result.text, letters, options=options)
    if isinstance(parsed, ParseFailure):
        return OptionScores(outcome="parse_failure", choice=None, method="generate", text=result.text,
                            failure=parsed, result=result)
    return OptionScores(outcome="answered", choice=parsed, probs={x: float(x == parsed) for x in letters},
                        method="generate", text=result.text, result=result)


def _check_letters(letters: list[str]) -> None:
    if not letters or len(set(letters)) != len(letters) or not all(isinstance(x, str) and x for x in letters):
        raise ValueError(f"letters must be distinct non-empty strings, got {letters!r}")


# --- strict parsing -------------------------------------------------------------------------
def parse_choice(text: str, letters: list[str], *, options: dict[str, str] | None = None) -> str | ParseFailure:
    """The option letter a model's output commits to, or a ParseFailure saying why not.

    Tried in order (the last explicit statement wins, since chain-of-thought mentions options
    before concluding): "answer is/Answer: X", "option X", a line that is only "X"/"(X)"/"X.",
    the output's final token, the output starting with "X." / "X)", and the option text itself.
    """
    _check_letters(letters)
    if not isinstance(text, str) or not text.strip():
        return ParseFailure("empty", text or "")
    L = "|".join(re.escape(x) for x in sorted(letters, key=len, reverse=True))
    clean = text.replace("**", "").replace("__", "")
    letter = rf"[\(\[]?\s*({L})\s*[\)\]]?(?=$|[\s.,;:!?)\]])"
    tiers = [
        # "Answer: B", "The answer is (C).", "final answer: D", "answer would be A"
        rf"answer\s*(?:is|would be|should be|:|=|-)?\s*(?:option\s*|choice\s*)?:?\s*{letter}",
        # "the correct option is B", "best choice: (D)"
        rf"(?:correct|right|best)\s+(?:option|choice)\s*(?:is|:|=)?\s*{letter}",
    ]
    for pat in tiers:
        matches = [m for m in re.finditer(pat, clean, flags=re.IGNORECASE) if m.group(1) in letters]
        if matches:
            last = matches[-1]
            if re.match(rf"\s*(?:or|and|/|,)\s*[\(\[]?({L})\b", clean[last.end():]):
                return ParseFailure("ambiguous", text)  # "Answer: A or B"
            return last.group(1)
    lines = [ln.strip() for ln in clean.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        m = re.fullmatch(rf"[\(\[]?({L})[\)\]]?[.:]?", ln)
        if m:
            return m.group(1)
    # "A. Aspirin" / "(B) ..." / "C) ..." at the very start (the model echoed the option)
    m = re.match(rf"\s*[\(\[]?({L})(?:[\)\]]|[.:](?:\s|$))", clean)
    if m:
        return m.group(1)
    # "... so it is B." - a lone capital letter as the final word ("I"/"a" are words, not options)
    m = re.search(rf"(?:^|\s)[\(\[]?({L})[\)\]]?[.!]?\s*$", clean)
    if m and m.group(1) not in {"a", "I"}:
        return m.group(1)
    if options:
        norm = _norm(clean)
        matched = [k for k, v in options.items() if k in letters and _norm(v) and _norm(v) in norm]
        if len(matched) == 1:
            return matched[0]
        if len(matched) > 1:
            return ParseFailure("ambiguous option text", text)
    return ParseFailure("no option letter", text)


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", s.lower())).strip()


# --- position debiasing by cyclic permutation ------------------------------------------------
def cyclic_orders(letters: list[str], shifts: int | None = None) -> list[list[str]]:
    """Option orders to score: shift s shows the option of letters[(i + s) % n] under letters[i].

    ``shifts`` = how many of the n cyclic shifts to use (default all n). Across all n shifts
    every option text appears under every letter once, so a letter preference cancels out.
    """
    n = len(letters)
    k = n if shifts is None else max(1, min(shifts, n))
    return [[letters[(i + s) % n] for i in range(n)] for s in range(k)]


def score_options_permuted(llm: LLM, build: Callable[[dict[str, str]], list[Message]], options: dict[str, str],
                           *, shifts: int | None = None, top_logprobs: int = 20,
                           calibration: dict[str, float] | None = None, stop_at: float | None = None) -> OptionScores:
    """Letter scoring averaged over cyclic permutations of the option texts.

    ``build(shown)`` turns the options as shown (letter → text) into messages; keep the options
    at the end of the prompt so the permutations share the evidence and question as a cached
    prefix. Each pass's letter distribution is mapped back to the original options and the
    distributions are averaged. Passes whose top alternatives held no option letter are left out
    (their number is in ``missing``); when every pass lacks letters the result is a parse
    failure, never a default letter. ``stop_at``: a first pass whose best option has at least this
    probability is the answer, the other shifts are not read.
    """
    letters = list(options)
    _check_letters(letters)
    totals = {x: 0.0 for x in letters}
    raw_sum = {x: 0.0 for x in letters}
    used, results, mass = 0, [], 0.0
    for order in cyclic_orders(letters, shifts):
        shown = {letters[i]: options[src] for i, src in enumerate(order)}
        result = llm.chat(build(shown), max_tokens=1, temperature=0.0, top_logprobs=top_logprobs)
        results.append(result)
        scores = scores_from_result(result, letters, calibration)
        if scores is None:
            continue
        used += 1
        mass += scores.letter_mass
        for i, src in enumerate(order):
            totals[src] += scores.probs[letters[i]]
            raw_sum[src] += scores.logprobs[letters[i]]
        if stop_at is not None and len(results) == 1 and max(scores.probs.values()) >= stop_at:
            break
    last = _merge_results(results)
    if used == 0:
        return OptionScores(outcome="parse_failure", choice=None, method="logprob", text=last.text if last else "",
                            failure=ParseFailure("no option letter among the top alternatives", ""), result=last,
                            calls=len(results), blank_passes=len(results))
    probs = {x: v / used for x, v in totals.items()}
    choice = max(letters, key=lambda x: probs[x])
    return OptionScores(outcome="answered", choice=choice, probs=probs, logprobs={x: v / used for x, v in raw_sum.items()},
                        method="logprob", letter_mass=mass / used, text=choice, result=last,
                        calls=len(results), blank_passes=len(results) - used)


def _merge_results(results: list[ChatResult]) -> ChatResult | None:
    """One ChatResult whose token counts add up all the passes (for accounting)."""
    if not results:
        return None
    from dataclasses import replace

    return replace(results[-1], prompt_tokens=sum(r.prompt_tokens for r in results),
                   completion_tokens=sum(r.completion_tokens for r in results))


# --- per-option verification ---------------------------------------------------------------------
YES, NO = "yes", "no"


def yes_probability(result: ChatResult) -> float | None:
    """P(yes) / (P(yes) + P(no)) from a one-token result's alternatives (any case, any spacing);
    None when neither word is among them."""
    top = result.first_top
    found = label_logprobs(top, [YES, NO], case_sensitive=False)
    if not found:
        return None
    floor = min(lp for _, lp in top)
    y, n = found.get(YES, floor), found.get(NO, floor)
    return 1.0 / (1.0 + math.exp(n - y))


def score_options_verify(llm: LLM, build: Callable[[str], list[Message]], options: dict[str, str], *,
                         top_logprobs: int = 20) -> OptionScores:
    """Each option checked on its own: "is this answer correct?" read as P(yes) from one token.

    No option letter is ever shown, so a letter preference cannot enter. ``build(option_text)``
    makes the messages; keep the option at the end so every check reuses the evidence and
    question as a cached prefix. Scores are softmax over options of logit(P(yes)); options whose
    check produced neither "yes" nor "no" get the lowest score seen, and when none did the
    result is a parse failure.
    """
    letters = list(options)
    _check_letters(letters)
    results, p_yes = [], {}
    for x in letters:
        result = llm.chat(build(options[x]), max_tokens=1, temperature=0.0, top_logprobs=top_logprobs)
        results.append(result)
        p = yes_probability(result)
        if p is not None:
            p_yes[x] = min(max(p, 1e-6), 1 - 1e-6)
    last = _merge_results(results)
    if not p_yes:
        return OptionScores(outcome="parse_failure", choice=None, method="logprob", text=last.text if last else "",
                            failure=ParseFailure("no yes/no among the top alternatives", ""), result=last,
                            calls=len(results), blank_passes=len(results))
    logit = {x: math.log(p / (1 - p)) for x, p in p_yes.items()}
    low = min(logit.values())
    raw = {x: logit.get(x, low) for x in letters}
    probs = normalise(raw)
    choice = max(letters, key=lambda x: probs[x])
    # logprobs stays empty: these are yes/no logits, not letter log-probabilities, and records
    # store letter log-probabilities for after-the-fact letter calibration.
    return OptionScores(outcome="answered", choice=choice, probs=probs, method="logprob",
                        missing=[x for x in letters if x not in p_yes], text=choice, result=last,
                        calls=len(results), blank_passes=len(letters) - len(p_yes))


def weigh_prior(grounded: OptionScores, closed: OptionScores, evidence_weight: float) -> OptionScores:
    """The option distribution argmax-ed as w·log p(option | evidence) + (1 − w)·log p(option | no
    evidence), renormalized. w < 1: the reader's own prior tempers what the evidence suggests;
    w > 1: the prior counts against it (context-aware decoding), so an option the evidence raises
    wins over one the model believed without it. A failed
    grounded read stays a failure; a failed closed-book read leaves the grounded scores as they are."""
    if grounded.outcome != "answered" or closed.outcome != "answered" or not closed.probs:
        return grounded
    floor = 1e-12
    mixed = {k: evidence_weight * math.log(max(p, floor)) + (1 - evidence_weight) * math.log(max(closed.probs.get(k, 0.0), floor))
             for k, p in grounded.probs.items()}
    top = max(mixed.values())
    norm = sum(math.exp(v - top) for v in mixed.values())
    probs = {k: math.exp(v - top) / norm for k, v in mixed.items()}
    return replace(grounded, choice=max(probs, key=probs.get), probs=probs, calls=grounded.calls + closed.calls)
