"""Keeping the leases a driver holds while it works: the run's, for the whole drive (a
model call or a tool may take longer than the lease), and the claim of the approved call
running now. A thread renews them every third of the lease; the process dying stops it,
so a crashed driver's leases lapse as before and its call goes in doubt.

A renewal that finds the lease taken (another worker took the run after it lapsed, a
person settled the call) marks it lost; the driver checks before each model call and
each tool and stops driving that run (`LeaseLost`), never running a call for a run that
is no longer its own. A store outage does not lose a lease: the renewal is tried again
at the next beat, and a lease that lapses meanwhile is lost only if someone takes it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from ..exceptions import LeaseLost, StoreUnavailable
from ..store import Store

log = logging.getLogger(__name__)
SHORTEST_BEAT_S = 0.05


class LeaseKeeper:
    """`with LeaseKeeper(store, run_id, worker, seconds) as keeper:` renews the run's lease
    until the block ends; `with keeper.holding(request_id, token):` renews that claim
    too; `keeper.check()` raises LeaseLost once either was taken. With `run_id` None it
    renews only the claims it holds (a framework adapter's call)."""

    def __init__(self, store: Store, run_id: str | None, worker: str, seconds: float) -> None:
        self.store = store
        self.run_id = run_id
        self.worker = worker
        self.seconds = float(seconds)
        self.beat = max(self.seconds / 3.0, SHORTEST_BEAT_S)
        self.lost: str | None = None
        self._claim: tuple[str, str] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LeaseKeeper:
        self._thread = threading.Thread(
            target=self._loop, name=f"signoff-lease-{self.run_id or 'call'}", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    @contextmanager
    def holding(self, request_id: str, token: str) -> Iterator[None]:
        """Renew this claim too while the block runs (the approved call's tool)."""
        self._claim = (request_id, token)
        try:
            yield
        finally:
            self._claim = None

    def check(self) -> None:
        """LeaseLost if the run (or the claim held) is no longer this driver's."""
        if self.lost is not None:
            raise LeaseLost(self.lost)

    def _loop(self) -> None:
        while not self._stop.wait(self.beat):
            if not self.renew():
                return

    def renew(self) -> bool:
        """One beat; False once a lease is lost (nothing more to renew)."""
        claim = self._claim
        try:
            if self.run_id is not None and not self.store.renew_run(
                self.run_id, self.worker, lease_seconds=self.seconds
            ):
                self.lost = (
                    f"run {self.run_id} is no longer leased to {self.worker}: its lease "
                    "lapsed and another worker took it, or a person let it go"
                )
                return False
            if claim is not None and not self.store.renew_claim(
                claim[0], claim[1], lease_seconds=self.seconds
            ):
                self.lost = (
                    f"request {claim[0]} is no longer claimed by {self.worker}: its lease "
                    "lapsed (the call is in doubt) or a person settled it"
                )
                return False
        except StoreUnavailable as exc:  # tried again at the next beat
            log.debug("renewing the lease of run %s: %s", self.run_id, exc)
        except Exception as exc:  # a bug or a broken store: the drive's own calls say so
            log.warning(
                "renewing the lease of run %s: %s: %s", self.run_id, type(exc).__name__, exc
            )
        return True


__all__ = ["LeaseKeeper"]
