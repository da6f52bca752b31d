"""Who is asking: Bearer tokens (API), signed session cookies (pages), CSRF, local mode.

Session cookie ``signoff_session`` = ``base64url(json{u, exp, n}) . hmac`` signed with the
secret kept in the accounts table; HttpOnly, SameSite=Strict, Path=/. Every visitor gets
one (``u`` empty until login), so even the login form carries a CSRF token:
``csrf = hmac(secret, "csrf:" + n)``. Form posts send it as the ``csrf`` field, scripts as
the ``X-CSRF-Token`` header; a post with a cookie session and no valid token is refused.

With no accounts at all the server is in *local mode*: a request whose Host is a loopback
name acts as the local user ``local`` with the admin role (as the CLI does); `signoff serve`
refuses a non-loopback address in that mode.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from starlette.requests import Request as HTTPRequest
from starlette.responses import Response

from ..accounts import Account
from .core import Context, ctx_of

COOKIE = "signoff_session"
SESSION_SECONDS = 12 * 3600
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
LOCAL = Account("local", "admin")


@dataclass(frozen=True, slots=True)
class Session:
    user: str
    expires: float
    nonce: str
    fresh: bool = False  # not yet sent to the browser


def _sign(secret: bytes, payload: str) -> str:
    return hmac.new(secret, payload.encode(), hashlib.sha256).hexdigest()


def encode_session(secret: bytes, session: Session) -> str:
    doc = json.dumps(
        {"u": session.user, "exp": int(session.expires), "n": session.nonce}, separators=(",", ":")
    )
    payload = base64.urlsafe_b64encode(doc.encode()).decode().rstrip("=")
    return f"{payload}.{_sign(secret, payload)}"


def decode_session(secret: bytes, value: str) -> Session | None:
    payload, _, sig = value.partition(".")
    if not payload or not hmac.compare_digest(_sign(secret, payload), sig):
        return None
    try:
        doc = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        session = Session(str(doc["u"]), float(doc["exp"]), str(doc["n"]))
    except (ValueError, KeyError, TypeError):
        return None
    return session if session.expires > time.time() else None


def new_session(user: str = "") -> Session:
    return Session(user, time.time() + SESSION_SECONDS, secrets.token_hex(16), fresh=True)


def session_of(request: HTTPRequest) -> Session:
    """The visitor's session (a fresh anonymous one if the cookie is missing or bad)."""
    cached = request.scope.get("signoff.session")
    if isinstance(cached, Session):
        return cached
    ctx = ctx_of(request)
    raw = request.cookies.get(COOKIE)
    session = decode_session(ctx.secret, raw) if raw else None
    if session is None:
        session = new_session()
    request.scope["signoff.session"] = session
    return session


def set_session(request: HTTPRequest, response: Response, session: Session) -> None:
    ctx = ctx_of(request)
    request.scope["signoff.session"] = session
    response.set_cookie(
        COOKIE,
        encode_session(ctx.secret, session),
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
        path="/",
        secure=request.url.scheme == "https",
    )


def persist_session(request: HTTPRequest, response: Response) -> None:
    session = session_of(request)
    if session.fresh:
        set_session(request, response, Session(session.user, session.expires, session.nonce))


def csrf_token(request: HTTPRequest) -> str:
    return _sign(ctx_of(request).secret, "csrf:" + session_of(request).nonce)[:40]


def csrf_ok(request: HTTPRequest, submitted: str | None) -> bool:
    if not submitted or session_of(request).fresh:
        return False
    return hmac.compare_digest(csrf_token(request), submitted)


def bearer(request: HTTPRequest) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def loopback_host(request: HTTPRequest) -> bool:
    host = request.headers.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return name in LOOPBACK_HOSTS


def principal(request: HTTPRequest) -> tuple[Account | None, bool]:
    """(who is asking or None, whether it came with a Bearer token)."""
    ctx: Context = ctx_of(request)
    token = bearer(request)
    if token is not None:
        return ctx.accounts.authenticate(token), True
    session = session_of(request)
    if session.user:
        if session.user == LOCAL.name and ctx.local_mode():
            return (LOCAL if loopback_host(request) else None), False
        return ctx.accounts.get(session.user), False
    if ctx.local_mode() and loopback_host(request):
        return LOCAL, False
    return None, False


__all__ = [
    "COOKIE",
    "LOCAL",
    "Session",
    "bearer",
    "csrf_ok",
    "csrf_token",
    "decode_session",
    "encode_session",
    "new_session",
    "persist_session",
    "principal",
    "session_of",
    "set_session",
]
