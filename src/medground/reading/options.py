"""Reading a multiple-choice question per option.

A question alone retrieves what its own words point at; the deciding passage often names the
option instead ("contraindications include … hypokalemia" never says "toxicity risk"). So the
evidence is retrieved with the question alone and with each option joined to it, and fused
(RRF): every option gets a fair chance to bring its own passage. Whether that worked is
measurable per question: ``options_covered`` says which options' text the evidence holds.

Scoring combines the letter read (permutation-debiased) with a per-option check that sees no
letters — P(yes) that option X is correct given the same evidence — as
``w·log p_check + (1 − w)·log p_letters`` (``llm.scoring.weigh_prior``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from medground.index.text import text_tokenizer
from medground.llm.scoring import OptionScores
from medground.schema import Citation, Query

# Word parts that turn a clinical term into its opposite: "hypokalemia" / "hyperkalemia",
# "increased" / "decreased". The grammar of such options, not a list fitted to any question.
_OPPOSITES = (("hypo", "hyper"), ("increase", "decrease"), ("tachy", "brady"), ("high", "low"), ("more", "less"))


def option_queries(question: str, options: Mapping[str, str]) -> list[Query]:
    """The question alone (the "original" query a reranker scores against), then the question
    joined to each option, in letter order. An option whose text repeats is asked once."""
    q = " ".join(question.split())
    out = [Query(q, "original")]
    seen = {q}
    for text in options.values():
        joined = f"{q} {' '.join(str(text).split())}".strip()
        if joined not in seen:
            seen.add(joined)
            out.append(Query(joined, "option"))
    return out


def option_terms(text: str) -> frozenset[str]:
    """An option's content terms (stop words dropped, stemmed, hypo-/hyper- kept apart)."""
    return frozenset(text_tokenizer().tokenize(text))


def mentions(passage_text: str, option_text: str) -> bool:
    """Every content term of the option occurs in the passage (an option of stop words only —
    "None of the above" — is never counted as present)."""
    return _holds(option_terms(option_text), option_terms(passage_text))


def _holds(option: frozenset[str], passage: frozenset[str]) -> bool:
    return bool(option) and option <= passage


def options_covered(citations: Sequence[Citation], options: Mapping[str, str]) -> dict[str, list[int]]:
    """For each option letter, the numbers of the citations whose text mentions it (each text
    tokenized once: this runs on every multiple-choice answer)."""
    passages = [(c.number, option_terms(c.text)) for c in citations]
    return {letter: [n for n, terms in passages if _holds(option_terms(text), terms)]
            for letter, text in options.items()}


def polarity_twins(options: Mapping[str, str]) -> list[tuple[str, str]]:
    """Pairs of option letters whose texts differ only by one opposite part ("Hyperkalemia" /
    "Hypokalemia"): one is the other turned round."""
    texts = {k: " ".join(str(v).lower().split()) for k, v in options.items()}
    out = []
    letters = sorted(texts)
    for i, a in enumerate(letters):
        for b in letters[i + 1:]:
            if any(x in texts[a] and y in texts[b] and texts[a].replace(x, "\0") == texts[b].replace(y, "\0")
                   for p, q in _OPPOSITES for x, y in ((p, q), (q, p))):
                out.append((a, b))
    return out


def evidence_decides_twins(scores: OptionScores, options: Mapping[str, str],
                           covered: Mapping[str, Sequence[int]]) -> OptionScores:
    """Between two opposite-polarity options of which the evidence names exactly one, the named
    one ranks first: asked which electrolyte disturbance raises the risk of digoxin toxicity,
    with "Contraindications: … Hypokalemia" cited and hyperkalemia named nowhere, the 1.5B's
    lean towards Hyperkalemia is its own, not the evidence's. The pair's two probabilities are
    swapped; the letters' read before is kept in ``parts``."""
    if scores.outcome != "answered" or not scores.probs:
        return scores
    probs = dict(scores.probs)
    for a, b in polarity_twins(options):
        if bool(covered.get(a)) == bool(covered.get(b)):
            continue
        named, other = (a, b) if covered.get(a) else (b, a)
        if probs.get(other, 0.0) > probs.get(named, 0.0):
            probs[named], probs[other] = probs[other], probs[named]
    if probs == scores.probs:
        return scores
    choice = max(probs, key=probs.get)
    return replace(scores, probs=probs, choice=choice, text=choice if scores.text == scores.choice else scores.text,
                   parts={**scores.parts, "letters_before_twins": dict(scores.probs)})
