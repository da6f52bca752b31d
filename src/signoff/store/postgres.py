"""PostgreSQL backend: the multi-process, multi-server store.

psycopg 3 with a `psycopg_pool.ConnectionPool`. Request transitions are optimistic: read
the row (or use this store's copy of its current version), apply the rules in Python,
then ONE call (`signoff_commit_transition`, migration 0005) compare-and-sets the row on
its version and appends the events. Events are hash-chained in the server: the update of
the chain-head row serializes appends, ``NOTIFY signoff_events, '<seq>'`` goes out with
them. Because a row lock is held until its commit is on disk, an appending transaction
commits asynchronously and a second, tiny one waits for the flush, so appenders never
queue behind each other's disk writes and concurrent callers share flushes; a call
returns only once its change is durable. `wait_for_event` LISTENs on its own connection.

Set the schema with the URL, e.g. ``postgresql://host/db?options=-csearch_path%3Dmine``.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from ..exceptions import ConfigurationError, StoreUnavailable
from ..keys import Keys
from ..waits import LOCK_WAIT_ENV, LockTimeout, lock_wait
from . import migrations
from .base import Draft, Plan, Row

if TYPE_CHECKING:
    from .base import Flush
from .engine import Engine, RowCache
from .sql import PG_SQL, SQLTx

# the pool logs each failed attempt to stderr, which a CLI would print under its own error
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())

CONNECTION_WAIT_S = 5.0  # a busy pool is served well within this; a dead server is not
POOL_WAIT_LOG_S = 0.05  # a wait for a pooled connection this long is logged (debug)
log = logging.getLogger(__name__)  # see store.engine for what is logged at which level
MIGRATION_LOCK = 0x5190FF  # pg_advisory_xact_lock key held while migrating
ROW_CACHE_SIZE = 1024
# with events: commit asynchronously, then flush (see migration 0005); without: one commit
APPLY = "CALL signoff_commit_transition(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, NULL)"
CREATE = "CALL signoff_commit_insert(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
APPLY_UNAUDITED = "SELECT signoff_transition(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
CREATE_UNAUDITED = "SELECT signoff_insert(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
ASYNC_COMMIT = "SET LOCAL synchronous_commit = off"
FLUSH = "SELECT pg_logical_emit_message(true, 'signoff', '')"
LOCK_NOT_AVAILABLE = "55P03"  # lock_timeout passed
INSUFFICIENT_RESOURCES, DISK_FULL = "53", "53100"  # SQLSTATE class 53, and its disk_full
OLDEST_TRANSACTION = (
    "SELECT pid, application_name, coalesce(host(client_addr), 'a local socket'), state, "
    "extract(epoch FROM now() - xact_start) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid() "
    "AND xact_start IS NOT NULL AND backend_type = 'client backend' "
    "ORDER BY xact_start LIMIT 1"
)


def session(psycopg: Any, url: str, wait: float) -> dict[str, Any]:
    """How each pooled connection is opened: autocommit, named after this process (so a
    lock it holds can be traced to it), and waiting at most `wait` for any lock (a row, the
    chain's end, the migration lock) before failing with SQLSTATE 55P03. The URL's own
    options (a search_path) are kept."""
    options = psycopg.conninfo.conninfo_to_dict(url).get("options") or ""
    return {
        "autocommit": True,
        "fallback_application_name": f"signoff pid {os.getpid()}",
        "options": f"{options} -c lock_timeout={int(wait * 1000)}".strip(),
    }


def _without_password(url: str) -> str:
    """The URL as the anchor's location: a password is no part of where the store is."""
    return re.sub(r"^([a-z]+://[^:/@]*):[^@/]*@", r"\1@", url)


def _joined(entries: list[tuple[Draft, str]]) -> tuple[str, str]:
    """Kinds and entries as newline-joined texts: canonical JSON never holds a raw newline
    (json.dumps escapes it) and kinds are checked for it, so the split is exact."""
    return "\n".join(d.kind for d, _ in entries), "\n".join(e for _, e in entries)


class PostgresStore(Engine):
    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        min_size: int = 1,
        max_size: int = 8,
        keys: Keys | None = None,
    ) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigurationError(
                "PostgreSQL support needs psycopg 3 and psycopg_pool: "
                "pip install 'signoff[postgres]'"
            ) from exc
        self.url = url
        self._where = _without_password(url)
        self._psycopg = psycopg
        self._duplicate = (psycopg.errors.UniqueViolation,)
        self._listener: Any = None
        self._listener_stale = False  # set when the pool met an outage (see _listening)
        self._rows = RowCache(ROW_CACHE_SIZE)  # see Engine._transition
        self._cursors: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self._cursors_lock = threading.Lock()
        self._listen_lock = threading.Lock()
        self._wait = lock_wait()
        self._check_lock = threading.Lock()
        self._pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs=session(psycopg, url, self._wait),
            open=True,
            name="signoff",
        )
        try:
            self._wait_for_pool(psycopg, url)
        except Exception as exc:
            self._pool.close()
            raise ConfigurationError(
                f"cannot reach the PostgreSQL store {self._where}: {' '.join(str(exc).split())}"
            ) from None
        try:
            if migrate:
                self.migrate()
            self._anchor_location = "postgres:" + self._where
            self._label = f"PostgreSQL store {self._where}"
            self._load_keys(keys)
        except BaseException:
            self._pool.close()
            raise

    def __repr__(self) -> str:
        return "PostgresStore(…)"

    def _leave_gap(self, seq: int) -> None:
        # the server numbers entries from the chain-head row: move its number on, keep
        # its hash (the last entry present), so the next entry links over the gap
        try:
            with self._connection() as conn:
                conn.execute(
                    "UPDATE signoff_chain SET seq = %s WHERE id = 1 AND seq < %s", (seq, seq)
                )
        except (self._psycopg.Error, ConfigurationError) as exc:
            log.warning("%s: could not leave the gap (%s)", self._label, exc)

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """A pooled connection; a server that went away is one clear error after a few
        seconds (StoreUnavailable; fail closed: nothing runs on it), not a 30 s wait and a
        traceback. The pool reconnects on its own once the server is back; the idle
        connections a restart broke are checked and replaced at the first such error, so
        they do not fail one call each afterwards."""
        from psycopg_pool import PoolTimeout

        asked = time.monotonic()
        try:
            with self._pool.connection(timeout=CONNECTION_WAIT_S) as conn:
                waited = time.monotonic() - asked
                if waited >= POOL_WAIT_LOG_S:
                    log.debug(
                        "waited %.3f s for a pooled connection to %s (a pool of at most %d)",
                        waited,
                        self._where,
                        self._pool.max_size,
                    )
                yield conn
        except PoolTimeout as exc:
            log.info("no pooled connection to %s within %g s", self._where, CONNECTION_WAIT_S)
            raise StoreUnavailable(
                f"PostgreSQL store {self._where}: no connection within "
                f"{CONNECTION_WAIT_S:g} s (is the server down?): "
                f"{' '.join(str(exc).split())}"
            ) from None
        except (self._psycopg.OperationalError, self._psycopg.InterfaceError) as exc:
            state = getattr(exc, "sqlstate", None) or ""
            if state == LOCK_NOT_AVAILABLE:
                raise LockTimeout(
                    f"PostgreSQL store {self._where}: a lock it needed (a request's row, the "
                    f"audit chain's end) was held for more than {self._wait:g} s"
                    f"{self._oldest_transaction()}, so nothing was written "
                    f"(${LOCK_WAIT_ENV} sets how long to wait)"
                ) from None
            if state.startswith(INSUFFICIENT_RESOURCES):  # its disk, memory, connections
                primary = getattr(exc.diag, "message_primary", None) or str(exc)
                full = " (its disk is full: free some space there)" if state == DISK_FULL else ""
                raise ConfigurationError(
                    f"PostgreSQL store {self._where}: the server refused the write: "
                    f"{' '.join(primary.split())}{full}; what was recorded before is kept, "
                    "and nothing was decided or run"
                ) from None
            if state and not state.startswith(("08", "57P")):
                raise  # serialization, deadlock, a cancelled query: not the server gone
            self._check_pool()
            self._listener_stale = True  # the same outage broke it: LISTEN anew
            raise StoreUnavailable(
                f"PostgreSQL store {self._where}: {' '.join(str(exc).split())}"
            ) from None

    def _oldest_transaction(self) -> str:
        """Who most likely holds the lock that timed out: the database's oldest open
        transaction but ours ('' when that cannot be asked)."""
        try:
            with self._pool.connection(timeout=1.0) as conn:
                row = conn.execute(OLDEST_TRANSACTION).fetchone()
        except Exception:  # the answer is a courtesy: the refusal stands without it
            return ""
        if row is None:
            return ""
        pid, name, client, state, seconds = row
        return (
            f"; the oldest open transaction is server process {pid} ({name or 'unnamed'}, "
            f"from {client}, {state} for {float(seconds):.0f} s)"
        )

    def _check_pool(self) -> None:
        """Drop the pool's idle connections that no longer work (a restart broke them all
        at once); the pool opens new ones, with its own backoff while the server is down."""
        with self._check_lock:
            try:
                self._pool.check()
            except Exception as exc:  # a closed pool: the caller's error says enough
                log.debug("checking the pool of %s: %s", self._where, exc)

    def _wait_for_pool(self, psycopg: Any, url: str) -> None:
        """Ready in a second, the usual case; otherwise one direct attempt names what is
        wrong (refused, unknown host, no such database, bad password) at once, where the
        pool would retry quietly for 10 s and then say only that it gave up. A server that
        is reachable but slow to accept gets the rest of the 10 s.

        Readiness is polled from the pool's own figures, not `pool.wait()`: that closes
        the pool when it times out, so a slow server made every later call fail with
        "the pool 'signoff' is already closed" (and borrowing instead would make the pool
        open a second connection for the waiting client)."""
        if self._pool_ready(1.0):
            return
        log.info("the PostgreSQL pool for %s is not ready after 1 s: trying directly", self._where)
        psycopg.connect(url, connect_timeout=10).close()  # raises with the cause
        log.info("%s is reachable, only slow to accept: waiting up to 9 s more", self._where)
        if not self._pool_ready(9.0):  # reachable, only slow: give it the rest
            raise ConfigurationError("the server accepted no pooled connection in 10 s")

    def _pool_ready(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self._pool.get_stats().get("pool_available", 0) >= 1:
                return True
            time.sleep(0.01)
        return False

    @contextmanager
    def _write(self, flush: Flush = "now") -> Iterator[SQLTx]:
        # A transaction that appended events holds the chain-head lock until it commits:
        # it commits asynchronously and then waits for a flush (as migration 0005 explains).
        # `flush="soon"` does not wait: the server's WAL writer flushes it within
        # `wal_writer_delay` (200 ms by default), and any later durable commit first.
        with self._connection() as conn:
            tx = SQLTx(conn, "postgres")
            with conn.transaction():
                yield tx
                if tx.appended or flush == "soon":
                    conn.execute(ASYNC_COMMIT)
            if tx.appended and flush == "now":
                conn.execute(FLUSH)

    # The hot path: a transition is one call (`signoff_commit_transition`: compare-and-set
    # on the row's version plus its events in one transaction, then the flush), after a
    # read of the row only when this store holds no copy of its current version (see
    # Engine._transition).
    def _apply(self, row: Row, plan: Plan, entries: list[tuple[Draft, str]], now: float) -> bool:
        assert plan.row is not None
        c = plan.row.columns()
        with self._connection() as conn:
            cur = self._cursor(conn)
            cur.execute(
                APPLY if entries else APPLY_UNAUDITED,
                (
                    c[0],
                    row.version,
                    c[1],
                    c[7],
                    c[8],
                    c[9],
                    c[10],
                    c[11],
                    now,
                    c[2],
                    *_joined(entries),
                ),
            )
            result = cur.fetchone()
        return bool(result is not None and result[0])

    def _request_columns(self, request_id: str) -> Sequence[Any] | None:
        with self._connection() as conn:  # one statement: no transaction needed
            cur = self._cursor(conn)
            cur.execute(PG_SQL["get"], (request_id,))
            row: Sequence[Any] | None = cur.fetchone()
        return row

    def _cursor(self, conn: Any) -> Any:
        """A cursor kept with its pooled connection (a new one per call costs more)."""
        with self._cursors_lock:
            cur = self._cursors.get(conn)
            if cur is None or cur.closed:
                cur = self._cursors[conn] = conn.cursor()
        return cur

    def _insert(self, cols: Sequence[Any], entries: list[tuple[Draft, str]], ts: float) -> None:
        with self._connection() as conn:  # one call: insert, events, commit, flush
            self._cursor(conn).execute(
                CREATE if entries else CREATE_UNAUDITED, (*cols[:8], ts, *_joined(entries))
            )

    @contextmanager
    def _read(self) -> Iterator[SQLTx]:
        with self._connection() as conn:
            conn.isolation_level = self._psycopg.IsolationLevel.REPEATABLE_READ
            try:
                with conn.transaction():
                    yield SQLTx(conn, "postgres")
            finally:
                try:
                    conn.isolation_level = None
                except self._psycopg.Error:  # cut off mid-query (Ctrl-C, the server gone):
                    conn.close()  # the pool discards it; never reused at this level

    def migrate(self) -> list[int]:
        applied_now: list[int] = []
        with self._connection() as conn:  # up to date: no lock, no transaction
            found = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
            if found is not None and found[0] is not None:
                done = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
                if migrations.up_to_date(done, "postgres"):
                    return applied_now
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            )
            done = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
            migrations.check_not_newer(done, "postgres", "PostgreSQL store")
            for version, script in migrations.load("postgres"):
                if version in done:
                    continue
                conn.execute(script)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (%s, %s)", (version, time.time())
                )
                applied_now.append(version)
                log.info("PostgreSQL store %s: applied migration %04d", self._where, version)
        return applied_now

    def wait_for_event(self, timeout: float, after_seq: int | None = None) -> bool:
        """Block until an event after `after_seq` (default: now) is committed, or timeout.

        The LISTEN connection is this store's own. When the server goes away it is closed
        and StoreUnavailable raised; the next call connects and LISTENs again (what was
        notified meanwhile is not lost: the wait compares sequence numbers)."""
        with self._listen_lock, self._listener_errors():
            listener = self._listening()  # before the reads: a later event NOTIFYs it
            start = self.last_seq() if after_seq is None else after_seq
            deadline = time.monotonic() + timeout
            while self.last_seq() <= start:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                for _ in listener.notifies(timeout=left, stop_after=1):
                    break
            return True

    @contextmanager
    def _listener_errors(self) -> Iterator[None]:
        """The LISTEN connection failing: dropped (the next wait makes it anew), and one
        StoreUnavailable (listen lock held)."""
        try:
            yield
        except (self._psycopg.OperationalError, self._psycopg.InterfaceError) as exc:
            self._drop_listener()
            raise StoreUnavailable(
                f"PostgreSQL store {self._where}: listening for events: "
                f"{' '.join(str(exc).split())}"
            ) from None

    def _listening(self) -> Any:
        """The LISTEN connection, made (and LISTENing) if there is none, or if the pool
        met an outage since it was made (listen lock held)."""
        if self._listener_stale:
            self._listener_stale = False
            self._drop_listener()
        if self._listener is None:
            conn = self._psycopg.connect(
                self.url, autocommit=True, connect_timeout=int(CONNECTION_WAIT_S)
            )
            try:
                conn.execute("LISTEN signoff_events")
            except BaseException:
                conn.close()
                raise
            self._listener = conn
        return self._listener

    def _drop_listener(self) -> None:
        if self._listener is not None:
            with suppress(Exception):
                self._listener.close()
            self._listener = None

    def close(self, *, process_ends: bool = False) -> None:
        try:
            self._anchor()
        finally:
            with self._listen_lock:
                self._drop_listener()
            self._pool.close()
