"""Abbreviations the books define, read from their own text (not a hand list).

Drug records abbreviate ("CABG surgery", "Active GI bleeding", "Improves transmission … across
the NMJ"); patients never do ("a heart bypass operation", "stomach bleeding"). The textbooks spell
each abbreviation out where they first use it: "coronary artery bypass graft (CABG)". Every
"long form (ABBR)" in the chunk store is found with the Schwartz & Hearst long-form match
(``long_form``; the medicine database's class captions are spelled out by it too,
corpus/drug_classes.expand_abbreviation); an abbreviation defined more than one way keeps the long form the
pharmacology book uses most, then the one used most anywhere ("TCA": tricyclic antidepressant in
the pharmacology book, the tricarboxylic acid cycle in anatomy).
"""

from __future__ import annotations

import logging
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from functools import lru_cache

log = logging.getLogger(__name__)

# "(CABG)", "(AChE)", "(NSAIDs)": two or more capitals among at most eight letters or digits
_DEFINED = re.compile(r"\(\s*([A-Z][A-Za-z0-9]{0,3}[A-Z][A-Za-z0-9]{0,4})\s*\)")
_TOKEN = re.compile(r"\b[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*\b")
PREFERRED = "pharmacology"  # the book the medicine database is read from


def singular(short: str) -> str:
    """"NSAIDs" → "NSAID"; "AChE" stays."""
    return short[:-1] if short.endswith("s") and sum(c.isupper() for c in short) >= 2 else short


def long_form(short: str, before: str) -> str | None:
    """The words of ``before`` that ``short`` abbreviates: the last words whose initials spell it
    ("combination oral contraceptives" for COC), else a letter-by-letter match from the right,
    the first letter at a word start (Schwartz & Hearst 2003); None when neither matches."""
    letters = short[:-1] if short.endswith("s") and len(short) > 2 else short
    before = re.sub(r"\s+", " ", before).strip()
    parts = list(re.finditer(r"[^\s-]+", before))
    for k in range(len(letters), 0, -1):  # fewer words than letters when a word is "2"
        tail = parts[-k:]
        if len(tail) == k and "".join(m.group()[0] for m in tail).lower() == letters.lower():
            return before[tail[0].start():].strip(" ,;:")
    words = before.split()
    window = " ".join(words[-min(len(letters) + 5, 2 * len(letters)):])
    s, i = len(letters) - 1, len(window) - 1
    while s >= 0:
        c = letters[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        while i >= 0 and (window[i].lower() != c or (s == 0 and i > 0 and window[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
        s -= 1
    start = window.rfind(" ", 0, i + 1) + 1
    found = window[start:].strip(" ,;:")
    return found if len(found) > len(short) else None


def definitions(text: str) -> Iterator[tuple[str, str]]:
    """Each abbreviation ``text`` defines, as (the abbreviation, its long form), both as written:
    "… coronary artery bypass graft (CABG) …" → ("CABG", "coronary artery bypass graft")."""
    text = re.sub(r"\s+", " ", text)
    for m in _DEFINED.finditer(text):
        short = m.group(1)
        before = re.split(r"[().;:]", text[max(0, m.start() - 160):m.start()])[-1]
        if len(before.strip()) >= 3 and (full := long_form(short, before)) and len(full) > len(short) + 2:
            yield short, full


def mine(texts: Iterable[tuple[str, str]]) -> dict[str, str]:
    """(document id, text) pairs → {abbreviation: long form}, lower-cased long forms."""
    found: dict[str, Counter] = defaultdict(Counter)
    preferred: dict[str, Counter] = defaultdict(Counter)
    for doc, text in texts:
        for written, full in definitions(text):
            short, full = singular(written), full.lower()
            if written.endswith("s") and full.endswith("s"):  # "(NSAIDs)": the singular's long form
                full = full.rstrip("s")
            found[short][full] += 1
            if PREFERRED in doc:
                preferred[short][full] += 1
    return {short: (preferred[short] or counts).most_common(1)[0][0] for short, counts in found.items()}


def expand(text: str, lexicon: dict[str, str]) -> str | None:
    """``text`` with each abbreviation it uses spelled out beside it ("CABG surgery" → "CABG
    (coronary artery bypass graft) surgery"); None when it uses none the lexicon knows, or
    already spells each one out."""
    changed = False

    def spelled(m: re.Match) -> str:
        nonlocal changed
        full = lexicon.get(singular(m.group()))
        if not full or full in text.lower():
            return m.group()
        changed = True
        return f"{m.group()} ({full})"

    out = _TOKEN.sub(spelled, text)
    return out if changed else None


@lru_cache(maxsize=1)
def load_abbreviations() -> dict[str, str]:
    """The lexicon of the default chunk store; empty when there is none (records then match as
    written)."""
    try:
        from medground.store.chunks import ChunkStore

        store = ChunkStore.default()
        return mine((c.doc_id, c.text) for c in store.iter_chunks())
    except Exception as err:  # no store built yet: nothing to read the definitions from
        log.info("no chunk store to read abbreviations from (%s): record items are matched as written", err)
        return {}
