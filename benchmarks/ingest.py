"""Ingest benchmark: read + chunk + store the six OpenStax books into a fresh store.

    python benchmarks/ingest.py [--sources textbooks|all] [--max-tokens 256] [--mode structure]

Prints a table and writes benchmarks/results/ingest.json (machine info and the command
included). Target: the six books from scratch in under 2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from medground import paths
from medground.corpus.chunking import ChunkerSettings
from medground.corpus.ingest import ingest, parse_sources
from medground.store.chunks import ChunkStore

RESULTS = Path(__file__).resolve().parent / "results" / "ingest.json"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", default="textbooks")
    ap.add_argument("--data", default=None)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--mode", default="structure")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    data = paths.data_root(args.data)
    specs = parse_sources(args.sources.split(","), data)
    settings = ChunkerSettings(mode=args.mode, max_tokens=args.max_tokens)
    load_before = os.getloadavg()
    with (
        tempfile.TemporaryDirectory() as tmp,
        ChunkStore(Path(tmp) / "store.sqlite") as store,
    ):
        cpu0, t0 = time.process_time(), time.perf_counter()
        first = ingest(store, specs, settings, progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        t1 = time.perf_counter()
        second = ingest(store, specs, settings, progress=False)
        noop = time.perf_counter() - t1
        stats = store.stats()
        store_mb = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 1e6
    result = {
        "benchmark": "ingest",
        "command": "python benchmarks/ingest.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
        "sources": args.sources,
        "chunker": settings.model_dump(),
        "units": first.ingested,
        "documents": stats.documents,
        "chunks": stats.chunks,
        "tokens": stats.tokens,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "chunks_per_s": round(stats.chunks / wall, 1),
        "reingest_noop_s": round(noop, 3),
        "reingest_unchanged_units": second.unchanged,
        "store_mb": round(store_mb, 1),
        "per_unit_s": {Path(u.unit).name: round(u.seconds, 2) for u in first.units},
        "stats": stats.to_dict(),
    }
    table = Table(
        "measure",
        "value",
        title=f"ingest {args.sources} ({args.mode}, max {args.max_tokens})",
    )
    for key in (
        "units",
        "documents",
        "chunks",
        "tokens",
        "wall_s",
        "cpu_s",
        "chunks_per_s",
        "reingest_noop_s",
        "store_mb",
    ):
        table.add_row(key, str(result[key]))
    table.add_row(
        "books / chapters / sections",
        f"{stats.books} / {stats.chapters} / {stats.sections}",
    )
    table.add_row(
        "token histogram",
        ", ".join(f"{k}:{v}" for k, v in stats.token_histogram.items()),
    )
    table.add_row(
        "load avg before / after",
        f"{result['machine']['loadavg_before']} / {result['machine']['loadavg_after']}",
    )
    Console().print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
