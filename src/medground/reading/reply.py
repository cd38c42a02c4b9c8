"""One reply shape for every free-text reader (textbook and consultation alike).

A reply opens with a sentence that answers, cited [n]; the source's own words follow as a quote
line naming where they come from. When no answering sentence can be stated (nothing generated
survived the support check), the reply says so in its first words and then quotes the closest
passage — never a bare quote standing in for an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from medground.index.text import text_tokenizer

OPEN, CLOSE = "\u201c", "\u201d"
_PARTS = re.compile(r";\s+|\s+-\s+")


def supporting_sentence(passage: str, claim: str, max_words: int = 40) -> str:
    """The passage's words that support the claim: its sentence sharing the most content terms
    with the claim (the first on a tie; "" when none shares any). A sentence longer than
    ``max_words`` (a table row, a list) is narrowed to its best ";"- or " - "-separated part, and
    that to ``max_words`` words around its first shared term."""
    from medground.corpus.sentences import split_sentences

    tok = text_tokenizer()
    want = set(tok.tokenize(claim))

    def shared(text: str) -> int:
        return len(want & set(tok.tokenize(text)))

    units = []
    for sentence in split_sentences(passage):
        sentence = sentence.strip()
        if len(sentence.split()) > max_words:
            units.extend(p.strip() for p in _PARTS.split(sentence) if p.strip())
        else:
            units.append(sentence)
    best = max(units, key=shared, default="")
    if not best or shared(best) == 0:
        return ""
    words = best.split()
    if len(words) <= max_words:
        return best
    first = next(i for i, w in enumerate(words) if want & set(tok.tokenize(w)))
    start = max(0, min(first - max_words // 4, len(words) - max_words))
    piece = " ".join(words[start:start + max_words])
    return ("\u2026 " if start else "") + piece + (" \u2026" if start + max_words < len(words) else "")


def quote_line(label: str, number: int, quotes: Sequence[str]) -> str:
    """``Book / Chapter / Section: “…”; “…” [n]``: the source's words after the answer."""
    return f"{label}: " + "; ".join(f"{OPEN}{q.strip()}{CLOSE}" for q in quotes) + f" [{number}]"


def closest_passage(label: str, number: int, quote: str, *, judged_answering: bool = False) -> str:
    """The reply when no answering sentence could be stated: said first, then the closest words.
    ``judged_answering``: the LLM read the quote as answering the question, so the reply does not
    say the sources fail to state it (they may state it in exactly these words)."""
    if judged_answering:
        return f"The passage closest to your question is {label} [{number}]: {OPEN}{quote.strip()}{CLOSE}"
    return (f"The sources do not state this in so many words; the closest is {label} [{number}]: "
            f"{OPEN}{quote.strip()}{CLOSE}")


def answer_with_quote(answer: str, label: str, number: int, quote: str) -> str:
    """An answer sentence (already cited) followed by the quote that supports it, unless the quote
    only repeats the answer."""
    def words(text: str) -> str:
        return " ".join(re.sub(r"\[\d+\]|[^\w\s]", " ", text.lower()).split())

    if not words(quote) or words(quote) in words(answer):
        return answer
    return f"{answer} {quote_line(label, number, [quote])}"


def without_repeats(answer: str) -> str:
    """The answer with a sentence that says again what an earlier one said, word for word (its
    citation marks aside), left out: the small reader sometimes restates its answer as its own
    evidence ("Histoplasmosis is caused by a mold … Histoplasmosis is caused by a mold … [5]");
    the later one's marks go to the earlier one."""
    from medground.corpus.sentences import split_spans
    from medground.reading.citations import CITATION_MARK, cited_numbers, with_marks

    def words(text: str) -> str:
        return " ".join(re.sub(r"[^\w\s]", " ", CITATION_MARK.sub(" ", text).lower()).split())

    sentences = [answer[start:end].strip() for start, end in split_spans(answer)]
    kept: dict[str, str] = {}  # its words -> the sentence said first (with every mark)
    for k, sentence in enumerate(sentences):
        key = words(sentence) or f"\0{k}"  # a mark-only piece is never a repeat
        kept[key] = with_marks(kept[key], cited_numbers(sentence)) if key in kept else sentence
    return " ".join(kept.values()) if len(kept) < len(sentences) else answer
