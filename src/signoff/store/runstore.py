"""Durable runs in the store: the rules (pure) and the API over the `Tx` interface.

A run is two things: a small document (`signoff.runs.agent.Run`: status, the calls of the
current turn, counters, how to rebuild the agent) kept in one row with a version, and its
transcript, one row per chat-completions message, append-only::

    signoff_runs      id, status, tenant, thread, created_at, updated_at, message_count,
                      version, lease_owner, lease_expires_at, lease_seconds, doc
    signoff_messages  (run_id, seq) -> compact JSON of one message, never rewritten

`save_run` is one transaction: compare-and-set on the version, append only the new
messages, write the document, append its events to the audit chain. A lease (owner and
expiry, outside the document) says which worker drives the run; a lease that lapsed is
free again. A run is *ready* for `claim_run()` without an id when its lease is free and it
is paused with no request still waiting for a decision, or it is running and its lease
lapsed (its driver crashed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager

from ..exceptions import (
    AlreadyClaimed,
    ConflictError,
    IntegrityError,
    InvalidInput,
    LeaseLost,
    NotFound,
    SchemaVersionError,
)
from ..keys import Keys
from ..kinds import RUN_CLAIMED, RUN_CREATED
from ..lazylog import get_logger
from ..models import Request
from ..records import record, replace
from ..times import when
from . import base
from .base import Draft

log = get_logger(__name__)  # see store.engine for what is logged at which level

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

    from ..run_state import Run
    from .base import Flush
    from .engine import Tx

STATUSES = frozenset({"running", "paused", "finished", "failed", "needs_attention"})
FINAL = frozenset({"finished", "failed"})
DEFAULT_RUN_LEASE_SECONDS = 300.0


@record(frozen=True, slots=True)
class RunRow:
    """A stored run plus its lease columns (which are not part of the document)."""

    run: Run
    lease_owner: str | None = None
    lease_expires_at: float | None = None
    lease_seconds: float | None = None

    def columns(self) -> tuple[Any, ...]:
        """(id, status, tenant, thread, created_at, updated_at, message_count, version,
        lease_owner, lease_expires_at, lease_seconds, doc) -- every backend's order."""
        r = self.run
        return (
            r.id,
            r.status,
            r.tenant,
            r.thread,
            r.created_at,
            r.updated_at,
            r.message_count,
            r.version,
            self.lease_owner,
            self.lease_expires_at,
            self.lease_seconds,
            base.dumps(r.to_json(), "run"),
        )

    @classmethod
    def from_columns(cls, cols: Sequence[Any]) -> RunRow:
        rid, status, _t, _th, _c, _u, count, version, owner, expires, seconds, doc = cols
        try:
            parsed = json.loads(doc)
        except (TypeError, ValueError) as exc:
            raise IntegrityError(f"run {rid}: stored document is not valid JSON") from exc
        if not isinstance(parsed, dict):
            raise IntegrityError(f"run {rid}: stored document is not a JSON object")
        from ..run_state import Run  # a process that only records a verdict reads no run

        try:
            run = Run.from_json(parsed)
        except SchemaVersionError as exc:
            raise SchemaVersionError(f"run {rid}: {exc}") from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise IntegrityError(f"run {rid}: stored document does not parse: {exc}") from exc
        if (run.id, run.status, run.version, run.message_count) != (rid, status, version, count):
            raise IntegrityError(
                f"run {rid}: stored document disagrees with its row (id {run.id!r}, status "
                f"{run.status!r} vs {status!r}, version {run.version} vs {version})"
            )
        return cls(run, owner, expires, seconds)

    def live_owner(self, now: float) -> str | None:
        """Who holds the lease at `now` (None when free or lapsed)."""
        if self.lease_owner is None or self.lease_expires_at is None:
            return None
        return self.lease_owner if now < self.lease_expires_at else None


def encode_messages(messages: Sequence[Mapping[str, Any]], where: str) -> list[str]:
    """Compact JSON text of each message (key order kept: it is the model's)."""
    out = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidInput(
                f"{where}: message {index} is {type(message).__name__}, not a JSON object"
            )
        try:
            out.append(
                json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
            )
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"{where}: message {index} is not JSON ({exc})") from exc
    return out


def _check_status(run: Run, where: str) -> None:
    if run.status not in STATUSES:
        raise InvalidInput(
            f"{where}: run {run.id} has unknown status {run.status!r} "
            f"(one of {', '.join(sorted(STATUSES))})"
        )


def _lease_text(row: RunRow) -> str:
    return f"{row.lease_owner} (lease until {when(row.lease_expires_at)})"


# --------------------------------------------------------------------------- rules


def plan_create_run(
    run: Run, count: int, *, worker: str | None, lease_seconds: float, now: float
) -> tuple[RunRow, Draft]:
    _check_status(run, "create_run")
    if (run.parent_id is None) != (run.parent_call_id is None):
        raise InvalidInput(
            f"create_run: run {run.id} needs both a parent run and the parent's call id, "
            f"or neither (got {run.parent_id!r}, {run.parent_call_id!r})"
        )
    stored = replace(
        run,
        id=run.id or f"run_{base.new_id()[:12]}",
        created_at=now,
        updated_at=now,
        message_count=count,
        version=1,
    )
    lease = (
        (worker, now + float(lease_seconds), float(lease_seconds)) if worker else (None, None, None)
    )
    data = {
        "status": stored.status,
        "tenant": stored.tenant,
        "thread": stored.thread,
        "agent": stored.agent,
        "message_count": count,
    }
    return RunRow(stored, *lease), Draft(RUN_CREATED, None, stored.id, worker, _lineage(run, data))


def _lineage(run: Run, data: dict[str, Any]) -> dict[str, Any]:
    """A child run's events name its parent (and the call it answers); others unchanged."""
    if run.parent_id is None:
        return data
    return {**data, "parent_run": run.parent_id, "parent_call": run.parent_call_id}


def plan_save_run(
    row: RunRow,
    run: Run,
    count: int,
    *,
    expected_version: int,
    events: Sequence[tuple[str, Mapping[str, Any]]],
    worker: str | None,
    now: float,
) -> tuple[RunRow, list[Draft]]:
    old = row.run
    _check_status(run, "save_run")
    holder = row.live_owner(now)
    # LeaseLost (a ConflictError): the run moved on without this saver, which stops there
    if old.version != expected_version:
        held = f"; leased to {_lease_text(row)}" if holder else ""
        raise LeaseLost(
            f"run {old.id} was saved by someone else: it is at version {old.version}, not "
            f"{expected_version}{held}; reload it and start again"
        )
    if worker is not None and holder is not None and holder != worker:
        raise LeaseLost(
            f"run {old.id} is leased to {_lease_text(row)}, not {worker}; "
            "this worker must not save it"
        )
    if old.status in FINAL:
        raise LeaseLost(f"run {old.id} is {old.status}; a finished run cannot change")
    if (run.parent_id, run.parent_call_id) != (old.parent_id, old.parent_call_id):
        raise InvalidInput(
            f"save_run: run {old.id} was started by {old.parent_id or 'no run'}; "
            "its parent cannot change"
        )
    if run.tenant != old.tenant:
        raise InvalidInput(
            f"save_run: run {old.id} belongs to tenant {old.tenant!r}; "
            f"its tenant cannot change to {run.tenant!r}"
        )
    stored = replace(
        run,
        created_at=old.created_at,
        updated_at=now,
        message_count=old.message_count + count,
        version=old.version + 1,
    )
    lease: tuple[str | None, float | None, float | None] = (
        row.lease_owner,
        row.lease_expires_at,
        row.lease_seconds,
    )
    if worker is not None:
        if stored.status == "running":  # the driver goes on: its lease is renewed
            seconds = row.lease_seconds or DEFAULT_RUN_LEASE_SECONDS
            lease = (worker, now + seconds, seconds)
        else:  # the driver stops here: nobody holds the run any more
            lease = (None, None, None)
    drafts = []
    for kind, data in events:
        kind = base.check_kind(kind, "save_run")
        drafts.append(Draft(kind, None, old.id, worker, _lineage(old, dict(data))))
    if stored.status != old.status:
        drafts.append(
            Draft(
                f"run.{stored.status}",
                None,
                old.id,
                worker,
                _lineage(
                    old,
                    {
                        "from": old.status,
                        "to": stored.status,
                        "version": stored.version,
                        "message_count": stored.message_count,
                        "waiting_on": stored.waiting_on,
                        "note": stored.note,
                    }
                    | ({"waiting_for": stored.waiting_for} if stored.waiting_for else {}),
                ),
            )
        )
    return RunRow(stored, *lease), drafts


def plan_claim_run(
    row: RunRow, worker: str, *, lease_seconds: float, now: float
) -> tuple[RunRow, Draft]:
    run = row.run
    if run.status in FINAL:
        raise ConflictError(f"run {run.id} is {run.status}; there is nothing to resume")
    holder = row.live_owner(now)
    if holder is not None and holder != worker:
        raise AlreadyClaimed(f"run {run.id} is already claimed by {_lease_text(row)}")
    seconds = float(lease_seconds)
    data = {
        "worker": worker,
        "lease_expires_at": now + seconds,
        "status": run.status,
        "version": run.version,
        "lapsed": row.lease_owner if row.lease_owner not in (None, worker) else None,
    }
    data = _lineage(run, data)
    return (
        RunRow(run, worker, now + seconds, seconds),
        Draft(RUN_CLAIMED, None, run.id, worker, data),
    )


# A request created with a run's save: (request, idempotent, ttl_seconds or None).
NewRequest = tuple[Request, bool, "float | None"]


# --------------------------------------------------------------------------- API


class RunsAPI:
    """The runs half of the Store protocol; mixed into `engine.Engine`, which supplies
    the transactions (and on PostgreSQL may replace a method with a faster one)."""

    _duplicate: tuple[type[BaseException], ...] = ()
    _keys: Keys

    def _maybe_anchor(self) -> None:
        """Anchor the audit chain's head outside the store now and then (see engine)."""

    def _remember_row(self, row: base.Row) -> None:
        """Keep a request row this store just wrote (the engine caches them)."""

    def _write(self, flush: Flush = "now") -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _entries(self, drafts: list[Draft], now: float) -> list[tuple[Draft, str]]:
        raise NotImplementedError

    def create_run(
        self,
        run: Run,
        messages: Sequence[Mapping[str, Any]],
        *,
        worker: str | None = None,
        lease_seconds: float = DEFAULT_RUN_LEASE_SECONDS,
        now: float | None = None,
    ) -> Run:
        """Store a new run (version 1) and its first messages; leased to `worker` if given."""
        ts = base.clock(now)
        rows = encode_messages(messages, "create_run")
        row, draft = plan_create_run(
            run, len(rows), worker=worker, lease_seconds=lease_seconds, now=ts
        )
        entries = self._entries([draft], ts)
        cols = row.columns()
        try:
            with self._write() as tx:
                if tx.run_get(row.run.id, False) is not None:
                    raise ConflictError(f"run {row.run.id!r} already exists")
                parent = row.run.parent_id
                if parent is not None and tx.run_get(parent, False) is None:
                    raise InvalidInput(
                        f"create_run: run {row.run.id} names parent {parent!r}, which does "
                        "not exist"
                    )
                tx.run_insert(cols, row.run.parent_id)
                tx.messages_insert(row.run.id, 0, rows)
                if entries:
                    tx.append(entries, ts)
        except self._duplicate as exc:
            raise ConflictError(f"run {row.run.id!r} already exists") from exc
        return row.run

    def get_run(self, run_id: str) -> Run:
        with self._read() as tx:
            cols = tx.run_get(run_id, False)
        if cols is None:
            raise NotFound(f"no run {run_id!r}")
        return RunRow.from_columns(cols).run

    def list_runs(
        self, status: str | None = None, tenant: str | None = None, limit: int = 100
    ) -> list[Run]:
        """Runs, newest first, optionally of one status and/or tenant."""
        with self._read() as tx:
            rows = tx.run_list(status, tenant, int(limit))
        return [RunRow.from_columns(cols).run for cols in rows]

    def child_runs(self, run_id: str) -> list[Run]:
        """The runs started by `run_id`'s delegate calls, oldest first (not their children)."""
        with self._read() as tx:
            rows = tx.run_children(run_id)
        return [RunRow.from_columns(cols).run for cols in rows]

    def load_messages(self, run_id: str) -> list[dict[str, Any]]:
        """The run's transcript, in order."""
        with self._read() as tx:
            if tx.run_get(run_id, False) is None:
                raise NotFound(f"no run {run_id!r}")
            texts = tx.messages_load(run_id)
        try:  # one parse of the whole transcript: much cheaper than one per message
            out: list[dict[str, Any]] = json.loads("[" + ",".join(texts) + "]")
            if len(out) == len(texts) and all(isinstance(m, dict) for m in out):
                return out
        except ValueError:
            pass
        for seq, text in enumerate(texts):  # name the row that does not parse
            try:
                message = json.loads(text)
            except ValueError as exc:
                raise IntegrityError(f"run {run_id}: message {seq} is not valid JSON") from exc
            if not isinstance(message, dict):
                raise IntegrityError(f"run {run_id}: message {seq} is not a JSON object")
        raise IntegrityError(f"run {run_id}: a stored message is not one JSON object")

    def save_run(
        self,
        run: Run,
        new_messages: Sequence[Mapping[str, Any]],
        *,
        expected_version: int,
        events: Sequence[tuple[str, Mapping[str, Any]]] = (),
        worker: str | None = None,
        now: float | None = None,
        requests: Sequence[NewRequest] = (),
    ) -> Run:
        """One transaction: CAS on the version, append the new messages, store the document
        (version + 1), create the turn's `requests` (request, idempotent, ttl seconds),
        append the events (and ``run.<status>`` when the status changed)."""
        ts = base.clock(now)
        rows = encode_messages(new_messages, "save_run")
        creates = [
            base.plan_create(r, keys=self._keys, now=ts, ttl_seconds=ttl, idempotent=idem)
            for r, idem, ttl in requests
        ]
        try:
            with self._write() as tx:
                cols = tx.run_get(run.id, True)
                if cols is None:
                    raise NotFound(f"no run {run.id!r}")
                current = RunRow.from_columns(cols)
                new, drafts = plan_save_run(
                    current,
                    run,
                    len(rows),
                    expected_version=expected_version,
                    events=events,
                    worker=worker,
                    now=ts,
                )
                drafts += [d for plan in creates for d in plan.events]
                entries = self._entries(drafts, ts)
                new_cols = new.columns()  # encoded before the first write: all or nothing
                for plan in creates:  # first: a taken id fails before anything is written
                    assert plan.row is not None
                    tx.insert_request(plan.row.columns())
                tx.messages_insert(run.id, current.run.message_count, rows)
                tx.run_update(
                    new_cols,
                    current.run.version,
                    status_changed=new.run.status != current.run.status,
                )
                if entries:
                    tx.append(entries, ts)
        except self._duplicate as exc:
            raise InvalidInput(f"save_run: a request of run {run.id} already exists") from exc
        for plan in creates:
            assert plan.row is not None
            self._remember_row(plan.row)
        self._maybe_anchor()
        return new.run

    def claim_run(
        self,
        worker: str,
        *,
        run_id: str | None = None,
        lease_seconds: float = DEFAULT_RUN_LEASE_SECONDS,
        now: float | None = None,
    ) -> Run | None:
        """Lease a run to `worker`: the one named, or the oldest ready one (None if none)."""
        if not worker:
            raise InvalidInput("claim_run: worker must be a non-empty string")
        ts = base.clock(now)
        with self._write() as tx:
            if run_id is not None:
                cols = tx.run_get(run_id, True)
                if cols is None:
                    raise NotFound(f"no run {run_id!r}")
            else:
                cols = tx.run_ready(ts)
                if cols is None:
                    return None
            row = RunRow.from_columns(cols)
            new, draft = plan_claim_run(row, worker, lease_seconds=lease_seconds, now=ts)
            entries = self._entries([draft], ts)
            tx.run_lease(row.run.id, new.lease_owner, new.lease_expires_at, new.lease_seconds)
            if entries:
                tx.append(entries, ts)
        self._maybe_anchor()
        log.debug("run %s leased to %s until %s", row.run.id, worker, when(new.lease_expires_at))
        return row.run

    def renew_run(
        self,
        run_id: str,
        worker: str,
        *,
        lease_seconds: float = DEFAULT_RUN_LEASE_SECONDS,
        now: float | None = None,
    ) -> bool:
        """Extend `worker`'s lease on a run it is driving (True). False when another worker
        holds the run, nobody does (a save or a person let it go), or it has ended: the
        run is no longer this worker's to drive. A lease that lapsed while nobody took the
        run is still `worker`'s, as `claim_run` would give it back. Not an event."""
        ts = base.clock(now)
        with self._write() as tx:
            cols = tx.run_get(run_id, True)
            if cols is None or cols[8] != worker or cols[1] in FINAL:
                return False
            seconds = float(lease_seconds)
            tx.run_lease(run_id, worker, ts + seconds, seconds)
        return True

    def release_run(self, run_id: str, worker: str) -> None:
        """Let the lease go if `worker` holds it; otherwise do nothing."""
        with self._read() as tx:  # usually a save that stopped the run let it go already
            cols = tx.run_get(run_id, False)
        if cols is None or cols[8] != worker:
            return
        with self._write() as tx:
            tx.run_release(run_id, worker)  # only if still held by `worker`
