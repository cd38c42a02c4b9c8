"""`medground <noun> <verb>`: the command groups live beside the code they drive."""

from __future__ import annotations

import importlib
import logging
import os

import typer

app = typer.Typer(
    name="medground",
    help="Grounded medical question answering: cited answers and honest benchmarks.",
    no_args_is_help=True,
    add_completion=False,
)

# (module, attribute, name, help). A group whose optional extra is not installed is left out.
_GROUPS: list[tuple[str, str, str, str]] = [
    ("medground.cli.corpus", "data_app", "data", "Pull and verify the source data."),
    ("medground.cli.corpus", "corpus_app", "corpus", "Ingest sources into the chunk store; stats."),
    ("medground.cli.drugs", "app", "drugs", "The entity-oriented medicine database."),
    ("medground.cli.index", "app", "index", "Build and inspect retrieval indexes."),
    ("medground.cli.store", "app", "store", "The chunk store: SQLite or PostgreSQL."),
    ("medground.cli.models", "app", "models", "Pull and list local model weights."),
    ("medground.cli.train", "app", "train", "LLM-feedback labels and a reranker fine-tuned on them."),
]

# Single commands (module, attribute, name): their module holds one typer app with one command.
_COMMANDS: list[tuple[str, str, str]] = [
    ("medground.cli.search", "app", "search"),
    ("medground.cli.ask", "ask_app", "ask"),
    ("medground.cli.ask", "demo_app", "demo"),
    ("medground.cli.eval", "eval_app", "eval"),
    ("medground.cli.eval", "sweep_app", "sweep"),
    ("medground.cli.eval", "report_app", "report"),
    ("medground.cli.eval", "coverage_app", "coverage"),
    ("medground.cli.eval", "attribution_app", "attribution"),
    ("medground.cli.serve", "app", "serve"),
]


def _optional_import(module: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        # Only a missing third-party extra is tolerated; a broken medground module is a bug.
        if exc.name and exc.name.split(".")[0] == "medground" and exc.name != module:
            raise
        logging.getLogger(__name__).debug("command group %s unavailable: %s", module, exc)
        return None


for _module, _attr, _name, _help in _GROUPS:
    _mod = _optional_import(_module)
    if _mod is not None:
        app.add_typer(getattr(_mod, _attr), name=_name, help=_help)

for _module, _attr, _name in _COMMANDS:
    _mod = _optional_import(_module)
    if _mod is not None:
        sub = getattr(_mod, _attr)
        for info in sub.registered_commands:
            app.command(_name, help=info.help)(info.callback)


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details.")) -> None:
    level = logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # bm25s sets its own logger to DEBUG when imported (after this runs): the handler's level,
    # not only the loggers', keeps library chatter out of normal output.
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)
    for name in ("bm25s", "httpx", "sentence_transformers", "faiss", "medground"):
        logging.getLogger(name).setLevel(level)
    if not verbose:
        # transformers' "Loading weights" bars follow huggingface_hub's switch, read at import.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def verbose() -> bool:
    """Whether `medground -v` was given (commands show per-file tables and notes only then)."""
    return logging.getLogger("medground").isEnabledFor(logging.INFO)


def exit_on_signals() -> None:
    """SIGTERM (and SIGHUP) end the process as SIGINT does, through SystemExit, so exit handlers
    run: the llama.cpp socket directory is removed and an embedded PostgreSQL is stopped. Their
    default action would kill the process with both left behind. (uvicorn installs its own
    handlers while it serves and restores these after.)"""
    import signal
    import sys

    def leave(signum: int, _frame: object) -> None:
        sys.exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, leave)


def main() -> None:
    """The console entry point: errors that name what the user must fix (an unreachable database)
    are printed as one line instead of a traceback, wherever in a command they surface."""
    import sys

    from medground.store.postgres import StoreConnectionError

    exit_on_signals()
    try:
        app()
    except StoreConnectionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
