"""Live updates: one thread waits on the store's events feed and wakes the SSE streams.

PostgreSQL's `wait_for_event` is LISTEN/NOTIFY, so pages hear of a decision at once;
SQLite polls. `GET /api/events?after=SEQ&wait=S` streams events as server-sent events
(`id:` = seq, `event:` = kind, `data:` = the event JSON) for up to S seconds (default 25),
then ends; EventSource reconnects with `Last-Event-ID` and misses nothing.

The account behind a stream is checked again every `RECHECK` seconds: once it is removed,
or its role changed, the stream ends (no further event is sent); a reconnect is then
judged like any new request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.requests import Request as HTTPRequest
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ..channels.render import safe_json
from ..exceptions import StoreUnavailable
from ..outage import Outage
from ..store import Store
from .auth import SESSION_KEY, principal
from .core import ctx_of, error

DEFAULT_WAIT = 25.0
MAX_WAIT = 300.0
RECHECK = 1.0  # seconds between checks that the stream's account still may read
KEEP_ALIVE = 15.0
PUBLIC_KINDS = ("request.", "run.", "grant.", "review", "notify.")
_log = logging.getLogger(__name__)


class Broadcaster:
    """Wakes every waiting stream when the feed grows."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="signoff-events", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        outage = Outage("signoff serve: live updates", _log.warning)
        last: int | None = None
        while not self._stop.is_set():
            try:
                if last is None:
                    last = self.store.last_seq()
                woke = self.store.wait_for_event(0.5, after_seq=last)
                outage.recovered()
                if not woke:
                    continue
                last = self.store.last_seq()
            except StoreUnavailable as exc:  # said once; the wait LISTENs again after it
                self._stop.wait(outage.failed(exc))  # streams read the feed each second
                continue
            except Exception as exc:  # anything else: try again shortly
                _log.debug("live updates: %s: %s", type(exc).__name__, exc)
                self._stop.wait(0.5)
                continue
            self.wake()

    def wake(self) -> None:
        with self._lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed
                loop.call_soon_threadsafe(event.set)

    def subscribe(self) -> asyncio.Event:
        event = asyncio.Event()
        with self._lock:
            self._waiters.add((asyncio.get_running_loop(), event))
        return event

    def unsubscribe(self, event: asyncio.Event) -> None:
        with self._lock:
            self._waiters = {w for w in self._waiters if w[1] is not event}


def _float(raw: str | None, default: float) -> float | None:
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if 0 <= value <= MAX_WAIT else None


def _seq(raw: str | None) -> int | None:
    if raw is None or raw == "":
        return -1
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value >= 0 else None


def frame(event: dict[str, Any]) -> str:
    # Escaped like the CLI's --json: `curl` in a terminal shows no raw C1/bidi code point.
    data = safe_json(event, separators=(",", ":"))
    return f"id: {event['seq']}\nevent: {event['kind']}\ndata: {data}\n\n"


async def stream(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return error(
            401, "a valid Bearer token (or a signed-in session) is required", "unauthorized"
        )
    ctx = ctx_of(request)
    wait = _float(request.query_params.get("wait"), DEFAULT_WAIT)
    # A reconnect's Last-Event-ID wins over the page's original `after`.
    after = _seq(request.headers.get("last-event-id") or request.query_params.get("after"))
    if wait is None or after is None:
        return error(
            422, f"after must be a sequence number >= 0 and wait 0..{MAX_WAIT:g} s", "invalid"
        )
    start = after if after >= 0 else await anyio.to_thread.run_sync(ctx.store.last_seq)
    broadcaster = ctx.broadcaster
    granted = (who.name, who.role)

    async def still_allowed() -> bool:
        try:
            # read again, not from the request's cache: a session signed out since ends
            request.scope.pop(SESSION_KEY, None)
            now, _ = await anyio.to_thread.run_sync(principal, request)
        except Exception:  # the accounts cannot be read: stop rather than keep sending
            return False
        return now is not None and (now.name, now.role) == granted

    async def gen() -> AsyncIterator[str]:
        seq = start
        yield f"retry: 1000\n: signoff events after {seq}\n\n"
        woke = broadcaster.subscribe() if broadcaster else asyncio.Event()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        next_ping = loop.time() + KEEP_ALIVE
        try:
            while True:
                woke.clear()  # before reading: a wake-up during the read is not lost
                batch = await anyio.to_thread.run_sync(ctx.store.events_after, seq, 200)
                # Checked after the read: an account removed before an event was written
                # is seen removed here, so that event is never sent to it.
                if not await still_allowed():
                    return
                for event in batch:
                    seq = event.seq
                    if event.kind.startswith(PUBLIC_KINDS):
                        doc = event.to_json()
                        doc.pop("prev_hash", None)
                        doc.pop("hash", None)
                        yield frame(doc)
                if len(batch) == 200:
                    continue
                left = deadline - loop.time()
                if left <= 0:
                    return
                try:
                    await asyncio.wait_for(woke.wait(), timeout=min(left, RECHECK))
                except TimeoutError:
                    if loop.time() >= next_ping:
                        next_ping = loop.time() + KEEP_ALIVE
                        yield ": keep-alive\n\n"
                if await request.is_disconnected():
                    return
        finally:
            if broadcaster:
                broadcaster.unsubscribe(woke)

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(gen(), media_type="text/event-stream", headers=headers)


ROUTES = [Route("/api/events", stream)]

__all__ = ["ROUTES", "Broadcaster"]
