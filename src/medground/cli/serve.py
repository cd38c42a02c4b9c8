"""`medground serve`: the HTTP API and the consultation page on one port."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(add_completion=False)


@app.command()
def serve(
    pipeline: list[str] = typer.Option(
        [], "--pipeline", "-p",
        help="NAME=CONFIG (repeat); CONFIG is a shipped config's name or a YAML path, and NAME alone means "
             "NAME=NAME. Default: rag=rag, consult=drugrag (the same configs `medground ask -p rag` uses)."),
    default: Optional[str] = typer.Option(None, help="Pipeline for /v1/ask and /v1/search (default: rag or the first)."),
    consult: Optional[str] = typer.Option(None, help="Pipeline behind /v1/consult and the page (default: consult or the first)."),
    host: str = typer.Option("127.0.0.1", help="Address to bind; 0.0.0.0 exposes it to the network."),
    port: int = typer.Option(8000, min=1, max=65535),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="A Host header to answer besides localhost names (repeat), e.g. the machine's "
                                 "name when serving on 0.0.0.0; '*' answers any (DNS rebinding then possible)."),
    max_connections: int = typer.Option(None, min=1, help="Open connections at most; more are answered 503 "
                                                          "(default: 512, or half the file-descriptor limit if lower)."),
    head_timeout: float = typer.Option(10.0, min=0.5, help="Seconds a connection may take to send a request's "
                                                           "line and headers; slower ones are closed."),
) -> None:
    """Serve /v1/ask, /v1/consult, /v1/search and the consultation web page at /."""
    import uvicorn
    from pydantic import ValidationError

    from medground.serve.api import ServeSettings, create_app

    fields: dict = {}
    if pipeline:
        from medground.configio import ConfigError
        from medground.pipelines.config import resolve_pipeline

        named: dict[str, Path] = {}
        for pair in pipeline:
            name, sep, spec = pair.partition("=")
            spec = spec if sep else name
            if not name.strip():
                raise typer.BadParameter(f"expected NAME=CONFIG or NAME, got {pair!r}", param_hint="--pipeline")
            try:
                named[name.strip()] = resolve_pipeline(spec)
            except ConfigError as exc:
                raise typer.BadParameter(str(exc), param_hint="--pipeline") from None
        first = next(iter(named))
        fields = {"pipelines": named, "default": "rag" if "rag" in named else first,
                  "consult": "consult" if "consult" in named else first}
    if default:
        fields["default"] = default
    if consult:
        fields["consult"] = consult
    if allow_host:
        fields["allowed_hosts"] = [*ServeSettings.model_fields["allowed_hosts"].default_factory(), *allow_host]
    try:
        settings = ServeSettings(**fields)
    except ValidationError as exc:
        raise typer.BadParameter(str(exc)) from None
    typer.echo(f"MedGround on http://{host}:{port}/  (pipelines: {', '.join(settings.pipelines)}; "
               f"built on first request)")
    # A connection idle between requests is closed after 5 s, one that trickles its request head
    # after head_timeout s; past the connection cap uvicorn answers 503 at once, so slow clients
    # cannot use up the process's file descriptors.
    import resource

    from medground.serve.protocol import with_head_timeout

    if max_connections is None:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        max_connections = max(16, min(512, soft // 2)) if soft > 0 else 512
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning", timeout_keep_alive=5,
                limit_concurrency=max_connections, http=with_head_timeout(head_timeout))
