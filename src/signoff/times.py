"""How stored times read to people: `when` (a UTC timestamp, tolerant of a time edited by
hand in the database) and `age` (how long ago). Below the store, so that the store, the
CLI and the web all say times the same way."""

from __future__ import annotations

import time


def when(ts: float | None) -> str:
    if ts is None:
        return "never"
    try:
        from datetime import UTC, datetime  # a message's time: not on every import

        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError, TypeError):  # a stored time edited by hand
        return f"{ts!r} (not a valid time)"


def age(ts: float) -> str:
    """How long ago, in the largest whole unit: 45s, 12m, 3h, 2d."""
    seconds = max(0, int(time.time() - ts))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def relative(ts: float, now: float | None = None) -> str:
    """How far away in words: "in 59 min", "in 23 h 5 min", "in 3 days", "2 min ago"."""
    now = time.time() if now is None else now
    seconds = round(ts - now)
    span = abs(seconds)
    if span < 60:
        words = f"{span} s"
    elif span < 3600:
        words = f"{span // 60} min"
    elif span < 2 * 86400:
        hours, minutes = divmod(span // 60, 60)
        words = f"{hours} h {minutes} min" if minutes else f"{hours} h"
    else:
        words = f"{span // 86400} days"
    return f"in {words}" if seconds >= 0 else f"{words} ago"


__all__ = ["age", "relative", "when"]
