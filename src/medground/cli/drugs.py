"""`medground drugs build|stats|search`: the entity-oriented medicine database."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from medground import paths

app = typer.Typer(help="The medicine database: drugs → attributes (RagPULSE-style).",
                  no_args_is_help=True)
console = Console()

DbOption = typer.Option(None, "--db", help="SQLite file (default: $MEDGROUND_HOME/drugs.sqlite)")


@app.command()
def build(
    data: Path | None = typer.Option(None, "--data", help="shared data directory"),
    db: Path | None = DbOption,
    as_json: bool = typer.Option(False, "--json", help="print the stats as JSON"),
) -> None:
    """Build the database from the Pharmacology book tables and the FDA label sections."""
    from medground.corpus.drug_builders import build_catalog
    from medground.store.drugs import DrugStore

    root = paths.data_root(data)
    with console.status("reading drug tables and labels…", spinner="dots"):
        catalog = build_catalog(root)
    with DrugStore(db) as store:
        store.build(catalog)
        stats = store.stats()
        where = store.path
    # The consultation reader's lay vocabulary is mined from the same data (~9 s): built here,
    # ahead of use, so the first consultation does not pay for it.
    from medground.corpus.lay_vocabulary import load_vocabulary

    with console.status("mining the lay vocabulary…", spinner="dots"):
        load_vocabulary(root)
    if as_json:
        typer.echo(json.dumps({"path": str(where), **stats.to_dict()}, indent=2))
        return
    console.print(f"built {where}: {stats.drugs} drugs, {stats.attributes} attributes")
    from medground.cli import verbose

    if not verbose():
        if catalog.unknown_headings or catalog.problems:
            console.print(f"  {len(catalog.unknown_headings)} unknown headings and {len(catalog.problems)} notes "
                          "(medground -v drugs build lists them)")
        return
    for u in catalog.unknown_headings:
        console.print(f"  [yellow]unknown heading[/] {u.heading!r} in {u.source}")
    for p in catalog.problems:
        console.print(f"  [yellow]note[/] {p}")


@app.command()
def stats(
    db: Path | None = DbOption,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Counts: drugs, attributes per type, drugs with ≥ 4 attribute types, per source."""
    from medground.store.drugs import DrugStore

    with DrugStore(db) as store:
        store.require_built()
        s = store.stats()
    if as_json:
        typer.echo(json.dumps(s.to_dict(), indent=2))
        return
    table = Table(title=f"{s.drugs} drugs, {s.attributes} attributes, "
                        f"{s.drugs_with_4plus_types} with ≥4 attribute types")
    table.add_column("count of")
    table.add_column("n", justify="right")
    for group in ("attributes_by_type", "names_by_kind", "drugs_by_source",
                  "attributes_by_source"):
        for key, n in getattr(s, group).items():
            table.add_row(f"{group}: {key}", str(n))
    console.print(table)


@app.command()
def audit(
    db: Path | None = DbOption,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Conflicts in the medicine database: a brand under two generics, a name of two drugs,
    near-duplicate drugs, drugs whose entries describe only a local (eye, ear, skin) product.
    Exits 1 when there is an error."""
    from medground.corpus.drug_audit import audit as run_audit
    from medground.drug_schema import load_drug_ner_lexicon
    from medground.store.drugs import DrugStore

    with DrugStore(db) as store:
        store.require_built()
        findings = run_audit(store.drugs(), lexicon=load_drug_ner_lexicon())
    errors = sum(f.severity == "error" for f in findings)
    if as_json:
        typer.echo(json.dumps({"errors": errors, "findings": [f.to_dict() for f in findings]}, indent=2))
    else:
        table = Table(title=f"{len(findings)} findings, {errors} errors")
        for col in ("severity", "kind", "name", "detail"):
            table.add_column(col)
        for f in findings:
            table.add_row(f.severity, f.kind, f.name, f.detail)
        console.print(table)
    if errors:
        raise typer.Exit(1)


@app.command()
def search(
    keywords: str = typer.Argument(..., help='e.g. "ibuprofen side effects"'),
    k: int = typer.Option(5, "--k", min=1),
    db: Path | None = DbOption,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Entity-first search: the drug, then its attributes that fit the keywords."""
    from medground.store.drugs import DrugStore
    from medground.retrieve.drugs import DrugRetriever

    with DrugStore(db) as store:
        hits = DrugRetriever(store).search(keywords, k)
    if as_json:
        out = [{"drug_id": h.drug.drug_id, "generic_name": h.drug.generic_name,
                "brand_names": h.drug.brand_names, "score": round(h.score, 4),
                "matched": h.matched,
                "attribute": asdict(h.attribute) | {"type": h.attribute.type.value}
                if h.attribute else None} for h in hits]
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    if not hits:
        console.print("no match")
    for h in hits:
        kind = h.attribute.type.value if h.attribute else "-"
        console.print(f"[bold]{h.drug.display_name}[/] [cyan]{kind}[/] {h.score:.3f} "
                      f"[dim]({h.matched})[/]")
        if h.attribute:
            console.print("  " + h.attribute.text[:300].replace("\n", "; "))
