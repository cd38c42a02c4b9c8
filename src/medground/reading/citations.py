"""Citation marks in generated text: which passages a sentence cites, sentences without their
marks, and citation-only sentences folded into the claim before them."""

from __future__ import annotations

import re
from collections.abc import Sequence

CITATION_MARK = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")


def cited_numbers(text: str) -> list[int]:
    """The passage numbers a text cites, in first-mention order: [1], [2][3], [1, 4]."""
    return list(dict.fromkeys(int(n) for c in CITATION_MARK.findall(text) for n in re.findall(r"\d+", c)))

# Words that frame an answer rather than claim anything ("the passage says patients may ...").
def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences, stripped, as every claim check splits them (quotation marks blanked)."""
    from medground.corpus.sentences import split_sentences

    return [s.strip() for s in split_sentences(answer.replace("\u201c", " ").replace("\u201d", " "))]


def without_citations(sentence: str) -> str:
    """The sentence as a claim: its [n] marks gone, with no space left before punctuation."""
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(CITATION_MARK.sub(" ", sentence).split())).strip(" :;")


# All a citation-only sentence may say ("This is supported by passage [3].", "See [2].").
CITING_WORDS = frozenset("this that it is are was as see also supported support supports shown stated states "
                          "according to by in the a passage passages source sources evidence based on and "
                          "confirm confirmed confirms".split())


def fold_citations(sentences: Sequence[str]) -> list[str]:
    """Sentences that only cite ("This is supported by passage [3].") give their citations to the
    sentence before them: "X is epinephrine [3]." reads as the answer it is. Only sentences made of
    citing words fold: "It is not recommended in pregnancy [2]." says something and stays."""
    out: list[str] = []
    for sentence in sentences:
        cites = CITATION_MARK.findall(sentence)
        words = re.findall(r"[a-z]+", CITATION_MARK.sub(" ", sentence).lower())
        if out and cites and all(w in CITING_WORDS for w in words):
            head = out[-1].rstrip()
            stop = head[-1] if head and head[-1] in ".!?" else ""
            head = head[: len(head) - len(stop)].rstrip()
            have = set(cited_numbers(head))
            new = [n for n in cited_numbers(sentence) if n not in have]  # by number: [1] ~ [1, 2]
            out[-1] = head + "".join(f" [{n}]" for n in new) + (stop or ".")
            continue
        out.append(sentence)
    return out


# A justification that hands over to restated evidence: "This is supported by passage [2], which
# states that …". Only a head that says *supported* / *confirmed* counts: "Passage [2] states that
# …" as often brings a new fact ("… that it must not be given intravenously in children").
