"""Corpus statistics over a chunk store's tables (books, sections, token histogram, flags)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any

# Inclusive upper edges of the token-count histogram bins (the last bin is open-ended).
TOKEN_BINS = (16, 32, 64, 128, 192, 256, 384, 512)


@dataclass(slots=True)
class CorpusCounts:
    documents: int
    chunks: int
    tokens: int


@dataclass(slots=True)
class CorpusStats:
    books: int
    chapters: int
    sections: int
    documents: int
    chunks: int
    tokens: int
    token_histogram: dict[str, int]  # bin label ("0-16", ..., "512+") -> chunks
    per_corpus: dict[str, CorpusCounts]
    short_chunks: int
    oversized_chunks: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bin_labels() -> list[str]:
    edges = (-1, *TOKEN_BINS)  # bins are (a, b]: "0-16", "17-32", ..., "513+"
    return [f"{a + 1}-{b}" for a, b in pairwise(edges)] + [f"{TOKEN_BINS[-1] + 1}+"]


def _sqlite_json_flag(key: str) -> str:
    return f"(json_extract(metadata, '$.{key}') = 1)"


def compute_stats(db: sqlite3.Connection, where: str, args: list, *,
                  json_flag: Callable[[str], str] = _sqlite_json_flag) -> CorpusStats:
    """Stats of the ``documents``/``chunks`` tables; ``where`` is "" or " WHERE corpus IN (...)"
    with its bound ``args`` (see ``ChunkStore._where``). ``json_flag(key)`` is the dialect's SQL
    for "metadata's ``key`` is true" as 0/1 (SQLite's json_extract; Postgres passes its own)."""
    books = db.execute(
        f"SELECT COUNT(DISTINCT corpus || '/' || book) FROM documents{where}"
        f"{' AND' if where else ' WHERE'} book != ''",
        args,
    ).fetchone()[0]
    chapters = db.execute(
        f"SELECT COUNT(DISTINCT corpus || '/' || book || '/' || chapter) FROM documents{where}"
        f"{' AND' if where else ' WHERE'} chapter != ''",
        args,
    ).fetchone()[0]
    sections = db.execute(
        f"SELECT COUNT(*) FROM (SELECT DISTINCT corpus, doc_id, section_path FROM chunks{where}) AS s",
        args,
    ).fetchone()[0]
    per: dict[str, CorpusCounts] = {}
    for corpus, n in db.execute(
        f"SELECT corpus, COUNT(*) FROM documents{where} GROUP BY corpus", args
    ):
        per[corpus] = CorpusCounts(n, 0, 0)
    for corpus, n, tok in db.execute(
        f"SELECT corpus, COUNT(*), COALESCE(SUM(token_count), 0) FROM chunks{where} GROUP BY corpus",
        args,
    ):
        per.setdefault(corpus, CorpusCounts(0, 0, 0))
        per[corpus].chunks, per[corpus].tokens = n, tok
    labels = bin_labels()
    hist = dict.fromkeys(labels, 0)
    case = " ".join(f"WHEN token_count <= {edge} THEN {i}" for i, edge in enumerate(TOKEN_BINS))
    for b, n in db.execute(
        f"SELECT CASE {case} ELSE {len(TOKEN_BINS)} END AS b, COUNT(*) FROM chunks{where} GROUP BY b",
        args,
    ):
        hist[labels[b]] = n
    flags = db.execute(
        f"SELECT COALESCE(SUM({json_flag('short')}), 0), "
        f"COALESCE(SUM({json_flag('oversized_sentence')}), 0) FROM chunks{where}",
        args,
    ).fetchone()
    return CorpusStats(
        books=books,
        chapters=chapters,
        sections=sections,
        documents=sum(c.documents for c in per.values()),
        chunks=sum(c.chunks for c in per.values()),
        tokens=sum(c.tokens for c in per.values()),
        token_histogram=hist,
        per_corpus=dict(sorted(per.items())),
        short_chunks=flags[0],
        oversized_chunks=flags[1],
    )
