"""LoRA fine-tuning of a chat model on the tool-call data (train/toolcall_data.py), with PEFT.

The assistant turn is trained as the JSON the schema-constrained tool call produces
(``{"name": "search_engine", "arguments": {"keywords": ...}}``); the loss covers those tokens
only (system and consultation are context). A base model is a Hugging Face directory or hub
name, or a GGUF file (transformers dequantizes it: the bundled SmolLM2-135M here, as a smoke
test; real runs use the HF weights of a 1.5B–7B model on a GPU). The output is a PEFT adapter
directory plus ``train_summary.json``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class LoraSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base: str  # HF directory / hub name, or a .gguf file
    steps: int = Field(100, ge=1)
    batch_size: int = Field(8, ge=1)
    lr: float = Field(2e-4, gt=0)
    rank: int = Field(8, ge=1)
    alpha: int = Field(16, ge=1)
    max_length: int = Field(384, ge=32)
    seed: int = 0
    target_modules: list[str] = ["q_proj", "k_proj", "v_proj", "o_proj"]


def assistant_text(example: dict) -> str:
    call = example["messages"][-1]["tool_calls"][0]["function"]
    return json.dumps({"name": call["name"], "arguments": json.loads(call["arguments"])})


def load_base(base: str):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(base)
    if path.suffix == ".gguf":
        tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    else:
        tok = AutoTokenizer.from_pretrained(base)
        model = AutoModelForCausalLM.from_pretrained(base)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok, model


def encode(tok, example: dict, max_length: int) -> tuple[list[int], list[int]]:
    """(input ids, labels): labels are -100 except on the assistant's answer."""
    context = tok.apply_chat_template(example["messages"][:-1], tokenize=False, add_generation_prompt=True)
    answer = assistant_text(example) + (tok.eos_token or "")
    ctx_ids = tok(context, add_special_tokens=False)["input_ids"]
    ans_ids = tok(answer, add_special_tokens=False)["input_ids"]
    ctx_ids = ctx_ids[-(max_length - len(ans_ids)):] if len(ctx_ids) + len(ans_ids) > max_length else ctx_ids
    return ctx_ids + ans_ids, [-100] * len(ctx_ids) + ans_ids


def train_lora(data: Path, out: Path, settings: LoraSettings, *, split: str = "train", progress=None) -> dict:
    import torch
    from peft import LoraConfig, get_peft_model

    examples = [json.loads(line) for line in Path(data).read_text(encoding="utf-8").splitlines() if line.strip()]
    examples = [e for e in examples if e.get("split", "train") == split]
    if not examples:
        raise ValueError(f"{data}: no examples with split {split!r}")
    torch.manual_seed(settings.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tok, model = load_base(settings.base)
    present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    targets = [m for m in settings.target_modules if m in present]
    if not targets:
        raise ValueError(f"none of the target modules {settings.target_modules} exist in {settings.base}")
    model = get_peft_model(model, LoraConfig(r=settings.rank, lora_alpha=settings.alpha, target_modules=targets,
                                             lora_dropout=0.0, task_type="CAUSAL_LM")).to(device)
    encoded = [encode(tok, e, settings.max_length) for e in examples]
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=settings.lr)
    gen = torch.Generator().manual_seed(settings.seed)
    losses, started = [], time.perf_counter()
    model.train()
    for step in range(settings.steps):
        idx = torch.randint(len(encoded), (min(settings.batch_size, len(encoded)),), generator=gen).tolist()
        width = max(len(encoded[i][0]) for i in idx)
        ids = torch.full((len(idx), width), tok.pad_token_id)
        labels = torch.full((len(idx), width), -100)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for row, i in enumerate(idx):
            x, y = encoded[i]
            ids[row, : len(x)], labels[row, : len(y)], mask[row, : len(x)] = torch.tensor(x), torch.tensor(y), 1
        loss = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=labels.to(device)).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss))
        if progress:
            progress(step + 1, losses[-1])
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    summary = {"base": settings.base, "examples": len(examples), "steps": settings.steps, "device": device,
               "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
               "target_modules": targets, "loss_first": losses[0], "loss_last": losses[-1],
               "seconds": round(time.perf_counter() - started, 1), "settings": settings.model_dump()}
    (out / "train_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
