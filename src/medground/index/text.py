"""Tokenizer for lexical retrieval over medical text.

Medical text is full of hyphenated terms ("beta-blocker", "ACE-inhibitor") and doses
("2.5 mg", "10mg"). A query may spell either form, so both are indexed: the whole
hyphenated term and its parts; a number glued to its unit and the two apart.

Snowball stems a Greek-derived noun and its adjective apart ("anaphylaxis" → anaphylaxi,
"anaphylactic" → anaphylact), so a question about anaphylaxis misses the textbook's "anaphylactic
shock". ``conflate_greek`` maps the noun's stem onto the adjective's (``conflate``): -xis → -ct,
-sis → -t (thrombosis / thrombotic, diuresis / diuretic), -ia → "" (hypokalemia / hypokalemic).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

import bm25s.stopwords
from pydantic import BaseModel, ConfigDict, Field

# A word: letters/digits (any script), with decimals kept ("2.5", "1,000"), joined by hyphens.
_WORD = r"[^\W_]+(?:[.,]\d+)*"
_TOKEN_RE = re.compile(rf"{_WORD}(?:-{_WORD})*")
_NUM_UNIT_RE = re.compile(r"^(\d+(?:\.\d+)?)([a-zµμ]+)$")
_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_MAX_CACHED_WORDS = 1_000_000
_STOPWORDS = {"en": frozenset(bm25s.stopwords.STOPWORDS_EN)}


class BM25Settings(BaseModel):
    """Lexical retrieval settings. Everything except ``n_threads`` shapes the index."""

    model_config = ConfigDict(extra="forbid")

    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)
    delta: float = Field(0.5, ge=0, description="only for bm25l / bm25+")
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    stemmer: Literal["english"] | None = "english"
    stopwords: Literal["en"] | None = "en"
    split_hyphens: bool = True  # also index the parts of "beta-blocker"
    split_units: bool = True  # also index "10" and "mg" for "10mg"
    # noun and adjective stems conflated ("anaphylaxis" matches "anaphylactic"; ``conflate``)
    conflate_greek: bool = False
    n_threads: int = Field(1, ge=0, description="threads for batch retrieval (0 = sequential)")
    # numba: ~3x faster scoring, but the first query pays a JIT compile of several seconds
    # (worth it for batch evaluation, not for one interactive question); needs `numba`.
    backend: Literal["numpy", "numba"] = "numpy"

    def index_fields(self) -> dict:
        # conflate_greek only when on, so indexes built before the field existed keep their fingerprint
        exclude = {"n_threads", "backend"} | (set() if self.conflate_greek else {"conflate_greek"})
        return self.model_dump(mode="json", exclude=exclude)


_MIN_CONFLATED_STEM = 6  # "basi" (basis), "media", "sepsi" stay as Snowball leaves them
# -ia nouns only of these medical families: names ("Virginia", "Sophia") keep their stems
_IA_FAMILIES = ("emia", "xia", "ycardia", "ythmia", "penia", "philia", "phobia", "phoria", "algia", "esia", "onia",
                "uria", "plegia", "thenia", "mania", "phrenia", "phasia")


def conflate(word: str, stem: str) -> str:
    """A Greek-derived noun's Snowball stem → its adjective's (``word`` is what was stemmed):
    anaphylaxis → anaphylact, thrombosis → thrombot, epilepsy → epilept, hypokalemia → hypokalem;
    anything else unchanged."""
    if len(stem) < _MIN_CONFLATED_STEM or not stem.isalpha():
        return stem
    if word.endswith("xis") and stem.endswith("xi"):
        return stem[:-2] + "ct"
    if word.endswith(("sis", "psy")) and stem.endswith("si"):  # not "greasy" → great
        return stem[:-2] + "t"
    if stem.endswith(_IA_FAMILIES):  # each family ends in -ia
        return stem[:-2]
    return stem


class MedicalTokenizer:
    """Text → list of terms. Deterministic and picklable; stemming via PyStemmer (Snowball)."""

    def __init__(self, settings: BM25Settings | None = None):
        self.settings = settings or BM25Settings()
        self._stopwords = _STOPWORDS[self.settings.stopwords] if self.settings.stopwords else frozenset()
        self._stemmer = None
        self._stems: dict[str, str] = {}
        self._words: dict[str, list[str]] = {}
        if self.settings.stemmer:
            import Stemmer  # PyStemmer

            self._stemmer = Stemmer.Stemmer(self.settings.stemmer)

    def _stem(self, word: str) -> str:
        if self._stemmer is None or not word.isalpha():
            return word
        stem = self._stems.get(word)
        if stem is None:  # a corpus has far fewer distinct words than tokens: memoize
            stem = self._stemmer.stemWord(word)
            stem = self._stems[word] = conflate(word, stem) if self.settings.conflate_greek else stem
        return stem

    def _pieces(self, word: str) -> list[str]:
        """A hyphen-free word → itself, plus number and unit when glued ("10mg")."""
        if _CJK_RE.search(word):  # no spaces between CJK words: index characters
            return [ch for ch in word if not ch.isspace()]
        out = [word]
        if self.settings.split_units:
            m = _NUM_UNIT_RE.match(word)
            if m:
                out.extend(m.groups())
        return out

    def _word_terms(self, raw: str) -> list[str]:
        """Terms of one regex match (a word, possibly hyphenated)."""
        terms: list[str] = []
        parts = [p for p in raw.replace(",", "").split("-") if p]  # "1,000" == "1000"
        if len(parts) > 1:
            terms.append("-".join(self._stem(p) for p in parts))
            if not self.settings.split_hyphens:
                return terms
        for part in parts:
            for piece in self._pieces(part):
                if piece not in self._stopwords:
                    terms.append(self._stem(piece))
        return terms

    def tokenize(self, text: str) -> list[str]:
        terms: list[str] = []
        cache = self._words
        for raw in _TOKEN_RE.findall(text.lower()):
            got = cache.get(raw)
            if got is None:  # words repeat: each distinct one is analysed once
                if len(cache) > _MAX_CACHED_WORDS:
                    cache.clear()
                got = cache[raw] = self._word_terms(raw)
            terms.extend(got)
        return terms

    def tokenize_words(self, text: str) -> list[list[str]]:
        """The terms of each word (a hyphenated word gives its whole form and its parts: "first-line"
        → first-line, first, line), for scoring a word once however many terms it indexes."""
        return [got for raw in _TOKEN_RE.findall(text.lower()) if (got := self._word_terms(raw))]

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.tokenize(t) for t in texts]


def build_vocab(token_lists: Iterable[list[str]]) -> tuple[list[list[int]], dict[str, int]]:
    """Token lists → (id lists, vocab) as bm25s takes them pre-tokenized."""
    vocab: dict[str, int] = {}
    ids: list[list[int]] = []
    for tokens in token_lists:
        ids.append([vocab.setdefault(t, len(vocab)) for t in tokens])
    return ids, vocab


@lru_cache(maxsize=1)
def text_tokenizer() -> MedicalTokenizer:
    """The tokenizer every evidence and claim check shares (compression, support and attribution
    checks, entity and option matching): one per process, since it memoizes its stems; noun and
    adjective stems conflated, so "anaphylaxis" in a question finds "anaphylactic shock"."""
    return MedicalTokenizer(BM25Settings(conflate_greek=True))
