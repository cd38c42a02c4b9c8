"""Text clean-up shared by the readers: whitespace, URLs, dangling cross-references."""

from __future__ import annotations

import re

# An empty cross-reference link (rendered "Figure 3.2" by OpenStax) becomes REF + id + REF_END
# and is resolved by clean_text: dropped inside parentheses, "the figure"/"the table" elsewhere.
REF, REF_END = "\x00", "\x01"
_REF = re.compile(r"\x00([^\x01]*)\x01")
_REF_IN_PARENS = re.compile(
    r"\s*\((?:\s*(?:see|see also|e\.g\.,?|cf\.|and|or|,|;)?\s*\x00[^\x01]*\x01"
    r"(?:\s*[a-z](?:\s*(?:,|and|–|-)\s*[a-z])*\b)?)+\s*\)",  # "(Figure 1.2a, b)"
    re.IGNORECASE,
)

_WS = re.compile(r"\s+")
_HSPACE = re.compile(r"[^\S\n]+")
URL_RE = re.compile(r"\b(?:https?://|ftp://|www\.)[^\s<>\"]*[^\s<>\".,;:)\]]")
_SOURCE_URL = re.compile(
    r"\s*\((?:source|sources|available at|from|see)?:?\s*" + URL_RE.pattern + r"\s*\)",
    re.IGNORECASE,
)
# "See <url> for more information." / "Learn more at <url>." lose the words that led to it.
_URL_SENTENCE = re.compile(
    r"(?:\b(?:[Ss]ee|[Vv]isit|[Gg]o to)\s+" + URL_RE.pattern
    + r"(?:\s+for (?:more|further)(?: information| details)?)?\s*\.?)"
    r"|(?:\s+(?:at|on|from)\s+" + URL_RE.pattern + ")"
)
_EMPTY_PARENS = re.compile(r"\s*\(\s*(?:see|see also|e\.g\.,?|cf\.)?\s*[,;]?\s*\)", re.IGNORECASE)
_SPACE_BEFORE_PUNCT = re.compile(r" +([.,;:!?)\]])")
_SPACE_AFTER_OPEN = re.compile(r"([(\[]) +")


def _ref_kind(target: str, refs: dict[str, str] | None) -> str:
    kind = (refs or {}).get(target)
    if kind is None:  # a link into another page: guess from the id
        low = target.lower()
        kind = "table" if ("tab" in low or "tbl" in low) else "figure" if "fig" in low else ""
    return kind if kind in ("figure", "table") else ""


def _resolve_refs(s: str, refs: dict[str, str] | None) -> str:
    if REF not in s:
        return s
    s = _REF_IN_PARENS.sub("", s)

    def name(m: re.Match[str]) -> str:
        kind = _ref_kind(m.group(1), refs)
        if not kind:
            return ""
        before = s[: m.start()].rstrip()
        return f"The {kind}" if not before or before.endswith((".", "\n", ":")) else f"the {kind}"

    return _REF.sub(name, s)


def clean_text(raw: str, *, multiline: bool = False, refs: dict[str, str] | None = None) -> str:
    s = _HSPACE.sub(" ", raw)  # first: the patterns below scan whitespace runs
    if "://" in s or "www." in s:  # URL patterns are costly: run them only when needed
        s = URL_RE.sub("", _URL_SENTENCE.sub("", _SOURCE_URL.sub("", s)))
    s = _resolve_refs(s, refs)
    if "(" in s:
        s = _EMPTY_PARENS.sub("", s)
    lines = [_WS.sub(" ", line).strip() for line in s.split("\n")]
    lines = [_SPACE_AFTER_OPEN.sub(r"\1", _SPACE_BEFORE_PUNCT.sub(r"\1", ln)) for ln in lines]
    if not multiline:
        return " ".join(ln for ln in lines if ln)
    kept: list[str] = []
    for ln in lines:  # at most one blank line in a row, none at either end
        if ln or (kept and kept[-1]):
            kept.append(ln)
    while kept and not kept[-1]:
        kept.pop()
    return "\n".join(kept)
