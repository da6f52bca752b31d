"""The JSON API (`/api/...`); described by `openapi.py` at `/openapi.json`.

Authentication: `Authorization: Bearer <token>`, or the page session cookie (posts then
need the `X-CSRF-Token` header). In local mode (no accounts, loopback) no token is needed.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.requests import Request as HTTPRequest
from starlette.responses import Response
from starlette.routing import Route

from .. import approvals
from ..accounts import Account
from ..audit import verify_store
from ..audit.outcomes import listed_json
from ..audit.stats import load_stats
from ..exceptions import InvalidInput, SignoffError
from ..models import REQUEST_STATES, RISKS
from . import audit_view
from .auth import csrf_ok, hook_token_name, principal
from .core import Context, JSONResponse, ctx_of, error, error_code, status_of, whole_number
from .service import Filters, api_request, api_requests, decide, decision_from
from .stats_view import min_count_param, since_param

MAX_LIMIT = 500
STATES = (*REQUEST_STATES, "all")  # a request's states, or all of them


def _who(request: HTTPRequest, *, write: bool = False) -> Account | Response:
    who, by_bearer = principal(request)
    hook = hook_token_name(request) if who is None else None
    if hook is not None:
        return error(
            403,
            f"the token is the hook {hook}'s (role hook): it posts hook events "
            "(POST /hooks/claude-code) and reads or decides nothing; use a person's token",
            "forbidden",
        )
    if who is None:
        return error(
            401, "a valid Bearer token (or a signed-in session) is required", "unauthorized"
        )
    if write and not by_bearer and not csrf_ok(request, request.headers.get("x-csrf-token")):
        return error(403, "missing or invalid X-CSRF-Token header", "csrf")
    return who


def _limit(request: HTTPRequest, default: int = 100) -> int:
    return whole_number(request.query_params.get("limit"), "limit", default, 1, MAX_LIMIT)


async def _run(fn: Any, *args: Any) -> Any:
    return await anyio.to_thread.run_sync(fn, *args)


def _fail(exc: SignoffError) -> JSONResponse:
    return error(status_of(exc), str(exc), error_code(exc))


async def health(request: HTTPRequest) -> Response:
    ctx = ctx_of(request)
    seq = await _run(ctx.store.last_seq)
    return JSONResponse({"ok": True, "last_seq": seq})


async def me(request: HTTPRequest) -> Response:
    who = _who(request)
    if isinstance(who, Response):
        return who
    return JSONResponse({**who.to_json(), "can_decide": who.can_decide})


async def list_requests(request: HTTPRequest) -> Response:
    who = _who(request)
    if isinstance(who, Response):
        return who
    ctx = ctx_of(request)
    q = request.query_params
    try:
        limit = _limit(request)
        state = q.get("state", "pending")
        if state not in STATES:
            raise InvalidInput(f"state must be one of {', '.join(STATES)}")
        risk = q.get("risk", "")
        if risk and risk not in RISKS:
            raise InvalidInput(f"risk must be one of {', '.join(RISKS)}")
        filters = Filters(
            risk=risk,
            tool=q.get("tool", ""),
            run=q.get("run", ""),
            tenant=q.get("tenant", ""),
            state=state,
        )
        found = await _run(lambda: api_requests(ctx, filters.apply(ctx, limit)))
    except SignoffError as exc:
        return _fail(exc)
    return JSONResponse(found)


async def get_request(request: HTTPRequest) -> Response:
    who = _who(request)
    if isinstance(who, Response):
        return who
    ctx = ctx_of(request)
    rid = request.path_params["id"]
    try:
        doc = await _run(lambda: api_request(ctx, ctx.store.get_request(rid)))
    except SignoffError as exc:
        return _fail(exc)
    return JSONResponse(doc)


async def decide_request(request: HTTPRequest) -> Response:
    who = _who(request, write=True)
    if isinstance(who, Response):
        return who
    ctx: Context = ctx_of(request)
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError:
        return error(400, "the body is not valid JSON", "bad_request")
    if not isinstance(body, dict):
        return error(422, "the body must be a JSON object", "invalid")
    rid = request.path_params["id"]
    try:
        decision = decision_from(body)
        decided = await _run(decide, ctx, who, rid, decision)
        doc = await _run(api_request, ctx, decided)
    except SignoffError as exc:
        return _fail(exc)
    return JSONResponse(doc)


async def list_grants(request: HTTPRequest) -> Response:
    who = _who(request)
    if isinstance(who, Response):
        return who
    ctx = ctx_of(request)
    run_id = request.query_params.get("run") or None
    grants = await _run(lambda: ctx.store.list_grants(run_id=run_id))
    return JSONResponse([g.to_json() for g in grants])


async def revoke_grant(request: HTTPRequest) -> Response:
    who = _who(request, write=True)
    if isinstance(who, Response):
        return who
    if not who.is_admin:
        return error(403, f"{who.name} is not an admin; only admins revoke grants", "forbidden")
    ctx = ctx_of(request)
    gid = request.path_params["id"]
    try:
        grant = await _run(
            lambda: approvals.revoke_grant(ctx.store, gid, actor=who.name, workspace=ctx.workspace)
        )
    except SignoffError as exc:
        return _fail(exc)
    return JSONResponse(grant.to_json())


async def list_runs(request: HTTPRequest) -> Response:
    who = _who(request)
    if isinstance(who, Response):
        return who
    ctx = ctx_of(request)
    try:
        limit = _limit(request, 50)
    except SignoffError as exc:
        return _fail(exc)
    status = request.query_params.get("status") or None
    runs = await _run(lambda: ctx.store.list_runs(status=status, limit=limit))
    return JSONResponse([r.to_json() for r in runs])


async def get_run(request: HTTPRequest) -> Response:
    who = _who(request)
    if isinstance(who, Response):
        return who
    ctx = ctx_of(request)
    rid = request.path_params["id"]
    try:
        run = await _run(ctx.store.get_run, rid)
        messages = await _run(ctx.store.load_messages, rid)
    except SignoffError as exc:
        return _fail(exc)
    return JSONResponse({**run.to_json(), "messages": messages})


async def get_stats(request: HTTPRequest) -> Response:
    """`Stats.to_json()`: exactly what `signoff stats --json` prints for the same window."""
    who = _who(request)
    if isinstance(who, Response):
        return who
    ctx = ctx_of(request)
    try:
        _, since = since_param(request)
        min_count = min_count_param(request)
        stats = await _run(lambda: load_stats(ctx.store, since=since, min_count=min_count))
    except SignoffError as exc:
        return _fail(exc)
    return JSONResponse(stats.to_json())


async def list_audit(request: HTTPRequest) -> Response:
    """What `signoff audit --json` prints for the same filters."""
    who = _who(request)
    if isinstance(who, Response):
        return who
    try:
        found, awaiting = await _run(lambda: audit_view.listed(request))
    except SignoffError as exc:
        return _fail(exc)
    return JSONResponse(listed_json(found, awaiting))


async def verify_audit(request: HTTPRequest) -> Response:
    """What `signoff audit verify --json` prints."""
    who = _who(request)
    if isinstance(who, Response):
        return who
    report = await _run(verify_store, ctx_of(request).store)
    return JSONResponse(report.to_json())


ROUTES = [
    Route("/api/health", health),
    Route("/api/me", me),
    Route("/api/requests", list_requests),
    Route("/api/requests/{id}", get_request),
    Route("/api/requests/{id}/decide", decide_request, methods=["POST"]),
    Route("/api/grants", list_grants),
    Route("/api/grants/{id}/revoke", revoke_grant, methods=["POST"]),
    Route("/api/runs", list_runs),
    Route("/api/runs/{id}", get_run),
    Route("/api/stats", get_stats),
    Route("/api/audit", list_audit),
    Route("/api/audit/verify", verify_audit),
]

__all__ = ["ROUTES"]
