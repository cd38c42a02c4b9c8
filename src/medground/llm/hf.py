"""Transformers backend: any causal LM that transformers loads, on a GPU when there is one.

For users with a GPU and a Hugging Face model (``model: Qwen/Qwen2.5-7B-Instruct`` or a local
directory), and for running the catalog's GGUF files unquantized on a GPU (transformers
dequantizes a GGUF on load: the same weights llama.cpp reads, in bf16). It speaks the same
OpenAI chat JSON as the other backends, so caching, letter scoring and the pipelines are
unchanged. Greedy or sampled generation with per-token log-probabilities; no constrained
decoding: tool calls and JSON schemas need the local (llama.cpp) or an OpenAI-compatible backend.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any

from medground.llm.base import LLMRequestError, LLMSettings
from medground.llm.client import BaseLLM
from medground.registry import register

_MODELS: dict[tuple, tuple[Any, Any]] = {}
_LOCK = threading.Lock()


def _locate(model: str, models_dir: str | None) -> tuple[str, str | None]:
    """(what from_pretrained loads, the GGUF file name inside it or None)."""
    from medground.llm.models import CATALOG, resolve_model

    path = Path(model).expanduser()
    if model in CATALOG or (path.is_file() and path.suffix == ".gguf"):
        gguf = resolve_model(model, models_dir)
        return str(gguf.parent), gguf.name
    return model, None  # a model directory or a hub id


def _load(source: str, gguf_file: str | None, device: str) -> tuple[Any, Any]:
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ImportError("the transformers backend needs torch and transformers: pip install 'medground[dense]'") from exc
    key = (source, gguf_file, device)
    with _LOCK:
        if key not in _MODELS:
            dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
            kwargs = {"gguf_file": gguf_file} if gguf_file else {}
            tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
            model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **kwargs).to(device).eval()
            _MODELS[key] = (tokenizer, model)
        return _MODELS[key]


class TransformersLLM(BaseLLM):
    backend = "transformers"

    def __init__(self, settings: LLMSettings):
        import torch

        source, gguf_file = _locate(settings.model, settings.models_dir)
        self.device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
        if gguf_file:
            from medground.llm.models import model_fingerprint

            weights = model_fingerprint(Path(source) / gguf_file, settings.models_dir)
        else:
            weights = source
        # Another runtime and precision than llama.cpp: its outputs are cached apart.
        fingerprint = hashlib.sha256(f"transformers|{weights}|{self.device.split(':')[0]}".encode()).hexdigest()
        super().__init__(settings, model_id=settings.model, fingerprint=fingerprint)
        if not self.device.startswith("cuda"):
            torch.set_num_threads(settings.threads or torch.get_num_threads())
        self.tokenizer, self.model = _load(source, gguf_file, self.device)
        self._lock = threading.Lock()  # one generate at a time on the shared model

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        for field in ("tools", "response_format"):
            if body.get(field):
                raise LLMRequestError(f"{self.name}: the transformers backend does not constrain decoding "
                                      f"({field!r}); use backend local or openai for tool calls and JSON schemas")
        with self._lock:
            return self._generate(body)

    def _generate(self, body: dict[str, Any]) -> dict[str, Any]:
        import torch

        t0 = time.perf_counter()
        ids = self.tokenizer.apply_chat_template(body["messages"], add_generation_prompt=True, return_tensors="pt",
                                                 return_dict=True)["input_ids"].to(self.device)
        temperature = float(body.get("temperature") or 0.0)
        top_k = int(body.get("top_logprobs") or 0) if body.get("logprobs") else 0
        stops = list(body.get("stop") or [])
        configured = self.model.generation_config.eos_token_id
        eos = {self.tokenizer.eos_token_id, *(configured if isinstance(configured, list) else [configured])} - {None}
        generator = torch.Generator(device=self.device).manual_seed(int(body.get("seed") or 0))
        out_ids: list[int] = []
        content: list[dict[str, Any]] = []
        finish = "length"
        past = None
        step = ids
        with torch.inference_mode():
            for _ in range(int(body.get("max_tokens") or 256)):
                out = self.model(input_ids=step, past_key_values=past, use_cache=True)
                past = out.past_key_values
                logits = out.logits[0, -1].float()
                logp = torch.log_softmax(logits, dim=-1)
                if temperature > 0:
                    probs = torch.softmax(logits / temperature, dim=-1)
                    token = int(torch.multinomial(probs, 1, generator=generator))
                else:
                    token = int(torch.argmax(logits))
                if token in eos:
                    finish = "stop"
                    break
                out_ids.append(token)
                if top_k:
                    values, indices = torch.topk(logp, min(top_k, logp.numel()))
                    content.append({"token": self.tokenizer.decode([token]), "logprob": float(logp[token]),
                                    "top_logprobs": [{"token": self.tokenizer.decode([int(i)]), "logprob": float(v)}
                                                     for v, i in zip(values.tolist(), indices.tolist())]})
                if stops:  # decoded only when there is a stop string to look for
                    so_far = self.tokenizer.decode(out_ids, skip_special_tokens=True)
                    if any(stop in so_far for stop in stops):
                        finish = "stop"
                        break
                step = torch.tensor([[token]], device=self.device)
        text = self.tokenizer.decode(out_ids, skip_special_tokens=True)
        for s in stops:
            if s in text:
                text = text[: text.index(s)]
        return {
            "model": self.settings.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish,
                         "logprobs": {"content": content} if top_k else None}],
            "usage": {"prompt_tokens": int(ids.shape[1]), "completion_tokens": len(out_ids)},
            "timings": {"total_ms": (time.perf_counter() - t0) * 1000},
        }


@register("llm", "transformers")
def make_transformers(settings: LLMSettings | None = None, **kwargs: Any) -> TransformersLLM:
    settings = settings or LLMSettings(backend="transformers", **kwargs)
    return TransformersLLM(settings)
