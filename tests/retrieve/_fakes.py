"""Small hand-made chunks and fake first-stage components shared by the retrieve tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medground.schema import Chunk, Passage


def chunk(cid: str, text: str = "", *, doc: str = "doc", section: tuple[str, ...] = ("Sec",),
          start: int = 0, end: int = 0, book: str = "Book", chapter: str = "Ch 1") -> Chunk:
    return Chunk(chunk_id=cid, doc_id=doc, corpus="test", source_path=f"{doc}.xml",
                 text=text or f"text of {cid}", title=f"Title {doc}", book=book, chapter=chapter,
                 section_path=section, char_start=start, char_end=end)


def plist(source: str, *items: tuple[str, float]) -> list[Passage]:
    return [Passage(chunk=chunk(cid), score=s, source=source, rank=i)
            for i, (cid, s) in enumerate(items, start=1)]


class KeywordRetriever:
    """Scores a chunk by how many query words it contains (ties: corpus order)."""

    def __init__(self, chunks: Sequence[Chunk], name: str = "kw") -> None:
        self.chunks = list(chunks)
        self.name = name
        self.calls: list[str] = []

    def search(self, query: str, k: int = 10) -> list[Passage]:
        self.calls.append(query)
        words = set(query.lower().split())
        scored = [(sum(w in c.text.lower().split() for w in words), i, c) for i, c in enumerate(self.chunks)]
        scored = [s for s in scored if s[0] > 0]
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [Passage(chunk=c, score=float(s), source=self.name, rank=r)
                for r, (s, _, c) in enumerate(scored[:k], start=1)]

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        return [self.search(q, k) for q in queries]


class BagOfWordsEmbedder:
    """Deterministic Embedder: hashed bag of words, L2-normalized."""

    name = "bow-test"
    dim = 64

    def _enc(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, sum(map(ord, w)) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._enc(texts)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._enc(texts)
