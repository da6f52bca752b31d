"""Bounds on what one HTTP request can cost the server, and on what one page shows.

`BodyLimit` caps request bodies (1 MiB by default): a declared `Content-Length` over the
cap is refused before a byte is read; a chunked body is counted while it streams in and
refused the moment it passes the cap, so nothing is buffered beyond it. The answer is a
413 that names the limit (JSON under /api/, text elsewhere: the login form too).

`clip` cuts model-written text shown on pages (a 10 MB argument must not make a 20 MB
page); the page then states the full length and links to `/requests/{id}/raw`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports the defaults here without loading starlette
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_MAX_BODY = 1 << 20  # bytes
PAGE_TEXT_LIMIT = 20_000  # characters of one model-written block shown on a page


class BodyTooLarge(Exception):
    """Raised from `receive` when a body passes the cap; answered with a 413."""


def _limit_text(limit: int) -> str:
    if limit % (1 << 20) == 0:
        return f"{limit // (1 << 20)} MiB"
    if limit % 1024 == 0:
        return f"{limit // 1024} KiB"
    return f"{limit} bytes"


class BodyLimit:
    """Pure ASGI middleware: request bodies larger than `max_bytes` get a 413."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1 (got {max_bytes})")
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self.refuse(scope, send)
            return
        received = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except BodyTooLarge:
            if started:  # the app answered before reading it all: nothing more to say
                return
            await self.refuse(scope, send)

    async def refuse(self, scope: Scope, send: Send) -> None:
        message = (
            f"the request body is too large: at most {_limit_text(self.max_bytes)} "
            f"({self.max_bytes} bytes) are accepted"
        )
        if str(scope.get("path", "")).startswith("/api/"):
            body = json.dumps({"error": "too_large", "message": message}).encode()
            kind = b"application/json"
        else:
            body = (message + "\n").encode()
            kind = b"text/plain; charset=utf-8"
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", kind),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


@dataclass(frozen=True, slots=True)
class Clipped:
    """Text cut for a page: what is shown, the full length, and whether it was cut."""

    text: str
    total: int
    cut: bool


def clip(text: str, limit: int = PAGE_TEXT_LIMIT) -> Clipped:
    if len(text) <= limit:
        return Clipped(text, len(text), False)
    return Clipped(text[:limit], len(text), True)


__all__ = ["DEFAULT_MAX_BODY", "PAGE_TEXT_LIMIT", "BodyLimit", "BodyTooLarge", "Clipped", "clip"]
