"""The rules every store follows, as pure functions: no I/O, no clock, no randomness
except where a caller asks for a fresh id or token.

Lifecycle (every arrow is a compare-and-set in one transaction, with its event)::

    pending ──decide──> approved ──claim──> claimed ──finish(ok)──> finished
       │                   │  ▲                │    └─finish(not ok)──> failed
       │                   │  │ retry          └─lease lapses──> in_doubt ──resolve──> finished
       │                   │  └──────────────────────────────────────────┘  │ failed │ approved
       ├──decide──> rejected | skipped | answered
       └──expiry──> expired  <──expiry── approved (an approval nobody claimed in time)

An approved request may be claimed until its expiry; after that it is expired (fail
closed: a stale approval never runs). A worker that finishes after its lease lapsed
(state in_doubt) may still report with its token: the truth beats the guess.

Integrity: a request's digest and binding are checked before a decision, and a claim also
checks the decision record that only a decision made through signoff (with the key, kept
outside the store) writes; see store/integrity.py.

Audit chain: every event's ``hash = sha256(prev_hash + entry)`` where ``entry`` is the
canonical JSON of the event (its sequence number is implied by its place in the chain);
where the chain ends is recorded too (see store/chain.py), so a deleted tail shows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence

from ..digests import compare_digest
from ..exceptions import (
    AlreadyClaimed,
    AlreadyDecided,
    ConflictError,
    IntegrityError,
    InvalidInput,
    NotAuthorized,
    RequestExpired,
)
from ..hints import literal_type
from ..keys import Keys
from ..kinds import (
    NOTIFY_DELIVERED,
    NOTIFY_FAILED,
    REQUEST_CLAIMED,
    REQUEST_CREATED,
    REQUEST_DECIDED,
    REQUEST_EXPIRED,
    REQUEST_FINISHED,
    REQUEST_IN_DOUBT,
    REQUEST_RESOLVED,
)
from ..models import (
    SCHEMA_VERSION,
    Decision,
    Request,
    Verdict,
    canonical_json,
    check_version,
    parent_runs,
    sha256_hex,
)
from ..records import field, record, replace
from ..times import when
from .integrity import (
    bind,
    check_shape,
    decision_message,
    verify_decision,
    verify_integrity,
)

DEFAULT_TTL_SECONDS = 24 * 3600.0
DEFAULT_LEASE_SECONDS = 300.0

DECISION_STATE: dict[str, RequestState] = {
    "approve": "approved",
    "approve_always": "approved",
    "edit": "approved",
    "reject": "rejected",
    "skip": "skipped",
    "respond": "answered",
}

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any, Literal

    from ..models import RequestState

    InDoubtOutcome = Literal["done", "failed", "retry"]
    # "now": on disk when the write returns; "soon": written when it returns (it survives
    # the process being killed), on disk moments later (a background flush; see
    # store.flusher). Only for records of what runs without a person: see Store.record.
    Flush = Literal["now", "soon"]

IN_DOUBT_OUTCOMES: tuple[InDoubtOutcome, ...] = ("done", "failed", "retry")
FLUSHES: tuple[Flush, ...] = ("now", "soon")
_LITERALS: dict[str, tuple[str, ...]] = {"InDoubtOutcome": IN_DOUBT_OUTCOMES, "Flush": FLUSHES}

if not TYPE_CHECKING:

    def __getattr__(name):
        return literal_type(__name__, _LITERALS, name)


def new_id() -> str:
    import uuid  # with platform: not for a process that only records a verdict

    return uuid.uuid4().hex


def clock(now: float | None) -> float:
    return time.time() if now is None else float(now)


# --------------------------------------------------------------------------- types


@record(frozen=True, slots=True)
class Event:
    """One entry of the events feed, which is also the audit log."""

    seq: int
    ts: float
    kind: str
    request_id: str | None
    run_id: str | None
    actor: str | None
    data: Mapping[str, Any]
    prev_hash: str = ""
    hash: str = ""
    nonce: str | None = None  # keyed entries (see chain.keyed_entry): "n" and "mac"
    mac: str | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "v": SCHEMA_VERSION,
            "seq": self.seq,
            "ts": self.ts,
            "kind": self.kind,
            "request_id": self.request_id,
            "run_id": self.run_id,
            "actor": self.actor,
            "data": dict(self.data),
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }
        if self.mac is not None:
            doc.update(n=self.nonce, mac=self.mac)
        return doc

    @classmethod
    def from_entry(cls, seq: int, entry: str, prev_hash: str, hash_: str) -> Event:
        doc = json.loads(entry)
        check_version(doc, "event")
        return cls(
            seq=seq,
            ts=doc["ts"],
            kind=doc["kind"],
            request_id=doc.get("request_id"),
            run_id=doc.get("run_id"),
            actor=doc.get("actor"),
            data=doc.get("data", {}),
            prev_hash=prev_hash,
            hash=hash_,
            nonce=doc.get("n"),
            mac=doc.get("mac"),
        )


@record(frozen=True, slots=True)
class Claim:
    """What a worker gets from claim(): the secret token finish() needs, and the payload."""

    token: str
    lease_expires_at: float
    request: Request
    worker: str


@record(frozen=True, slots=True)
class Draft:
    """An event about to be appended."""

    kind: str
    request_id: str | None
    run_id: str | None
    actor: str | None
    data: Mapping[str, Any]

    def doc(self, ts: float) -> dict[str, Any]:
        return {
            "v": SCHEMA_VERSION,
            "ts": ts,
            "kind": self.kind,
            "request_id": self.request_id,
            "run_id": self.run_id,
            "actor": self.actor,
            "data": dict(self.data),
        }

    def entry(self, ts: float) -> str:
        """The entry without a MAC (the format of older signoff versions)."""
        return dumps(self.doc(ts), "event")


# what the web notifier records about each delivery (see web/notify.py), on the request
DELIVERED, DELIVERY_FAILED = NOTIFY_DELIVERED, NOTIFY_FAILED
DELIVERY_KINDS = (DELIVERED, DELIVERY_FAILED)


def check_kind(kind: object, where: str) -> str:
    """An event kind: a non-empty printable string (no newline: see postgres `_joined`)."""
    if not isinstance(kind, str) or not kind or not kind.isprintable():
        raise InvalidInput(
            f"{where}: an event kind must be a non-empty printable string, not {kind!r}"
        )
    return kind


# one encoder for every call: json.dumps with these options builds a new one each time
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def dumps(value: Any, where: str = "document") -> str:
    """canonical_json for values the models already validated (same bytes, no re-walk)."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{where}: not JSON ({exc})") from exc


@record(frozen=True, slots=True)
class Row:
    """A stored request plus the execution columns that are not part of its document."""

    request: Request
    idempotent: bool = False
    token_hash: str | None = None
    worker: str | None = None
    lease_expires_at: float | None = None
    outcome: Mapping[str, Any] | None = None
    version: int = 0
    # The request's binding and decision record are known good in this process: a plan
    # built them with the store's keys, or checked them after the row was read. Only such
    # a row, kept in the store's cache, skips the checks: they catch changes made in the
    # database, and a row read from it (`from_columns`) is never `checked`; a change made
    # there since bumps the version, so the cached copy fails its compare-and-set and the
    # row is read, and checked, again. `replace` keeps the flag, so a plan that derives a
    # row from an unchecked one without checking it (resolve, expire) stays unchecked.
    checked: bool = field(default=False, compare=False)

    @property
    def state(self) -> str:
        return self.request.state

    def columns(self) -> tuple[Any, ...]:
        """(id, state, run_id, tenant, created_at, expires_at, idempotent, doc,
        token_hash, worker, lease_expires_at, outcome, version) -- every backend's order."""
        r = self.request
        return (
            r.id,
            r.state,
            r.run_id,
            r.tenant,
            r.created_at,
            r.expires_at,
            1 if self.idempotent else 0,
            dumps(r.to_json(), "request"),
            self.token_hash,
            self.worker,
            self.lease_expires_at,
            None if self.outcome is None else dumps(dict(self.outcome), "outcome"),
            self.version,
        )

    @classmethod
    def from_columns(cls, cols: Sequence[Any]) -> Row:
        (rid, state, _r, _t, _c, _e, idem, doc, token_hash, worker, lease, outcome, ver) = cols
        try:
            parsed = json.loads(doc)
        except (TypeError, ValueError) as exc:
            raise IntegrityError(f"request {rid}: stored document is not valid JSON") from exc
        check_version(parsed, "request")
        try:
            request = Request.from_json(parsed)
        except InvalidInput as exc:
            if exc.__class__ is not InvalidInput:
                raise
            raise IntegrityError(f"request {rid}: stored document does not parse: {exc}") from exc
        except (TypeError, ValueError, KeyError, AttributeError) as exc:  # edited by hand
            raise IntegrityError(
                f"request {rid}: stored document does not parse: {type(exc).__name__}: {exc}"
            ) from exc
        check_shape(request)
        if request.id != rid or request.state != state:
            raise IntegrityError(
                f"request {rid}: stored document disagrees with its row "
                f"(id {request.id!r}, state {request.state!r} vs {state!r})"
            )
        return cls(
            request=request,
            idempotent=bool(idem),
            token_hash=token_hash,
            worker=worker,
            lease_expires_at=lease,
            outcome=None if outcome is None else json.loads(outcome),
            version=int(ver),
        )


@record(slots=True)
class Plan:
    """What one transition writes: the new row (or None), its events, and maybe an error
    to raise after the commit (a refused decision that still expired the request)."""

    row: Row | None
    events: list[Draft] = field(default_factory=list)
    error: Exception | None = None
    token: str | None = None


# --------------------------------------------------------------------------- integrity


def token_hash(token: str) -> str:
    return sha256_hex(token)


def authorized(approvers: Sequence[str], actor: str, roles: Iterable[str]) -> bool:
    if not approvers:
        return True
    return actor in approvers or any(f"role:{role}" in approvers for role in roles)


# --------------------------------------------------------------------------- transitions


def plan_create(
    request: Request, *, keys: Keys, now: float, ttl_seconds: float | None, idempotent: bool
) -> Plan:
    if request.state != "pending" or request.decision is not None:
        raise InvalidInput("create_request: a new request must be pending and undecided")
    canonical_json(dict(request.metadata), where="request.metadata")
    rid = request.id or new_id()
    ttl = DEFAULT_TTL_SECONDS if ttl_seconds is None else float(ttl_seconds)
    expires_at = request.expires_at if request.expires_at is not None else now + ttl
    if expires_at <= now:
        raise InvalidInput(f"create_request: expiry {when(expires_at)} is not in the future")
    digest = request.call.digest()
    stored = replace(
        request,
        id=rid,
        created_at=now,
        expires_at=expires_at,
        digest=digest,
        approvers=tuple(request.approvers),
        decision_mac="",
    )
    stored = replace(stored, binding=bind(keys, stored))
    data = {
        "call": stored.call.to_json(),
        "verdict": stored.verdict.to_json(),
        "approvers": list(stored.approvers),
        "tenant": stored.tenant,
        "digest": digest,
        "expires_at": expires_at,
        "idempotent": idempotent,
    }
    above = parent_runs(stored.metadata)
    if above:  # a child run's request: the record names the runs above it
        data["parent_runs"] = list(above)
    draft = Draft(REQUEST_CREATED, rid, stored.run_id, stored.requested_by, data)
    return Plan(Row(stored, idempotent=idempotent, checked=True), [draft])


def _expire(row: Row, now: float, error: Exception | None) -> Plan:
    request = replace(row.request, state="expired")
    draft = Draft(
        REQUEST_EXPIRED,
        request.id,
        request.run_id,
        None,
        {"from": row.state, "expires_at": row.request.expires_at, "at": now},
    )
    return Plan(replace(row, request=request), [draft], error)


def _expired(row: Row, now: float) -> bool:
    exp = row.request.expires_at
    return exp is not None and now >= exp


def plan_decide(
    row: Row,
    decision: Decision,
    *,
    keys: Keys,
    actor: str,
    roles: Sequence[str],
    now: float,
    new_verdict: Verdict | None,
    binding: str | None,
) -> Plan:
    req = row.request
    if row.state == "expired":
        raise RequestExpired(
            f"request {req.id} expired at {when(req.expires_at)}; it can no longer be decided"
        )
    if row.state != "pending":
        prior = req.decision
        who = f"{prior.kind} by {prior.actor} at {when(prior.decided_at)}" if prior else "decided"
        raise AlreadyDecided(f"request {req.id} was already decided ({who}); it is {row.state}")
    if not row.checked:
        verify_integrity(req, keys)
    if binding is not None and not compare_digest(binding, req.binding):
        raise IntegrityError(
            f"request {req.id}: the decision carries a binding that is not this request's; "
            "it was made for another request or another payload"
        )
    if _expired(row, now):
        return _expire(
            row,
            now,
            RequestExpired(
                f"request {req.id} expired at {when(req.expires_at)}; it can no longer be decided"
            ),
        )
    if not authorized(req.approvers, actor, roles):
        raise NotAuthorized(
            f"{actor} may not decide request {req.id}; its approvers are {', '.join(req.approvers)}"
        )
    recorded = replace(decision, actor=actor, decided_at=now)
    state = DECISION_STATE[decision.kind]
    data: dict[str, Any] = {"decision": recorded.to_json(), "state": state, "digest": req.digest}
    new = replace(req, state=state, decision=recorded)
    if decision.kind == "edit":
        if new_verdict is None:
            raise InvalidInput(
                f"request {req.id}: an edit needs the policy's verdict on the "
                "edited call (new_verdict); nothing was stored"
            )
        assert decision.arguments is not None
        call = req.call.with_arguments(decision.arguments)
        digest = call.digest()
        if new_verdict.effect == "deny":
            state = "rejected"  # a deny still wins: the edited call never runs
        metadata = {
            **req.metadata,
            "original_call": req.call.to_json(),
            "original_digest": req.digest,
            "original_verdict": req.verdict.to_json(),
        }
        new = replace(
            new, call=call, verdict=new_verdict, digest=digest, metadata=metadata, state=state
        )
        new = replace(new, binding=bind(keys, new))
        data.update(
            state=state,
            original_arguments=dict(req.call.arguments),
            arguments=dict(call.arguments),
            digest=digest,
            verdict=new_verdict.to_json(),
        )
    if state == "approved":
        new = replace(
            new, decision_mac=keys.mac("decision", decision_message(new, recorded, state))
        )
        data["decision_mac"] = new.decision_mac
    draft = Draft(REQUEST_DECIDED, req.id, req.run_id, actor, data)
    return Plan(replace(row, request=new, checked=True), [draft])


def plan_claim(
    row: Row,
    *,
    keys: Keys,
    worker: str,
    lease_seconds: float,
    now: float,
    token: str | None = None,
) -> Plan:
    """Claim an approved call. With the caller's `token` (else a new one), a claim already
    made with that very token is the same claim, its lease renewed (no second event): a
    claim whose answer an outage lost is tried again and found, never left to go in doubt
    for a call that never ran."""
    req = row.request
    events: list[Draft] = []
    if token is not None and (not isinstance(token, str) or len(token) < 16):
        raise InvalidInput(f"claim {req.id}: a caller's claim token needs 16 characters or more")
    if row.state == "claimed" and row.lease_expires_at is not None and now >= row.lease_expires_at:
        row = _in_doubt(row, now, events)
    if (
        token is not None
        and row.state == "claimed"
        and row.token_hash is not None
        and compare_digest(token_hash(token), row.token_hash)
    ):
        if not row.checked:
            verify_integrity(req, keys)
            verify_decision(req, keys)
        again = replace(row, lease_expires_at=now + float(lease_seconds), checked=True)
        return Plan(again, [], token=token)
    if row.state == "in_doubt" and not row.idempotent:
        raise AlreadyClaimed(
            f"request {req.id} is in doubt: {row.worker} claimed it and its lease lapsed at "
            f"{when(row.lease_expires_at)} without a report; a person must resolve it "
            "(done, failed or retry)"
        )
    if row.state == "claimed":
        raise AlreadyClaimed(
            f"request {req.id} is already claimed by {row.worker} "
            f"(lease until {when(row.lease_expires_at)})"
        )
    if row.state in ("finished", "failed"):
        raise AlreadyClaimed(f"request {req.id} already ran: {row.state} (claimed by {row.worker})")
    if row.state == "expired":
        raise RequestExpired(f"request {req.id} expired at {when(req.expires_at)}")
    if row.state not in ("approved", "in_doubt"):
        raise ConflictError(
            f"request {req.id} is {row.state}; only an approved call can be claimed"
        )
    if row.state == "approved" and _expired(row, now):
        return _expire(
            row,
            now,
            RequestExpired(
                f"request {req.id} was approved but not claimed before its expiry at "
                f"{when(req.expires_at)}; it will not run"
            ),
        )
    if not row.checked:
        verify_integrity(req, keys)
        verify_decision(req, keys)
    if token is None:
        import secrets

        token = secrets.token_urlsafe(24)
    lease = now + float(lease_seconds)
    data = {
        "worker": worker,
        "lease_expires_at": lease,
        "digest": req.digest,
        "reclaim": row.state == "in_doubt",
    }
    new = replace(
        row,
        request=replace(req, state="claimed"),
        token_hash=token_hash(token),
        worker=worker,
        lease_expires_at=lease,
        checked=True,
    )
    events.append(Draft(REQUEST_CLAIMED, req.id, req.run_id, worker, data))
    return Plan(new, events, token=token)


def plan_renew(row: Row, token: str, *, lease_seconds: float, now: float) -> Plan:
    """Extend a live claim (the call is still running): only with the claim's token, and
    only before its lease lapsed; a lapsed claim is in doubt, sweep or not. Not an event:
    the claim and the report (or the doubt) are, and the doubt names the lease it saw."""
    req = row.request
    if row.state != "claimed":
        raise ConflictError(f"request {req.id} is {row.state}; its claim cannot be renewed")
    if row.token_hash is None or not compare_digest(token_hash(token), row.token_hash):
        raise ConflictError(f"request {req.id} is claimed by {row.worker} with another token")
    if row.lease_expires_at is not None and now >= row.lease_expires_at:
        raise ConflictError(
            f"request {req.id}: the claim's lease lapsed at {when(row.lease_expires_at)}; "
            "the call is in doubt"
        )
    return Plan(replace(row, lease_expires_at=now + float(lease_seconds)), [])


def _in_doubt(row: Row, now: float, events: list[Draft]) -> Row:
    events.append(
        Draft(
            REQUEST_IN_DOUBT,
            row.request.id,
            row.request.run_id,
            None,
            {"worker": row.worker, "lease_expires_at": row.lease_expires_at, "at": now},
        )
    )
    return replace(row, request=replace(row.request, state="in_doubt"))


def plan_finish(
    row: Row, token: str, *, ok: bool, result_digest: str | None, result: Any, now: float
) -> Plan:
    req = row.request
    if row.state in ("finished", "failed"):
        raise AlreadyClaimed(f"request {req.id} was already reported: {row.state}")
    if row.state not in ("claimed", "in_doubt"):
        raise ConflictError(f"request {req.id} is {row.state}, not claimed; nothing to finish")
    if row.token_hash is None or not compare_digest(token_hash(token), row.token_hash):
        raise NotAuthorized(
            f"request {req.id}: the claim token does not match the current "
            f"claim (held by {row.worker})"
        )
    if result_digest is None and result is not None:
        result_digest = sha256_hex(canonical_json(result, where="result"))
    state: RequestState = "finished" if ok else "failed"
    outcome = {
        "v": SCHEMA_VERSION,
        "ok": bool(ok),
        "result_digest": result_digest,
        "result": result,
        "finished_at": now,
        "worker": row.worker,
    }
    draft = Draft(
        REQUEST_FINISHED,
        req.id,
        req.run_id,
        row.worker,
        {
            "ok": bool(ok),
            "state": state,
            "result_digest": result_digest,
            "late": row.state == "in_doubt",
        },
    )
    return Plan(replace(row, request=replace(req, state=state), outcome=outcome), [draft])


def plan_expire(row: Row, now: float) -> Plan | None:
    if row.state in ("pending", "approved") and _expired(row, now):
        return _expire(row, now, None)
    return None


def plan_sweep(row: Row, now: float) -> Plan | None:
    if row.state == "claimed" and row.lease_expires_at is not None and now >= row.lease_expires_at:
        events: list[Draft] = []
        return Plan(_in_doubt(row, now, events), events)
    return None


def plan_resolve(row: Row, outcome: InDoubtOutcome, *, actor: str, now: float) -> Plan:
    req = row.request
    if row.state != "in_doubt":
        raise ConflictError(f"request {req.id} is {row.state}, not in doubt")
    draft = Draft(
        REQUEST_RESOLVED,
        req.id,
        req.run_id,
        actor,
        {"outcome": outcome, "worker": row.worker, "at": now},
    )
    if outcome == "retry":
        new = replace(
            row,
            request=replace(req, state="approved"),
            token_hash=None,
            worker=None,
            lease_expires_at=None,
        )
    elif outcome in ("done", "failed"):
        final: RequestState = "finished" if outcome == "done" else "failed"
        new = replace(
            row,
            request=replace(req, state=final),
            outcome={
                "v": SCHEMA_VERSION,
                "ok": outcome == "done",
                "result_digest": None,
                "result": None,
                "finished_at": now,
                "worker": row.worker,
                "resolved_by": actor,
            },
        )
    else:
        raise InvalidInput(
            f"resolve_in_doubt: outcome must be done, failed or retry, not {outcome!r}"
        )
    return Plan(new, [draft])
