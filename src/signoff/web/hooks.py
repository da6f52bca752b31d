"""`POST /hooks/claude-code`: Claude Code's HTTP hook, answered by the same adapter core as
`signoff hook claude-code`, without a process per call.

The caller needs a Bearer token: an account's API token (`signoff users add`), or the
value of `$SIGNOFF_HOOK_TOKEN` in the server's environment. There is no local mode here:
a hook posts without a browser session, and whoever can post can ask for calls to be
judged and for the inbox to be waited on. Calls are judged in the server's workspace; a
session whose cwd lies outside it is refused. A failure answers a deny (a PreToolUse) or a
500 (the outcome events), never an allow.
"""

from __future__ import annotations

import hmac
import json
import os
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..adapters import claude_code
from ..adapters.core import Adapter, Answer, hook_options
from .auth import bearer
from .core import ctx_of

TOKEN_ENV = "SIGNOFF_HOOK_TOKEN"


def _authorized(request: HTTPRequest) -> bool:
    token = bearer(request)
    if token is None:
        return False
    expected = os.environ.get(TOKEN_ENV, "")
    if expected and hmac.compare_digest(token.encode(), expected.encode()):
        return True
    return ctx_of(request).accounts.authenticate(token) is not None


def _adapter(request: HTTPRequest) -> Adapter:
    """The app's one adapter: it keeps no call's state, and its policies (one per mode,
    built from the server's settings) are then built once, not at every call."""
    state = request.app.state
    adapter: Adapter | None = getattr(state, "hook_adapter", None)
    if adapter is None:
        ctx = ctx_of(request)
        adapter = state.hook_adapter = Adapter(
            claude_code.CLIENT,
            ctx.workspace,
            settings=ctx.settings,
            options=hook_options(ctx.settings),
            store=ctx.store,
        )
    return adapter


def _judge(doc: Any, request: HTTPRequest) -> tuple[dict[str, Any] | None, int, str]:
    return claude_code.answer(doc, adapter=_adapter(request))


async def claude_code_hook(request: HTTPRequest) -> Response:
    # an account's token is read from the accounts' table: off the event loop
    if not await run_in_threadpool(_authorized, request):
        return JSONResponse(
            {"error": f"a Bearer token is required (an API token, or ${TOKEN_ENV})"},
            status_code=401,
            headers={"www-authenticate": "Bearer"},
        )
    try:
        doc = json.loads(await request.body())
    except ValueError as exc:
        doc = exc  # answered below as a block, like any other bad input
    out, code, message = await run_in_threadpool(_judge, doc, request)
    if code == 0:
        return JSONResponse(out if out is not None else {})
    event = doc.get("hook_event_name") if isinstance(doc, dict) else None
    if event in ("PostToolUse", "PostToolUseFailure"):
        return JSONResponse({"error": message}, status_code=500)
    # no exit code over HTTP: a PreToolUse (or an unreadable event) is blocked by a deny
    return JSONResponse(claude_code.render("pre", Answer("deny", message)))


ROUTES = [Route("/hooks/claude-code", claude_code_hook, methods=["POST"])]

__all__ = ["ROUTES"]
