"""Embedding throughput of BERT-class encoders at this corpus's real token lengths, on CPU or GPU.

What an index build costs is a forward pass per chunk; throughput depends on the architecture
(layers, width) and the token lengths, not on the trained weights. So this benchmark builds each
architecture with random weights (nothing to download, identical FLOPs and kernels) and embeds
batches whose lengths are drawn from the real distribution of the shared corpus's chunks
(benchmarks/data/corpus_minilm_token_lengths.npy: MiniLM word pieces of all 51,892 chunks),
sorted by length so that padding wastes little, then mean-pooled as sentence-transformers does.

It prints chunks/s per architecture and precision and the hours a corpus of --corpus-chunks
(default 23.9M: MedRAG's PubMed snippets) would take, and writes JSON. Timed is the encoder
alone: batches are built on the device first, and on a GPU one untimed pass over every batch
shape comes first. Tokenization (CPU, parallel in the tokenizers library) is not included.

    python benchmarks/embed_throughput.py --device cpu --threads 2 --sample 512
    python benchmarks/embed_throughput.py --device cuda --sample 51892 --out results.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

ARCHS = {  # name: (layers, hidden, heads, intermediate, vocab)
    "MiniLM-L6-H384 (all-MiniLM-L6-v2)": (6, 384, 12, 1536, 30522),
    "e5-small / bge-small (L12-H384)": (12, 384, 12, 1536, 30522),
    "bge-base / MedCPT (L12-H768)": (12, 768, 12, 3072, 30522),
}
LENGTHS = Path(__file__).resolve().parent / "data" / "corpus_minilm_token_lengths.npy"


def build(arch, device, dtype):
    import torch
    from transformers import BertConfig, BertModel

    layers, hidden, heads, inter, vocab = arch
    cfg = BertConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                     intermediate_size=inter, vocab_size=vocab, max_position_embeddings=512,
                     attn_implementation="sdpa")
    torch.manual_seed(0)
    return BertModel(cfg, add_pooling_layer=False).to(device=device, dtype=dtype).eval()


def batches(lengths, batch_size, vocab, device):
    """Length-sorted batches of random token ids, built on the device before any timing."""
    import torch

    order = np.argsort(lengths, kind="stable")
    gen = torch.Generator().manual_seed(0)
    out = []
    for start in range(0, len(order), batch_size):
        lens = torch.as_tensor(lengths[order[start:start + batch_size]])
        width = int(lens.max())
        ids = torch.randint(1000, vocab, (len(lens), width), generator=gen)
        mask = (torch.arange(width)[None, :] < lens[:, None]).long()
        out.append((ids.to(device), mask.to(device)))
    return out


def run(model, prepared, device):
    import torch

    done = 0
    with torch.inference_mode():
        for ids, mask in prepared:
            hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1)
            torch.nn.functional.normalize(pooled.float(), dim=-1)
            done += len(ids)
        if device == "cuda":
            torch.cuda.synchronize()
    return done


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--sample", type=int, default=4096, help="chunks drawn from the real length distribution")
    ap.add_argument("--batch-size", type=int, default=None, help="default: 256 on GPU, 32 on CPU")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--corpus-chunks", type=float, default=23.9e6)
    ap.add_argument("--precisions", default=None, help="comma list of fp32,bf16,fp16 (default: bf16,fp32 on GPU)")
    ap.add_argument("--out", default="benchmarks/results/embed_throughput.json")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    all_lengths = np.minimum(np.load(LENGTHS), args.max_length)
    lengths = np.random.default_rng(0).choice(all_lengths, size=args.sample, replace=args.sample > len(all_lengths))
    batch = args.batch_size or (256 if args.device == "cuda" else 32)
    precisions = (args.precisions or ("bf16,fp32" if args.device == "cuda" else "fp32")).split(",")
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    rows = []
    for name, arch in ARCHS.items():
        for prec in precisions:
            model = build(arch, args.device, dtypes[prec])
            prepared = batches(lengths, batch, model.config.vocab_size, args.device)
            if args.device == "cuda":
                run(model, prepared, args.device)  # warm-up over every batch shape (kernel selection)
            else:
                run(model, prepared[:1], args.device)
            t = time.perf_counter()
            n = run(model, prepared, args.device)
            secs = time.perf_counter() - t
            rate = n / secs
            rows.append({"architecture": name, "precision": prec, "chunks": n, "seconds": round(secs, 3),
                         "chunks_per_s": round(rate, 1), "tokens_per_s": round(float(lengths.sum()) / secs),
                         "hours_for_corpus": round(args.corpus_chunks / rate / 3600, 2),
                         "minutes_for_shared_corpus_51892": round(51892 / rate / 60, 2)})
            print(rows[-1], flush=True)
            del model
            if args.device == "cuda":
                torch.cuda.empty_cache()
    dev = torch.cuda.get_device_name(0) if args.device == "cuda" else f"{platform.processor() or 'cpu'}"
    payload = {"device": dev, "device_kind": args.device, "threads": args.threads or torch.get_num_threads(),
               "torch": torch.__version__, "batch_size": batch, "max_length": args.max_length,
               "sample": args.sample, "mean_tokens": round(float(lengths.mean()), 1),
               "corpus_chunks": args.corpus_chunks, "cpu_count": os.cpu_count(), "rows": rows,
               "weights": "random (throughput does not depend on trained values)",
               "command": "python benchmarks/embed_throughput.py " + " ".join(
                   f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v is not None and k != "out")}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(Path(args.out).read_text()) if Path(args.out).exists() else {}
    data[args.device] = payload
    Path(args.out).write_text(json.dumps(data, indent=2) + "\n")
    print(f"\n{dev}: {args.sample} chunks, mean {payload['mean_tokens']} tokens, batch {batch}")
    print("architecture | precision | chunks/s | hours for corpus")
    for r in rows:
        print(f"{r['architecture']} | {r['precision']} | {r['chunks_per_s']} | {r['hours_for_corpus']}")


if __name__ == "__main__":
    main()
