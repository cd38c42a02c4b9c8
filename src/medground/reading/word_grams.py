"""Word n-gram features for the consultation typer (reading/consult_typer.py).

A sentence embedding says what a question is *about*; the words that say what it *asks* ("can I
take … with", "how does it work", "is it safe while") are few and short, and MiniLM's mean pooling
blurs them. Tf-idf over word unigrams and bigrams, beside the embedding in one logistic
regression, keeps them. Fitted with scikit-learn's ``TfidfVectorizer`` at training time; read here
with numpy alone from the stored vocabulary and idf, so the runtime needs no scikit-learn
(parity: tests/reading/test_word_grams.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# scikit-learn's default token pattern: words of two or more word characters
TOKEN = re.compile(r"(?u)\b\w\w+\b")


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer (a dependency through bm25s)

    return Stemmer.Stemmer("english")


def stemmed(text: str) -> str:
    """``text`` as its lower-cased word stems: "contraindication" and "contraindications" are one
    gram, so a singular no training question used is read as its plural was."""
    return " ".join(_stemmer().stemWords(TOKEN.findall(text.lower())))


def grams(text: str, stem: bool = False) -> list[str]:
    """The unigrams and bigrams of ``text``, lower-cased (and stemmed), as
    TfidfVectorizer(ngram_range=(1, 2)) makes them."""
    words = TOKEN.findall(stemmed(text) if stem else text.lower())
    return words + [f"{a} {b}" for a, b in zip(words, words[1:])]


@dataclass
class WordGrams:
    """A fitted vocabulary: ``vocabulary[i]`` is column ``i``; ``idf`` its weight; ``weight`` scales the
    whole block against the embedding (both are unit-length before it)."""

    vocabulary: list[str]
    idf: np.ndarray
    weight: float = 1.0
    stem: bool = False  # grams of word stems (:func:`stemmed`)

    def __post_init__(self) -> None:
        self._column: dict[str, int] = {g: i for i, g in enumerate(self.vocabulary)}

    @classmethod
    def fit(cls, texts: Sequence[str], *, min_df: int = 2, weight: float = 1.0, stem: bool = False) -> WordGrams:
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=min_df, sublinear_tf=True)
        vectorizer.fit([stemmed(t) for t in texts] if stem else texts)
        vocabulary = [str(g) for g in vectorizer.get_feature_names_out()]
        return cls(vocabulary, vectorizer.idf_.astype(np.float32), weight, stem)

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        """Dense (len(texts), len(vocabulary)) rows: sublinear tf × idf, L2-normalised, × ``weight``."""
        out = np.zeros((len(texts), len(self.vocabulary)), dtype=np.float32)
        for row, text in enumerate(texts):
            for gram, count in Counter(grams(text, self.stem)).items():
                column = self._column.get(gram)
                if column is not None:
                    out[row, column] = (1.0 + np.log(count)) * self.idf[column]
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out * self.weight

    def features(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """The embedding rows with the word-gram block beside them."""
        return np.hstack([vectors, self.transform(texts)])
