"""Serving fixtures: an app behind a real uvicorn on a free 127.0.0.1 port, in a thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest


@contextmanager
def served(app: Any, **config: Any) -> Iterator[int]:
    """Yields the port; the server stops when the block ends."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(100):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(5)


@pytest.fixture(scope="module")
def serve_app():
    """``serve_app(app, **uvicorn_config) -> port``; every server it starts stops with the module."""
    with ExitStack() as stack:
        yield lambda app, **config: stack.enter_context(served(app, **config))
