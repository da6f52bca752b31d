"""The store's part of running an approved call, made to ride out an outage: the claim,
the call judged again (it reads the grants), the report. Each is tried again with backoff
(`signoff.outage`) while the store is away, for up to a lease (at least a minute), and
recognised when an earlier try landed but its answer was lost: the claim by the token
this worker chose, the report by its result's digest. Otherwise a call that never ran, or
one that ran and whose result is known, would hold its claim until the lease lapsed and
go in doubt for a person.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from typing import TypeVar

from ..exceptions import ConflictError, LeaseLost, NotAuthorized, StoreUnavailable
from ..models import sha256_hex
from ..outage import Outage
from ..store import Store
from ..store.base import Claim

log = logging.getLogger(__name__)
MIN_RETRY_S = 60.0  # each step is tried at least this long across an outage
T = TypeVar("T")


def through(attempt: Callable[[], T], what: str, worker: str, seconds: float) -> T:
    """`attempt()`, tried again across a store outage for up to `seconds` (at least a
    minute); one line when the outage starts, one when it ends."""
    outage: Outage | None = None
    give_up = time.monotonic() + max(seconds, MIN_RETRY_S)
    while True:
        try:
            value = attempt()
        except StoreUnavailable as exc:
            if time.monotonic() > give_up:
                raise
            outage = outage or Outage(f"{worker}: {what}", log.warning)
            time.sleep(outage.failed(exc))
            continue
        if outage is not None:
            outage.recovered()
        return value


def claim(store: Store, request_id: str, worker: str, seconds: float) -> Claim:
    """Claim the approved call, through an outage: the token is chosen here, so a claim
    that landed before the connection broke is the same claim when tried again."""
    token = secrets.token_urlsafe(24)
    return through(
        lambda: store.claim(request_id, worker=worker, lease_seconds=seconds, token=token),
        f"claiming {request_id}",
        worker,
        seconds,
    )


def report(
    store: Store, request_id: str, token: str, ok: bool, text: str, worker: str, seconds: float
) -> None:
    """Store the outcome of a claimed call, through an outage (the claim is renewed
    meanwhile once the store answers; one that lapsed is in doubt, and a late report
    still settles it). One that cannot be made (a person settled the call meanwhile)
    ends this run's handling, saying what the call did (LeaseLost)."""
    digest = sha256_hex(text)
    tries = 0

    def attempt() -> None:
        nonlocal tries
        tries += 1
        try:
            store.finish(request_id, token, ok=ok, result_digest=digest, result=text)
        except (ConflictError, NotAuthorized) as exc:
            if tries > 1 and _reported(store, request_id, ok, digest):
                return  # a try before the outage landed; its answer was lost
            raise LeaseLost(
                f"request {request_id} ran here ({'ok' if ok else 'failed'}) but its outcome "
                f"could not be reported: {exc}"
            ) from None

    through(attempt, f"reporting {request_id}", worker, seconds)


def _reported(store: Store, request_id: str, ok: bool, digest: str) -> bool:
    outcome = store.get_outcome(request_id) or {}
    return outcome.get("ok") is ok and outcome.get("result_digest") == digest


__all__ = ["MIN_RETRY_S", "claim", "report", "through"]
