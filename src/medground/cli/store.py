"""`medground store migrate`: copy the SQLite chunk store into PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

app = typer.Typer(help="The chunk store: SQLite (embedded default) or PostgreSQL.", no_args_is_help=True)
console = Console(stderr=True)


@app.command()
def migrate(
    to: str = typer.Option(..., "--to", help="a postgresql:// URL, or 'postgres' for the embedded server"),
    source: str | None = typer.Option(None, "--from", help="the SQLite store (default: $MEDGROUND_HOME/store.sqlite)"),
    as_json: bool = typer.Option(False, "--json", help="print a JSON summary"),
) -> None:
    """Copy every ingested unit (manifest, documents, chunks) into Postgres, one transaction per
    unit; units already copied are skipped, so a killed migration resumes. The chunk fingerprint
    is unchanged, so indexes built from the SQLite store stay valid; dense vectors are written
    to pgvector by `MEDGROUND_STORE=URL medground index build --retrievers dense` (cached
    embeddings are reused, nothing is re-embedded)."""
    from medground import paths
    from medground.store.postgres import PgChunkStore, StoreConnectionError, migrate as copy_units
    from medground.store.chunks import ChunkStore
    from medground.store.settings import StoreSettings

    target_settings = StoreSettings.parse(to)
    if target_settings.backend != "postgres":
        console.print(f"[red]--to: expected a postgresql:// URL or 'postgres', got {to!r}[/red]")
        raise typer.Exit(2)
    src_path = paths.home() / "store.sqlite" if source is None else source
    if not Path(src_path).is_file():
        console.print(f"[red]--from: no SQLite store at {src_path}[/red]")
        raise typer.Exit(2)
    try:
        target = PgChunkStore(target_settings.url)
    except StoreConnectionError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from None
    from tqdm import tqdm

    with ChunkStore(src_path) as src, target:
        with tqdm(total=src.count(), desc="copying chunks", unit="chunk", disable=as_json, mininterval=1.0) as bar:
            counts = copy_units(src, target, progress=bar.update)
        same = src.fingerprint() == target.fingerprint()
        summary = {**counts, "chunks_total": target.count(), "fingerprint": target.fingerprint(),
                   "fingerprint_matches_source": same, "target": target.path}
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        console.print(f"copied {counts['units']} units ({counts['chunks']} chunks), {counts['skipped']} already there; "
                      f"{summary['chunks_total']} chunks in {target.path}; fingerprint "
                      f"{'matches' if same else 'DIFFERS from'} the SQLite store's")
    if not same:
        raise typer.Exit(1)
