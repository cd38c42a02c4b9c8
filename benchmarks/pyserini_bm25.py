"""Pyserini (Lucene BM25, MedRAG's choice) timed on the same chunks and queries as bm25s.

Run by retrieval_speed.py with ``--pyserini-python``: pyserini wants Java and its own
dependency set (it pins CUDA torch), so it lives in a separate virtual environment and this
script is run with that environment's interpreter. Standalone:

    JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 /path/to/venv/bin/python benchmarks/pyserini_bm25.py \\
        CHUNKS.jsonl QUERIES.json --k 10 > out.json

CHUNKS.jsonl holds {"id", "contents"} per line (Pyserini's JsonCollection); QUERIES.json a list
of strings. Prints one JSON object: build seconds, per-query latencies, batch wall times.
Lucene's analyzer (Porter stemming, English stopwords) differs from the project tokenizer, so
rankings differ; this measures cost only.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chunks", type=Path)
    ap.add_argument("queries", type=Path)
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    queries = json.loads(args.queries.read_text())
    work = Path(tempfile.mkdtemp(prefix="pyserini-"))
    try:
        (work / "collection").mkdir()
        shutil.copy(args.chunks, work / "collection" / "docs.jsonl")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pyserini.index.lucene", "--collection", "JsonCollection",
                        "--input", str(work / "collection"), "--index", str(work / "index"),
                        "--generator", "DefaultLuceneDocumentGenerator", "--threads", "1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        build = time.perf_counter() - t0
        from pyserini.search.lucene import LuceneSearcher

        searcher = LuceneSearcher(str(work / "index"))
        searcher.set_bm25(k1=1.5, b=0.75)
        searcher.search(queries[0], args.k)  # JVM warm-up
        per = []
        for q in queries:
            t0 = time.perf_counter()
            searcher.search(q, args.k)
            per.append(time.perf_counter() - t0)
        qids = [str(i) for i in range(len(queries))]
        batch = {}
        for threads in (1, 2):
            t0 = time.perf_counter()
            searcher.batch_search(queries, qids, k=args.k, threads=threads)
            batch[threads] = time.perf_counter() - t0
        from importlib.metadata import version

        print(json.dumps({"version": version("pyserini"), "build_seconds": build,
                          "documents": searcher.num_docs, "per_query_seconds": per,
                          "batch_seconds": {str(t): s for t, s in batch.items()}}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
