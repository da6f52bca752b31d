"""What every web module shares: the app context, the language, inert rendering, errors."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse as StarletteJSONResponse

from ..accounts import Account, Accounts
from ..channels.render import command_first, escape_untrusted, safe_json
from ..exceptions import (
    ConflictError,
    IntegrityError,
    InvalidInput,
    NotAuthorized,
    NotFound,
    RequestExpired,
    SignoffError,
    StoreUnavailable,
)
from ..i18n import Lang
from ..run_state import parent_runs
from ..settings import Settings
from ..store import Store
from .limits import PAGE_TEXT_LIMIT
from .strings import wt

if TYPE_CHECKING:
    from .events import Broadcaster

HERE = Path(__file__).parent


@dataclass
class Context:
    """Everything a handler needs; one per app (`request.app.state.ctx`)."""

    store: Store
    accounts: Accounts
    workspace: Path
    settings: Settings
    secret: bytes
    forbid_self_approval: bool = False
    base_url: str = ""
    store_url: str = ""
    worker: bool = False  # this server resumes runs itself (signoff serve without --no-worker)
    worker_failures: Mapping[str, str] = field(default_factory=dict)  # run id -> why not
    env: Environment = field(init=False)
    broadcaster: Broadcaster | None = None

    def __post_init__(self) -> None:
        self.env = make_env()

    def local_mode(self) -> bool:
        """No accounts of people yet (a hook is none): the local user (loopback only) acts
        as admin, like the CLI."""
        return self.accounts.people() == 0


def ctx_of(request: HTTPRequest) -> Context:
    ctx: Context = request.app.state.ctx
    return ctx


# ------------------------------------------------------------------ inert rendering


def inert(value: Any) -> Any:
    """Jinja finalize: every string printed has its bidi/zero-width/control characters
    shown as visible escapes (autoescape then handles < > & " '). Trusted markup passes."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return escape_untrusted(value)


def when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


_TICKS = re.compile(r"`([^`\n]+)`")


def ticks(value: Any) -> Markup:
    """Our own sentences name commands in `backticks` (as the CLI prints them): on a page
    they are set as code. Everything is escaped and made inert first; only <code> is added."""
    parts = _TICKS.split(str(inert(value)))
    return Markup("").join(
        Markup("<code>{}</code>").format(part) if i % 2 else escape(part)
        for i, part in enumerate(parts)
    )


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def clip_text(value: Any, limit: int = PAGE_TEXT_LIMIT) -> Any:
    """A string cut for a page, with its full length noted; anything else as it is."""
    if not isinstance(value, str) or len(value) <= limit:
        return value
    return (
        f"{value[:limit]}\n… [cut: {len(value):,} characters in all; "
        "the whole request is under “raw” on its page]"
    )


def pretty_clipped(value: Any) -> Any:
    return clip_text(pretty_json(value))


def call_clipped(arguments: Any) -> Any:
    """A call's arguments as `pretty` shows them, but a shell call's command first: a long
    description (or any key that sorts before it) never pushes it past the cut."""
    ordered = command_first(json.loads(pretty_json(arguments)))
    return clip_text(json.dumps(ordered, indent=2, ensure_ascii=False))


def make_env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(HERE / "templates")),
        autoescape=select_autoescape(default=True, default_for_string=True),
        finalize=inert,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["pretty"] = pretty_clipped  # pages show a head; /requests/{id}/raw the whole
    env.filters["call"] = call_clipped
    env.filters["clip"] = clip_text
    env.filters["ticks"] = ticks
    env.globals["parent_runs"] = parent_runs  # a child run's card names the runs above it
    return env


# ------------------------------------------------------------------ language


def lang_of(request: HTTPRequest) -> Lang:
    asked = request.query_params.get("lang") or request.cookies.get("signoff_lang")
    if asked in ("en", "zh"):
        return "zh" if asked == "zh" else "en"
    header = request.headers.get("accept-language", "")
    best: tuple[float, Lang] = (0.0, "en")
    for item in header.split(","):
        tag, _, q = item.strip().partition(";q=")
        try:
            weight = float(q) if q else 1.0
        except ValueError:
            weight = 0.0
        code = tag.strip().lower()[:2]
        if code in ("en", "zh") and weight > best[0]:
            best = (weight, "zh" if code == "zh" else "en")
    return best[1]


def translator(lang: Lang) -> Any:
    def _t(key: str, **values: object) -> str:
        return wt(key, lang, **values)

    return _t


# ------------------------------------------------------------------ errors

STATUS: tuple[tuple[type[Exception], int], ...] = (
    (StoreUnavailable, 503),  # a database restarting: the client tries again
    (NotFound, 404),
    (NotAuthorized, 403),
    (RequestExpired, 410),
    (IntegrityError, 409),
    (ConflictError, 409),
    (InvalidInput, 422),
    (SignoffError, 400),
)


def status_of(exc: Exception) -> int:
    for cls, code in STATUS:
        if isinstance(exc, cls):
            return code
    return 500


def whole_number(raw: str | None, name: str, default: int, low: int, high: int) -> int:
    """A whole-number query or form value within [low, high]; InvalidInput names it."""
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(f"{name} must be an integer") from None
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be between {low} and {high}")
    return value


class JSONResponse(StarletteJSONResponse):
    """JSON as Starlette writes it, with C1, bidi and zero-width code points escaped (the
    same values): `curl` in a terminal shows model text inert, like the CLI's --json."""

    def render(self, content: Any) -> bytes:
        return safe_json(content, allow_nan=False, separators=(",", ":")).encode("utf-8")


def error(status: int, message: str, code: str = "error") -> JSONResponse:
    return JSONResponse({"error": code, "message": message}, status_code=status)


def error_code(exc: Exception) -> str:
    return {
        404: "not_found",
        403: "forbidden",
        410: "expired",
        409: "conflict",
        422: "invalid",
        400: "bad_request",
        503: "unavailable",
    }.get(status_of(exc), "error")


async def unavailable(request: HTTPRequest, exc: Exception) -> StarletteJSONResponse:
    """A store outage met outside a handler's own error handling (signing in, health):
    503 with one line and Retry-After, not a 500 with a traceback in the server's log."""
    return StarletteJSONResponse(
        {"error": "unavailable", "message": escape_untrusted(str(exc))},
        status_code=503,
        headers={"retry-after": "2"},
    )


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes")


__all__ = [
    "Account",
    "Context",
    "JSONResponse",
    "ctx_of",
    "error",
    "inert",
    "lang_of",
    "status_of",
    "when",
]
