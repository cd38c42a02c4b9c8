"""Sentence spans for medical text.

Two backends, one contract: ``split_spans(text)`` returns ``(start, end)`` character offsets of
each sentence, stripped of surrounding whitespace, in order and non-overlapping, so chunks can
keep exact spans into their section text.

* ``"sentencex"`` (default): Wikimedia's sentencex (Rust, ~40 MB/s) plus a repair pass that
  re-joins the splits it makes after medical abbreviations and units ("approx. 120/80",
  "5 mg. per day", "vs. drug B", "Sect. 2").
* ``"pysbd"``: pysbd's rule set; more careful with odd punctuation but ~0.07 MB/s on the
  OpenStax text (measured: 536 kB of Pharmacology paragraphs in 8.0 s), i.e. ~4 minutes for the
  six books on one core, too slow for the ingest target. Kept for comparison and small corpora.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

SplitterName = Literal["sentencex", "pysbd"]

# Abbreviations that never end a sentence: whatever follows belongs to the same sentence.
_NEVER_FINAL = frozenset(
    [
        "e.g.",
        "i.e.",
        "cf.",
        "viz.",
        "vs.",
        "approx.",
        "ca.",
        "dr.",
        "drs.",
        "mr.",
        "mrs.",
        "ms.",
        "prof.",
        "st.",
        "incl.",
        "resp.",
        "esp.",
    ]
)
# Abbreviations that may end a sentence ("the dose is 5 mg."): a split after them is undone
# only when the next piece starts like a continuation (lowercase letter or digit).
_ABBREVIATIONS = frozenset(
    [
        "mg.",
        "g.",
        "kg.",
        "mcg.",
        "µg.",
        "ug.",
        "ng.",
        "ml.",
        "l.",
        "dl.",
        "mmol.",
        "mol.",
        "meq.",
        "iu.",
        "u.",
        "mm.",
        "cm.",
        "m.",
        "km.",
        "h.",
        "hr.",
        "hrs.",
        "min.",
        "mins.",
        "sec.",
        "s.",
        "wk.",
        "wks.",
        "mo.",
        "mos.",
        "yr.",
        "yrs.",
        "d.",
        "tab.",
        "tabs.",
        "cap.",
        "caps.",
        "inj.",
        "amp.",
        "sol.",
        "susp.",
        "oz.",
        "lb.",
        "lbs.",
        "ft.",
        "mmhg.",
        "hg.",
        "bpm.",
        "est.",
        "max.",
        "avg.",
        "no.",
        "nos.",
        "fig.",
        "figs.",
        "sect.",
        "eq.",
        "eqs.",
        "ref.",
        "refs.",
        "vol.",
        "p.",
        "pp.",
        "ch.",
        "chap.",
        "al.",
        "v.",
        "dept.",
        "univ.",
        "jan.",
        "feb.",
        "mar.",
        "apr.",
        "jun.",
        "jul.",
        "aug.",
        "sep.",
        "sept.",
        "oct.",
        "nov.",
        "dec.",
        "tbl.",
        "ext.",
        "vit.",
    ]
)
_DOTTED = re.compile(r"^(?:[A-Za-z]\.){2,}$")  # q.i.d. b.i.d. p.r.n. i.v. U.S.
_LAST_TOKEN = re.compile(r"(\S+)\s*$")
_CONTINUATION = re.compile(r"^[\s\"'“‘(\[]*[a-z0-9]")
_LOWER_START = re.compile(r"^\s*[a-z]")


def _should_join(before: str, after: str) -> bool:
    m = _LAST_TOKEN.search(before)
    if not m:
        return False
    token = m.group(1).lstrip("([\"'“‘")
    low = token.lower()
    if not low.endswith("."):
        return False
    if low in _NEVER_FINAL:
        return bool(after.strip())
    if low in _ABBREVIATIONS or _DOTTED.match(token):
        return bool(_CONTINUATION.match(after))
    # Any other short word with a period, followed by a lowercase word: not a sentence start.
    return bool(_LOWER_START.match(after)) and len(low) <= 6 and low[:-1].isalpha()


# Units and dosing shorthand that sentencex treats as non-final ("6 hr. Repeat"): a split is
# added after them when a capitalised word follows.
_UNIT_END = re.compile(
    r"(?<![A-Za-z.])(?:mg|mcg|kg|g|mL|ml|L|dL|mmol|mEq|IU|hr|hrs|h|min|mins|sec|wk|wks|yr|yrs|"
    r"(?:[a-z]\.){1,3}[a-z])\.(?=\s+[A-Z][a-z])"
)


def _split_after_units(
    text: str, spans: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in spans:
        for m in _UNIT_END.finditer(text, start, end):
            if m.group(0).lower() in _NEVER_FINAL:  # "e.g. Smith" stays one sentence
                continue
            cut = m.end()
            rest = text[cut:end]
            out.append((start, cut))
            start = cut + len(rest) - len(rest.lstrip())
        out.append((start, end))
    return out


def _spans_from_pieces(text: str, pieces: list[str]) -> list[tuple[int, int]]:
    """Locate each piece in ``text`` in order; strip whitespace; drop empty pieces."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for piece in pieces:
        core = piece.strip()
        if not core:
            pos += len(piece) if text.startswith(piece, pos) else 0
            continue
        start = text.find(core, pos)
        if (
            start < 0
        ):  # a backend that altered the text: fall back to one span for the rest
            rest = text[pos:]
            lead = len(rest) - len(rest.lstrip())
            if rest.strip():
                spans.append((pos + lead, pos + len(rest.rstrip())))
            return spans
        spans.append((start, start + len(core)))
        pos = start + len(core)
    return spans


def _repair(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    if len(spans) < 2:
        return spans
    out = [spans[0]]
    for start, end in spans[1:]:
        prev_start, prev_end = out[-1]
        if _should_join(text[prev_start:prev_end], text[start:end]):
            out[-1] = (prev_start, end)
        else:
            out.append((start, end))
    return out


def _sentencex_pieces(text: str) -> list[str]:
    import sentencex

    return list(sentencex.segment("en", text))


@lru_cache(maxsize=1)
def _pysbd_segmenter():  # building the segmenter compiles many regexes: do it once
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def _pysbd_pieces(text: str) -> list[str]:
    return list(_pysbd_segmenter().segment(text))


_BACKENDS: dict[str, Callable[[str], list[str]]] = {
    "sentencex": _sentencex_pieces,
    "pysbd": _pysbd_pieces,
}


def split_spans(
    text: str, splitter: SplitterName = "sentencex"
) -> list[tuple[int, int]]:
    """Sentence spans of ``text``: ``text[s:e]`` is one sentence without outer whitespace.

    A line break always ends a sentence: readers put one between list items and table rows,
    and two between blocks.
    """
    try:
        backend = _BACKENDS[splitter]
    except KeyError:
        raise ValueError(
            f"unknown sentence splitter {splitter!r}; expected one of {sorted(_BACKENDS)}"
        ) from None
    spans: list[tuple[int, int]] = []
    offset = 0
    for part in re.split(r"(\n\s*)", text):
        if part.strip() and not part.isspace():
            local = _spans_from_pieces(part, backend(part))
            if splitter == "sentencex":
                local = _split_after_units(part, _repair(part, local))
            spans.extend((offset + s, offset + e) for s, e in local)
        offset += len(part)
    return spans


def split_sentences(text: str, splitter: SplitterName = "sentencex") -> list[str]:
    return [text[s:e] for s, e in split_spans(text, splitter)]


# A heading block: at most this many words and no sentence-closing punctuation at its end.
_HEADING_WORDS = 12
_CLOSES = re.compile(r"[.!?:;,)\]\u201d\"']$")


def is_heading_block(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is a line that opens a block (a blank line or the text's edge before it,
    a line break after: "Title\nBody" or "Title\n\nBody"), short and unpunctuated at its end, and
    the block before it does not introduce it ("… written:")."""
    core = text[start:end].strip()
    if not core or "\n" in core or len(core.split()) > _HEADING_WORDS or _CLOSES.search(core):
        return False
    lo = max(0, start - 80)  # a bounded look back: sections run to pages
    before, after = text[lo:start].rstrip(" \t"), text[end : end + 8].lstrip(" \t")
    at_edge = lo == 0 and not before.strip()
    if not at_edge and not before.endswith("\n\n"):
        return False
    if not after.startswith("\n"):
        return False  # a heading at the very end titles nothing here
    return at_edge or not before.rstrip().endswith(":")


def sentences_of(text: str) -> list[str]:
    """``text``'s sentences, split after '.', '?' or '!' and a space: the plain split a patient's
    chat turn needs (no abbreviation repair: turns are short and informal)."""
    return [s.strip() for s in re.split(r"(?<=[.?!])\s+", text.strip()) if s.strip()]


def questions(turn: str) -> list[str]:
    """The turn's question sentences (those ending in '?'), else its last sentence: what is asked,
    apart from the context around it ("Yes, 10 mg a day. … how does this one bring cholesterol down?")."""
    sentences = sentences_of(turn)
    return [s for s in sentences if s.endswith("?")] or sentences[-1:]
