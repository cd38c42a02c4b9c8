"""A patient's misspelt word read as the medicine database's word ("pregnent" → pregnant,
"athsma" → asthma, "glacoma" → glaucoma).

The sentence embedding that matches a patient's phrases to a record's items reads a misspelling
as another word: "pregnent" is 0.42 from the condition item "Pregnancy", "athsma" 0.44 from
"Asthma", "glacoma" 0.57 from "Glaucoma", against 0.94–1.0 spelt right. A word is corrected only
when the embedder's own vocabulary does not hold it (so "wedding" is never read as "bedding"), it
is at least ``min_length`` letters, and exactly one word of the database's text is nearest within
one edit (two from eight letters; a transposition is one edit). The corrected phrase is matched
beside the patient's own, never instead of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from rapidfuzz import process
from rapidfuzz.distance import OSA

_WORD = re.compile(r"[A-Za-z]+")


class Speller:
    """Corrects words against a vocabulary; ``known(word)``: a word spelt right whether or not the
    vocabulary holds it."""

    def __init__(self, vocabulary: Iterable[str], known: Callable[[str], bool], min_length: int = 5):
        self.min_length = min_length
        self.words = sorted({w.lower() for text in vocabulary for w in _WORD.findall(text) if len(w) >= min_length})
        self._vocab = set(self.words)
        self.known = known
        self._cache: dict[str, str | None] = {}

    def correct(self, word: str) -> str | None:
        """The vocabulary word ``word`` misspells, or None (spelt right, unknown, or ambiguous)."""
        w = word.lower()
        if w in self._cache:
            return self._cache[w]
        fix = None
        if len(w) >= self.min_length and w.isalpha() and w not in self._vocab and not self.known(w):
            limit = 1 if len(w) < 8 else 2
            near = process.extract(w, self.words, scorer=OSA.distance, score_cutoff=limit, limit=2)
            if near and (len(near) == 1 or near[0][1] < near[1][1]):
                fix = near[0][0]
        self._cache[w] = fix
        return fix

    def corrected(self, phrase: str) -> str | None:
        """``phrase`` with its misspelt words corrected, or None when nothing changed."""
        changed = False

        def fix(m: re.Match) -> str:
            nonlocal changed
            c = self.correct(m.group(0))
            changed = changed or c is not None
            return c if c is not None else m.group(0)

        out = _WORD.sub(fix, phrase)
        return out if changed else None


def embedder_vocabulary(embedder) -> Callable[[str], bool] | None:
    """Whether a word is one token of the embedder's WordPiece vocabulary (a word it knows as
    spelt); None when the embedder exposes no tokenizer vocabulary."""
    tokenizer = getattr(embedder, "tokenizer", None)
    get_vocab = getattr(tokenizer, "get_vocab", None)
    if get_vocab is None:
        return None
    vocab = set(get_vocab())
    return lambda word: word.lower() in vocab
