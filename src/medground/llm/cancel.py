"""Cooperative cancellation of a request's model calls.

A server answering a client that went away sets the request's cancel event; every model call
made on that request's behalf checks it first and raises :class:`RequestCancelled`, so a
pipeline stops at its next call (a single llama.cpp call, bounded by its max_tokens, is not
interrupted). The event travels in a context variable, which ``asyncio.to_thread`` copies into
the worker thread that runs the pipeline.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar

_CANCEL: ContextVar[threading.Event | None] = ContextVar("medground_cancel", default=None)


class RequestCancelled(RuntimeError):
    """The request these model calls served was cancelled (its client went away)."""


def bind(event: threading.Event) -> None:
    """Make ``event`` the cancel signal of model calls made in this context from now on."""
    _CANCEL.set(event)


def check() -> None:
    event = _CANCEL.get()
    if event is not None and event.is_set():
        raise RequestCancelled("the request was cancelled before this model call")
