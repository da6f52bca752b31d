"""The web application: `create_app(store_url, workspace=...)` -> a Starlette app.

    pages   /  /requests/{id}  /grants  /reviews  /login  /favicon.svg (see pages.py)
            /stats                                                (see stats_view.py)
            /audit                                                (see audit_view.py)
    API     /api/...  /openapi.json                               (see api.py, openapi.py)
    live    /api/events                                           (see events.py)

With `worker=True` a thread resumes runs whose decisions are in (see worker.py).
Request bodies are capped (`max_body`, 1 MiB by default; see limits.py).
Every response carries a Content-Security-Policy without inline script, `nosniff`,
`frame-ancestors 'none'` and `Referrer-Policy: same-origin`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, MutableMapping
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..accounts import Accounts
from ..exceptions import StoreUnavailable
from ..settings import Settings, load_settings
from ..store import Store, open_store
from . import api, audit_view, events, hooks, openapi, pages, stats_view
from .core import HERE, Context, unavailable
from .limits import DEFAULT_MAX_BODY, BodyLimit
from .worker import EmbeddedWorker

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class SecurityHeaders:
    """Pure ASGI middleware (streams pass through untouched)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[tuple[bytes, bytes]] = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in HEADERS if k not in present]
                if scope["path"].startswith(("/api/", "/requests/", "/fragments/")):
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def store_url_of(url: str | Path | None, workspace: Path) -> str:
    if url is not None:
        return str(url)
    env = os.environ.get("SIGNOFF_DB")
    return env or str(workspace / ".signoff" / "signoff.db")


def create_app(
    store_url: str | Path | None = None,
    *,
    workspace: str | os.PathLike[str] = ".",
    settings: Settings | None = None,
    store: Store | None = None,
    accounts: Accounts | None = None,
    forbid_self_approval: bool | None = None,
    base_url: str = "",
    max_body: int = DEFAULT_MAX_BODY,
    worker: bool = False,
    worker_poll: float = 1.0,
) -> Starlette:
    """Build the app. Pass `store`/`accounts` to share objects (tests, `memory:`);
    `max_body` caps request bodies (bytes; 413 above it); `worker=True` resumes runs in
    this process once their decisions are in (`signoff serve` does, unless --no-worker)."""
    root = Path(workspace).resolve()
    url = store_url_of(store_url, root)
    owned: list[Any] = []
    if store is None:
        store = open_store(url)
        owned.append(store)
    if accounts is None:
        accounts = Accounts(url)
        owned.append(accounts)
    settings = settings if settings is not None else load_settings(root)
    if forbid_self_approval is None:  # [approvers] forbid_self_approval = true
        table = settings.extra.get("approvers")
        forbid_self_approval = isinstance(table, dict) and table.get("forbid_self_approval") is True
    ctx = Context(
        store=store,
        accounts=accounts,
        workspace=root,
        settings=settings,
        secret=accounts.secret(),
        forbid_self_approval=forbid_self_approval,
        base_url=base_url,
        store_url=url,
        worker=worker,
    )
    ctx.broadcaster = events.Broadcaster(store)
    resumer = EmbeddedWorker(url, store=store, poll=worker_poll) if worker else None
    if resumer is not None:
        ctx.worker_failures = resumer.failures

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[MutableMapping[str, Any]]:
        assert ctx.broadcaster is not None
        ctx.broadcaster.start()
        if resumer is not None:
            resumer.start()
        try:
            yield {}
        finally:
            if resumer is not None:
                resumer.stop()
            ctx.broadcaster.stop()
            for thing in owned:
                thing.close()

    routes = [
        *pages.ROUTES,
        *stats_view.ROUTES,
        *audit_view.ROUTES,
        *api.ROUTES,
        *events.ROUTES,
        *openapi.ROUTES,
        *hooks.ROUTES,
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(
        routes=routes, lifespan=lifespan, exception_handlers={StoreUnavailable: unavailable}
    )
    app.state.ctx = ctx
    app.add_middleware(BodyLimit, max_bytes=max_body)
    app.add_middleware(SecurityHeaders)  # outermost: the 413 carries the headers too
    return app


__all__ = ["CSP", "create_app"]
