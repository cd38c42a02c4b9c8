"""Drug classes read off the Pharmacology book's "Drug Emphasis Table"s.

Only ~190 of the database's drugs have a prototype table with a "Drug class" cell; the other
drugs of the book sit in tables captioned by their class ("Drug Emphasis Table: Statins and
PCSK9 Inhibitors") and grouped by group rows ("Penicillin", "Tetracycline"). The consultation
reader matches a drug the patient names against an interactions list by name *and class*
("HMG-CoA reductase inhibitors/statin drugs" covers simvastatin), so a drug with no class could
only be answered "the list does not name it". The labels come from the book's own captions; an
abbreviated caption ("PPIs") is spelled out from the book's own "(PPIs)" definition
(Schwartz & Hearst's right-to-left letter match), never from a hand list.
"""

from __future__ import annotations

import re

_TABLE_PREFIX = re.compile(r"^\s*drug\s+(emphasis|prototype)\s+table\s*:\s*", re.IGNORECASE)
_SOURCE_NOTE = re.compile(r"\s*\((sources?:|source\b).*$", re.IGNORECASE | re.DOTALL)
_VAGUE_PREFIX = re.compile(r"^(other|miscellaneous|unclassified)\s+", re.IGNORECASE)
# A caption that says what the drugs are used for, not what they are ("Medications Used to
# Treat STIs", "Common Recommended Vaccines", "Types of Insulin") names no class.
_NOT_A_CLASS = re.compile(r"\b(used\s+to\s+treat|used\s+with|used\s+in|common|types\s+of)\b",
                          re.IGNORECASE)
_ABBREVIATION = re.compile(r"^[A-Z][A-Z0-9-]*[A-Z0-9]s?$")


def caption_class(caption: str) -> str | None:
    """"Drug Emphasis Table: Calcium Channel Blockers (source: …)" → "Calcium Channel Blockers";
    None for a caption that is not a drug table's or names no class."""
    if not _TABLE_PREFIX.match(caption):
        return None
    label = _SOURCE_NOTE.sub("", _TABLE_PREFIX.sub("", caption)).strip(" .;:")
    if not label or _NOT_A_CLASS.search(label):
        return None
    return class_label(label)


def class_label(text: str) -> str:
    """A caption or group row as a class label: "Other Anthracyclines" → "Anthracyclines"."""
    return _VAGUE_PREFIX.sub("", re.sub(r"\s+", " ", text).strip()).strip(" .;:")


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


def expand_abbreviation(label: str, texts: list[str]) -> str:
    """"PPIs" → "Proton pump inhibitors (PPIs)" when one of ``texts`` defines it; a label that is
    not a bare abbreviation, or one no text defines, is returned as it is."""
    if not _ABBREVIATION.match(label):
        return label
    singular = label[:-1] if label.endswith("s") else label
    definition = re.compile(rf"\(\s*{re.escape(singular)}s?\s*\)")
    for text in texts:
        for m in definition.finditer(text):
            before = re.split(r"[().;:]", text[max(0, m.start() - 160):m.start()])[-1]
            if len(before.strip()) >= 3 and (found := long_form(label, before)):
                return f"{found[0].upper()}{found[1:]} ({label})"
    return label
