"""Retrieval quality of the first stages, fusion and rerankers (→ results/retrieval_quality.json).

1. PubMedQA (known-item search). Corpus = the 1,000 expert-labelled abstracts of
   ori_pqal.json, one chunk per CONTEXTS paragraph (title left empty: PubMedQA questions are
   often the paper's title, so the chunk does not get it). Query = QUESTION; gold = its own
   abstract. Passages are collapsed to documents (first occurrence) before scoring:
   Recall@1/5/10 and MRR@10. A reranked configuration returns only its pool (``--candidates``
   passages, reordered), which is why the pool is large enough to cover 10 abstracts.
2. MedQA-US (4 options, test) and MMLU-Med (test) over the OpenStax textbook chunks (read and
   chunked in-process with the project's reader and default chunker). Query = the question stem.
   answer@k = share of questions whose top-k passages contain the normalized gold option text
   (lowercase, non-alphanumerics → space, whole-word match). distractor@k = the same for the
   wrong options, averaged: a retriever that targets the answer shows answer@k > distractor@k.
   answer@corpus = share whose gold option text occurs anywhere in the corpus: the ceiling of
   answer@k (most MedQA answers are not spelled out in introductory textbooks).
   Seeded samples (``--sample``, ``--seed``).

Every configuration runs through ``RetrievalEngine`` with first-stage results memoized per
query (each retriever searches each question once; fusion and reranking run per config).

    python benchmarks/retrieval_quality.py [--sample 200] [--candidates 20] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from medground.eval.evaluators import RetrievalEvaluator, answer_hits, known_item, mcq_items
from medground.eval.testbeds import pubmedqa_known_item
from medground.paths import data_root
from medground.retrieve.base import check_query
from medground.retrieve.engine import RetrievalEngine, RetrieveSettings
from medground.schema import Chunk, Passage

console = Console(stderr=True)
RESULTS = Path(__file__).parent / "results" / "retrieval_quality.json"


class Memo:
    """A Retriever whose results were computed up front in one batch (k = the largest asked)."""

    def __init__(self, inner, queries: Sequence[str], k: int, desc: str) -> None:
        self.name = inner.name
        self.k = k
        self.results: dict[str, list[Passage]] = {}
        t0 = time.perf_counter()
        unique = list(dict.fromkeys(check_query(q) for q in queries))  # keyed as the engine sees them
        for i in tqdm(range(0, len(unique), 64), desc=desc, unit="batch", file=sys.stderr):
            batch = unique[i : i + 64]
            for q, ps in zip(batch, inner.batch_search(batch, k=k), strict=True):
                self.results[q] = ps
        self.seconds_per_query = (time.perf_counter() - t0) / max(len(unique), 1)

    def search(self, query: str, k: int = 10) -> list[Passage]:
        return [Passage(p.chunk, p.score, p.source, p.rank) for p in self.results[check_query(query)][:k]]

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        return [self.search(q, k) for q in queries]


# --- corpora (PubMedQA's: eval/testbeds.pubmedqa_known_item) -----------------------------------
def textbooks(root: Path) -> list[Chunk]:
    from medground.corpus.chunking import make_chunker
    from medground.corpus.openstax import OpenStaxReader

    reader, chunker = OpenStaxReader(), make_chunker()
    chunks: list[Chunk] = []
    for unit in tqdm(reader.discover(root / "corpora/openstax"), desc="read+chunk textbooks", file=sys.stderr):
        for doc in reader.read(unit):
            chunks.extend(chunker.chunk(doc))
    return chunks


def mcq(root: Path, rel: str, n: int, seed: int) -> list[dict]:
    rows = [json.loads(line) for line in (root / rel).read_text().splitlines() if line.strip()]
    return random.Random(seed).sample(rows, min(n, len(rows)))


# --- first stages ------------------------------------------------------------------------------
def first_stages(chunks: list[Chunk], names: Sequence[str], threads: int) -> dict:
    from medground.index.fingerprint import ChunkList

    source = ChunkList(chunks)
    out, build = {}, {}
    for name in names:
        t0 = time.perf_counter()
        if name == "bm25":
            from medground.index.bm25 import BM25Index, BM25Retriever

            out[name] = BM25Retriever(BM25Index.build(chunks), source)
        elif name == "dense":
            from medground.index.dense import DenseIndex, DenseRetriever, DenseSettings
            from medground.index.embedders import EmbedderSettings, load_embedder

            emb = load_embedder(EmbedderSettings(threads=threads))
            out[name] = DenseRetriever(DenseIndex.build(chunks, emb, DenseSettings(embedder=emb.settings)), emb, source)
        elif name == "splade":
            from medground.index.splade import (
                SpladeEncoder,
                SpladeIndex,
                SpladeRetriever,
                SpladeSettings,
            )

            enc = SpladeEncoder(SpladeSettings(threads=threads))
            out[name] = SpladeRetriever(SpladeIndex.build(chunks, enc), enc, source)
        build[name] = round(time.perf_counter() - t0, 1)
        console.print(f"built {name} over {len(chunks)} chunks in {build[name]} s")
    return {"retrievers": out, "build_seconds": build}


def rerankers(names: Sequence[str], candidates: int, threads: int) -> dict:
    import torch

    torch.set_num_threads(threads)
    out = {}
    if "bi-encoder" in names:
        from medground.retrieve.rerank import make_bi_encoder

        out["bi-encoder"] = make_bi_encoder(candidates=candidates)
    if "maxsim" in names:
        from medground.retrieve.maxsim import make_maxsim

        out["maxsim"] = make_maxsim(candidates=candidates)
    return out


def configs(first: Sequence[str], reranks: Sequence[str]) -> dict[str, dict]:
    c: dict[str, dict] = {n: {"retrievers": [n], "fusion": None} for n in first}
    if {"bm25", "dense"} <= set(first):
        c["hybrid-rrf"] = {"retrievers": ["bm25", "dense"], "fusion": "rrf"}
        c["hybrid-norm"] = {"retrievers": ["bm25", "dense"], "fusion": "norm"}
    if {"bm25", "dense", "splade"} <= set(first):
        c["bm25+dense+splade-rrf"] = {"retrievers": ["bm25", "dense", "splade"], "fusion": "rrf"}
    base = "hybrid-rrf" if "hybrid-rrf" in c else "bm25"
    for r in reranks:
        c[f"bm25→{r}"] = {**c["bm25"], "rerank": r}
        if base != "bm25":
            c[f"{base}→{r}"] = {**c[base], "rerank": r}
    return c


def run(config: dict, memo: dict, rr: dict, queries: Sequence[str], top: int, k: int, desc: str):
    s = RetrieveSettings(**{**config, "rerank": None}, top=top, final_k=k)
    engine = RetrievalEngine(s, retrievers=memo, reranker=rr.get(config.get("rerank")))
    ranked, t = [], 0.0
    for q in tqdm(queries, desc=desc, file=sys.stderr, leave=False):
        ranked.append(engine.ranked(q))
        t += sum(engine.timings.values())
    first = sum(memo[n].seconds_per_query for n in config["retrievers"])
    return ranked, 1000 * (t / max(len(queries), 1) + first)


# --- main --------------------------------------------------------------------------------------
def run_pubmedqa(args, root: Path, rr: dict) -> dict:
    chunks, questions = pubmedqa_known_item(root)
    qs, gold = [q for _, q in questions], [pmid for pmid, _ in questions]
    fs = first_stages(chunks, args.pubmedqa_retrievers, args.threads)
    memo = {n: Memo(r, qs, args.top, f"pubmedqa {n}") for n, r in fs["retrievers"].items()}
    for r in rr.values():
        r.candidates = args.candidates
    results = {}
    for name, cfg in configs(list(memo), list(rr)).items():
        ranked, ms = run(cfg, memo, rr, qs, args.top, args.k, f"pubmedqa {name}")
        results[name] = {**known_item(ranked, gold), "ms_per_query": ms}
        console.print(f"pubmedqa {name}: {results[name]}")
    corpus = {"chunks": len(chunks), "questions": len(qs), "build_seconds": fs["build_seconds"],
              "reranker_pool": args.candidates}
    return {"pubmedqa": {"corpus": corpus, "results": results}}


def run_textbooks(args, root: Path, rr: dict) -> dict:
    tchunks = textbooks(root)
    sets = {"medqa": mcq(root, "benchmarks/medagents/medqa/test.jsonl", args.sample, args.seed),
            "mmlu_med": mcq(root, "benchmarks/medagents/mmlu/test.jsonl", args.sample, args.seed)}
    allq = [r["question"] for rows in sets.values() for r in rows]
    fs = first_stages(tchunks, args.textbook_retrievers, args.threads)
    memo = {n: Memo(r, allq, args.top, f"textbooks {n}") for n, r in fs["retrievers"].items()}
    for r in rr.values():
        r.candidates = args.textbook_candidates
        r._cache.clear()  # another corpus: free the PubMedQA passage vectors
    out: dict = {}
    texts = [c.text for c in tchunks]
    for ds, rows in sets.items():
        found = RetrievalEvaluator.answer_in_corpus(mcq_items(rows), texts)
        ceiling = found["k"] / found["n"]
        corpus = {"chunks": len(tchunks), "build_seconds": fs["build_seconds"], "sample": len(rows),
                  "seed": args.seed, "reranker_pool": args.textbook_candidates, "answer@corpus": ceiling}
        out[ds] = {"corpus": corpus, "results": {}}
    for name, cfg in configs(list(memo), list(rr)).items():
        for ds, rows in sets.items():
            ranked, ms = run(cfg, memo, rr, [r["question"] for r in rows], args.top, args.k, f"{ds} {name}")
            res = {**answer_hits(ranked, rows, 1), **answer_hits(ranked, rows, args.k), "ms_per_query": ms}
            out[ds]["results"][name] = res
            console.print(f"{ds} {name}: {res}")
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="pubmedqa,textbooks",
                    help="which parts to run; parts not run keep their earlier results in --out")
    ap.add_argument("--sample", type=int, default=200, help="MedQA / MMLU-Med questions each (seeded sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--top", type=int, default=100, help="candidates per retriever")
    ap.add_argument("--candidates", type=int, default=30, help="reranker pool, PubMedQA")
    ap.add_argument("--textbook-candidates", type=int, default=10, help="reranker pool, textbooks")
    ap.add_argument("--k", type=int, default=6, help="passages for answer@k")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--pubmedqa-retrievers", default="bm25,dense,splade")
    ap.add_argument("--textbook-retrievers", default="bm25",
                    help="dense/SPLADE over all six textbooks take tens of minutes on 2 shared CPU cores")
    ap.add_argument("--rerankers", default="bi-encoder,maxsim")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    split = lambda s: [x for x in s.split(",") if x]
    args.pubmedqa_retrievers, args.textbook_retrievers = split(args.pubmedqa_retrievers), split(args.textbook_retrievers)
    root = data_root()
    rr = rerankers(split(args.rerankers), args.candidates, args.threads)
    report = json.loads(args.out.read_text()) if args.out.is_file() else {"benchmark": "retrieval_quality", "parts": {}}
    report.setdefault("parts", {})
    for part in split(args.parts):
        t0 = time.perf_counter()
        datasets = {"pubmedqa": run_pubmedqa, "textbooks": run_textbooks}[part](args, root, rr)
        run_info = {
            "command": "python " + " ".join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])]),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": {"cpu_count": os.cpu_count(), "threads": args.threads, "python": platform.python_version(),
                        "platform": platform.platform()},
            "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "wall_seconds": round(time.perf_counter() - t0, 1),
        }
        for ds, body in datasets.items():
            report["parts"][ds] = {**body, "run": run_info}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")  # after each part
    print_table(report, args.k)
    console.print(f"wrote {args.out}")
    return report


def print_table(report: dict, k: int) -> None:
    res = {ds: report["parts"].get(ds, {}).get("results", {}) for ds in ("pubmedqa", "medqa", "mmlu_med")}
    names = list(dict.fromkeys([*res["pubmedqa"], *res["medqa"]]))
    t = Table(title="Retrieval quality (PubMedQA known-item: doc-level; MedQA / MMLU-Med: gold option text in passages)")
    cols = ["R@1", "R@5", "R@10", "MRR@10"]
    for c in ["config", *(f"PQA {c}" for c in cols), "PQA ms/q", f"MedQA ans@{k}", f"MedQA dis@{k}",
              f"MMLU ans@{k}", f"MMLU dis@{k}"]:
        t.add_column(c, justify="right" if c != "config" else "left")
    f = lambda d, key: f"{d[key]:.3f}" if d and key in d else "–"
    for n in names:
        p, m, u = res["pubmedqa"].get(n), res["medqa"].get(n), res["mmlu_med"].get(n)
        t.add_row(n, *(f(p, c) for c in cols), f"{p['ms_per_query']:.1f}" if p else "–",
                  f(m, f"answer@{k}"), f(m, f"distractor@{k}"), f(u, f"answer@{k}"), f(u, f"distractor@{k}"))
    Console(width=200).print(t)
    for ds in ("medqa", "mmlu_med"):
        corpus = report["parts"].get(ds, {}).get("corpus", {})
        if "answer@corpus" in corpus:
            console.print(f"{ds}: gold text anywhere in the corpus (ceiling of ans@k) {corpus['answer@corpus']:.3f}")
    for ds, key in (("pubmedqa", "MRR@10"), ("medqa", f"answer@{k}"), ("mmlu_med", f"answer@{k}")):
        ranked = sorted(res[ds].items(), key=lambda kv: -kv[1][key])
        if len(ranked) >= 2:
            (a, da), (b, db) = ranked[0], ranked[1]
            line = (f"{ds}: best {a} ({key} {da[key]:.3f}), +{da[key] - db[key]:.3f} over {b}; "
                    f"plain bm25 {res[ds].get('bm25', {}).get(key, float('nan')):.3f}")
            hk = key.replace("answer", "hits")
            if hk != key and a != "bm25" and hk in da and hk in res[ds].get("bm25", {}):
                from medground.eval.evaluators import compare

                m = compare([c == "1" for c in da[hk]], [c == "1" for c in res[ds]["bm25"][hk]])
                line += f"; exact McNemar {a} vs bm25 p = {m.pvalue:.3g}"
            console.print(line)


if __name__ == "__main__":
    main()
