"""Vector search at scale: FAISS flat / HNSW / IVF-PQ vs pgvector HNSW on synthetic 384-d vectors.

    python benchmarks/scale.py --sizes 100000,1000000 --queries 200

Per size: build seconds, index bytes (FAISS: serialized index; pgvector: table + indexes on
disk), single-query latency p50/p95 (one query at a time, as a server answers them), and
recall@10 against exact search (top-10 overlap with FAISS flat) — the "same answers" check of
the Postgres backend. pgvector goes through the product's own code (index/pgvector.py:
PgVectorIndex.from_vectors / search_vectors), on the embedded PostgreSQL (pgserver) unless
--pg-url names another server.

The vectors: a seeded mixture of 2,000 Gaussian clusters on the unit sphere (real sentence
embeddings are clustered; uniform random vectors would make every ANN index look worse than it
is), queries drawn from the same mixture and never indexed. Writes
benchmarks/results/scale.json (key "vectors"; other keys are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results" / "scale.json"


def mixture(n: int, dim: int, seed: int, clusters: int = 2000, spread: float = 0.35) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(12345).standard_normal((clusters, dim)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):  # in blocks: 1M × 384 floats is 1.5 GB
        m = min(100_000, n - start)
        x = centers[rng.integers(0, clusters, m)] + spread * rng.standard_normal((m, dim)).astype(np.float32) / np.sqrt(dim)
        out[start:start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def latencies(search, queries: np.ndarray) -> tuple[list[float], list[list[int]]]:
    times, hits = [], []
    for q in queries:
        t0 = time.perf_counter()
        ids = search(q[None, :])
        times.append(time.perf_counter() - t0)
        hits.append(ids)
    return times, hits


def recall(hits: list[list[int]], truth: np.ndarray, k: int) -> float:
    return float(np.mean([len(set(h[:k]) & set(t[:k].tolist())) / k for h, t in zip(hits, truth)]))


def summary(name: str, n: int, build_s: float, nbytes: int, times: list[float], rec: float, note: str = "") -> dict:
    ms = np.asarray(times) * 1000
    row = {"backend": name, "n": n, "build_s": round(build_s, 1), "bytes": int(nbytes),
           "bytes_per_vector": round(nbytes / n, 1), "p50_ms": round(float(np.percentile(ms, 50)), 3),
           "p95_ms": round(float(np.percentile(ms, 95)), 3), "recall_at_10": round(rec, 4), "note": note}
    print(f"  {name:<16} build {row['build_s']:>7.1f} s  {row['bytes'] / 2**20:>8.1f} MiB  "
          f"p50 {row['p50_ms']:>7.2f} ms  p95 {row['p95_ms']:>7.2f} ms  recall@10 {rec:.3f}", flush=True)
    return row


def faiss_rows(xb: np.ndarray, xq: np.ndarray, k: int, args) -> tuple[list[dict], np.ndarray]:
    import faiss

    n, dim = xb.shape
    rows = []
    t0 = time.perf_counter()
    flat = faiss.IndexFlatIP(dim)
    flat.add(xb)
    build = time.perf_counter() - t0
    _, truth = flat.search(xq, k)  # exact: the reference for every recall below
    times, hits = latencies(lambda q: flat.search(q, k)[1][0].tolist(), xq)
    rows.append(summary("faiss-flat", n, build, n * dim * 4, times, recall(hits, truth, k), "exact"))
    flat.reset()  # frees its vectors before the next index is built

    if "faiss-hnsw" in args.backends:
        t0 = time.perf_counter()
        hnsw = faiss.IndexHNSWFlat(dim, args.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = args.ef_construction
        hnsw.add(xb)
        build = time.perf_counter() - t0
        hnsw.hnsw.efSearch = args.ef_search
        times, hits = latencies(lambda q: hnsw.search(q, k)[1][0].tolist(), xq)
        rows.append(summary("faiss-hnsw", n, build, len(faiss.serialize_index(hnsw)), times, recall(hits, truth, k),
                            f"M={args.hnsw_m}, efConstruction={args.ef_construction}, efSearch={args.ef_search}"))
        hnsw.reset()

    if "faiss-ivfpq" in args.backends:
        nlist = int(4 * np.sqrt(n))
        t0 = time.perf_counter()
        ivf = faiss.IndexIVFPQ(faiss.IndexFlatIP(dim), dim, nlist, 48, 8, faiss.METRIC_INNER_PRODUCT)
        ivf.train(xb[np.random.default_rng(1).choice(n, min(n, 60 * nlist), replace=False)])
        ivf.add(xb)
        build = time.perf_counter() - t0
        ivf.nprobe = args.nprobe
        times, hits = latencies(lambda q: ivf.search(q, k)[1][0].tolist(), xq)
        rows.append(summary("faiss-ivfpq", n, build, len(faiss.serialize_index(ivf)), times, recall(hits, truth, k),
                            f"nlist={nlist}, PQ48x8, nprobe={args.nprobe}"))
        ivf.reset()
    return rows, truth


def pgvector_row(xb: np.ndarray, xq: np.ndarray, truth: np.ndarray, k: int, url: str, args) -> dict:
    from medground.index.dense import DenseSettings
    from medground.index.fingerprint import IndexFingerprint
    from medground.store.postgres import connect
    from medground.index.pgvector import PgVectorIndex

    n = len(xb)
    settings = DenseSettings(index_type="hnsw", hnsw_m=args.hnsw_m, hnsw_ef_construction=args.ef_construction,
                             hnsw_ef_search=args.ef_search)
    conn = connect(url)
    ids = [str(i) for i in range(n)]
    fp = IndexFingerprint(kind="dense", settings=settings.index_fields(), chunks=None, chunk_count=n)
    name = f"scale-bench-{n}"
    t0 = time.perf_counter()
    index = PgVectorIndex.from_vectors(conn, name, ids, xb, settings, fp)
    build = time.perf_counter() - t0
    nbytes = conn.execute("SELECT pg_total_relation_size(%s)", (index.table,)).fetchone()[0]
    times, hits = latencies(lambda q: [int(c) for c in index.search_vectors(q, k)[0][0]], xq)
    row = summary("pgvector-hnsw", n, build, nbytes, times, recall(hits, truth, k),
                  f"m={args.hnsw_m}, ef_construction={args.ef_construction}, ef_search={args.ef_search}; "
                  "includes COPY of the vectors")
    conn.execute(f"DROP TABLE IF EXISTS {index.table}")
    conn.execute("DELETE FROM mg_indexes WHERE name = %s", (name,))
    conn.close()
    return row


def real_rows(url: str, args) -> dict:
    """The shipped corpus in Postgres: migrate the SQLite store into a fresh database, build the
    textbooks' dense index in pgvector (embeddings from the cache: this times the backend, not
    the embedder), and compare top-10 with the FAISS index on the same questions."""
    import uuid

    from medground.eval.datasets import load_dataset, subset
    from medground.index.dense import DenseSettings, open_dense
    from medground.index.embedders import load_embedder
    from medground.store.postgres import PgChunkStore, connect, migrate
    from medground.store.chunks import ChunkStore

    admin = connect(url)
    db = f"mg_scale_{uuid.uuid4().hex[:8]}"
    admin.execute(f"CREATE DATABASE {db}")
    db_url = url.replace("/postgres?", f"/{db}?") if "/postgres?" in url else url.rsplit("/", 1)[0] + "/" + db
    corpora = ["openstax"]
    out: dict = {}
    try:
        with ChunkStore.default() as sqlite_store, PgChunkStore(db_url) as pg:
            t0 = time.perf_counter()
            counts = migrate(sqlite_store, pg)
            secs = time.perf_counter() - t0
            out["migrate"] = {"chunks": counts["chunks"], "units": counts["units"], "seconds": round(secs, 1),
                              "chunks_per_s": round(counts["chunks"] / secs, 1),
                              "fingerprint_matches": pg.fingerprint() == sqlite_store.fingerprint()}
            print(f"  migrate: {counts['chunks']:,} chunks in {secs:.1f} s", flush=True)
            embedder = load_embedder(DenseSettings().embedder)
            faiss_r = open_dense(DenseSettings(), chunks=sqlite_store, corpora=corpora, embedder=embedder)
            questions = [q.question for q in subset(load_dataset("mirage/mmlu"), args.queries, seed=0)]
            vecs = faiss_r.encode(questions)
            truth = [[p.chunk.chunk_id for p in hits] for hits in faiss_r.search_encoded(vecs, 10)]
            rows = []
            for index_type in ("flat", "hnsw"):
                t0 = time.perf_counter()
                pg_r = open_dense(DenseSettings(index_type=index_type), chunks=pg, corpora=corpora,
                                  embedder=embedder, build_if_missing=True)
                build = time.perf_counter() - t0
                times, overlaps = [], []
                for v, want in zip(vecs, truth):
                    t1 = time.perf_counter()
                    got = [p.chunk.chunk_id for p in pg_r.search_encoded(v[None, :], 10)[0]]
                    times.append(time.perf_counter() - t1)
                    overlaps.append(len(set(got) & set(want)) / 10)
                ms = np.asarray(times) * 1000
                rows.append({"backend": f"pgvector-{index_type}", "chunks": len(pg_r.index), "build_s": round(build, 1),
                             "build_chunks_per_s": round(len(pg_r.index) / build, 1),
                             "top10_overlap_vs_faiss": round(float(np.mean(overlaps)), 4),
                             "p50_ms": round(float(np.percentile(ms, 50)), 2),
                             "p95_ms": round(float(np.percentile(ms, 95)), 2)})
                print(f"  pgvector-{index_type}: build {build:.1f} s, top-10 overlap with FAISS "
                      f"{rows[-1]['top10_overlap_vs_faiss']:.3f}, p50 {rows[-1]['p50_ms']} ms "
                      "(search + chunk fetch)", flush=True)
            out["dense_openstax"] = rows
            out["queries"] = f"{args.queries} seeded MMLU-Med questions (seed 0); embedder {embedder.name}"
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        admin.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000", help="comma-separated vector counts")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--backends", default="faiss-flat,faiss-hnsw,faiss-ivfpq,pgvector-hnsw")
    ap.add_argument("--hnsw-m", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=64)
    ap.add_argument("--ef-search", type=int, default=64)
    ap.add_argument("--nprobe", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2, help="FAISS build threads (queries run one at a time)")
    ap.add_argument("--pg-url", default=None, help="a postgresql:// URL (default: an embedded server in a temp dir)")
    ap.add_argument("--load-note", default="", help="what else ran on the machine (stated in the JSON)")
    ap.add_argument("--real", action="store_true",
                    help="also migrate the shipped chunk store to Postgres and compare with FAISS on real queries")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    args.backends = [b.strip() for b in args.backends.split(",")]
    import faiss

    faiss.omp_set_num_threads(args.threads)
    url, server = args.pg_url, None
    if "pgvector-hnsw" in args.backends or args.real:
        if url is None:
            import pgserver

            server = pgserver.get_server(Path(tempfile.mkdtemp(prefix="mg-scale-")) / "pgdata", cleanup_mode="stop")
            url = server.get_uri()
    real = None
    if args.real:
        print("the shipped corpus in Postgres", flush=True)
        real = real_rows(url, args)
    rows = []
    for n in [int(s) for s in args.sizes.split(",") if s]:
        print(f"n = {n:,} vectors, {args.dim}-d, {args.queries} queries", flush=True)
        xb = mixture(n, args.dim, seed=0)
        xq = mixture(args.queries, args.dim, seed=1)
        frows, truth = faiss_rows(xb, xq, 10, args)
        rows += frows
        if "pgvector-hnsw" in args.backends:
            rows.append(pgvector_row(xb, xq, truth, 10, url, args))
        del xb
    if server is not None:
        server.cleanup()
    out = json.loads(args.out.read_text()) if args.out.exists() else {}
    if real is not None:
        out["postgres_real"] = {"command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
                                "load": args.load_note, **real}
    if not rows:
        args.out.write_text(json.dumps(out, indent=2) + "\n")
        return
    out["vectors"] = {
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": args.load_note},
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
