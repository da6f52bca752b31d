"""The SQL both database backends share; `?` placeholders become `%s` on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..hints import literal_type
from .anchor import Anchor
from .base import DELIVERY_KINDS, Draft
from .chain import GENESIS_HASH, chain_hash

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any, Literal

    Dialect = Literal["sqlite", "postgres"]

DIALECTS: tuple[Dialect, ...] = ("sqlite", "postgres")
_LITERALS: dict[str, tuple[str, ...]] = {"Dialect": DIALECTS}

if not TYPE_CHECKING:

    def __getattr__(name):
        return literal_type(__name__, _LITERALS, name)


# SQLite indexes requests by state only while they are open (migrations 0009, 0011); a
# query on open states repeats the index's condition verbatim so the planner can use the
# index. Equalities joined by OR, not `state IN (...)`: see migration 0011.
OPEN_STATES = ("pending", "approved", "claimed", "in_doubt")
OPEN_TERM = "({})".format(" OR ".join(f"state = '{state}'" for state in OPEN_STATES))

# the notifier's delivery events are indexed by request (migration 0010), with this condition
DELIVERY_TERM = "kind IN ({})".format(", ".join(f"'{k}'" for k in DELIVERY_KINDS))

CHECKPOINT_EVERY = 64  # SQLite: entries between moves of the chain's checkpoint row

REQUEST_COLS = (
    "id, state, run_id, tenant, created_at, expires_at, idempotent, doc, "
    "token_hash, worker, lease_expires_at, outcome, version"
)

RUN_COLS = (
    "id, status, tenant, thread, created_at, updated_at, message_count, version, "
    "lease_owner, lease_expires_at, lease_seconds, doc"
)

# A run is ready when its lease is free or lapsed and it is paused with no request still
# waiting for a decision (one past its expiry no longer counts) nor a call running under a
# live claim (workers would take and let go of it in a loop until the claim ends: its
# report, or its lease lapsing into doubt), or it is running and its lease lapsed (the
# driver crashed); and no child run of it is unfinished (the deepest ready run goes first:
# a parent goes on once its child has answered). Oldest update first.
READY = (
    f"SELECT {RUN_COLS} FROM signoff_runs r "
    "WHERE (r.lease_owner IS NULL OR r.lease_expires_at <= :now) "
    "AND ((r.status = 'paused' AND NOT EXISTS (SELECT 1 FROM signoff_requests q "
    "WHERE q.run_id = r.id AND ((q.state = 'pending' "
    "AND (q.expires_at IS NULL OR q.expires_at > :now)) "
    "OR (q.state = 'claimed' AND q.lease_expires_at > :now)))) "
    "OR (r.status = 'running' AND r.lease_expires_at <= :now)) "
    "AND NOT EXISTS (SELECT 1 FROM signoff_runs c WHERE c.parent_id = r.id "
    "AND c.status NOT IN ('finished', 'failed')) "
    "ORDER BY r.updated_at, r.ord LIMIT 1"
)

_SQL: dict[str, str] = {
    "get": f"SELECT {REQUEST_COLS} FROM signoff_requests WHERE id = ?",
    "insert": f"INSERT INTO signoff_requests ({REQUEST_COLS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "update": "UPDATE signoff_requests SET state = ?, doc = ?, token_hash = ?, worker = ?, "
    "lease_expires_at = ?, outcome = ?, version = version + 1 "
    "WHERE id = ? AND version = ?",
    # PostgreSQL: the chain head; SQLite: the chain's checkpoint (see chain.py)
    "head": "SELECT seq, hash FROM signoff_chain WHERE id = 1",
    "set_head": "UPDATE signoff_chain SET seq = ?, hash = ? WHERE id = 1",
    # SQLite: the last entry carries the end mark (head = 1)
    "last": "SELECT seq, hash, head FROM signoff_events ORDER BY seq DESC LIMIT 1",
    "end_mark": "SELECT seq, hash FROM signoff_events WHERE head = 1 ORDER BY seq DESC LIMIT 1",
    "unmark": "UPDATE signoff_events SET head = NULL WHERE seq = ?",
    "event": "INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, "
    "hash, head) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "pg_append": "SELECT signoff_append_text(?, ?, ?, ?, ?)",
    "meta_get": "SELECT value FROM signoff_meta WHERE key = ?",
    "meta_delete": "DELETE FROM signoff_meta WHERE key = ?",
    "last_entry": "SELECT entry FROM signoff_events ORDER BY seq DESC LIMIT 1",
    "tip": "SELECT seq, hash FROM signoff_events WHERE seq = 1 "
    "OR seq = (SELECT MAX(seq) FROM signoff_events) ORDER BY seq",
    "meta_put": "INSERT INTO signoff_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
    "grant_insert": "INSERT INTO signoff_grants (id, scope, run_id, created_at, doc) "
    "VALUES (?, ?, ?, ?, ?)",
    "grant_get": "SELECT doc, revoked_at FROM signoff_grants WHERE id = ?",
    "grant_revoke": "UPDATE signoff_grants SET revoked_at = ?, doc = ? WHERE id = ?",
    "grant_doc": "UPDATE signoff_grants SET doc = ? WHERE id = ?",
    "events_after": "SELECT seq, entry, prev_hash, hash FROM signoff_events WHERE seq > ? "
    "ORDER BY seq LIMIT ?",
    "deliveries": "SELECT seq, entry, prev_hash, hash FROM signoff_events "
    f"WHERE {DELIVERY_TERM} AND request_id = ? ORDER BY seq",
    "cursor_get": "SELECT seq FROM signoff_consumers WHERE name = ?",
    "cursor_set": "INSERT INTO signoff_consumers (name, seq) VALUES (?, ?) "
    "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq",
    "chain": "SELECT seq, entry, prev_hash, hash, kind, request_id FROM signoff_events "
    "ORDER BY seq",
    "run_get": f"SELECT {RUN_COLS} FROM signoff_runs WHERE id = ?",
    "run_insert": f"INSERT INTO signoff_runs ({RUN_COLS}, parent_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "run_children": f"SELECT {RUN_COLS} FROM signoff_runs WHERE parent_id = ? ORDER BY ord",
    "run_update": "UPDATE signoff_runs SET status = ?, thread = ?, updated_at = ?, "
    "message_count = ?, version = ?, lease_owner = ?, lease_expires_at = ?, "
    "lease_seconds = ?, doc = ? WHERE id = ? AND version = ?",
    "run_update_same_status": "UPDATE signoff_runs SET thread = ?, updated_at = ?, "
    "message_count = ?, version = ?, lease_owner = ?, "
    "lease_expires_at = ?, lease_seconds = ?, doc = ? "
    "WHERE id = ? AND version = ?",
    "run_lease": "UPDATE signoff_runs SET lease_owner = ?, lease_expires_at = ?, "
    "lease_seconds = ? WHERE id = ?",
    "run_release": "UPDATE signoff_runs SET lease_owner = NULL, lease_expires_at = NULL "
    "WHERE id = ? AND lease_owner = ?",
    "messages_insert": "INSERT INTO signoff_messages (run_id, seq, msg) VALUES (?, ?, ?)",
    "messages_load": "SELECT msg FROM signoff_messages WHERE run_id = ? ORDER BY seq",
}


def _where(filters: Sequence[tuple[str, Any]], extra: str | None = None) -> tuple[str, list[Any]]:
    """`WHERE column = ? AND ...` for the filters that are set, plus an extra term."""
    terms = [f"{column} = ?" for column, value in filters if value is not None]
    if extra:
        terms.append(extra)
    params = [value for _, value in filters if value is not None]
    return (f"WHERE {' AND '.join(terms)} " if terms else ""), params


class SQLTx:
    """One transaction (or one autocommit read) on a DB-API style connection."""

    def __init__(self, conn: Any, dialect: Dialect) -> None:
        self.conn = conn
        self.dialect = dialect
        self.sql = _SQL if dialect == "sqlite" else PG_SQL
        self.appended = False  # whether this transaction appended events
        self.floor = 0  # SQLite: the next entry's number is above this (see KeyedLog._floor)

    def _q(self, name: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(self.sql[name], params)

    def _raw(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if self.dialect == "postgres":
            sql = sql.replace("?", "%s")
        return self.conn.execute(sql, params)

    def get_request(self, request_id: str, lock: bool) -> Sequence[Any] | None:
        name = "get_lock" if lock and self.dialect == "postgres" else "get"
        row: Sequence[Any] | None = self._q(name, (request_id,)).fetchone()
        return row

    def insert_request(self, cols: Sequence[Any]) -> None:
        self._q("insert", cols)

    def update_request(self, cols: Sequence[Any], old_version: int) -> None:
        # under the row lock (or the write lock) this cannot fail
        if not self.cas_request(cols, old_version):
            raise RuntimeError(
                f"request {cols[0]}: compare-and-set on version {old_version} failed"
            )

    def cas_request(self, cols: Sequence[Any], old_version: int) -> bool:
        (rid, state, _r, _t, _c, _e, _i, doc, token_hash, worker, lease, outcome, _v) = cols
        cur = self._q("update", (state, doc, token_hash, worker, lease, outcome, rid, old_version))
        return bool(cur.rowcount == 1)

    def ids_due(self, states: Sequence[str], column: str, now: float) -> list[str]:
        assert column in ("expires_at", "lease_expires_at")
        assert set(states) <= set(OPEN_STATES)
        marks = ", ".join("?" for _ in states)
        rows = self._raw(
            f"SELECT id FROM signoff_requests WHERE {OPEN_TERM} AND "
            f"state IN ({marks}) AND {column} <= ? ORDER BY ord",
            (*states, now),
        ).fetchall()
        return [r[0] for r in rows]

    def outcomes(self, request_ids: Sequence[str]) -> list[tuple[str, str | None]]:
        if not request_ids:
            return []
        marks = ", ".join("?" for _ in request_ids)
        rows = self._raw(
            f"SELECT id, outcome FROM signoff_requests WHERE id IN ({marks})", tuple(request_ids)
        ).fetchall()
        return [(str(r[0]), r[1]) for r in rows]

    def list_requests(
        self, state: str | None, run_id: str | None, tenant: str | None, limit: int
    ) -> list[Sequence[Any]]:
        clause, params = _where(
            (("state", state), ("run_id", run_id), ("tenant", tenant)),
            OPEN_TERM if state in OPEN_STATES else None,
        )
        sql = f"SELECT {REQUEST_COLS} FROM signoff_requests {clause}ORDER BY ord DESC LIMIT ?"
        rows: list[Sequence[Any]] = self._raw(sql, (*params, limit)).fetchall()
        return rows

    def append(self, entries: list[tuple[Draft, str]], ts: float) -> list[int]:
        seqs: list[int] = []
        self.appended = True
        if self.dialect == "postgres":
            # one call per run of entries about the same request and run
            start = 0
            while start < len(entries):
                draft = entries[start][0]
                end = start + 1
                while end < len(entries) and (
                    entries[end][0].request_id,
                    entries[end][0].run_id,
                ) == (draft.request_id, draft.run_id):
                    end += 1
                group = entries[start:end]
                row = self._q(
                    "pg_append",
                    (
                        ts,
                        draft.request_id,
                        draft.run_id,
                        "\n".join(d.kind for d, _ in group),
                        "\n".join(e for _, e in group),
                    ),
                ).fetchone()
                last = int(row[0])
                seqs.extend(range(last - len(group) + 1, last + 1))
                start = end
            return seqs
        last = self._q("last").fetchone()
        seq, prev = (0, GENESIS_HASH) if last is None else (int(last[0]), str(last[1]))
        if last is not None:
            if last[2] == 1:
                self._q("unmark", (seq,))  # the same page the new entry goes to, mostly
            else:
                seq += 1  # the end was cut behind the store's back: leave a gap that shows
        seq = max(seq, self.floor)  # entries anchored outside the store were lost: a gap
        checkpoint = None
        for n, (draft, entry) in enumerate(entries, 1):
            seq += 1
            digest = chain_hash(prev, entry)
            self._q(
                "event",
                (
                    seq,
                    ts,
                    draft.kind,
                    draft.request_id,
                    draft.run_id,
                    entry,
                    prev,
                    digest,
                    1 if n == len(entries) else None,
                ),
            )
            if seq == 1 or seq % CHECKPOINT_EVERY == 0:
                checkpoint = (seq, digest)
            prev = digest
            seqs.append(seq)
        if checkpoint is not None:
            self._q("set_head", checkpoint)
        return seqs

    def meta_get(self, key: str) -> str | None:
        row = self._q("meta_get", (key,)).fetchone()
        return None if row is None else str(row[0])

    def meta_put_if_absent(self, key: str, value: str) -> None:
        self._q("meta_put", (key, value))

    def meta_delete(self, key: str) -> None:
        self._q("meta_delete", (key,))

    def lock_chain(self) -> None:
        """Hold the chain's end until this transaction ends (SQLite's writer holds it all)."""
        if self.dialect == "postgres":
            self.conn.execute("SELECT seq FROM signoff_chain WHERE id = 1 FOR UPDATE")

    def last_entry(self) -> str | None:
        row = self._q("last_entry").fetchone()
        return None if row is None else str(row[0])

    def chain_tip(self) -> Anchor | None:
        """(hash of entry 1, last seq, its hash), None for an empty log."""
        rows = self._q("tip").fetchall()
        if not rows:
            return None
        first = str(rows[0][1]) if int(rows[0][0]) == 1 else "?"
        return Anchor(first, int(rows[-1][0]), str(rows[-1][1]))

    def insert_grant(
        self, grant_id: str, scope: str, run_id: str | None, created_at: float, doc: str
    ) -> None:
        self._q("grant_insert", (grant_id, scope, run_id, created_at, doc))

    def get_grant(self, grant_id: str, lock: bool) -> tuple[str, float | None] | None:
        row = self._q("grant_get", (grant_id,)).fetchone()
        return None if row is None else (row[0], row[1])

    def revoke_grant(self, grant_id: str, now: float, doc: str) -> None:
        self._q("grant_revoke", (now, doc, grant_id))

    def grant_doc(self, grant_id: str, doc: str) -> None:
        self._q("grant_doc", (doc, grant_id))

    def list_grants(self, scope: str | None, run_id: str | None) -> list[tuple[str, str | None]]:
        where, params = ["revoked_at IS NULL"], []
        if scope is not None:
            where.append("scope = ?")
            params.append(scope)
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        sql = (
            f"SELECT doc, run_id FROM signoff_grants WHERE {' AND '.join(where)} ORDER BY ord DESC"
        )
        return [(r[0], r[1]) for r in self._raw(sql, params).fetchall()]

    def events_after(self, seq: int, limit: int) -> list[tuple[int, str, str, str]]:
        return [(r[0], r[1], r[2], r[3]) for r in self._q("events_after", (seq, limit)).fetchall()]

    def deliveries(self, request_id: str) -> list[tuple[int, str, str, str]]:
        return [
            (int(r[0]), r[1], r[2], r[3]) for r in self._q("deliveries", (request_id,)).fetchall()
        ]

    def cursor_get(self, name: str) -> int:
        row = self._q("cursor_get", (name,)).fetchone()
        return 0 if row is None else int(row[0])

    def cursor_set(self, name: str, seq: int) -> None:
        self._q("cursor_set", (name, seq))

    def chain_rows(self) -> Iterator[tuple[int, str, str, str, str, str | None]]:
        for r in self._q("chain").fetchall():
            yield (int(r[0]), r[1], r[2], r[3], r[4], r[5])

    def last_seq(self) -> int:
        row = self._q("head" if self.dialect == "postgres" else "last").fetchone()
        return 0 if row is None else int(row[0])

    def chain_end(self) -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
        """(head, checkpoint) for `chain.verify_chain`."""
        row = self._q("head").fetchone()
        recorded = (0, GENESIS_HASH) if row is None else (int(row[0]), str(row[1]))
        if self.dialect == "postgres":
            return recorded, None
        mark = self._q("end_mark").fetchone()
        return (None if mark is None else (int(mark[0]), str(mark[1]))), recorded

    # -- runs (see runstore)

    def run_get(self, run_id: str, lock: bool) -> Sequence[Any] | None:
        name = "run_get_lock" if lock and self.dialect == "postgres" else "run_get"
        row: Sequence[Any] | None = self._q(name, (run_id,)).fetchone()
        return row

    def run_insert(self, cols: Sequence[Any], parent_id: str | None = None) -> None:
        self._q("run_insert", (*cols, parent_id))

    def run_children(self, parent_id: str) -> list[Sequence[Any]]:
        rows: list[Sequence[Any]] = self._q("run_children", (parent_id,)).fetchall()
        return rows

    def run_update(self, cols: Sequence[Any], old_version: int, *, status_changed: bool) -> None:
        rid, status, _tenant, thread, _c, updated, count, version, owner, expires, secs, doc = cols
        # a save that keeps the status leaves the status index alone (one page less to
        # write on SQLite; a HOT update on PostgreSQL)
        if status_changed:
            cur = self._q(
                "run_update",
                (
                    status,
                    thread,
                    updated,
                    count,
                    version,
                    owner,
                    expires,
                    secs,
                    doc,
                    rid,
                    old_version,
                ),
            )
        else:
            cur = self._q(
                "run_update_same_status",
                (thread, updated, count, version, owner, expires, secs, doc, rid, old_version),
            )
        if cur.rowcount != 1:  # the row is locked: this cannot happen
            raise RuntimeError(f"run {rid}: compare-and-set on version {old_version} failed")

    def run_lease(
        self, run_id: str, owner: str | None, expires_at: float | None, seconds: float | None
    ) -> None:
        self._q("run_lease", (owner, expires_at, seconds, run_id))

    def run_release(self, run_id: str, worker: str) -> None:
        self._q("run_release", (run_id, worker))

    def run_list(self, status: str | None, tenant: str | None, limit: int) -> list[Sequence[Any]]:
        clause, params = _where((("status", status), ("tenant", tenant)))
        sql = f"SELECT {RUN_COLS} FROM signoff_runs {clause}ORDER BY ord DESC LIMIT ?"
        rows: list[Sequence[Any]] = self._raw(sql, (*params, limit)).fetchall()
        return rows

    def run_ready(self, now: float) -> Sequence[Any] | None:
        row: Sequence[Any] | None = self.conn.execute(
            self.sql["run_ready"], {"now": now}
        ).fetchone()
        return row

    def messages_insert(self, run_id: str, first_seq: int, messages: Sequence[str]) -> None:
        if not messages:
            return
        if self.dialect == "postgres":
            self.conn.execute(
                self.sql["messages_insert"],
                {"run": run_id, "first": first_seq, "msgs": list(messages)},
            )
            return
        self.conn.executemany(
            self.sql["messages_insert"],
            [(run_id, first_seq + i, m) for i, m in enumerate(messages)],
        )

    def messages_load(self, run_id: str) -> list[str]:
        return [r[0] for r in self._q("messages_load", (run_id,)).fetchall()]


PG_SQL: dict[str, str] = {k: v.replace("?", "%s") for k, v in _SQL.items()}
PG_SQL["get_lock"] = PG_SQL["get"] + " FOR UPDATE"
PG_SQL["run_get_lock"] = PG_SQL["run_get"] + " FOR UPDATE"
# one round trip for any number of new messages
PG_SQL["messages_insert"] = (
    "INSERT INTO signoff_messages (run_id, seq, msg) "
    "SELECT %(run)s, %(first)s + t.i - 1, t.m "
    "FROM unnest(%(msgs)s::text[]) WITH ORDINALITY AS t(m, i)"
)
# several workers: each skips the runs another is claiming right now
PG_SQL["run_ready"] = READY.replace(":now", "%(now)s") + " FOR UPDATE OF r SKIP LOCKED"
_SQL["run_ready"] = READY
