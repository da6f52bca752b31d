"""The audit log in the browser (`/audit`; the API's `/api/audit` reads the same
`entries`): the same entries, filters and verification as `signoff audit` and
`signoff audit verify`. Entries quote what the model wrote (commands, arguments, reasons):
they are autoescaped like every other page, and control characters are shown as escapes.
"""

from __future__ import annotations

from typing import Any

import anyio
from starlette.requests import Request as HTTPRequest
from starlette.responses import Response
from starlette.routing import Route

from ..audit import AuditFilter, describe, read_log, verify_store
from ..audit.outcomes import Awaiting, awaiting_in
from ..channels.render import escape_untrusted
from ..exceptions import SignoffError
from ..store import Event
from .auth import principal
from .core import ctx_of, status_of, whole_number
from .pages import login_redirect, render
from .stats_view import since_param

DEFAULT_LIMIT = 200
MAX_LIMIT = 5000


def _filter(request: HTTPRequest) -> tuple[AuditFilter, int]:
    q = request.query_params
    _, since = since_param(request)
    limit = whole_number(q.get("limit"), "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    kinds = tuple(k.strip() for k in q.getlist("kind") if k.strip())
    return AuditFilter(
        run_id=q.get("run") or None, since=since, kinds=kinds, request_id=q.get("request") or None
    ), limit


def entries(request: HTTPRequest) -> list[Event]:
    """The newest `limit` entries that match, oldest first (as `signoff audit` lists)."""
    where, limit = _filter(request)
    return read_log(ctx_of(request).store, where, limit)


def listed(request: HTTPRequest) -> tuple[list[Event], Awaiting]:
    """`entries`, and which allowed calls among them have no outcome on the record."""
    found = entries(request)
    return found, awaiting_in(ctx_of(request).store, found)


def _row(event: Event, awaiting: Awaiting) -> dict[str, Any]:
    return {
        "event": event,
        "actor": escape_untrusted(event.actor or "-", newline=False),
        "what": escape_untrusted(describe(event, awaiting.text_of(event)), newline=False),
    }


async def audit_page(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    q = request.query_params
    values: dict[str, Any] = {
        "run": q.get("run", ""),
        "kind": q.get("kind", ""),
        "since_text": q.get("since", ""),
        "report": None,
    }
    try:
        events, awaiting = await anyio.to_thread.run_sync(lambda: listed(request))
        if q.get("verify"):
            values["report"] = await anyio.to_thread.run_sync(
                lambda: verify_store(ctx_of(request).store)
            )
    except SignoffError as exc:
        return render(request, "audit.html", status_of(exc), error=str(exc), rows=[], **values)
    rows = [_row(e, awaiting) for e in reversed(events)]
    return render(request, "audit.html", rows=rows, **values)


ROUTES = [Route("/audit", audit_page)]

__all__ = ["ROUTES", "entries", "listed"]
