"""Pack ranked passages into numbered citations under a token budget → ``schema.Evidence``.

Rules, in order:

1. Order by score, best first (stable: equal scores keep their incoming order). Citation
   numbers follow this order: [1] is the best passage that made it in.
2. Drop duplicates: the same ``chunk_id`` again, or a passage whose character span overlaps a
   kept passage's span in the same document and section (overlapping chunk windows). The
   higher-scored one is kept because it comes first. Spans are only compared when known
   (``char_end > char_start``).
3. Count what the reader will see: each citation costs the tokens of its rendered line
   ``[n] (book / chapter / section) text`` (as ``Evidence.render`` writes it), counted with
   ``count_tokens`` — pass the reader's tokenizer; the default is the MiniLM tokenizer.json.
4. A passage that does not fit the remaining budget is **skipped** and the next one is tried
   (``overflow="skip"``, the default): citations stay whole, so their spans point at exactly
   the text the reader saw. ``overflow="truncate"`` instead cuts it after the last whole
   sentence that fits (and narrows its char span), when at least ``min_tokens`` remain.
5. Stop after ``max_passages`` citations (None = as many as fit).

``Evidence.dropped`` counts duplicates plus passages that did not fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from medground.schema import Chunk, Citation, Evidence, Passage, Query

TokenCount = Callable[[str], int]


class PackSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    budget_tokens: int = Field(1200, ge=1, description="tokens of rendered evidence")
    max_passages: int | None = Field(None, ge=1)
    overflow: Literal["skip", "truncate"] = "skip"
    min_tokens: int = Field(24, ge=1, description="truncate mode: shortest piece worth keeping")
    tokenizer: str | None = Field(None, description="tokenizer.json or model dir; None = MiniLM")


def default_token_counter(tokenizer: str | None = None) -> TokenCount:
    from medground.corpus.tokens import get_token_counter

    return get_token_counter(tokenizer).count


def citation_for(number: int, passage: Passage, text: str | None = None, char_end: int | None = None) -> Citation:
    c: Chunk = passage.chunk
    return Citation(
        number=number,
        chunk_id=c.chunk_id,
        book=c.book,
        chapter=c.chapter,
        section=c.section,
        title=c.title,
        text=c.text if text is None else text,
        score=passage.score,
        char_start=c.char_start,
        char_end=c.char_end if char_end is None else char_end,
    )


def _rendered(c: Citation) -> str:
    return f"[{c.number}] ({c.label}) {c.text}"


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


class _Deduper:
    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.spans: dict[tuple[str, tuple[str, ...]], list[tuple[int, int]]] = {}

    def is_duplicate(self, c: Chunk) -> bool:
        if c.chunk_id in self.ids:
            return True
        if c.char_end > c.char_start:
            span = (c.char_start, c.char_end)
            return any(_overlaps(span, s) for s in self.spans.get((c.doc_id, c.section_path), ()))
        return False

    def add(self, c: Chunk) -> None:
        self.ids.add(c.chunk_id)
        if c.char_end > c.char_start:
            self.spans.setdefault((c.doc_id, c.section_path), []).append((c.char_start, c.char_end))


def _truncate(number: int, p: Passage, room: int, count: TokenCount, min_tokens: int) -> tuple[Citation, int] | None:
    """The longest whole-sentence prefix of ``p`` whose rendered citation fits ``room`` tokens."""
    from medground.corpus.sentences import split_spans

    text = p.chunk.text
    best: tuple[Citation, int] | None = None
    for _, end in split_spans(text):
        end_char = p.chunk.char_start + end if p.chunk.char_end > p.chunk.char_start else p.chunk.char_end
        cit = citation_for(number, p, text=text[:end], char_end=end_char)
        cost = count(_rendered(cit))
        if cost > room:
            break
        best = (cit, cost)
    if best is None or count(best[0].text) < min_tokens:
        return None
    return best


def pack(
    passages: Sequence[Passage],
    *,
    budget_tokens: int = 1200,
    count_tokens: TokenCount | None = None,
    max_passages: int | None = None,
    overflow: Literal["skip", "truncate"] = "skip",
    min_tokens: int = 24,
    queries: Sequence[Query] = (),
    keep_order: bool = False,
) -> Evidence:
    """Pack ``passages`` into Evidence (see module docstring for the rules); ``keep_order``: in
    the order given, not by score (the caller ranked them on more than the score)."""
    count = count_tokens or default_token_counter()
    ordered = list(passages) if keep_order else sorted(passages, key=lambda p: -p.score)
    dedupe = _Deduper()
    citations: list[Citation] = []
    used = dropped = 0
    for p in ordered:
        if max_passages is not None and len(citations) >= max_passages:
            break
        if dedupe.is_duplicate(p.chunk):
            dropped += 1
            continue
        number = len(citations) + 1
        cit = citation_for(number, p)
        cost = count(_rendered(cit))
        if used + cost > budget_tokens:
            cut = _truncate(number, p, budget_tokens - used, count, min_tokens) if overflow == "truncate" else None
            if cut is None:
                dropped += 1
                continue
            cit, cost = cut
        citations.append(cit)
        dedupe.add(p.chunk)
        used += cost
    return Evidence(citations=citations, token_count=used, budget=budget_tokens, queries=list(queries), dropped=dropped)


def pack_with(settings: PackSettings, passages: Sequence[Passage], *, count_tokens: TokenCount | None = None,
              queries: Sequence[Query] = ()) -> Evidence:
    return pack(
        passages,
        budget_tokens=settings.budget_tokens,
        count_tokens=count_tokens or default_token_counter(settings.tokenizer),
        max_passages=settings.max_passages,
        overflow=settings.overflow,
        min_tokens=settings.min_tokens,
        queries=queries,
    )
