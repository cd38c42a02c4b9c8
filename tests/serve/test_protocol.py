"""A client that trickles its request head is closed after the deadline; a prompt one is served,
and a keep-alive connection gets the same deadline for its next request."""

import socket
import time

import pytest

pytest.importorskip("uvicorn")

from medground.serve.api import ServeSettings, create_app
from medground.serve.protocol import with_head_timeout

from .test_api import FakePipe


@pytest.fixture(scope="module")
def port(serve_app):
    return serve_app(create_app(ServeSettings(), build=FakePipe), http=with_head_timeout(1.0), timeout_keep_alive=30)


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """The server closes the connection within ``seconds`` (what is still unread is drained)."""
    deadline = time.perf_counter() + seconds
    try:
        while (left := deadline - time.perf_counter()) > 0:
            sock.settimeout(left)
            if sock.recv(4096) == b"":
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return False


def test_a_trickled_head_is_closed_after_the_deadline(port):
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: a")
    started = time.perf_counter()
    assert _closed_within(slow, 5.0)
    assert 0.5 < time.perf_counter() - started < 4.0


def test_a_prompt_request_is_served_and_keep_alive_gets_the_same_deadline(port):
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
    conn.settimeout(5)
    assert conn.recv(4096).startswith(b"HTTP/1.1 200")
    conn.sendall(b"GET /health HTTP/1.1\r\nHost: loc")  # the next head, left unfinished
    assert _closed_within(conn, 5.0)
