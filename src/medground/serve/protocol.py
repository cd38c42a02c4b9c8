"""uvicorn's h11 protocol with a deadline for each request's head.

uvicorn closes a connection idle *between* requests (``timeout_keep_alive``) but waits forever for
a request line and headers that trickle in a byte at a time: enough such clients use up the
connection cap or the process's file descriptors, and then nobody is served. Here every
connection must deliver a whole request head within ``HEAD_TIMEOUT_S`` of opening (or of the last
response); otherwise it is closed.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0


class HeadDeadlineH11Protocol(H11Protocol):
    head_timeout_s = HEAD_TIMEOUT_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_deadline: asyncio.TimerHandle | None = None
        self._arm_head_deadline()

    def _arm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
        self._head_deadline = self.loop.call_later(self.head_timeout_s, self._head_overdue)

    def _head_overdue(self) -> None:
        waiting_for_head = self.cycle is None or self.cycle.response_complete
        if waiting_for_head and not self.transport.is_closing():
            self.transport.close()

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and not self.cycle.response_complete and self._head_deadline is not None:
            self._head_deadline.cancel()  # a whole head arrived: the request runs as long as it needs
            self._head_deadline = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_deadline()  # the next request on this connection gets the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
        super().connection_lost(exc)


def with_head_timeout(seconds: float) -> type[HeadDeadlineH11Protocol]:
    """The protocol class with another deadline (tests use a short one)."""
    return type("HeadDeadlineH11Protocol", (HeadDeadlineH11Protocol,), {"head_timeout_s": seconds})
