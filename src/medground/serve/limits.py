"""Limits enforced before any work: request size while reading, JSON shape before parsing, Host.

``BodyLimit`` is a plain ASGI middleware. A declared ``Content-Length`` over the cap is refused
(413) without reading a byte of the body; a body without one is read only up to the cap, then
refused. A body within the cap is scanned once for nesting depth (a bracket bomb makes Python's
JSON parser recurse) before it reaches the route, so no model and no pydantic object is built for
it. With the cap in the tens of kilobytes, parsing what passes takes microseconds on the event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_BODY_BYTES = 64 * 1024  # the longest consultation the API accepts (40 turns) fits many times over
MAX_JSON_DEPTH = 16  # the API's bodies nest 3 levels deep


def json_depth(body: bytes) -> int:
    """Deepest nesting of ``[`` / ``{`` outside strings (a linear scan, no parsing)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


class BodyLimit:
    def __init__(self, app: Any, max_bytes: int = MAX_BODY_BYTES, max_depth: int = MAX_JSON_DEPTH):
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.max_bytes
            except ValueError:
                await _refuse(send, 400, "Content-Length is not a number")
                return
            if too_big:
                await _refuse(send, 413, f"request body of {int(declared)} bytes; at most {self.max_bytes} accepted")
                return
        chunks: list[bytes] = []
        size = 0
        first: list[dict] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left: let the app see it
                first.append(message)
                break
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                await _refuse(send, 413, f"request body over {self.max_bytes} bytes")
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body:
            # JSON over HTTP is UTF-8 (RFC 8259): a UTF-16 or UTF-32 body (which Python's parser would
            # accept) could hide its brackets from the depth scan. A raw NUL byte is never valid JSON,
            # and every UTF-16/32 encoding of ASCII text has them.
            try:
                body.decode("utf-8")
                utf8 = b"\x00" not in body
            except UnicodeDecodeError:
                utf8 = False
            if not utf8:
                await _refuse(send, 400, "request body is not UTF-8 JSON")
                return
        if body and json_depth(body) > self.max_depth:
            await _refuse(send, 422, f"request JSON is nested deeper than {self.max_depth} levels")
            return
        replay = [{"type": "http.request", "body": body, "more_body": False}, *first]

        async def replayed() -> dict:
            return replay.pop(0) if replay else await receive()

        await self.app(scope, replayed, send)


async def _refuse(send: Callable, status: int, detail: str) -> None:
    payload = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})
