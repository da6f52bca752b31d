"""Who is asking: Bearer tokens (API), signed session cookies (pages), CSRF, local mode.

Session cookie ``signoff_session`` = ``base64url(json{u, exp, n}) . hmac`` signed with the
session key (kept outside the database, see signoff.keys); HttpOnly, SameSite=Strict,
Path=/. Every visitor gets one (``u`` empty until login), so even the login form carries a
CSRF token: ``csrf = hmac(secret, "csrf:" + n)``. Form posts send it as the ``csrf`` field,
scripts as the ``X-CSRF-Token`` header; a post with a cookie session and no valid token is
refused. A signed-in session is also a row on the server (`Accounts.open_session`): signing
out deletes it, so the old cookie, and the CSRF token made from its nonce, open nothing
afterwards (the cookie counts as a new anonymous visitor's).

A hook's token (role ``hook``) is no visitor: `principal` knows nobody by it, and
`hook_token_name` lets the API say why it was refused.

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
SESSION_KEY = "signoff.session"  # scope key: the visitor's session, read once a request
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
    cached = request.scope.get(SESSION_KEY)
    if isinstance(cached, Session):
        return cached
    ctx = ctx_of(request)
    raw = request.cookies.get(COOKIE)
    session = decode_session(ctx.secret, raw) if raw else None
    if (
        session is not None
        and session.user
        and not ctx.accounts.session_open(session.user, session.nonce)
    ):
        session = None  # signed out (or the account removed): the cookie opens nothing
    if session is None:
        session = new_session()
    request.scope[SESSION_KEY] = session
    return session


def sign_in(request: HTTPRequest, response: Response, user: str) -> None:
    """A new signed-in session for `user` (a new nonce: a new CSRF token), on the server
    and in the cookie."""
    session = new_session(user)
    ctx_of(request).accounts.open_session(user, session.nonce, session.expires)
    set_session(request, response, session)


def sign_out(request: HTTPRequest, response: Response) -> None:
    """End the visitor's session on the server, and drop its cookie."""
    session = session_of(request)
    if session.user:
        ctx_of(request).accounts.end_session(session.nonce)
    request.scope[SESSION_KEY] = new_session()
    response.delete_cookie(COOKIE, path="/")


def set_session(request: HTTPRequest, response: Response, session: Session) -> None:
    ctx = ctx_of(request)
    request.scope[SESSION_KEY] = session
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


HOOK_TOKEN = "signoff.hook_token"  # scope key: the Bearer token was this hook's


def hook_token_name(request: HTTPRequest) -> str | None:
    """The hook whose token came with this request (refused by `principal`), if any."""
    name = request.scope.get(HOOK_TOKEN)
    return name if isinstance(name, str) else None


def principal(request: HTTPRequest) -> tuple[Account | None, bool]:
    """(who is asking or None, whether it came with a Bearer token). A hook's token is
    nobody here: it posts hook events (web.hooks) and opens nothing else."""
    ctx: Context = ctx_of(request)
    token = bearer(request)
    if token is not None:
        account = ctx.accounts.authenticate(token)
        if account is not None and account.is_hook:
            request.scope[HOOK_TOKEN] = account.name
            return None, True
        return account, True
    session = session_of(request)
    if session.user:
        if session.user == LOCAL.name and ctx.local_mode():
            return (LOCAL if loopback_host(request) else None), False
        account = ctx.accounts.get(session.user)
        return (None if account is None or account.is_hook else account), False
    if ctx.local_mode() and loopback_host(request):
        return LOCAL, False
    return None, False


__all__ = [
    "COOKIE",
    "LOCAL",
    "SESSION_KEY",
    "Session",
    "bearer",
    "csrf_ok",
    "csrf_token",
    "decode_session",
    "encode_session",
    "hook_token_name",
    "new_session",
    "persist_session",
    "principal",
    "session_of",
    "set_session",
    "sign_in",
    "sign_out",
]
