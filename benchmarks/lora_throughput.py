"""LoRA training throughput on the tool-call data (issue: medication consultation, item 7).

What `medground train toolcall-lora` costs per step depends on the architecture and the sequence
lengths, not on the trained weights, so this builds each architecture with random weights
(nothing to download) and trains LoRA adapters (PEFT, rank 8 on q/k/v/o, AdamW) on batches
with the real token lengths of the tool-call data (benchmarks/data/toolcall_token_lengths.npy:
2,000 examples of `train toolcall-data`, seed 0, SmolLM2 tokenizer; mean 141 tokens, of which
23.5 are the trained answer). Prints steps/s, examples/s and peak memory; writes JSON.

    python benchmarks/lora_throughput.py --device cpu --archs smollm2-135m --steps 3 --batch-size 4
    python benchmarks/lora_throughput.py --device cuda --steps 30 --batch-size 16
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

ARCHS = {  # model_type, hidden, layers, heads, kv heads, intermediate, vocab
    "smollm2-135m": ("llama", 576, 30, 9, 3, 1536, 49152),
    "qwen2.5-1.5b": ("qwen2", 1536, 28, 12, 2, 8960, 151936),
    "qwen2.5-7b": ("qwen2", 3584, 28, 28, 4, 18944, 152064),
}
LENGTHS = Path(__file__).resolve().parent / "data" / "toolcall_token_lengths.npy"


def build(arch, device, dtype):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM

    kind, hidden, layers, heads, kv, inter, vocab = arch
    cfg = AutoConfig.for_model(kind, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                               num_key_value_heads=kv, intermediate_size=inter, vocab_size=vocab,
                               max_position_embeddings=4096)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype)
    lora = LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                      lora_dropout=0.0, task_type="CAUSAL_LM")
    return get_peft_model(model, lora)


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--archs", default=",".join(ARCHS))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default="benchmarks/results/lora_throughput.json")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    lengths = np.load(LENGTHS)
    rng = np.random.default_rng(0)
    dtype = torch.bfloat16 if args.device == "cuda" else torch.float32
    rows = []
    for name in args.archs.split(","):
        model = build(ARCHS[name], args.device, dtype)
        vocab = ARCHS[name][6]
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)
        if args.device == "cuda":
            torch.cuda.reset_peak_memory_stats()

        def step(model=model, opt=opt):  # bound now: both are deleted after each architecture
            pick = lengths[rng.integers(0, len(lengths), size=args.batch_size)]
            width = int(pick[:, 0].max())
            ids = torch.randint(0, vocab, (len(pick), width))
            labels = torch.full((len(pick), width), -100)
            mask = torch.zeros((len(pick), width), dtype=torch.long)
            for r, (total, answer) in enumerate(pick):
                mask[r, :total] = 1
                labels[r, total - answer:total] = ids[r, total - answer:total]
            loss = model(input_ids=ids.to(args.device), attention_mask=mask.to(args.device),
                         labels=labels.to(args.device)).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
            return int(pick[:, 0].sum())

        for _ in range(args.warmup):  # batch widths vary: kernels are chosen per shape on first use
            step()
        if args.device == "cuda":
            torch.cuda.synchronize()
        t, tokens = time.perf_counter(), 0
        for _ in range(args.steps):
            tokens += step()
        if args.device == "cuda":
            torch.cuda.synchronize()
        secs = time.perf_counter() - t
        row = {"architecture": name, "device": args.device, "dtype": str(dtype).replace("torch.", ""),
               "batch_size": args.batch_size, "steps": args.steps, "seconds": round(secs, 2),
               "steps_per_s": round(args.steps / secs, 3), "examples_per_s": round(args.steps * args.batch_size / secs, 1),
               "tokens_per_s": round(tokens / secs), "trainable_params": sum(p.numel() for p in model.parameters()
                                                                             if p.requires_grad),
               "minutes_per_10k_examples": round(10000 / (args.steps * args.batch_size / secs) / 60, 2)}
        if args.device == "cuda":
            row["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 1)
        rows.append(row)
        print(row, flush=True)
        del model, opt
        if args.device == "cuda":
            torch.cuda.empty_cache()
    dev = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(out.read_text()) if out.exists() else {}
    data[args.device] = {"device": dev, "torch": torch.__version__, "rows": rows,
                         "weights": "random (throughput does not depend on trained values)",
                         "command": f"python benchmarks/lora_throughput.py --device {args.device} --archs {args.archs} "
                                    f"--steps {args.steps} --warmup {args.warmup} --batch-size {args.batch_size}"}
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"\n{dev}\narchitecture | examples/s | minutes per 10k examples")
    for r in rows:
        print(f"{r['architecture']} | {r['examples_per_s']} | {r['minutes_per_10k_examples']}")


if __name__ == "__main__":
    main()
