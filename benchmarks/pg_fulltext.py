"""Does PostgreSQL full text rank as well as bm25s? PubMedQA known-item retrieval, same chunks.

    python benchmarks/pg_fulltext.py

The 1,000 labelled PubMedQA questions against their 3,358 abstract sections (the question's
own abstract is the known item, as in benchmarks/retrieval_quality.py): bm25s through the
project's BM25 index vs Postgres `to_tsvector('english')` + GIN with the question's lexemes
OR-ed (`plainto_tsquery` ANDs every word and finds almost nothing for a whole question),
ranked by `ts_rank` and by `ts_rank_cd`. R@1/5/10, MRR@10 and per-query latency. Writes key
"fulltext" of benchmarks/results/scale.json. Embedded PostgreSQL (pgserver) in a temp dir.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from medground.eval.evaluators import known_item
from medground.eval.testbeds import pubmedqa_known_item
from medground.paths import data_root

RESULTS = Path(__file__).parent / "results" / "scale.json"


def timed(search, queries):
    ranked, times = [], []
    for q in queries:
        t0 = time.perf_counter()
        ranked.append(search(q))
        times.append(time.perf_counter() - t0)
    return ranked, times


def row(name, ranked, gold, times) -> dict:
    out = {k: round(v, 4) for k, v in known_item(ranked, gold).items()}
    ms = np.asarray(times) * 1000
    out.update(p50_ms=round(float(np.percentile(ms, 50)), 2), p95_ms=round(float(np.percentile(ms, 95)), 2))
    print(f"  {name:<22} MRR@10 {out['MRR@10']:.4f}  R@1 {out['R@1']:.3f}  R@10 {out['R@10']:.3f}  "
          f"p50 {out['p50_ms']} ms", flush=True)
    return {"retriever": name, **out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--load-note", default="")
    args = ap.parse_args()
    import pgserver

    from medground.index.bm25 import BM25Index, BM25Retriever
    from medground.index.fingerprint import ChunkList
    from medground.store.postgres import connect
    from medground.schema import Passage

    chunks, questions = pubmedqa_known_item(data_root())
    by_id = {c.chunk_id: c for c in chunks}
    qs, gold = [q for _, q in questions], [pmid for pmid, _ in questions]
    print(f"PubMedQA: {len(qs)} questions, {len(chunks)} chunks", flush=True)
    rows = []
    source = ChunkList(chunks)
    bm25 = BM25Retriever(BM25Index.build(chunks), source)
    ranked, times = timed(lambda q: bm25.search(q, 10), qs)
    rows.append(row("bm25s", ranked, gold, times))

    server = pgserver.get_server(Path(tempfile.mkdtemp(prefix="mg-fts-")) / "pgdata", cleanup_mode="stop")
    conn = connect(server.get_uri())
    conn.execute("CREATE TABLE fts (chunk_id TEXT PRIMARY KEY, body TEXT, tsv tsvector)")
    with conn.cursor().copy("COPY fts (chunk_id, body) FROM STDIN") as copy:
        for c in chunks:
            copy.write_row((c.chunk_id, c.text))
    t0 = time.perf_counter()
    conn.execute("UPDATE fts SET tsv = to_tsvector('english', body)")
    conn.execute("CREATE INDEX ON fts USING gin (tsv)")
    build_s = time.perf_counter() - t0

    def pg_search(rank_fn: str):
        def search(q: str):
            rows_ = conn.execute(
                f"WITH q AS (SELECT replace(plainto_tsquery('english', %s)::text, ' & ', ' | ')::tsquery AS tq) "
                f"SELECT chunk_id, {rank_fn}(tsv, q.tq) AS r FROM fts, q WHERE tsv @@ q.tq ORDER BY r DESC LIMIT 10",
                (q,)).fetchall()
            return [Passage(chunk=by_id[cid], score=float(r), source="pg", rank=i + 1) for i, (cid, r) in enumerate(rows_)]
        return search

    for rank_fn in ("ts_rank", "ts_rank_cd"):
        ranked, times = timed(pg_search(rank_fn), qs)
        rows.append(row(f"postgres {rank_fn}", ranked, gold, times))
    conn.close()
    server.cleanup()
    out = json.loads(args.out.read_text()) if args.out.exists() else {}
    out["fulltext"] = {"command": "python " + " ".join(shlex.quote(a) for a in sys.argv), "load": args.load_note,
                       "questions": len(qs), "chunks": len(chunks), "postgres_build_s": round(build_s, 2),
                       "rows": rows}
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
