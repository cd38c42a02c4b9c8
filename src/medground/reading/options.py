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

from medground.index.text import text_tokenizer
from medground.schema import Citation, Query


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
