"""`POST /hooks/claude-code`: Claude Code's HTTP hook, answered by the same adapter core as
`signoff hook claude-code`, without a process per call.

The caller needs the hook's own credential as a Bearer token: the token of an account of
role ``hook`` (`signoff install claude-code --http` makes one; `signoff users add NAME
--role hook`), or the value of `$SIGNOFF_HOOK_TOKEN` in the server's environment. A
person's token (viewer, approver, admin) is refused with a 403: whoever holds one must
not be able to put outcomes on the record. There is no local mode here: a hook posts
without a browser session. Every entry an event makes names its sender (`hook:NAME`), and
an outcome (PostToolUse, PostToolUseFailure) must be of a call judged here: one that is not
is recorded as `session.unmatched`, naming the sender, and refused with a 409. Calls are
judged in the server's workspace; a session whose cwd lies outside it is refused. A
failure answers a deny (a PreToolUse) or a 500 (the outcome events), never an allow.
"""

from __future__ import annotations

import hmac
import os
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..adapters import claude_code
from ..adapters.core import Adapter, Answer, hook_options, load_hook_input
from ..exceptions import InvalidInput
from .auth import bearer
from .core import ctx_of

TOKEN_ENV = "SIGNOFF_HOOK_TOKEN"
ENV_SENDER = f"hook:${TOKEN_ENV}"
OUTCOMES = ("PostToolUse", "PostToolUseFailure")


def _sender(request: HTTPRequest) -> str | Response:
    """Who posts: `hook:NAME` for a hook's token, else the refusal to send."""
    token = bearer(request)
    if token is not None:
        expected = os.environ.get(TOKEN_ENV, "")
        if expected and hmac.compare_digest(token.encode(), expected.encode()):
            return ENV_SENDER
        account = ctx_of(request).accounts.authenticate(token)
        if account is not None and account.is_hook:
            return f"hook:{account.name}"
        if account is not None:
            return JSONResponse(
                {
                    "error": f"the token is {account.name}'s, a {account.role}'s: hook events "
                    "need the hook's own credential (role hook). `signoff install claude-code "
                    "--http` makes one; or `signoff users add NAME --role hook`"
                },
                status_code=403,
            )
    return JSONResponse(
        {"error": f"a Bearer token is required: a hook's token (role hook), or ${TOKEN_ENV}"},
        status_code=401,
        headers={"www-authenticate": "Bearer"},
    )


def _judge(doc: Any, request: HTTPRequest, sender: str) -> tuple[Any, int, str, bool]:
    ctx = ctx_of(request)
    state = request.app.state
    policies = getattr(state, "hook_policies", None)
    if policies is None:  # built once per server and mode, not at every call
        policies = state.hook_policies = {}
    adapter = Adapter(
        claude_code.CLIENT,
        ctx.workspace,
        settings=ctx.settings,
        options=hook_options(ctx.settings),
        store=ctx.store,
        sender=sender,  # per request: who posted this event
        policies=policies,
    )
    out, code, message = claude_code.answer(doc, adapter=adapter)
    return out, code, message, adapter.unmatched is not None


async def claude_code_hook(request: HTTPRequest) -> Response:
    try:
        sender = await run_in_threadpool(_sender, request)
        if isinstance(sender, Response):
            return sender
        return await _answer(request, sender)
    except Exception as exc:  # a 500 would not block: whatever failed, a deny
        detail = "input nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        reason = f"signoff could not judge this call, so it is blocked: {detail or exc!r}"
        return JSONResponse(claude_code.render("pre", Answer("deny", reason)))


async def _answer(request: HTTPRequest, sender: str) -> Response:
    try:
        doc = load_hook_input(await request.body())
    except InvalidInput as exc:
        doc = exc  # answered below as a block, like any other bad input
    out, code, message, unmatched = await run_in_threadpool(_judge, doc, request, sender)
    if code == 0:
        return JSONResponse(out if out is not None else {})
    event = doc.get("hook_event_name") if isinstance(doc, dict) else None
    if event in OUTCOMES:
        return JSONResponse({"error": message}, status_code=409 if unmatched else 500)
    # no exit code over HTTP: a PreToolUse (or an unreadable event) is blocked by a deny
    return JSONResponse(claude_code.render("pre", Answer("deny", message)))


ROUTES = [Route("/hooks/claude-code", claude_code_hook, methods=["POST"])]

__all__ = ["ROUTES"]
