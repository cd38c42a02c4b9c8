"""First-stage retrieval speed on the shared textbook corpus, side by side.

    python benchmarks/retrieval_speed.py --queries 200 --limit-chunks 3000 --embedder onnx-minilm

Measures index build times; per-query p50/p95 and batched QPS for bm25s, rank_bm25 (same
tokens and queries; it is slow, so a sample of queries is timed and QPS extrapolated), dense
(query encoding timed apart from search), hybrid (bm25 + dense, RRF) and hybrid restricted to
the top sections; Pyserini (Lucene) when ``--pyserini-python`` names an interpreter that has it
(see benchmarks/pyserini_bm25.py); peak RSS. Queries are MedQA test questions. Writes
benchmarks/results/retrieval_speed.json. Uses the chunk store under $MEDGROUND_HOME
(ingesting the six OpenStax textbooks first when it is empty).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import resource
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from medground.index.bm25 import BM25Index, BM25Retriever
from medground.index.embedders import embedder_settings_from
from medground.index.dense import DenseIndex, DenseRetriever, DenseSettings
from medground.index.embedders import load_embedder
from medground.index.fingerprint import ChunkList
from medground.index.sections import SectionIndex
from medground.store.chunks import ChunkStore
from medground.index.text import BM25Settings
from medground.paths import data_root
from medground.retrieve.fusion import RRFFuser

RESULTS = Path(__file__).parent / "results" / "retrieval_speed.json"


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs) * 1000.0, q)) if xs else float("nan")


def timed_each(fn, items) -> list[float]:
    out = []
    for it in items:
        t0 = time.perf_counter()
        fn(it)
        out.append(time.perf_counter() - t0)
    return out


def row(name: str, per_query: list[float] | None = None, batch_seconds: float | None = None,
        n: int = 0, note: str = "") -> dict:
    r = {"retriever": name, "note": note}
    if per_query:
        r.update(p50_ms=round(pct(per_query, 50), 3), p95_ms=round(pct(per_query, 95), 3),
                 mean_ms=round(statistics.fmean(per_query) * 1000, 3), n_timed=len(per_query))
    if batch_seconds is not None and n:
        r.update(batch_qps=round(n / batch_seconds, 1), batch_seconds=round(batch_seconds, 4))
    return r


def load_queries(n: int) -> list[str]:
    path = data_root() / "benchmarks" / "medagents" / "medqa" / "test.jsonl"
    out = []
    with path.open() as f:
        for line in f:
            out.append(json.loads(line)["question"])
            if len(out) == n:
                break
    return out


def select_chunks(store: ChunkStore, corpora, limit: int | None):
    chunks = list(store.iter_chunks(corpora))
    total = len(chunks)
    if limit and limit < total:
        # evenly spaced over the store order: every book is represented
        idx = np.linspace(0, total - 1, limit).round().astype(int)
        chunks = [chunks[i] for i in sorted(set(idx.tolist()))]
    return chunks, total


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=200, help="first N MedQA test questions")
    ap.add_argument("--limit-chunks", type=int, default=0, help="index only N chunks (evenly spaced); 0 = all")
    ap.add_argument("--embedder", default="onnx-minilm", help="onnx-minilm | sentence-transformers | a model")
    ap.add_argument("--threads", type=int, default=1, help="encoder threads")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--rank-bm25-sample", type=int, default=5, help="queries timed for rank_bm25")
    ap.add_argument("--top-sections", type=int, default=8)
    ap.add_argument("--corpora", default=None, help="comma-separated corpus names in the store")
    ap.add_argument("--no-embedding-cache", action="store_true",
                    help="embed every chunk (honest build time) instead of reusing the cache")
    ap.add_argument("--pyserini-python", default=None,
                    help="python of a virtual environment with pyserini (and JAVA_HOME set): adds a Lucene row")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    corpora = args.corpora.split(",") if args.corpora else None

    store = ChunkStore.default()
    ingest_seconds = None
    if store.count() == 0:
        from medground.corpus.ingest import ingest, source_set

        print("chunk store empty: ingesting the six OpenStax textbooks …", file=sys.stderr)
        t0 = time.perf_counter()
        ingest(store, source_set("textbooks", data_root()), progress=False)
        ingest_seconds = round(time.perf_counter() - t0, 1)
    chunks, total = select_chunks(store, corpora, args.limit_chunks)
    source = ChunkList(chunks)
    queries = load_queries(args.queries)
    k = args.k
    build: dict[str, float] = {}
    rows: list[dict] = []

    # -- lexical, on the full corpus: bm25s vs rank_bm25 with the same tokens and queries ----------
    full_chunks = list(store.iter_chunks(corpora))
    t0 = time.perf_counter()
    full_index = BM25Index.build(full_chunks, BM25Settings(n_threads=1))
    build["bm25s (full corpus)"] = time.perf_counter() - t0
    full_bm25 = BM25Retriever(full_index, ChunkList(full_chunks))
    tok = full_index.tokenizer
    query_tokens = [tok.tokenize(q) for q in queries]
    full_bm25.search(queries[0], k)  # warm-up
    per = timed_each(lambda q: full_bm25.search(q, k), queries)
    t0 = time.perf_counter()
    full_index.top_k(query_tokens, k, n_threads=1)
    batch = time.perf_counter() - t0
    bm25s_qps = len(queries) / batch
    rows.append(row(f"bm25s, {len(full_chunks)} chunks", per, batch, len(queries),
                    "per query incl. tokenizing + chunk lookup; batch on tokens, 1 thread"))
    t0 = time.perf_counter()
    full_index.top_k(query_tokens, k, n_threads=2)
    batch2 = time.perf_counter() - t0
    rows.append(row(f"bm25s, {len(full_chunks)} chunks, 2 threads", None, batch2, len(queries), "batch only"))
    bm25s_numba_qps = None
    if importlib.util.find_spec("numba") is not None:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            full_index.save(tmp)
            build["bm25s save"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            fast_index = BM25Index.load(tmp, BM25Settings(n_threads=1, backend="numba"))
            build["bm25s load (mmap)"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            fast_index.top_k(query_tokens[:1], k)  # JIT compile, reported apart
            build["bm25s numba JIT (first query)"] = time.perf_counter() - t0
            fast = BM25Retriever(fast_index, full_bm25.chunks)
            per_fast = timed_each(lambda q: fast.search(q, k), queries)
            t0 = time.perf_counter()
            fast_index.top_k(query_tokens, k, n_threads=1)
            batch_fast = time.perf_counter() - t0
            bm25s_numba_qps = len(queries) / batch_fast
            rows.append(row(f"bm25s numba, {len(full_chunks)} chunks", per_fast, batch_fast, len(queries),
                            "index loaded memory-mapped; JIT compile excluded"))

    from rank_bm25 import BM25Okapi

    doc_tokens = tok.tokenize_many(f"{c.title} {' '.join(c.section_path)} {c.text}" for c in full_chunks)
    t0 = time.perf_counter()
    okapi = BM25Okapi(doc_tokens, k1=1.5, b=0.75)
    build["rank_bm25 (full corpus)"] = time.perf_counter() - t0
    del doc_tokens
    sample = query_tokens[: args.rank_bm25_sample]
    per_okapi = timed_each(lambda t: np.argsort(-okapi.get_scores(t))[:k], sample)
    okapi_qps = len(sample) / sum(per_okapi)
    rows.append(row(f"rank_bm25, {len(full_chunks)} chunks", per_okapi, sum(per_okapi), len(sample),
                    f"only {len(sample)} queries timed; QPS extrapolated"))
    pyserini_qps = None
    if args.pyserini_python:
        lucene = run_pyserini(args.pyserini_python, full_chunks, queries, k)
        build["pyserini (Lucene, full corpus)"] = lucene["build_seconds"]
        rows.append(row(f"pyserini {lucene['version']}, {lucene['documents']} chunks", lucene["per_query_seconds"],
                        lucene["batch_seconds"]["1"], len(queries), "Lucene BM25, own analyzer; batch 1 thread"))
        rows.append(row(f"pyserini {lucene['version']}, 2 threads", None, lucene["batch_seconds"]["2"],
                        len(queries), "batch only"))
        pyserini_qps = len(queries) / lucene["batch_seconds"]["1"]

    # -- bm25s on the (possibly limited) chunk set shared with dense, for hybrid ------------------
    t0 = time.perf_counter()
    bm25_index = BM25Index.build(chunks, BM25Settings(n_threads=1))
    build["bm25s"] = time.perf_counter() - t0
    bm25 = BM25Retriever(bm25_index, source)
    per = timed_each(lambda q: bm25.search(q, k), queries)
    rows.append(row(f"bm25s, {len(chunks)} chunks", per, sum(per), len(queries), "the set dense/hybrid use"))

    # -- dense ---------------------------------------------------------------------------------
    emb_settings = embedder_settings_from(args.embedder, args.threads)
    embedder = load_embedder(emb_settings)
    t0 = time.perf_counter()
    dense_index = DenseIndex.build(chunks, embedder, DenseSettings(embedder=emb_settings, cache=not args.no_embedding_cache))
    build["dense"] = time.perf_counter() - t0
    dense = DenseRetriever(dense_index, embedder, source)
    encode_per = timed_each(lambda q: embedder.encode_queries([q]), queries)
    t0 = time.perf_counter()
    qvecs = embedder.encode_queries(queries)
    encode_batch = time.perf_counter() - t0
    search_per = timed_each(lambda i: dense.search_encoded(qvecs[i:i + 1], k), range(len(queries)))
    t0 = time.perf_counter()
    dense.search_encoded(qvecs, k)
    dense_batch = time.perf_counter() - t0
    rows.append(row("query encoding", encode_per, encode_batch, len(queries), embedder.name))
    rows.append(row("dense search", search_per, dense_batch, len(queries), "FAISS IndexFlatIP, excl. encoding"))

    # -- hybrid: bm25 + dense, RRF ---------------------------------------------------------------
    fuser = RRFFuser()

    def hybrid(i: int):
        return fuser.fuse([bm25.search(queries[i], k), dense.search_encoded(qvecs[i:i + 1], k)[0]], k)

    hybrid_per = timed_each(hybrid, range(len(queries)))
    rows.append(row("hybrid (bm25+dense, RRF)", hybrid_per, sum(hybrid_per), len(queries), "excl. encoding"))

    # -- hybrid restricted to the top sections ---------------------------------------------------
    t0 = time.perf_counter()
    sections = SectionIndex.build(chunks)
    build["sections"] = time.perf_counter() - t0

    def hybrid_sections(i: int):
        found = sections.top_sections(queries[i], args.top_sections)
        allowed = [cid for s, _ in found for cid in s.chunk_ids]
        if not allowed:
            return hybrid(i)
        lex = bm25.search_within(queries[i], k, allowed)
        sem = dense.search_encoded(qvecs[i:i + 1], k, chunk_ids=allowed)[0]
        return fuser.fuse([lex, sem], k)

    sec_per = timed_each(hybrid_sections, range(len(queries)))
    rows.append(row(f"hybrid + top-{args.top_sections} sections", sec_per, sum(sec_per), len(queries), "excl. encoding"))

    # -- targets -----------------------------------------------------------------------------------
    dense_total = statistics.fmean(encode_per) + statistics.fmean(search_per)
    hybrid_total = statistics.fmean(encode_per) + statistics.fmean(hybrid_per)
    targets = {
        "bm25s_vs_rank_bm25_qps_ratio": round(bm25s_qps / okapi_qps, 1),
        "bm25s_2threads_vs_rank_bm25_qps_ratio": round(len(queries) / batch2 / okapi_qps, 1),
        "bm25s_numba_vs_rank_bm25_qps_ratio": round(bm25s_numba_qps / okapi_qps, 1) if bm25s_numba_qps else None,
        "bm25s_vs_rank_bm25_target": ">= 1000x",
        "bm25s_vs_pyserini_qps_ratio": round(bm25s_qps / pyserini_qps, 2) if pyserini_qps else None,
        "hybrid_overhead_vs_dense_pct": round(100 * (hybrid_total - dense_total) / dense_total, 1),
        "hybrid_overhead_target": "<= 10 % (per query, dense time incl. encoding)",
        "hybrid_p50_ms_excl_encoding": round(pct(hybrid_per, 50), 3),
        "hybrid_sections_p50_ms_excl_encoding": round(pct(sec_per, 50), 3),
        "retrieval_p50_target_ms": 30,
    }
    result = {
        "benchmark": "retrieval_speed",
        "command": "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cpu_count": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(), "processor": platform.processor()},
        "corpus": {"chunks_indexed": len(chunks), "chunks_in_store": total, "corpora": store.corpora(),
                   "ingest_seconds": ingest_seconds},
        "queries": {"source": "medagents/medqa/test.jsonl (question text)", "n": len(queries), "k": k},
        "embedder": embedder.name, "threads": args.threads,
        "build_seconds": {k_: round(v, 3) for k_, v in build.items()},
        "dense_chunks_embedded": dense_index.embedded,
        "dense_embed_chunks_per_s": round(dense_index.embedded / build["dense"], 2) if dense_index.embedded else None,
        "dense_note": "dense build embeds only chunks not in the embedding cache (dense_chunks_embedded)",
        "rows": rows,
        "targets": targets,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print_table(result)
    return result


def run_pyserini(python: str, chunks, queries: list[str], k: int) -> dict:
    """Time Lucene BM25 in pyserini's own environment (benchmarks/pyserini_bm25.py)."""
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        docs, qfile = Path(tmp) / "docs.jsonl", Path(tmp) / "queries.json"
        with docs.open("w") as f:
            for c in chunks:  # the same fields bm25s indexes
                f.write(json.dumps({"id": c.chunk_id, "contents": f"{c.title} {' '.join(c.section_path)} {c.text}"}) + "\n")
        qfile.write_text(json.dumps(queries))
        script = Path(__file__).with_name("pyserini_bm25.py")
        out = subprocess.run([python, str(script), str(docs), str(qfile), "--k", str(k)],
                             check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_table(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table("retriever", "p50 ms", "p95 ms", "batch QPS", "note", title="retrieval speed")
    for r in result["rows"]:
        t.add_row(r["retriever"], f"{r.get('p50_ms', float('nan')):.2f}", f"{r.get('p95_ms', float('nan')):.2f}",
                  f"{r.get('batch_qps', float('nan')):.1f}", r["note"])
    c = Console()
    c.print(t)
    c.print({"build_seconds": result["build_seconds"], "corpus": result["corpus"],
             "targets": result["targets"], "peak_rss_mb": result["peak_rss_mb"]})


if __name__ == "__main__":
    main()
