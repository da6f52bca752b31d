"""Notifications driven by the events feed: generic JSON webhooks and Slack messages.

Configured in `.signoff/settings.toml`::

    [notifications]
    base_url = "https://signoff.example.com"     # links in messages (else serve's URL)

    [notifications.ops]                          # one table per destination
    type = "webhook"                             # or "slack" (incoming webhook)
    url = "https://hooks.example.com/signoff"
    secret_env = "SIGNOFF_OPS_SECRET"            # or secret = "..." (HMAC-SHA256 key)
    events = [REQUEST_CREATED]                 # the default
    retries = 4                                  # attempts after the first
    backoff = 1.0                                # seconds, doubled each retry

Each destination reads the feed with its own acknowledged cursor (consumer `notify:<name>`): an
event is acknowledged only after its delivery finished (delivered, or failed after every
retry), so a restart neither loses nor repeats a notification; a crash mid-delivery sends
it again with the same `Idempotency-Key` (the event's sequence number). Each outcome is
recorded as a `notify.delivered` or `notify.failed` event on the request.

Webhook headers: `X-Signoff-Timestamp: <unix seconds>`, `X-Signoff-Signature:
sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`, `X-Signoff-Event`, `Idempotency-Key`.
Receivers check both with `verify()`, which refuses a timestamp older (or newer) than
five minutes, so a captured delivery cannot be replayed later.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .escape import escape_untrusted
from .exceptions import ConfigurationError, NotFound
from .kinds import REQUEST_CREATED
from .present import request_json, summary
from .settings import Settings
from .store import Event, Store
from .store.base import DELIVERED, DELIVERY_FAILED

log = logging.getLogger(__name__)

DEFAULT_EVENTS = (REQUEST_CREATED,)
DEFAULT_TOLERANCE = 300.0  # seconds a signed timestamp stays acceptable to a receiver


@dataclass(frozen=True)
class Destination:
    name: str
    type: str
    url: str
    secret: bytes = b""
    events: tuple[str, ...] = DEFAULT_EVENTS
    retries: int = 4
    backoff: float = 1.0
    timeout: float = 10.0

    @property
    def consumer(self) -> str:
        return f"notify:{self.name}"

    @classmethod
    def from_table(cls, name: str, table: Mapping[str, Any]) -> Destination:
        kind = table.get("type", "webhook")
        url = table.get("url")
        if kind not in ("webhook", "slack"):
            raise ConfigurationError(f"[notifications.{name}] type must be webhook or slack")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigurationError(f'[notifications.{name}] needs url = "https://..."')
        secret = table.get("secret")
        env = table.get("secret_env")
        if isinstance(env, str):
            secret = os.environ.get(env)
            if secret is None:
                raise ConfigurationError(f"[notifications.{name}] secret_env {env} is not set")
        events = table.get("events", list(DEFAULT_EVENTS))
        if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
            raise ConfigurationError(f"[notifications.{name}] events must be a list of kinds")
        return cls(
            name,
            kind,
            url,
            str(secret or "").encode(),
            tuple(events),
            int(table.get("retries", 4)),
            float(table.get("backoff", 1.0)),
            float(table.get("timeout", 10.0)),
        )


def sign(secret: bytes, body: bytes, timestamp: int) -> str:
    """`sha256=` + the hex HMAC-SHA256 of `<timestamp>.<body>` (Slack's scheme)."""
    signed = str(int(timestamp)).encode() + b"." + body
    return "sha256=" + hmac.new(secret, signed, hashlib.sha256).hexdigest()


def _ascii(value: object) -> str | None:
    if isinstance(value, bytes):
        return value.decode("ascii") if value.isascii() else None
    return value if isinstance(value, str) and value.isascii() else None


def verify(
    secret: bytes,
    body: bytes,
    signature: str | bytes | None,
    timestamp: str | bytes | None,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> bool:
    """For receivers: do `X-Signoff-Signature` and `X-Signoff-Timestamp` sign this body,
    and is the timestamp within `tolerance` seconds of now (default 5 minutes)?

    Constant-time in the signature, and it never raises: a missing, non-ASCII or
    malformed header, a timestamp outside the window (a replay) or any other problem is
    simply False.
    """
    try:
        sig = _ascii(signature)
        stamp = _ascii(timestamp)
        if not secret or not isinstance(body, bytes) or sig is None or stamp is None:
            return False
        if not stamp.isdigit() or len(stamp) > 12:  # whole seconds, no sign, no float
            return False
        moment = int(stamp)
        current = time.time() if now is None else now
        if not abs(current - moment) <= tolerance:
            return False
        expected = sign(secret, body, moment).encode()
        return hmac.compare_digest(expected, sig.encode())
    except Exception:  # a receiver's check must answer, never crash its handler
        return False


def _slack_escape(text: str) -> str:
    """Model-written text in a Slack message: on one line (a newline, a control or bidi
    character shown escaped: no line of it can pass for signoff's own, "Approved by
    alice"), and no `<...>` Slack would read as a link or a mention."""
    one_line = escape_untrusted(text, newline=False, tab=False)
    return one_line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Notifier:
    def __init__(
        self,
        store: Store,
        destinations: list[Destination],
        *,
        base_url: str = "",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.destinations = destinations
        self.base_url = base_url.rstrip("/")
        self.sleep = sleep

    @classmethod
    def from_settings(
        cls, store: Store, settings: Settings, *, base_url: str = "", **options: Any
    ) -> Notifier:
        table = settings.extra.get("notifications") or {}
        if not isinstance(table, Mapping):
            raise ConfigurationError("[notifications] must be a table")
        destinations = [
            Destination.from_table(name, value)
            for name, value in table.items()
            if isinstance(value, Mapping)
        ]
        base = table.get("base_url") if isinstance(table.get("base_url"), str) else base_url
        return cls(store, destinations, base_url=str(base or ""), **options)

    # ------------------------------------------------------------------ loop

    def run(self, stop: Callable[[], bool] | None = None, poll: float = 1.0) -> int:
        """Deliver until stopped. A store outage is waited out with backoff, said once when
        it starts and once when it ends (see signoff.outage); delivery is at least once,
        so an event delivered just before the store went away may be delivered again."""
        from .exceptions import StoreUnavailable
        from .outage import Outage

        outage = Outage("notify", log.warning)
        done = 0
        while stop is None or not stop():
            try:
                seen = self.store.last_seq()  # before reading: an event landing after the
                outage.recovered()  # read still ends the wait (see worker.work)
                done += self.run_once()
                self.store.wait_for_event(poll, after_seq=seen)
            except StoreUnavailable as exc:
                self.sleep(outage.failed(exc))
        return done

    def run_once(self) -> int:
        done = 0
        for destination in self.destinations:
            while True:
                batch = self.store.read_events(destination.consumer, limit=100)
                if not batch:
                    break
                for event in batch:
                    if event.kind in destination.events and not event.kind.startswith("notify."):
                        self.deliver(destination, event)
                        done += 1
                    self.store.ack(destination.consumer, event.seq)
        return done

    # ------------------------------------------------------------------ one delivery

    def link(self, event: Event) -> str:
        return f"{self.base_url}/requests/{event.request_id}" if event.request_id else self.base_url

    def body(self, destination: Destination, event: Event) -> bytes:
        request = None
        if event.request_id:
            try:
                request = self.store.get_request(event.request_id)
            except NotFound:
                request = None
        if destination.type == "slack":
            if request is None:
                text = f"signoff: {event.kind}"
            else:
                what = _slack_escape(summary(request)[:300])
                text = (
                    f"*Approval needed* ({request.verdict.risk} risk): "
                    f"`{_slack_escape(request.call.name)}` {what}\n"
                    f"<{self.link(event)}|Open request {request.id}>"
                )
            doc: dict[str, Any] = {"text": text}
        else:
            doc = {
                "event": event.kind,
                "seq": event.seq,
                "ts": event.ts,
                "url": self.link(event),
                "data": dict(event.data),
                "request": request_json(request, self.store) if request else None,
            }
        return json.dumps(doc, ensure_ascii=False, sort_keys=True).encode()

    def deliver(self, destination: Destination, event: Event) -> bool:
        body = self.body(destination, event)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "signoff-notify",
            "X-Signoff-Event": event.kind,
            "Idempotency-Key": str(event.seq),
        }
        status = ""
        attempts = 0
        ok = False
        for attempt in range(destination.retries + 1):
            attempts = attempt + 1
            if attempt:
                delay = destination.backoff * 2 ** (attempt - 1)
                log.warning(
                    "notify %s: event %s not delivered (status %s); retry %d in %.1fs",
                    destination.name,
                    event.seq,
                    status,
                    attempt,
                    delay,
                )
                self.sleep(delay)
            if destination.secret:  # signed afresh for each attempt: retries stay in the window
                stamp = int(time.time())
                headers["X-Signoff-Timestamp"] = str(stamp)
                headers["X-Signoff-Signature"] = sign(destination.secret, body, stamp)
            ok, status, retry = self._post(destination, body, headers)
            if ok or not retry:
                break
        if not ok:
            log.error(
                "notify %s: event %s not delivered after %d attempts (status %s)",
                destination.name,
                event.seq,
                attempts,
                status,
            )
        self.store.record(
            DELIVERED if ok else DELIVERY_FAILED,
            {
                "channel": destination.name,
                "type": destination.type,
                "status": status,
                "attempts": attempts,
                "event_seq": event.seq,
            },
            request_id=event.request_id,
            run_id=event.run_id,
            actor=f"notify:{destination.name}",
        )
        return ok

    def _post(
        self, destination: Destination, body: bytes, headers: dict[str, str]
    ) -> tuple[bool, str, bool]:
        """(ok, status text, worth retrying)."""
        req = urllib.request.Request(destination.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=destination.timeout) as res:
                return 200 <= res.status < 300, str(res.status), res.status >= 500
        except urllib.error.HTTPError as exc:
            return False, str(exc.code), exc.code >= 500 or exc.code in (408, 429)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            return False, f"error: {exc}", True


__all__ = ["DEFAULT_TOLERANCE", "Destination", "Notifier", "sign", "verify"]
