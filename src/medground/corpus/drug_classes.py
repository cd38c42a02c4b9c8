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

from medground.corpus.abbreviations import definitions, singular

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


def expand_abbreviation(label: str, texts: list[str]) -> str:
    """"PPIs" → "Proton pump inhibitors (PPIs)" when one of ``texts`` defines it
    (corpus/abbreviations.definitions); a label that is not a bare abbreviation, or one no text
    defines, is returned as it is."""
    if not _ABBREVIATION.match(label):
        return label
    for text in texts:
        for written, found in definitions(text):
            if singular(written) == singular(label):
                return f"{found[0].upper()}{found[1:]} ({label})"
    return label
