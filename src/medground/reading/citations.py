"""Citation marks in generated text: which passages a sentence cites, marks added before a
sentence's closing punctuation, sentences without their marks, citation-only sentences folded
into the claim before them, and talk of passages ("according to passage 3") turned into marks."""

from __future__ import annotations

import re
from collections.abc import Sequence

CITATION_MARK = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")


def cited_numbers(text: str) -> list[int]:
    """The passage numbers a text cites, in first-mention order: [1], [2][3], [1, 4]."""
    return list(dict.fromkeys(int(n) for c in CITATION_MARK.findall(text) for n in re.findall(r"\d+", c)))


def with_marks(sentence: str, numbers: Sequence[int], stop: str = "") -> str:
    """The sentence also citing ``numbers`` it does not cite yet, the marks before its closing
    punctuation (``stop`` when it has none): "It is epinephrine." + [3] → "It is epinephrine [3]."."""
    body = sentence.rstrip()
    end = body[-1] if body and body[-1] in ".!?" else ""
    have = set(cited_numbers(body))
    new = [n for n in dict.fromkeys(numbers) if n not in have]  # by number: [1] ~ [1, 2]
    if not new:
        return sentence
    return body[: len(body) - len(end)].rstrip() + "".join(f" [{n}]" for n in new) + (end or stop)


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
            out[-1] = with_marks(out[-1], cited_numbers(sentence), stop=".")
            continue
        out.append(sentence)
    return out


_PASSAGE_NUMBER = re.compile(r"\b[Pp]assages?\s+\[?(\d+)\]?")
_LEAD = re.compile(r"(?:according to|based on|as (?:stated|shown|described|noted|mentioned) in|in)\s+(?:the\s+)?"
                   r"passages?(?:\s+(\[\d+\]))?\s*,\s*"
                   r"|(?:the|this)\s+passages?(?:\s+(\[\d+\]))?\s+(?:directly\s+)?"
                   r"(?:states|says|notes|mentions|explains|indicates|shows|supports this answer by stating)"
                   r"(?:\s+that)?\s*,?\s*", re.IGNORECASE)
_INLINE = re.compile(r",?\s*(?:according to|as (?:stated|shown|described|noted|mentioned) in|as per|based on"
                     r"|which (?:is|are) (?:directly |also )?(?:supported|confirmed|stated|shown|mentioned) (?:by|in))\s+"
                     r"(?:the\s+)?passage\s+(\[\d+\])", re.IGNORECASE)
_PAREN = re.compile(r"\(\s*passage\s+(\[\d+\])\s*\)", re.IGNORECASE)
# a sentence that only says where the one before it comes from: "This belief is supported by passage [1]."
_SOURCE_ONLY = re.compile(r"(?:this|that|it|these)(?:\s+\w+){0,3}\s+(?:is|are)\s+(?:directly\s+|also\s+)?"
                          r"(?:supported|confirmed|stated|shown|mentioned)\s+(?:by|in)\s+passage\s+(\[\d+\])\s*\.?",
                          re.IGNORECASE)


def plain_citations(text: str) -> str:
    """A generated answer with its talk of passages turned into citation marks: "According to
    passage 3, X." → "X [3]."; "X, according to passage [2]." → "X [2]."; "X (Passage 1)." →
    "X [1]."; "X, which is supported by passage [1]." → "X [1]."; "The passage states that X [1]." → "X [1]."; "X. This belief is supported by passage [1]."
    → "X [1]." A reader sees [n] after a claim; "passage
    3" means nothing to them. Applied after the claim checks, which read the model's own marks."""
    from medground.corpus.sentences import split_spans

    if "passage" not in text.lower():
        return text
    out, last = [], 0
    for start, end in split_spans(text):
        out.append(text[last:start])
        last = end
        s = _PASSAGE_NUMBER.sub(lambda m: f"passage [{m.group(1)}]", text[start:end])
        only = _SOURCE_ONLY.fullmatch(re.sub(r"(?<=[.!?])(?:\s*\[\d+\])+\s*$", "", s.strip()))
        if only and len(out) >= 2 and out[-2].strip():
            out.pop()  # the gap before it
            out[-1] = with_marks(out[-1], cited_numbers(only.group(1)))
            continue
        lead = _LEAD.match(s)
        if lead and len(s) > lead.end():
            s = s[lead.end()].upper() + s[lead.end() + 1:]
            mark = lead.group(1) or lead.group(2)
            if mark:
                s = with_marks(s, cited_numbers(mark))
        s = _PAREN.sub(r"\1", _INLINE.sub(r" \1", s))
        out.append(re.sub(r"\s+([.,;:!?])", r"\1", s))
    text = re.sub(r"(\[\d+\])(?:\s*\1)+", r"\1", "".join(out) + text[last:])
    return re.sub(r"(\[\d+\])([.!?])\s*\1(?!\S)", r"\1\2", text)  # "… [1]. [1]" → "… [1]."
