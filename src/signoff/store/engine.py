"""The public store API, written once over a small transaction interface (`Tx`).

Each backend supplies `_write()` (one serializable write transaction: BEGIN IMMEDIATE on
SQLite, row locks plus the chain-head lock on PostgreSQL, a mutex in memory) and
`_read()`; the rules themselves live in `base`. A transition reads its row, asks `base` for
a plan, writes the row and appends its events in the same transaction, and raises the
plan's error (if any) only after the commit, so an expiry discovered by a refused decision
is kept.
"""

from __future__ import annotations

import _thread  # threading's locks, without importing threading (a hook's start-up)
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, suppress

from ..exceptions import ConflictError, IntegrityError, InvalidInput, NotFound, SignoffError
from ..kinds import GRANT_ADDED, GRANT_REVOKED, KEYS_REANCHORED, REQUEST_INTEGRITY_FAILED
from ..lazylog import INFO, get_logger
from ..models import Decision, Grant, Request, Verdict, check_json, check_version
from ..records import replace
from ..times import when
from . import base, chain, integrity
from .anchor import Anchor
from .base import Claim, Draft, Event, Plan, Row
from .keyed import KeyedLog
from .runstore import RunsAPI

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:  # the interface each backend's transactions offer
    from typing import Any, Protocol

    from .base import Flush

    Cols = Sequence[Any]

    class Tx(Protocol):
        def get_request(self, request_id: str, lock: bool) -> Cols | None: ...
        def insert_request(self, cols: Cols) -> None: ...
        def update_request(self, cols: Cols, old_version: int) -> None: ...
        def cas_request(self, cols: Cols, old_version: int) -> bool: ...
        def ids_due(self, states: Sequence[str], column: str, now: float) -> list[str]: ...
        def outcomes(self, request_ids: Sequence[str]) -> list[tuple[str, str | None]]: ...
        def list_requests(
            self, state: str | None, run_id: str | None, tenant: str | None, limit: int
        ) -> list[Cols]: ...
        def append(self, entries: list[tuple[Draft, str]], ts: float) -> list[int]: ...
        def meta_get(self, key: str) -> str | None: ...
        def meta_put_if_absent(self, key: str, value: str) -> None: ...
        def meta_delete(self, key: str) -> None: ...
        def insert_grant(
            self, grant_id: str, scope: str, run_id: str | None, created_at: float, doc: str
        ) -> None: ...
        def get_grant(self, grant_id: str, lock: bool) -> tuple[str, float | None] | None: ...
        def revoke_grant(self, grant_id: str, now: float, doc: str) -> None: ...
        def grant_doc(self, grant_id: str, doc: str) -> None: ...
        def list_grants(
            self, scope: str | None, run_id: str | None
        ) -> list[tuple[str, str | None]]: ...
        def events_after(self, seq: int, limit: int) -> list[tuple[int, str, str, str]]: ...
        def deliveries(self, request_id: str) -> list[tuple[int, str, str, str]]: ...
        def cursor_get(self, name: str) -> int: ...
        def cursor_set(self, name: str, seq: int) -> None: ...
        def chain_rows(self) -> Iterator[tuple[int, str, str, str, str, str | None]]: ...
        def last_seq(self) -> int: ...
        def chain_end(self) -> tuple[tuple[int, str] | None, tuple[int, str] | None]: ...
        def chain_tip(self) -> Anchor | None: ...
        def last_entry(self) -> str | None: ...
        def lock_chain(self) -> None: ...
        # runs (see runstore): columns in RunRow.columns() order
        def run_get(self, run_id: str, lock: bool) -> Cols | None: ...
        def run_insert(self, cols: Cols, parent_id: str | None = None) -> None: ...
        def run_children(self, parent_id: str) -> list[Cols]: ...
        def run_update(self, cols: Cols, old_version: int, *, status_changed: bool) -> None: ...
        def run_lease(
            self, run_id: str, owner: str | None, expires_at: float | None, seconds: float | None
        ) -> None: ...
        def run_release(self, run_id: str, worker: str) -> None: ...
        def run_list(self, status: str | None, tenant: str | None, limit: int) -> list[Cols]: ...
        def run_ready(self, now: float) -> Cols | None: ...
        def messages_insert(self, run_id: str, first_seq: int, messages: Sequence[str]) -> None: ...
        def messages_load(self, run_id: str) -> list[str]: ...


# signoff.store.*: claims and sweeps (info), retries and waits (debug), migrations (info).
# Ids, workers and states only: never a token, a key, a payload or a connection password.
log = get_logger(__name__)

MAX_CAS_ATTEMPTS = 100
FINAL_STATES = frozenset({"finished", "failed", "rejected", "skipped", "answered", "expired"})


class RowCache:
    """The request rows this store wrote or read last (bounded; final states dropped)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._rows: OrderedDict[str, Row] = OrderedDict()
        self._lock = _thread.allocate_lock()

    def get(self, request_id: str) -> Row | None:
        with self._lock:
            return self._rows.get(request_id)

    def put(self, row: Row) -> None:
        if self.size <= 0:
            return
        rid = row.request.id
        with self._lock:
            if row.state in FINAL_STATES:
                self._rows.pop(rid, None)
                return
            self._rows[rid] = row
            self._rows.move_to_end(rid)
            if len(self._rows) > self.size:
                self._rows.popitem(last=False)

    def drop(self, request_id: str) -> None:
        with self._lock:
            self._rows.pop(request_id, None)


class Engine(KeyedLog, RunsAPI):
    """Shared implementation of the Store protocol."""

    _rows: RowCache = RowCache(0)  # backends with a version trigger set their own

    _audit: bool = True  # private switch, only for measuring the audit's cost
    _duplicate: tuple[type[BaseException], ...] = ()  # what insert raises on a taken id

    # backends provide these
    def _write(self, flush: Flush = "now") -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every write made with `flush="soon"` is on disk (True), or for
        `timeout` seconds (False). A backend whose every commit is durable: True."""
        return True

    def migrate(self) -> list[int]:
        raise NotImplementedError

    def close(self, *, process_ends: bool = False) -> None:
        """Anchor the chain's head and let go. `process_ends`: the process ends at once
        (os._exit, as `signoff hook` does): a backend may leave to the exit what only
        tidies up (see SQLiteStore.close); what was committed is on disk either way."""
        raise NotImplementedError

    def wait_for_event(self, timeout: float, after_seq: int | None = None) -> bool:
        """Poll until an event after `after_seq` (default: now) exists, or timeout."""
        start = self.last_seq() if after_seq is None else after_seq
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            if self.last_seq() > start:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.1)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ plumbing
    # ------------------------------------------------------------------ plumbing

    def _entries(self, drafts: list[Draft], now: float) -> list[tuple[Draft, str]]:
        # encoded before anything is written, so a bad payload never half-applies
        self._refuse_if_keys_lost()
        if not self._audit:
            return []
        return [self._entry(d, now) for d in drafts]

    def _entry(self, draft: Draft, now: float) -> tuple[Draft, str]:
        self._refuse_if_keys_lost()
        if draft.kind == KEYS_REANCHORED:  # it accepts breaks: only `reanchor` writes one
            raise InvalidInput(
                f"record: {KEYS_REANCHORED!r} entries are written only by `signoff keys reanchor`"
            )
        self._since_anchor += 1
        return draft, chain.keyed_entry(draft.doc(now), self._keys)

    @staticmethod
    def _append(tx: Tx, entries: list[tuple[Draft, str]], now: float) -> None:
        if entries:
            tx.append(entries, now)

    # A transition is optimistic: read the row (or take the copy this store wrote or read
    # last), apply the rules outside any lock, then one short write transaction that
    # compare-and-sets the row on its version and appends the events. A stale copy cannot
    # do harm: every change to a row bumps its version, even one made by hand in SQL (a
    # trigger, migration 0006), so the CAS fails and the row is read again; and a refusal
    # judged on a copy is judged again on a fresh read before it is raised.
    def _transition(self, request_id: str, now: float, fn: Callable[[Row], Plan]) -> Plan:
        try:
            return self._transition_once(request_id, now, fn)
        except IntegrityError as exc:
            self._refused(request_id, now, exc)
            raise
        finally:
            self._maybe_anchor()

    def _refused(self, request_id: str, now: float, exc: IntegrityError) -> None:
        """Put a refusal for tampering on the record (best effort: the refusal stands)."""
        with suppress(SignoffError):
            self.record(
                REQUEST_INTEGRITY_FAILED, {"error": str(exc)}, request_id=request_id, now=now
            )

    def _transition_once(self, request_id: str, now: float, fn: Callable[[Row], Plan]) -> Plan:
        cached = self._rows.get(request_id)
        for attempt in range(MAX_CAS_ATTEMPTS):
            if cached is not None:
                row, cached = cached, None
                try:
                    plan = fn(row)
                except SignoffError:
                    continue  # judged on a copy: read the row and judge again
            else:
                row = self._row(request_id)
                plan = fn(row)
            assert plan.row is not None
            if self._apply(row, plan, self._entries(plan.events, now), now):
                self._rows.put(replace(plan.row, version=row.version + 1))
                if plan.error is not None:
                    raise plan.error
                return plan
            self._rows.drop(request_id)
            log.debug(
                "request %s changed since version %d (another writer): reading it again, "
                "attempt %d",
                request_id,
                row.version,
                attempt + 2,
            )
        log.info("request %s: gave up after %d concurrent changes", request_id, MAX_CAS_ATTEMPTS)
        raise ConflictError(
            f"request {request_id}: gave up after {MAX_CAS_ATTEMPTS} concurrent changes"
        )

    def _apply(self, row: Row, plan: Plan, entries: list[tuple[Draft, str]], now: float) -> bool:
        """Write the plan's row if the stored one is still at `row.version`, with its
        events, in one transaction; False if someone else moved first."""
        assert plan.row is not None
        cols = plan.row.columns()  # encoded before the transaction begins
        with self._write() as tx:
            if not tx.cas_request(cols, row.version):
                return False
            self._append(tx, entries, now)
        return True

    # ------------------------------------------------------------------ requests

    def create_request(
        self,
        request: Request,
        *,
        idempotent: bool = False,
        ttl_seconds: float | None = None,
        now: float | None = None,
    ) -> Request:
        ts = base.clock(now)
        plan = base.plan_create(
            request, keys=self._keys, now=ts, ttl_seconds=ttl_seconds, idempotent=idempotent
        )
        assert plan.row is not None
        entries, cols = self._entries(plan.events, ts), plan.row.columns()
        try:
            self._insert(cols, entries, ts)
        except self._duplicate as exc:
            raise InvalidInput(f"request {plan.row.request.id!r} already exists") from exc
        self._rows.put(plan.row)
        self._maybe_anchor()
        return plan.row.request

    def _insert(self, cols: Cols, entries: list[tuple[Draft, str]], ts: float) -> None:
        """Insert a new request row with its events, in one transaction."""
        with self._write() as tx:
            tx.insert_request(cols)
            self._append(tx, entries, ts)

    def _remember_row(self, row: Row) -> None:
        self._rows.put(row)

    def get_request(self, request_id: str) -> Request:
        return self._row(request_id).request

    def _request_columns(self, request_id: str) -> Cols | None:
        with self._read() as tx:
            return tx.get_request(request_id, False)

    def _row(self, request_id: str) -> Row:
        cols = self._request_columns(request_id)
        if cols is None:
            raise NotFound(f"no request {request_id!r}")
        row = Row.from_columns(cols)
        self._rows.put(row)
        return row

    def get_outcome(self, request_id: str) -> Mapping[str, Any] | None:
        """The reported outcome of a finished or failed call (ok, result, result_digest)."""
        outcome = self._row(request_id).outcome
        if outcome is not None:
            check_version(outcome, "outcome")
        return outcome

    def get_outcomes(self, request_ids: Sequence[str]) -> dict[str, Mapping[str, Any] | None]:
        """`get_outcome` for many requests in one query (lists); unknown ids are left out."""
        ids = list(dict.fromkeys(request_ids))
        found: dict[str, Mapping[str, Any] | None] = {}
        with self._read() as tx:
            for start in range(0, len(ids), 500):  # well under any backend's parameter limit
                for rid, text in tx.outcomes(ids[start : start + 500]):
                    outcome = None if text is None else json.loads(text)
                    if outcome is not None:
                        check_version(outcome, "outcome")
                    found[rid] = outcome
        return found

    def list_requests(
        self,
        state: str | None = None,
        run_id: str | None = None,
        tenant: str | None = None,
        limit: int = 100,
    ) -> list[Request]:
        with self._read() as tx:
            rows = tx.list_requests(state, run_id, tenant, int(limit))
        return [Row.from_columns(cols).request for cols in rows]

    def decide(
        self,
        request_id: str,
        decision: Decision,
        *,
        actor: str,
        actor_roles: Sequence[str] = (),
        now: float | None = None,
        new_verdict: Verdict | None = None,
        binding: str | None = None,
    ) -> Request:
        ts = base.clock(now)
        plan = self._transition(
            request_id,
            ts,
            lambda row: base.plan_decide(
                row,
                decision,
                keys=self._keys,
                actor=actor,
                roles=tuple(actor_roles),
                now=ts,
                new_verdict=new_verdict,
                binding=binding,
            ),
        )
        assert plan.row is not None
        return plan.row.request

    def claim(
        self,
        request_id: str,
        *,
        worker: str,
        lease_seconds: float = base.DEFAULT_LEASE_SECONDS,
        now: float | None = None,
        token: str | None = None,
    ) -> Claim:
        """Claim an approved call to run it. `token`: the caller's own (16 characters or
        more), so that a claim tried again after a lost answer is found as made."""
        ts = base.clock(now)
        plan = self._transition(
            request_id,
            ts,
            lambda row: base.plan_claim(
                row,
                keys=self._keys,
                worker=worker,
                lease_seconds=lease_seconds,
                now=ts,
                token=token,
            ),
        )
        assert plan.row is not None and plan.token is not None
        assert plan.row.lease_expires_at is not None
        if log.isEnabledFor(INFO):  # the claim is on the hot path: format only if shown
            again = not plan.events
            log.info(
                "request %s claimed by %s (lease until %s)%s",
                request_id,
                worker,
                when(plan.row.lease_expires_at),
                ", found made with its token after a lost answer"
                if again
                else ", a reclaim of a call in doubt"
                if plan.events[-1].data.get("reclaim")
                else "",
            )
        return Claim(plan.token, plan.row.lease_expires_at, plan.row.request, worker)

    def renew_claim(
        self,
        request_id: str,
        token: str,
        *,
        lease_seconds: float = base.DEFAULT_LEASE_SECONDS,
        now: float | None = None,
    ) -> bool:
        """Extend the lease of a claim whose call is still running (True); False when the
        claim is no longer this token's or its lease lapsed (the call is in doubt)."""
        ts = base.clock(now)
        try:
            self._transition(
                request_id,
                ts,
                lambda row: base.plan_renew(row, token, lease_seconds=lease_seconds, now=ts),
            )
        except ConflictError as exc:
            log.info("%s", exc)
            return False
        return True

    def finish(
        self,
        request_id: str,
        token: str,
        *,
        ok: bool,
        result_digest: str | None = None,
        result: Any = None,
        now: float | None = None,
    ) -> Request:
        ts = base.clock(now)
        plan = self._transition(
            request_id,
            ts,
            lambda row: base.plan_finish(
                row, token, ok=ok, result_digest=result_digest, result=result, now=ts
            ),
        )
        assert plan.row is not None
        return plan.row.request

    def resolve_in_doubt(
        self, request_id: str, outcome: base.InDoubtOutcome, *, actor: str, now: float | None = None
    ) -> Request:
        ts = base.clock(now)
        plan = self._transition(
            request_id, ts, lambda row: base.plan_resolve(row, outcome, actor=actor, now=ts)
        )
        assert plan.row is not None
        return plan.row.request

    def _sweep(
        self,
        states: Sequence[str],
        column: str,
        now: float,
        fn: Callable[[Row, float], Plan | None],
    ) -> list[str]:
        """Apply `fn` to the rows in `states` whose `column` deadline has passed."""
        with self._read() as tx:  # nothing due, the usual case: no write lock at all
            due = tx.ids_due(states, column, now)
        if not due:
            return []
        done: list[str] = []
        with self._write() as tx:
            for rid in due:
                cols = tx.get_request(rid, True)
                if cols is None:
                    continue
                row = Row.from_columns(cols)
                plan = fn(row, now)  # judged again on the row as it is now
                if plan is None or plan.row is None:
                    continue
                entries = self._entries(plan.events, now)
                tx.update_request(plan.row.columns(), row.version)
                self._append(tx, entries, now)
                self._rows.drop(rid)
                done.append(rid)
        if done:
            log.info("%s: %s", _SWEPT[column], ", ".join(done))
        return done

    def expire_stale(self, now: float | None = None) -> list[str]:
        """pending (and unclaimed approved) requests past their expiry -> expired."""
        return self._sweep(("pending", "approved"), "expires_at", base.clock(now), base.plan_expire)

    def sweep_leases(self, now: float | None = None) -> list[str]:
        """claimed requests whose lease lapsed -> in_doubt."""
        return self._sweep(("claimed",), "lease_expires_at", base.clock(now), base.plan_sweep)

    # ------------------------------------------------------------------ grants

    def add_grant(
        self, grant: Grant, *, run_id: str | None = None, now: float | None = None
    ) -> Grant:
        ts = base.clock(now)
        stored = replace(grant, id=grant.id or base.new_id(), created_at=grant.created_at or ts)
        doc = integrity.signed_grant(self._keys, stored)
        entries = self._entries(
            [Draft(GRANT_ADDED, None, run_id, stored.created_by, {"grant": stored.to_json()})], ts
        )
        with self._write() as tx:
            if tx.get_grant(stored.id, False) is not None:
                raise InvalidInput(f"grant {stored.id!r} already exists")
            tx.insert_grant(stored.id, stored.scope, run_id, stored.created_at, doc)
            self._append(tx, entries, ts)
        return stored

    def list_grants(self, scope: str | None = None, run_id: str | None = None) -> list[Grant]:
        """Grants not revoked, newest first (expired ones included: see Grant.active);
        a grant whose MAC does not verify (written into the database) is left out."""
        with self._read() as tx:
            rows = tx.list_grants(scope, run_id)
        checked = (integrity.read_grant(self._keys, doc) for doc, _ in rows)
        return [grant for grant, problem in checked if problem is None]

    def revoke_grant(
        self, grant_id: str, *, actor: str = "local", now: float | None = None
    ) -> Grant:
        ts = base.clock(now)
        with self._write() as tx:
            found = tx.get_grant(grant_id, True)
            if found is None or found[1] is not None:
                raise NotFound(f"no active grant {grant_id!r}")
            grant = _grant(found[0])
            entries = self._entries(
                [
                    Draft(
                        GRANT_REVOKED, None, None, actor, {"grant_id": grant_id, "rule": grant.rule}
                    )
                ],
                ts,
            )
            tx.revoke_grant(grant_id, ts, integrity.signed_grant(self._keys, grant, revoked_at=ts))
            self._append(tx, entries, ts)
        return grant

    # ------------------------------------------------------------------ events

    def record(
        self,
        kind: str,
        data: Mapping[str, Any],
        *,
        run_id: str | None = None,
        request_id: str | None = None,
        actor: str | None = None,
        now: float | None = None,
        flush: Flush = "now",
    ) -> int:
        """Append an event of your own (a verdict, a run event) to the feed and audit log.

        `flush="soon"` returns once the event is written, before it is on disk (a
        background flush puts it there moments later): the record of a call that runs
        without a person (an allowed call's verdict) need not wait for the disk, and it
        still survives the process being killed. Everything a person or exactly-once
        relies on (requests, decisions, claims) is written with "now"."""
        base.check_kind(kind, "record")
        ts = base.clock(now)
        check_json(data, where=f"record {kind}")
        draft = Draft(kind, request_id, run_id, actor, dict(data))
        entries = [self._entry(draft, ts)]
        with self._write(flush) as tx:
            seq = tx.append(entries, ts)[0]
        self._maybe_anchor()
        return seq

    def record_many(
        self, drafts: Sequence[Draft], *, now: float | None = None, flush: Flush = "now"
    ) -> list[int]:
        """Append several events of your own in one transaction (one commit): all or none
        (`flush` as for `record`)."""
        ts = base.clock(now)
        for draft in drafts:
            base.check_kind(draft.kind, "record")
            check_json(draft.data, where=f"record {draft.kind}")
        entries = [self._entry(draft, ts) for draft in drafts]
        with self._write(flush) as tx:
            seqs = tx.append(entries, ts) if entries else []
        self._maybe_anchor()
        return seqs

    def events_after(self, seq: int, limit: int = 100) -> list[Event]:
        with self._read() as tx:
            rows = tx.events_after(int(seq), int(limit))
        return [Event.from_entry(*row) for row in rows]

    def deliveries(self, request_id: str) -> list[Event]:
        """The notifier's delivery events for a request (`notify.delivered` / `.failed`),
        oldest first, however long ago they were written."""
        with self._read() as tx:
            rows = tx.deliveries(request_id)
        return [Event.from_entry(*row) for row in rows]

    def last_seq(self) -> int:
        with self._read() as tx:
            return tx.last_seq()

    def read_events(self, consumer: str, limit: int = 100) -> list[Event]:
        """Events after the consumer's acknowledged cursor (at-least-once delivery)."""
        with self._read() as tx:
            cursor = tx.cursor_get(consumer)
            rows = tx.events_after(cursor, int(limit))
        return [Event.from_entry(*row) for row in rows]

    def ack(self, consumer: str, seq: int) -> None:
        """Move the consumer's cursor forward to `seq` (never backwards)."""
        with self._write() as tx:
            head = tx.last_seq()
            if seq > head:
                raise InvalidInput(f"ack: event {seq} does not exist (last is {head})")
            if seq > tx.cursor_get(consumer):
                tx.cursor_set(consumer, int(seq))


_SWEPT = {
    "expires_at": "expired, undecided or unclaimed",
    "lease_expires_at": "in doubt, their claim's lease lapsed without a report",
}


def _grant(doc: str) -> Grant:
    import json

    return Grant.from_json(json.loads(doc))
