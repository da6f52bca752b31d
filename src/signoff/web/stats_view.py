"""The statistics page (`/stats`): the figures of `signoff stats` and a small chart.

The figures come from `signoff.audit.stats.load_stats` (the same `Stats` that `signoff stats
--json` and `GET /api/stats` print). The chart of `by_day` is inline SVG whose geometry is
computed here and drawn by `templates/stats.html`: no script, no inline style (the CSP holds),
with a `<title>`, a `<desc>` and a table of the same numbers for people who cannot see it.
Suggestions quote tool names and rules the model wrote: they are printed like every other
model-written string (autoescaped, control characters shown as escapes).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import anyio
from starlette.requests import Request as HTTPRequest
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..approvals import grant_project_rule
from ..audit import parse_since
from ..audit.stats import DEFAULT_MIN_COUNT, Day, Stats, load_stats
from ..exceptions import InvalidInput, SignoffError
from ..i18n import Lang
from .auth import principal
from .core import ctx_of, lang_of, status_of, whole_number
from .pages import checked_form, csrf_refused, login_redirect, render

MAX_DAYS = 60  # bars drawn; the table under the chart lists every day
MAX_MIN_COUNT = 100_000
WIDTH, HEIGHT = 720, 200
LEFT, RIGHT, TOP, BOTTOM = 36, 8, 12, 26  # plot margins (axis labels live there)


# ------------------------------------------------------------------ query parameters


def since_param(request: HTTPRequest) -> tuple[str, float | None]:
    """`?since=` with the CLI's syntax (`signoff.audit.parse_since`): 7d, 12h, an ISO date,
    epoch seconds. Returns the text as given and epoch seconds (None: all time)."""
    text = request.query_params.get("since", "").strip()
    if not text:
        return "", None
    try:
        value = parse_since(text)
    except InvalidInput as exc:
        raise InvalidInput(str(exc).removeprefix("--")) from None
    except (OverflowError, ValueError):  # a date beyond what a timestamp holds
        value = math.nan
    if not math.isfinite(value):
        raise InvalidInput(f"since {text!r}: not a time signoff can use; try 7d, 12h or 2025-01-31")
    return text, value


def min_count_param(request: HTTPRequest) -> int:
    return whole_number(
        request.query_params.get("min_count"), "min_count", DEFAULT_MIN_COUNT, 1, MAX_MIN_COUNT
    )


# ------------------------------------------------------------------ the chart


@dataclass(frozen=True, slots=True)
class Bar:
    kind: str  # calls, asked, approve, edit, reject (a CSS class: bar-<kind>)
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True, slots=True)
class Group:
    """One day: its bars and the sentence a tooltip or a screen reader gives."""

    day: Day
    bars: tuple[Bar, ...]


@dataclass(frozen=True, slots=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "middle"


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    groups: tuple[Group, ...]
    labels: tuple[Label, ...]
    baseline: float
    top: float
    left: float
    right: float
    ymax: int
    first: str
    last: str
    days: tuple[Day, ...]  # every day with activity (the table)
    drawn: int  # days drawn
    hidden: int  # older days with activity left out of the drawing
    totals: dict[str, int]


def _parse_day(text: str) -> date:
    return date.fromisoformat(text)


def _span(days: tuple[Day, ...], since: float | None, now: float) -> list[Day]:
    """Every day from the first to the last (quiet days as zeros); with a window, from its
    first day to today."""
    known = {d.date: d for d in days}
    first = _parse_day(days[0].date)
    last = _parse_day(days[-1].date)
    if since is not None:
        since = min(max(since, 0.0), now)  # any start older than the drawn days will do
        first = min(first, datetime.fromtimestamp(since, UTC).date())
        last = max(last, datetime.fromtimestamp(now, UTC).date())
    first = max(first, last - timedelta(days=MAX_DAYS - 1))
    out = []
    day = first
    while day <= last:
        key = day.isoformat()
        out.append(known.get(key, Day(key)))
        day += timedelta(days=1)
    return out


def build_chart(stats: Stats, *, now: float | None = None) -> Chart | None:
    """Two bars a day: calls (with the asked ones drawn over them) and decisions stacked
    (approve, edit, reject). None when there is nothing to draw."""
    if not stats.by_day:
        return None
    now = time.time() if now is None else now
    shown = _span(stats.by_day, stats.since, now)
    ymax = max([1, *(max(d.calls, d.asked, d.approve + d.edit + d.reject) for d in shown)])
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    base = TOP + plot_h
    step = plot_w / len(shown)
    bar_w = max(1.0, step * 0.38)

    def height(value: int) -> float:
        return 0.0 if value <= 0 else max(1.0, round(value / ymax * plot_h, 1))

    groups = []
    for i, d in enumerate(shown):
        x0 = LEFT + i * step + step * 0.08
        x1 = x0 + bar_w + step * 0.04
        bars = []
        for kind, value, x in (("calls", d.calls, x0), ("asked", d.asked, x0)):
            h = height(value)
            if h:
                bars.append(Bar(kind, round(x, 1), round(base - h, 1), round(bar_w, 1), h))
        y = float(base)
        for kind, value in (("approve", d.approve), ("edit", d.edit), ("reject", d.reject)):
            h = height(value)
            if h:
                y -= h
                bars.append(Bar(kind, round(x1, 1), round(y, 1), round(bar_w, 1), h))
        groups.append(Group(d, tuple(bars)))

    picks = (
        sorted({0, len(shown) // 2, len(shown) - 1}) if len(shown) > 2 else list(range(len(shown)))
    )
    labels = [Label(round(LEFT + (i + 0.5) * step, 1), HEIGHT - 8, shown[i].date) for i in picks]
    labels += [Label(LEFT - 4, TOP + 4, str(ymax), "end"), Label(LEFT - 4, base, "0", "end")]
    totals = {
        k: sum(getattr(d, k) for d in stats.by_day)
        for k in ("calls", "asked", "approve", "edit", "reject")
    }
    drawn_dates = {d.date for d in shown}
    return Chart(
        WIDTH,
        HEIGHT,
        tuple(groups),
        tuple(labels),
        base,
        TOP,
        LEFT,
        WIDTH - RIGHT,
        ymax,
        shown[0].date,
        shown[-1].date,
        stats.by_day,
        len(shown),
        sum(1 for d in stats.by_day if d.date not in drawn_dates),
        totals,
    )


# ------------------------------------------------------------------ formatting


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


_UNITS: dict[Lang, tuple[tuple[str, int], ...]] = {
    "en": (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)),
    "zh": ((" 天", 86400), (" 小时", 3600), (" 分钟", 60), (" 秒", 1)),
}


def duration(value: float | None, lang: Lang = "en") -> str:
    """Like `signoff stats`: 45s, 2.5m, 1.2h, 3.0d."""
    if value is None:
        return "-"
    seconds = float(value)
    for unit, size in _UNITS[lang]:
        if size > 1 and seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}{_UNITS[lang][-1][0]}"


def number(value: float | int | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.2f}".rstrip("0")
    return str(int(value))


# ------------------------------------------------------------------ the page


async def stats_page(request: HTTPRequest) -> Response:
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    ctx = ctx_of(request)
    lang = lang_of(request)
    since_text = request.query_params.get("since", "").strip()
    values: dict[str, Any] = {
        "since_text": since_text,
        "pct": pct,
        "number": number,
        "duration": lambda v: duration(v, lang),
        "presets": ("24h", "7d", "30d"),
    }
    try:
        _, since = since_param(request)
        min_count = min_count_param(request)
        stats: Stats = await anyio.to_thread.run_sync(
            lambda: load_stats(ctx.store, since=since, min_count=min_count)
        )
    except SignoffError as exc:
        return render(
            request, "stats.html", status_of(exc), error=str(exc), stats=None, chart=None, **values
        )
    return render(
        request,
        "stats.html",
        stats=stats,
        chart=build_chart(stats),
        top_runs=stats.per_run[:5],
        **values,
    )


async def allow_suggested(request: HTTPRequest) -> Response:
    """An admin turns an allow suggestion into a project grant. Only a rule the statistics
    suggest right now is accepted (judged again here, with the same safety checks: never
    one that was rejected or denied), so this form cannot write an arbitrary rule."""
    who, _ = principal(request)
    if who is None:
        return login_redirect(request)
    form = await checked_form(request)
    if form is None:
        return csrf_refused(request)
    if not who.is_admin:
        return render(request, "error.html", 403, message="Only an admin may add a rule.")
    ctx = ctx_of(request)
    rule = str(form.get("rule") or "")
    raw_count = form.get("min_count")

    def apply() -> None:
        count = whole_number(
            raw_count if isinstance(raw_count, str) else None,
            "min_count",
            DEFAULT_MIN_COUNT,
            1,
            MAX_MIN_COUNT,
        )
        stats = load_stats(ctx.store, min_count=count)
        if rule not in {s.rule for s in stats.suggestions if s.kind == "allow"}:
            raise InvalidInput(
                f"{rule!r} is not an allow rule signoff suggests now; add "
                "other rules with `signoff grant add`"
            )
        grant_project_rule(ctx.store, rule, actor=who.name, workspace=ctx.workspace)

    try:
        await anyio.to_thread.run_sync(apply)
    except SignoffError as exc:
        return render(request, "error.html", status_of(exc), message=str(exc))
    return RedirectResponse("/grants?m=granted", status_code=303)


ROUTES = [Route("/stats", stats_page), Route("/stats/allow", allow_suggested, methods=["POST"])]

__all__ = ["ROUTES", "build_chart", "duration", "min_count_param", "pct", "since_param"]
