"""Server-rendered pages: inbox, request, grants, review-after, login.

Every form post checks the CSRF token; every decision goes through `service.decide`
(`approvals.decide`). Model-written text is only ever printed through autoescaped `{{ }}`
(with `core.inert` as finalize); nothing from a request is marked safe.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import anyio
from starlette.datastructures import FormData
from starlette.requests import Request as HTTPRequest
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..accounts import Account
from ..approvals import revoke_grant
from ..channels.render import is_question, question_parts
from ..exceptions import NotFound, SignoffError
from ..models import DECISION_KINDS, RISKS, Request
from ..present import summary
from ..review import review_items
from ..run_state import parent_runs
from ..times import age
from .auth import (
    LOCAL,
    csrf_ok,
    csrf_token,
    persist_session,
    principal,
    sign_in,
    sign_out,
)
from .core import HERE, Context, ctx_of, lang_of, pretty_json, status_of, translator
from .limits import PAGE_TEXT_LIMIT
from .runview import run_view
from .service import (
    Filters,
    api_request,
    decide,
    decision_from,
    deliveries,
    next_step,
    revert,
)


def render(request: HTTPRequest, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    ctx = ctx_of(request)
    lang = lang_of(request)
    who, _ = principal(request)
    html = ctx.env.get_template(template).render(
        t=translator(lang),
        lang=lang,
        who=who,
        csrf=csrf_token(request),
        age=age,
        local_mode=ctx.local_mode(),
        worker=ctx.worker,
        now=time.time(),
        path=request.url.path,
        **values,
    )
    response = HTMLResponse(html, status_code=status)
    persist_session(request, response)
    if who is not None and who.name == LOCAL.name and ctx.local_mode():
        # remembered so that, once an account ends local mode, the login page says why
        response.set_cookie(WAS_LOCAL, "1", samesite="strict", httponly=True, path="/")
    if request.query_params.get("lang") in ("en", "zh"):
        response.set_cookie(
            "signoff_lang", request.query_params["lang"], samesite="strict", httponly=True
        )
    return response


def login_redirect(request: HTTPRequest) -> Response:
    return RedirectResponse(f"/login?next={request.url.path}", status_code=303)


async def checked_form(request: HTTPRequest) -> FormData | None:
    """The posted form if it carries this session's CSRF token, else None."""
    form = await request.form()
    raw = form.get("csrf")
    return form if csrf_ok(request, raw if isinstance(raw, str) else None) else None


def csrf_refused(request: HTTPRequest) -> Response:
    return render(
        request,
        "error.html",
        403,
        message="This form has no valid CSRF token (reload the page and try again).",
    )


async def _run(fn: Any, *args: Any) -> Any:
    return await anyio.to_thread.run_sync(fn, *args)


# ------------------------------------------------------------------ inbox


def _filters(request: HTTPRequest) -> Filters:
    q = request.query_params
    risk = q.get("risk", "")
    state = q.get("state", "pending")
    return Filters(
        risk=risk if risk in RISKS else "",
        tool=q.get("tool", ""),
        run=q.get("run", ""),
        tenant=q.get("tenant", ""),
        state=state,
    )


async def inbox(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    ctx = ctx_of(request)
    filters = _filters(request)
    seq = await _run(ctx.store.last_seq)  # before reading: live updates start from here
    found: list[Request] = await _run(filters.apply, ctx)
    counts = {risk: sum(1 for r in found if r.verdict.risk == risk) for risk in RISKS}
    tools = sorted({r.call.name for r in found})
    return render(
        request,
        "inbox.html",
        requests=found,
        filters=filters,
        counts=counts,
        risks=RISKS,
        tools=tools,
        summary=summary,
        seq=seq,
    )


async def card(request: HTTPRequest) -> Response:
    """One inbox row (for live updates); 204 when it does not match the filters."""
    who, _ = principal(request)
    if who is None:
        return Response(status_code=401)
    ctx = ctx_of(request)
    try:
        r: Request = await _run(ctx.store.get_request, request.path_params["id"])
    except NotFound:
        return Response(status_code=404)
    f = _filters(request)
    if (
        (f.state not in ("", "all") and r.state != f.state)
        or (f.risk and r.verdict.risk != f.risk)
        or (f.tool and r.call.name != f.tool)
        or (f.run and f.run not in (r.run_id, *parent_runs(r.metadata)))
        or (f.tenant and r.tenant != f.tenant)
    ):
        return Response(status_code=204)
    return render(request, "card.html", r=r, summary=summary)


# ------------------------------------------------------------------ one request


def _asks_human(r: Request) -> bool:
    """Whether to offer the answer form: the runner records it from the tool's declaration;
    a request stored by other code without it is judged by its look."""
    declared = r.metadata.get("asks_human")
    if isinstance(declared, bool):
        return declared
    return "ask" in r.call.name.lower() or "question" in r.call.arguments


def _only_answer(r: Request) -> bool:
    """A question to a person (the tool is the person): approving or editing it means
    nothing, so its page offers the answer alone. Declared by the runner, else by name."""
    declared = r.metadata.get("asks_human")
    return declared is True or (declared is None and is_question(r))


def _details(ctx: Context, request_id: str) -> dict[str, Any]:
    r = ctx.store.get_request(request_id)
    messages: list[dict[str, Any]] = []
    if r.run_id:
        try:
            messages = ctx.store.load_messages(r.run_id)
        except NotFound:
            messages = []
    original = r.metadata.get("original_call")
    question = _only_answer(r)
    return {
        "r": r,
        "run": run_view(ctx, r, messages),
        "question": question,
        "options": question_parts(r)[1] if question else [],
        "outcome": ctx.store.get_outcome(r.id),
        "messages": messages,
        "deliveries": deliveries(ctx, r.id),
        # the call before a person's edit, as the runner keeps it (anything else: none)
        "original": original
        if isinstance(original, dict) and isinstance(original.get("arguments"), dict)
        else None,
        "what_next": next_step(ctx, r),
        "expired": r.state == "expired"
        or (r.state == "pending" and r.expires_at is not None and r.expires_at <= time.time()),
        "summary": summary(r),
        "intent": r.metadata.get("intent"),
        "asks_human": _asks_human(r),
        "call_cut": len(pretty_json(dict(r.call.arguments))) > PAGE_TEXT_LIMIT,
    }


async def request_page(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    ctx = ctx_of(request)
    seq = await _run(ctx.store.last_seq)  # before reading: live updates start from here
    try:
        details = await _run(_details, ctx, request.path_params["id"])
    except NotFound as exc:
        return render(request, "error.html", 404, message=str(exc))
    done = request.query_params.get("done")
    return render(
        request, "request.html", done=done if done in DECISION_KINDS else None, seq=seq, **details
    )


async def raw_request(request: HTTPRequest) -> Response:
    """The whole request as JSON (what a page cuts), for a signed-in reader."""
    who, _ = principal(request)
    if who is None:
        return Response("sign in first\n", status_code=401, media_type="text/plain")
    ctx = ctx_of(request)
    try:
        doc = await _run(lambda: api_request(ctx, ctx.store.get_request(request.path_params["id"])))
    except NotFound as exc:
        return Response(f"{exc}\n", status_code=404, media_type="text/plain")
    headers = {}
    if request.query_params.get("download"):
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", str(doc.get("id", "request")))[:100]
        headers["Content-Disposition"] = f'attachment; filename="{name}.json"'
    body = json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True)
    return Response(body, media_type="application/json", headers=headers)


async def status_fragment(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return Response(status_code=401)
    ctx = ctx_of(request)
    try:
        details = await _run(_details, ctx, request.path_params["id"])
    except NotFound:
        return Response(status_code=404)
    response = render(request, "status.html", **details)
    response.headers["X-Signoff-State"] = details["r"].state
    return response


async def decide_form(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    form = await checked_form(request)
    if form is None:
        return csrf_refused(request)
    ctx = ctx_of(request)
    rid = request.path_params["id"]
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    try:
        decision = decision_from(fields)
        await _run(decide, ctx, who, rid, decision)
    except SignoffError as exc:
        try:
            details = await _run(_details, ctx, rid)
        except NotFound:
            return render(request, "error.html", 404, message=str(exc))
        return render(
            request, "request.html", status_of(exc), error=str(exc), submitted=fields, **details
        )
    return RedirectResponse(f"/requests/{rid}?done={decision.kind}", status_code=303)


# ------------------------------------------------------------------ grants and reviews


async def grants(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    ctx = ctx_of(request)
    found = await _run(ctx.store.list_grants)
    message = request.query_params.get("m")
    return render(
        request, "grants.html", grants=found, message=message if message == "revoked" else None
    )


async def revoke(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    if await checked_form(request) is None:
        return csrf_refused(request)
    if not who.is_admin:
        return render(request, "error.html", 403, message="Only an admin may revoke grants.")
    ctx = ctx_of(request)
    gid = request.path_params["id"]
    try:
        await _run(lambda: revoke_grant(ctx.store, gid, actor=who.name, workspace=ctx.workspace))
    except SignoffError as exc:
        return render(request, "error.html", status_of(exc), message=str(exc))
    return RedirectResponse("/grants?m=revoked", status_code=303)


def _review_items(ctx: Context) -> list[dict[str, Any]]:
    items = []
    for item in review_items(ctx.store):
        e = item.event
        snap = e.data.get("snapshot") or {}
        call = e.data.get("call") or {}
        items.append(
            {
                "event": e,
                "call": call,
                "reverted": item.reverted,
                "files": [x.get("path") for x in snap.get("entries", []) if isinstance(x, dict)],
                "arguments": json.dumps(call.get("arguments", {}), ensure_ascii=False, indent=2),
            }
        )
    return items


async def reviews(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    ctx = ctx_of(request)
    items = await _run(_review_items, ctx)
    message = request.query_params.get("m")
    return render(
        request, "reviews.html", items=items, message=message if message == "reverted" else None
    )


async def revert_form(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    if await checked_form(request) is None:
        return csrf_refused(request)
    ctx = ctx_of(request)
    try:
        seq = int(request.path_params["seq"])
        await _run(revert, ctx, who, seq)
    except (SignoffError, ValueError) as exc:
        code = status_of(exc) if isinstance(exc, SignoffError) else 422
        items = await _run(_review_items, ctx)
        return render(request, "reviews.html", code, items=items, error=str(exc))
    return RedirectResponse("/reviews?m=reverted", status_code=303)


# ------------------------------------------------------------------ login


WAS_LOCAL = "signoff_was_local"  # this browser used the inbox in local mode


async def login_page(request: HTTPRequest) -> Response:
    ended = request.cookies.get(WAS_LOCAL) == "1" and not ctx_of(request).local_mode()
    return render(
        request,
        "login.html",
        next=_safe_next(request.query_params.get("next")),
        local_ended=ended,
    )


def _safe_next(raw: str | None) -> str:
    return raw if raw and raw.startswith("/") and not raw.startswith("//") else "/"


async def login(request: HTTPRequest) -> Response:
    form = await checked_form(request)
    if form is None:
        return csrf_refused(request)
    ctx = ctx_of(request)
    token = form.get("token")
    account: Account | None = None
    if isinstance(token, str):
        account = await _run(ctx.accounts.authenticate, token.strip())
    nxt = form.get("next")
    target = _safe_next(nxt if isinstance(nxt, str) else None)
    if account is None or account.is_hook:  # a hook's token opens no page
        return render(
            request, "login.html", 401, next=target, failed=True, hook=account is not None
        )
    response = RedirectResponse(target, status_code=303)
    await _run(sign_in, request, response, account.name)  # a new nonce: new CSRF token
    response.delete_cookie(WAS_LOCAL, path="/")
    return response


async def logout(request: HTTPRequest) -> Response:
    if await checked_form(request) is None:
        return csrf_refused(request)
    response = RedirectResponse("/login", status_code=303)
    await _run(sign_out, request, response)
    return response


async def favicon(request: HTTPRequest) -> Response:
    return FileResponse(
        HERE / "static" / "favicon.svg",
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400"},
    )


ROUTES = [
    Route("/", inbox),
    Route("/favicon.svg", favicon),
    Route("/favicon.ico", favicon),  # asked for by browsers and tools whatever the page says
    Route("/fragments/card/{id}", card),
    Route("/fragments/request/{id}/status", status_fragment),
    Route("/requests/{id}", request_page),
    Route("/requests/{id}/raw", raw_request),
    Route("/requests/{id}/decide", decide_form, methods=["POST"]),
    Route("/grants", grants),
    Route("/grants/{id}/revoke", revoke, methods=["POST"]),
    Route("/reviews", reviews),
    Route("/reviews/{seq}/revert", revert_form, methods=["POST"]),
    Route("/login", login_page),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
]

__all__ = ["ROUTES", "checked_form", "csrf_refused", "login_redirect", "render"]
