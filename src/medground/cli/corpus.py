"""`medground data ...` (pull / verify the pinned data) and `medground corpus ...` (ingest, stats)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from medground import paths
from medground.corpus.base import BadInputError

data_app = typer.Typer(
    help="Fetch and check the pinned data sources.", no_args_is_help=True
)
corpus_app = typer.Typer(
    help="Ingest sources into the chunk store and describe it.", no_args_is_help=True
)
_out = Console()
_err = Console(stderr=True)


def _fail(message: str, as_json: bool, code: int = 1) -> None:
    if as_json:
        print(json.dumps({"ok": False, "error": message}))
    else:
        _err.print(f"[red]error:[/red] {message}", highlight=False)
    raise typer.Exit(code)


@data_app.command("pull")
def data_pull(
    from_dir: Path | None = typer.Option(
        None, "--from", help="local directory holding the sources"
    ),
    to_dir: Path | None = typer.Option(
        None, "--to", help="data root to fill (default ~/.cache/medground/data)"
    ),
    source: list[str] = typer.Option(
        [], "--source", help="pin name (repeatable; default: all)"
    ),
    link: bool = typer.Option(
        False, "--link", help="symlink instead of copying (with --from)"
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Copy (--from DIR) or download the pinned sources, verifying each against its pin."""
    from medground.corpus.sources import PINS, copy_source, download_source, pin_named

    try:
        pins = [pin_named(s) for s in source] if source else list(PINS)
    except KeyError as exc:
        _fail(str(exc.args[0]), as_json)
    target = to_dir or Path.home() / ".cache" / "medground" / "data"
    done, failed = [], []
    for pin in pins:
        try:
            if from_dir is not None:
                dst = copy_source(pin, from_dir, target, link=link)
            else:
                dst = download_source(pin, target)
            done.append({"name": pin.name, "path": str(dst)})
            if not as_json:
                _out.print(f"[green]ok[/green] {pin.name} → {dst}", highlight=False)
        except (
            Exception
        ) as exc:  # one failed source must not hide the state of the others
            failed.append({"name": pin.name, "error": str(exc)})
            if not as_json:
                _err.print(f"[red]failed[/red] {exc}", highlight=False)
    if as_json:
        print(
            json.dumps(
                {"ok": not failed, "to": str(target), "pulled": done, "failed": failed},
                indent=2,
            )
        )
    if failed:
        raise typer.Exit(1)


@data_app.command("verify")
def data_verify(
    data: Path | None = typer.Option(
        None, "--data", help="data root (default: MEDGROUND_DATA / ../shared/data)"
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Check every file is readable (no LFS pointers, truncation, bad UTF-8) and the pins match."""
    from medground.corpus.filecheck import verify_tree
    from medground.corpus.sources import PINS, check_pin

    try:
        root = paths.data_root(data)
    except paths.DataNotFoundError as exc:
        _fail(str(exc), as_json)
    file_problems = [{"path": p.path, "problem": p.problem} for p in verify_tree(root)]
    pin_problems = [m for m in (check_pin(root, p) for p in PINS) if m]
    ok = not file_problems and not pin_problems
    if as_json:
        print(
            json.dumps(
                {
                    "ok": ok,
                    "data": str(root),
                    "file_problems": file_problems,
                    "pin_problems": pin_problems,
                    "pins": len(PINS),
                },
                indent=2,
            )
        )
    else:
        for p in file_problems:
            _err.print(f"[red]bad file[/red] {p['problem']}", highlight=False)
        for m in pin_problems:
            _err.print(f"[red]pin[/red] {m}", highlight=False)
        status = "[green]ok[/green]" if ok else "[red]problems found[/red]"
        _out.print(
            f"{status}: {root} ({len(PINS)} pinned sources, {len(file_problems)} bad files, "
            f"{len(pin_problems)} pin mismatches)",
            highlight=False,
        )
    if not ok:
        raise typer.Exit(1)


STORE_HELP = ("chunk store: a SQLite file or a postgresql:// URL ('postgres' = the embedded server; "
              "default: $MEDGROUND_STORE, else $MEDGROUND_HOME/store.sqlite)")


def _open_store(store: str | None, as_json: bool = False):
    from medground.store.postgres import StoreConnectionError
    from medground.store.settings import open_store

    try:
        return open_store(store)
    except StoreConnectionError as exc:
        _fail(str(exc), as_json)


@corpus_app.command("ingest")
def corpus_ingest(
    sources: list[str] = typer.Option(
        ["textbooks"],
        "--sources",
        "-s",
        help="'textbooks', 'all', or READER:PATH (repeatable; commas also separate)",
    ),
    data: Path | None = typer.Option(
        None, "--data", help="data root for the named source sets"
    ),
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    skip_bad: bool = typer.Option(
        False, "--skip-bad", help="list bad records and go on"
    ),
    max_tokens: int = typer.Option(256, "--max-tokens", min=8),
    min_tokens: int = typer.Option(32, "--min-tokens", min=0),
    mode: str = typer.Option(
        "structure", "--mode", help="structure | sentence | fixed"
    ),
    overlap_sentences: int = typer.Option(0, "--overlap-sentences", min=0),
    tokenizer: str | None = typer.Option(
        None, "--tokenizer", help="tokenizer.json or model dir"
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Read, chunk and store sources; unchanged units are skipped, changed ones replaced."""
    from pydantic import ValidationError

    from medground.corpus.chunking import ChunkerSettings
    from medground.corpus.ingest import ingest, parse_sources

    args = [part.strip() for s in sources for part in s.split(",") if part.strip()]
    try:
        settings = ChunkerSettings(
            mode=mode,
            max_tokens=max_tokens,
            min_tokens=min_tokens,
            overlap_sentences=overlap_sentences,
            tokenizer=tokenizer,
        )
        needs_data = any(a in ("textbooks", "all") for a in args)
        root = paths.data_root(data) if needs_data or data else Path.cwd()
        specs = parse_sources(args, root)
    except (ValidationError, ValueError, paths.DataNotFoundError) as exc:
        _fail(str(exc), as_json, 2)
    with _open_store(store, as_json) as st:
        try:
            report = ingest(
                st, specs, settings, skip_bad=skip_bad, progress=not as_json
            )
        except BadInputError as exc:
            _fail(
                f"{exc}\n(nothing of that unit was changed; --skip-bad ingests the rest)",
                as_json,
            )
        except Exception as exc:  # unknown reader, duplicate ids: say it plainly
            _fail(str(exc), as_json)
        if as_json:
            print(
                json.dumps(
                    {"ok": True, "store": str(st.path), **report.to_dict()}, indent=2
                )
            )
            return
        from medground.cli import verbose

        if verbose():  # one row per file: thousands for MedQuAD
            table = Table("unit", "reader", "status", "docs", "chunks", "s")
            for u in report.units:
                table.add_row(Path(u.unit).name, u.reader, u.status, str(u.documents), str(u.chunks),
                              f"{u.seconds:.1f}")
            _out.print(table)
        for b in report.bad_records[:20]:
            _err.print(f"[yellow]skipped[/yellow] {b.message}", highlight=False)
        if len(report.bad_records) > 20:
            _err.print(f"... and {len(report.bad_records) - 20} more bad records")
        _out.print(
            f"{report.ingested} ingested, {report.unchanged} unchanged, {report.failed} failed; "
            f"{st.count()} chunks in {st.path} ({report.seconds:.1f} s)"
            + ("" if verbose() else "; medground -v corpus ingest lists every file"),
            highlight=False,
        )


@corpus_app.command("stats")
def corpus_stats(
    store: str | None = typer.Option(None, "--store", help=STORE_HELP),
    corpus: list[str] = typer.Option(
        [], "--corpus", help="restrict to these corpora (repeatable)"
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Books, chapters, sections, chunks, a token histogram and per-corpus counts."""
    with _open_store(store, as_json) as st:
        s = st.stats(corpus or None)
        fingerprint = st.fingerprint(corpus or None)
    if as_json:
        print(json.dumps({**s.to_dict(), "fingerprint": fingerprint}, indent=2))
        return
    _out.print(
        f"books {s.books} · chapters {s.chapters} · sections {s.sections} · documents "
        f"{s.documents} · chunks {s.chunks} · tokens {s.tokens} "
        f"(short {s.short_chunks}, oversized {s.oversized_chunks})",
        highlight=False,
    )
    hist = Table("tokens", "chunks")
    for label, n in s.token_histogram.items():
        hist.add_row(label, str(n))
    _out.print(hist)
    per = Table("corpus", "documents", "chunks", "tokens")
    for name, c in s.per_corpus.items():
        per.add_row(name, str(c.documents), str(c.chunks), str(c.tokens))
    _out.print(per)
