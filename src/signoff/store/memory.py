"""Memory backend: for tests and docs. Same rules, same rows, one process, gone on exit.

Rows are kept exactly as the SQL backends keep them (tuples of columns, the JSON text of
each document), so integrity checks and tamper tests behave the same.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..keys import Keys
from .anchor import Anchor
from .base import DELIVERY_KINDS, Draft
from .chain import GENESIS_HASH, chain_hash
from .engine import Engine

if TYPE_CHECKING:
    from .base import Flush


@dataclass
class MemoryDB:
    requests: dict[str, list[Any]] = field(default_factory=dict)  # id -> [ord, *cols]
    events: dict[int, list[Any]] = field(default_factory=dict)  # seq -> row
    head: list[Any] = field(default_factory=lambda: [0, GENESIS_HASH])
    meta: dict[str, str] = field(default_factory=dict)
    keys: Keys = field(default_factory=lambda: Keys.generate("the memory store's own keys"))
    # grant id -> [ord, scope, run_id, doc, revoked_at]
    grants: dict[str, list[Any]] = field(default_factory=dict)
    consumers: dict[str, int] = field(default_factory=dict)
    counter: int = 0
    # run id -> [ord, *RunRow.columns()]; run id -> message rows (compact JSON), in order
    runs: dict[str, list[Any]] = field(default_factory=dict)
    messages: dict[str, list[str]] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=dict)  # child run id -> parent run id


_STATE, _RUN, _TENANT, _EXPIRES, _LEASE, _OUTCOME = 1, 2, 3, 5, 10, 11
# positions in [ord, *RunRow.columns()]
R_STATUS, R_TENANT, R_UPDATED, R_VERSION, R_OWNER, R_EXPIRES, R_SECONDS = 2, 3, 6, 8, 9, 10, 11


class DuplicateId(Exception):
    pass


class MemoryTx:
    def __init__(self, db: MemoryDB) -> None:
        self.db = db

    def get_request(self, request_id: str, lock: bool) -> Sequence[Any] | None:
        row = self.db.requests.get(request_id)
        return None if row is None else tuple(row[1:])

    def insert_request(self, cols: Sequence[Any]) -> None:
        if cols[0] in self.db.requests:
            raise DuplicateId(cols[0])
        self.db.counter += 1
        self.db.requests[cols[0]] = [self.db.counter, *cols]

    def update_request(self, cols: Sequence[Any], old_version: int) -> None:
        if not self.cas_request(cols, old_version):
            raise RuntimeError(f"request {cols[0]}: compare-and-set on {old_version} failed")

    def cas_request(self, cols: Sequence[Any], old_version: int) -> bool:
        row = self.db.requests.get(cols[0])
        if row is None or row[-1] != old_version:
            return False
        row[1:] = [*cols[:-1], old_version + 1]
        return True

    def outcomes(self, request_ids: Sequence[str]) -> list[tuple[str, str | None]]:
        rows = (self.db.requests.get(rid) for rid in request_ids)
        return [(row[1], row[1 + _OUTCOME]) for row in rows if row is not None]

    def _ordered(self) -> list[list[Any]]:
        return sorted(self.db.requests.values(), key=lambda r: r[0])

    def ids_due(self, states: Sequence[str], column: str, now: float) -> list[str]:
        at = 1 + {"expires_at": _EXPIRES, "lease_expires_at": _LEASE}[column]
        return [
            r[1]
            for r in self._ordered()
            if r[1 + _STATE] in states and r[at] is not None and r[at] <= now
        ]

    def list_requests(
        self, state: str | None, run_id: str | None, tenant: str | None, limit: int
    ) -> list[Sequence[Any]]:
        out: list[Sequence[Any]] = []
        for r in reversed(self._ordered()):
            cols = r[1:]
            if (
                (state is None or cols[_STATE] == state)
                and (run_id is None or cols[_RUN] == run_id)
                and (tenant is None or cols[_TENANT] == tenant)
            ):
                out.append(tuple(cols))
            if len(out) >= limit:
                break
        return out

    def append(self, entries: list[tuple[Draft, str]], ts: float) -> list[int]:
        seq, prev = self.db.head
        seqs = []
        for draft, entry in entries:
            seq += 1
            digest = chain_hash(prev, entry)
            self.db.events[seq] = [
                seq,
                ts,
                draft.kind,
                draft.request_id,
                draft.run_id,
                entry,
                prev,
                digest,
            ]
            prev = digest
            seqs.append(seq)
        self.db.head = [seq, prev]
        return seqs

    def meta_get(self, key: str) -> str | None:
        return self.db.meta.get(key)

    def meta_put_if_absent(self, key: str, value: str) -> None:
        self.db.meta.setdefault(key, value)

    def meta_delete(self, key: str) -> None:
        self.db.meta.pop(key, None)

    def lock_chain(self) -> None:
        pass  # the store's lock is held

    def last_entry(self) -> str | None:
        return str(self.db.events[max(self.db.events)][5]) if self.db.events else None

    def chain_tip(self) -> Anchor | None:
        if not self.db.events:
            return None
        last = max(self.db.events)
        first = self.db.events.get(1)
        return Anchor(str(first[7]) if first else "?", last, str(self.db.events[last][7]))

    def insert_grant(
        self, grant_id: str, scope: str, run_id: str | None, created_at: float, doc: str
    ) -> None:
        self.db.counter += 1
        self.db.grants[grant_id] = [self.db.counter, scope, run_id, doc, None]

    def get_grant(self, grant_id: str, lock: bool) -> tuple[str, float | None] | None:
        row = self.db.grants.get(grant_id)
        return None if row is None else (row[3], row[4])

    def grant_doc(self, grant_id: str, doc: str) -> None:
        self.db.grants[grant_id][3] = doc

    def revoke_grant(self, grant_id: str, now: float, doc: str) -> None:
        self.db.grants[grant_id][3:5] = [doc, now]

    def list_grants(self, scope: str | None, run_id: str | None) -> list[tuple[str, str | None]]:
        rows = sorted(self.db.grants.values(), key=lambda r: -r[0])
        return [
            (r[3], r[2])
            for r in rows
            if r[4] is None
            and (scope is None or r[1] == scope)
            and (run_id is None or r[2] == run_id)
        ]

    def events_after(self, seq: int, limit: int) -> list[tuple[int, str, str, str]]:
        rows = sorted((r for s, r in self.db.events.items() if s > seq), key=lambda r: r[0])
        return [(r[0], r[5], r[6], r[7]) for r in rows[:limit]]

    def deliveries(self, request_id: str) -> list[tuple[int, str, str, str]]:
        rows = sorted(self.db.events.values(), key=lambda r: r[0])
        return [
            (r[0], r[5], r[6], r[7]) for r in rows if r[3] == request_id and r[2] in DELIVERY_KINDS
        ]

    def cursor_get(self, name: str) -> int:
        return self.db.consumers.get(name, 0)

    def cursor_set(self, name: str, seq: int) -> None:
        self.db.consumers[name] = seq

    def chain_rows(self) -> Iterator[tuple[int, str, str, str, str, str | None]]:
        for seq in sorted(self.db.events):
            r = self.db.events[seq]
            yield (r[0], r[5], r[6], r[7], r[2], r[3])

    def last_seq(self) -> int:
        return int(self.db.head[0])

    def chain_end(self) -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
        return (int(self.db.head[0]), str(self.db.head[1])), None

    # -- runs

    def run_get(self, run_id: str, lock: bool) -> Sequence[Any] | None:
        row = self.db.runs.get(run_id)
        return None if row is None else tuple(row[1:])

    def run_insert(self, cols: Sequence[Any], parent_id: str | None = None) -> None:
        if cols[0] in self.db.runs:
            raise DuplicateId(cols[0])
        self.db.counter += 1
        self.db.runs[cols[0]] = [self.db.counter, *cols]
        self.db.messages[cols[0]] = []
        if parent_id is not None:
            self.db.parents[cols[0]] = parent_id

    def run_children(self, parent_id: str) -> list[Sequence[Any]]:
        rows = sorted(self.db.runs.values(), key=lambda r: r[0])
        return [tuple(r[1:]) for r in rows if self.db.parents.get(r[1]) == parent_id]

    def _unfinished_child(self, run_id: str) -> bool:
        return any(
            parent == run_id and self.db.runs[child][R_STATUS] not in ("finished", "failed")
            for child, parent in self.db.parents.items()
        )

    def run_update(self, cols: Sequence[Any], old_version: int, *, status_changed: bool) -> None:
        row = self.db.runs[cols[0]]
        if row[R_VERSION] != old_version:
            raise RuntimeError(f"run {cols[0]}: compare-and-set on {old_version} failed")
        row[1:] = list(cols)

    def run_lease(
        self, run_id: str, owner: str | None, expires_at: float | None, seconds: float | None
    ) -> None:
        self.db.runs[run_id][R_OWNER : R_SECONDS + 1] = [owner, expires_at, seconds]

    def run_release(self, run_id: str, worker: str) -> None:
        row = self.db.runs.get(run_id)
        if row is not None and row[R_OWNER] == worker:
            row[R_OWNER : R_EXPIRES + 1] = [None, None]

    def run_list(self, status: str | None, tenant: str | None, limit: int) -> list[Sequence[Any]]:
        rows = sorted(self.db.runs.values(), key=lambda r: -r[0])
        out: list[Sequence[Any]] = [
            tuple(r[1:])
            for r in rows
            if (status is None or r[R_STATUS] == status)
            and (tenant is None or r[R_TENANT] == tenant)
        ]
        return out[:limit]

    def _waiting(self, run_id: str, now: float) -> bool:
        """A request of the run still waits for a person, or its call is running under a
        live claim (see sql.READY)."""
        for r in self.db.requests.values():
            if r[1 + _RUN] != run_id:
                continue
            state, expires, lease = r[1 + _STATE], r[1 + _EXPIRES], r[1 + _LEASE]
            if state == "pending" and (expires is None or expires > now):
                return True
            if state == "claimed" and lease is not None and lease > now:
                return True
        return False

    def run_ready(self, now: float) -> Sequence[Any] | None:
        def ready(r: list[Any]) -> bool:
            lapsed = r[R_EXPIRES] is not None and r[R_EXPIRES] <= now
            if r[R_OWNER] is not None and not lapsed:
                return False
            if self._unfinished_child(r[1]):
                return False  # the child goes first; its parent once it has answered
            if r[R_STATUS] == "paused":
                return not self._waiting(r[1], now)
            return r[R_STATUS] == "running" and lapsed

        found = sorted(
            (r for r in self.db.runs.values() if ready(r)), key=lambda r: (r[R_UPDATED], r[0])
        )
        return tuple(found[0][1:]) if found else None

    def messages_insert(self, run_id: str, first_seq: int, messages: Sequence[str]) -> None:
        rows = self.db.messages[run_id]
        if len(rows) != first_seq:
            raise RuntimeError(f"run {run_id}: message {first_seq} is not the next one")
        rows.extend(messages)

    def messages_load(self, run_id: str) -> list[str]:
        return list(self.db.messages.get(run_id, ()))


class MemoryStore(Engine):
    _duplicate = (DuplicateId,)

    def __init__(self, db: MemoryDB | None = None) -> None:
        self._db = db or MemoryDB()
        self._lock = threading.RLock()
        self._tx = MemoryTx(self._db)
        self._label = "the memory store"
        self._load_keys(self._db.keys)

    def __repr__(self) -> str:
        return "MemoryStore()"

    @contextmanager
    def _write(self, flush: Flush = "now") -> Iterator[MemoryTx]:
        with self._lock:  # nothing here outlives the process: "now" and "soon" are alike
            yield self._tx

    @contextmanager
    def _read(self) -> Iterator[MemoryTx]:
        with self._lock:
            yield self._tx

    def migrate(self) -> list[int]:
        return []

    def close(self, *, process_ends: bool = False) -> None:
        pass
