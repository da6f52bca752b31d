"""Riding out a store outage in a loop that must outlive it (`signoff worker`, the worker,
live updates and notifier threads of `signoff serve`, `signoff notify`).

Between attempts the loop waits a capped exponential backoff with jitter: 0.5 s, 1 s,
2 s, ... up to 15 s, each a random 50-100 % of that, so the workers of a fleet do not all
knock at the same moment when the database comes back. It says once that the store went
away and once that it is back (how long, how many attempts), never once per attempt.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

FIRST_WAIT_S = 0.5
MAX_WAIT_S = 15.0


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class Outage:
    """One loop's view of the store's availability: `failed(exc)` after an attempt that
    found the store gone (returns how long to wait), `recovered()` after one that worked."""

    def __init__(
        self,
        who: str,
        report: Callable[[str], None],
        *,
        first: float = FIRST_WAIT_S,
        cap: float = MAX_WAIT_S,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.who = who
        self.report = report
        self.first = first
        self.cap = cap
        self._clock = clock
        self._jitter = jitter
        self._since: float | None = None
        self.attempts = 0  # failed attempts in the outage under way
        self.outages = 0  # outages seen, the one under way included

    @property
    def ongoing(self) -> bool:
        return self._since is not None

    def failed(self, exc: BaseException) -> float:
        """Note a failed attempt; the seconds to wait before the next one. The first
        failure of an outage is reported, the others are not."""
        if self._since is None:
            self._since = self._clock()
            self.attempts = 0
            self.outages += 1
            self.report(
                f"{self.who}: the store is unreachable ({_one_line(exc)}); trying again "
                f"with backoff, at most {self.cap:g} s apart"
            )
        self.attempts += 1
        wait = min(self.cap, self.first * 2.0 ** min(self.attempts - 1, 32))
        return wait * (0.5 + 0.5 * self._jitter())

    def recovered(self) -> None:
        """An attempt worked: the end of the outage under way (if any) is reported."""
        if self._since is None:
            return
        lasted = self._clock() - self._since
        self._since = None
        self.report(
            f"{self.who}: the store is back after {lasted:.1f} s "
            f"({self.attempts} failed {'attempt' if self.attempts == 1 else 'attempts'}); "
            "carrying on"
        )


__all__ = ["FIRST_WAIT_S", "MAX_WAIT_S", "Outage"]
