"""SQLite backend: the embedded default.

One connection per Store object, guarded by a lock (so a Store may be shared by threads);
any number of processes may open the same file. WAL journal, ``synchronous=FULL`` (every
commit is on disk before it returns), ``BEGIN IMMEDIATE`` for every write (the write lock
is taken before the row is read, so read-check-write is a real compare-and-set) and a
busy timeout so writers queue instead of failing.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..exceptions import ConfigurationError
from . import migrations
from .engine import Engine, RowCache
from .sql import SQLTx

BUSY_TIMEOUT_S = 30.0
ROW_CACHE_SIZE = 1024


class SQLiteStore(Engine):
    _duplicate = (sqlite3.IntegrityError,)
    def __init__(self, path: str | Path, *, migrate: bool = True) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None,
                check_same_thread=False, cached_statements=256,
            )
        except sqlite3.Error as exc:
            raise ConfigurationError(f"cannot open SQLite store {self.path}: {exc}") from exc
        self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        self._retry(lambda: self._conn.execute("PRAGMA journal_mode = WAL"))
        self._conn.execute("PRAGMA synchronous = FULL")
        self._tx = SQLTx(self._conn, "sqlite")
        self._rows = RowCache(ROW_CACHE_SIZE)  # see Engine._transition
        if migrate:
            self.migrate()
        self._load_key()

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    @staticmethod
    def _retry(fn: object) -> None:
        assert callable(fn)
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                fn()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    @contextmanager
    def _write(self) -> Iterator[SQLTx]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._tx
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[SQLTx]:
        # a read transaction: several SELECTs see one snapshot (WAL readers never block)
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield self._tx
            finally:
                self._conn.execute("COMMIT")

    def migrate(self) -> list[int]:
        applied_now: list[int] = []
        with self._write() as tx:
            tx.conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations "
                            "(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
            done = [r[0] for r in tx.conn.execute("SELECT version FROM schema_migrations")]
            migrations.check_not_newer(done, "sqlite", str(self.path))
            for version, script in migrations.load("sqlite"):
                if version in done:
                    continue
                for statement in migrations.sqlite_statements(script):
                    tx.conn.execute(statement)
                tx.conn.execute("INSERT INTO schema_migrations VALUES (?, ?)",
                                (version, time.time()))
                applied_now.append(version)
        return applied_now

    def close(self) -> None:
        with self._lock:
            self._conn.close()
