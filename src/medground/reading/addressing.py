"""The word-list address check of the extractive consultation reader (variants/drugrag-extractive.yaml):
the specific words a question asks about when a record mentions none of them. Kept for that
variant and its measurements; the default consultation reader (reading/consult.py) retired it."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from medground.reading.support import asking_stems


def asking_sentences(turn: str) -> str:
    """The sentences of a patient's turn that ask (end in "?"); all of it when none does."""
    from medground.corpus.sentences import split_sentences

    asks = [x for x in split_sentences(turn) if x.strip().endswith("?")]
    return " ".join(asks) if asks else turn


def unaddressed_terms(question: str, record: str, *, exclude: Sequence[str] = (),
                      vocabulary: Collection[str] | None = None) -> list[str]:
    """The specific words of ``question`` (as written) when ``record`` mentions none of them; []
    when it mentions one, or when the question names nothing specific ("what is the dose?").

    Specific = not a stop, framing or asking word, not a number, not in ``exclude`` (the drug's
    names) and, with ``vocabulary`` (stems of every record of the source), a word the source uses
    somewhere: a typo ("wht") or a word no record ever uses is no evidence either way.
    Matching is by the BM25 tokenizer's stems ("coughing" ~ "cough").
    """
    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    ignore = asking_stems() | {t for text in exclude for t in tok.tokenize(text)}
    record_terms = set(tok.tokenize(record))
    specific: dict[str, str] = {}  # stem -> the word as written
    for word in re.findall(r"[^\W\d_][\w'-]*", question):
        for stem in tok.tokenize(word):
            if stem not in ignore and not stem.isdigit() and len(stem) > 1 and \
                    (vocabulary is None or stem in vocabulary):
                specific.setdefault(stem, word)
    if not specific or any(stem in record_terms for stem in specific):
        return []
    return list(specific.values())


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """The stems ``unaddressed_terms`` matches with, over a source's records."""
    from medground.index.text import text_tokenizer

    tok = text_tokenizer()
    return frozenset(t for text in texts for t in tok.tokenize(text))
