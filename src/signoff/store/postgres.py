"""PostgreSQL backend: the multi-process, multi-server store.

psycopg 3 with a `psycopg_pool.ConnectionPool`. A transition locks its request row
(``SELECT … FOR UPDATE``), so concurrent deciders and claimers queue on the row and the
loser re-reads the winner's state. Request transitions are optimistic instead: read the
row, apply the rules, then one compare-and-set statement on the row's version that also
appends the events (see migrations/postgres/0002). Events go through ``signoff_append()``:
the chain-head row update serializes appends, the hash is computed in the server,
``NOTIFY signoff_events, '<seq>'`` is sent in the same transaction. `wait_for_event`
LISTENs on a dedicated connection.

Set the schema with the URL, e.g. ``postgresql://host/db?options=-csearch_path%3Dmine``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..exceptions import ConfigurationError, ConflictError, InvalidInput, NotFound
from ..models import Request
from . import base, migrations
from .base import Plan, Row
from .engine import Engine
from .sql import PG_SQL, SQLTx

MIGRATION_LOCK = 0x5190FF  # pg_advisory_xact_lock key held while migrating
MAX_CAS_ATTEMPTS = 100
APPLY = ("SELECT signoff_apply(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::text[], "
         "%s::text[])")
CREATE = "SELECT signoff_create(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::text[], %s::text[])"


class PostgresStore(Engine):
    def __init__(self, url: str, *, migrate: bool = True, min_size: int = 1,
                 max_size: int = 8) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigurationError(
                "PostgreSQL support needs psycopg 3 and psycopg_pool: "
                "pip install 'signoff[postgres]'") from exc
        self.url = url
        self._psycopg = psycopg
        self._duplicate = (psycopg.errors.UniqueViolation,)
        self._listener: Any = None
        self._listen_lock = threading.Lock()
        try:
            self._pool = ConnectionPool(url, min_size=min_size, max_size=max_size,
                                        kwargs={"autocommit": True}, open=True,
                                        name="signoff")
            self._pool.wait(timeout=10)
        except Exception as exc:
            raise ConfigurationError(f"cannot reach the PostgreSQL store: {exc}") from exc
        try:
            if migrate:
                self.migrate()
            self._load_key()
        except BaseException:
            self._pool.close()
            raise

    def __repr__(self) -> str:
        return "PostgresStore(…)"

    @contextmanager
    def _write(self) -> Iterator[SQLTx]:
        with self._pool.connection() as conn, conn.transaction():
            yield SQLTx(conn, "postgres")

    # The hot path: a transition is one read and one compare-and-set statement
    # (`signoff_apply`: the row update on its version, plus its events, in a single
    # autocommit transaction). A loser re-reads and is refused by the rules.
    def _transition(self, request_id: str, now: float, fn: Callable[[Row], Plan]) -> Plan:
        for _ in range(MAX_CAS_ATTEMPTS):
            with self._pool.connection() as conn:
                cols = conn.execute(PG_SQL["get"], (request_id,)).fetchone()
                if cols is None:
                    raise NotFound(f"no request {request_id!r}")
                row = Row.from_columns(cols)
                plan = fn(row)
                assert plan.row is not None
                entries = self._entries(plan.events, now)
                c = plan.row.columns()
                result = conn.execute(APPLY, (
                    c[0], row.version, c[1], c[7], c[8], c[9], c[10], c[11], now,
                    c[2], [d.kind for d, _ in entries], [e for _, e in entries],
                )).fetchone()
            if result is not None and result[0]:
                if plan.error is not None:
                    raise plan.error
                return plan
        raise ConflictError(f"request {request_id}: gave up after {MAX_CAS_ATTEMPTS} "
                            "concurrent changes")

    def create_request(self, request: Request, *, idempotent: bool = False,
                       ttl_seconds: float | None = None, now: float | None = None) -> Request:
        ts = base.clock(now)
        plan = base.plan_create(request, key=self._key, now=ts, ttl_seconds=ttl_seconds,
                                idempotent=idempotent)
        assert plan.row is not None
        entries, c = self._entries(plan.events, ts), plan.row.columns()
        try:
            with self._pool.connection() as conn:
                conn.execute(CREATE, (*c[:8], ts, [d.kind for d, _ in entries],
                                      [e for _, e in entries]))
        except self._duplicate as exc:
            raise InvalidInput(f"request {c[0]!r} already exists") from exc
        return plan.row.request

    @contextmanager
    def _read(self) -> Iterator[SQLTx]:
        with self._pool.connection() as conn:
            conn.isolation_level = self._psycopg.IsolationLevel.REPEATABLE_READ
            try:
                with conn.transaction():
                    yield SQLTx(conn, "postgres")
            finally:
                conn.isolation_level = None

    def migrate(self) -> list[int]:
        applied_now: list[int] = []
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations "
                         "(version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)")
            done = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
            migrations.check_not_newer(done, "postgres", "PostgreSQL store")
            for version, script in migrations.load("postgres"):
                if version in done:
                    continue
                conn.execute(script)
                conn.execute("INSERT INTO schema_migrations VALUES (%s, %s)",
                             (version, time.time()))
                applied_now.append(version)
        return applied_now

    def wait_for_event(self, timeout: float, after_seq: int | None = None) -> bool:
        """Block until an event after `after_seq` (default: now) is committed, or timeout."""
        with self._listen_lock:
            if self._listener is None:
                self._listener = self._psycopg.connect(self.url, autocommit=True)
                self._listener.execute("LISTEN signoff_events")
            start = self.last_seq() if after_seq is None else after_seq
            deadline = time.monotonic() + timeout
            while self.last_seq() <= start:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                for _ in self._listener.notifies(timeout=left, stop_after=1):
                    break
            return True

    def close(self) -> None:
        with self._listen_lock:
            if self._listener is not None:
                self._listener.close()
                self._listener = None
        self._pool.close()
