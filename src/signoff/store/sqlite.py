"""SQLite backend: the embedded default.

One connection per Store object, guarded by a lock (so a Store may be shared by threads);
any number of processes may open the same file. WAL journal, ``synchronous=FULL`` (every
commit is on disk before it returns), ``BEGIN IMMEDIATE`` for every write, kept short:
the rules run before it (see `Engine._transition`), the transaction only compare-and-sets
the row's version and appends the events. signoff's writers take turns on an OS file lock
(`<db>.lock`, see `_writer_turn`) rather than SQLite's sleeping busy handler, which stays
as the fallback (busy timeout) so writers queue instead of failing. Both waits end at the
same deadline (`waits.lock_wait()`, 10 s by default): a writer stopped while it holds the
lock makes the others give up with one line naming it, never wait as long as it is stopped.
"""

from __future__ import annotations

import _thread  # threading's RLock, without importing threading (a hook's start-up)
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

try:  # the sqlite3 package is this compiled module plus adapters for dates, whose datetime
    import _sqlite3 as sqlite3  # import is a third of opening a store; signoff stores none
except ImportError:  # pragma: no cover - an interpreter without it
    import sqlite3  # type: ignore[no-redef]

from ..exceptions import ConfigurationError
from ..keys import Keys
from ..lazylog import get_logger
from ..plainpath import joined
from ..waits import FileLock, held_too_long, holders, lock_wait
from . import migrations
from .anchor import ANCHOR_EVERY
from .engine import Engine, RowCache
from .sql import SQLTx

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from pathlib import Path

    from .base import Flush
    from .flusher import Flusher

FULL_BELOW = 1 << 20  # bytes free under which a failed write is put down to a full disk
WAL_WRITE_LOCK = 120  # the byte of the -shm file SQLite's writer locks (see its wal.c)
WAL_CHECKPOINT_PAGES = 100
CHECKPOINT_EVERY_COMMITS = 32  # with a flush thread: it checkpoints after this many commits
ROW_CACHE_SIZE = 1024
_LEFT_TO_THE_EXIT: list[sqlite3.Connection] = []  # see SQLiteStore.close(process_ends=True)
log = get_logger(__name__)  # see store.engine for what is logged at which level


class SQLiteStore(Engine):
    _duplicate = (sqlite3.IntegrityError,)

    def __init__(self, path: str | Path, *, migrate: bool = True, keys: Keys | None = None) -> None:
        self.file = joined(path)  # as str(Path(path)) spells it, without pathlib
        if str(path) != ":memory:":
            os.makedirs(os.path.dirname(self.file) or ".", exist_ok=True)
        self._lock = _thread.RLock()
        try:
            self._wait = lock_wait()
            self._conn = sqlite3.connect(
                self.file,
                timeout=self._wait,
                isolation_level=None,
                check_same_thread=False,
                cached_statements=256,
            )
        except sqlite3.Error as exc:
            raise ConfigurationError(f"cannot open SQLite store {self.file}: {exc}") from exc
        try:
            self._open(path, migrate, keys)
        except sqlite3.OperationalError as exc:
            self._conn.close()
            raise self._unusable(exc) from None

    def _unusable(self, exc: sqlite3.OperationalError) -> ConfigurationError:
        """One line naming the store and the cause (a read-only file or directory, a full
        disk, a lock held too long): nothing was written, nothing runs."""
        cause = str(exc)
        if "readonly" in cause or "unable to open" in cause:
            cause += " (is the file, or its directory, read-only?)"
        elif "locked" in cause:  # SQLite's own lock, held by a connection outside our queue
            held = held_too_long(
                "its database lock",
                self.file,
                self._wait,
                holders(f"{self.file}-shm", WAL_WRITE_LOCK),
            )
            return ConfigurationError(f"SQLite store {self.file}: {held}")
        elif "full" in cause or "I/O" in cause:
            cause += self._space_left()
        return ConfigurationError(f"SQLite store {self.file}: {cause}")

    def _space_left(self) -> str:
        """Why a write failed, when it is the disk: SQLite says 'database or disk is full',
        or only 'disk I/O error' when the file it could not grow is its WAL index."""
        try:
            found = os.statvfs(os.path.dirname(self.file) or ".")
        except OSError:
            return ""
        free = found.f_bavail * found.f_frsize
        if free >= FULL_BELOW:
            return ""
        return (
            f" (its disk has {free // 1024} KiB free: free some space; what was recorded "
            "before is kept, and nothing was decided or run)"
        )

    def _open(self, path: str | Path, migrate: bool, keys: Keys | None) -> None:
        self._conn.execute(f"PRAGMA busy_timeout = {int(self._wait * 1000)}")
        self._retry(lambda: self._conn.execute("PRAGMA journal_mode = WAL"))
        self._conn.execute("PRAGMA synchronous = FULL")
        self._sync = "FULL"
        self._flusher: Flusher | None = None  # made by the first `flush="soon"` commit
        self._checkpointer: sqlite3.Connection | None = None  # the flush thread's
        self._since_checkpoint = 0  # commits since the flush thread last checkpointed
        # an in-memory database has no WAL file to flush: every commit is as durable as it gets
        self._can_defer = str(path) != ":memory:"
        # A short WAL keeps short the checkpoint SQLite runs when the last connection closes,
        # which every CLI command and every resuming process pays (pause/resume: -0.5 ms).
        self._conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
        self._tx = SQLTx(self._conn, "sqlite")
        self._turns: FileLock | None = None
        if os.name == "posix" and str(path) != ":memory:":
            try:
                self._turns = FileLock(f"{self.file}.lock", "its write lock")
            except OSError:
                self._turns = None  # e.g. a read-only directory: SQLite's locking alone
        self._rows = RowCache(ROW_CACHE_SIZE)  # see Engine._transition
        if migrate:
            self.migrate()
        if str(path) != ":memory:":
            self._anchor_location = f"sqlite:{os.path.realpath(self.file)}"  # Path.resolve
        self._label = f"SQLite store {self.file}"
        self._load_keys(keys)

    def __repr__(self) -> str:
        return f"SQLiteStore({self.file!r})"

    def _leave_gap(self, seq: int) -> None:
        self._tx.floor = seq  # read by each append (sql.SQLTx.append)

    @property
    def path(self) -> Path:
        """The database file (`file` as a Path)."""
        from pathlib import Path

        return Path(self.file)

    def _retry(self, fn: object) -> None:
        assert callable(fn)
        deadline = time.monotonic() + self._wait
        while True:
            try:
                fn()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                log.debug("SQLite store locked by another process (%s): retrying", exc)
                time.sleep(0.01)

    @contextmanager
    def _write(self, flush: Flush = "now") -> Iterator[SQLTx]:
        """One write transaction. `flush="now"`: on disk when it returns; `"soon"`: in the
        WAL when it returns (it survives this process being killed) and on disk moments
        later, by the background flush (see `flusher`)."""
        with self._lock, self._writer_turn():
            self._check_flushed()
            self._synchronous("NORMAL" if flush == "soon" and self._can_defer else "FULL")
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._tx
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise self._unusable(exc) from None
            if self._sync == "NORMAL":
                self._flusher_for_wal().due()
            if self._flusher is not None:
                self._since_checkpoint += 1

    def _synchronous(self, mode: str) -> None:
        if mode != self._sync:
            self._conn.execute(f"PRAGMA synchronous = {mode}")
            self._sync = mode

    def _flusher_for_wal(self) -> Flusher:
        if self._flusher is None:
            from .flusher import Flusher

            # From now on the WAL is checkpointed and the chain anchored by the flush
            # thread (`_upkeep`), not by whichever commit crosses the line; the
            # connection's own checkpoint stays as a backstop should that thread lag.
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {10 * WAL_CHECKPOINT_PAGES}")
            self._flusher = Flusher(f"{self.file}-wal", upkeep=self._upkeep)
        return self._flusher

    def _upkeep(self) -> None:
        """On the flush thread, after a flush: fold the WAL into the database now and
        then (a passive checkpoint on a connection of its own, which no writer waits
        for) and anchor the chain's head (see keyed)."""
        if self._since_checkpoint >= CHECKPOINT_EVERY_COMMITS:
            self._since_checkpoint = 0
            if self._checkpointer is None:
                self._checkpointer = sqlite3.connect(
                    self.file, timeout=1.0, isolation_level=None, check_same_thread=False
                )
            self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        if self._since_anchor >= ANCHOR_EVERY:
            self._anchor()

    def _maybe_anchor(self) -> None:
        if self._flusher is None:  # with a flush thread, its upkeep anchors
            super()._maybe_anchor()

    def _check_flushed(self) -> None:
        """A background flush that failed: what was written since may be gone, and a store
        that cannot say what is on disk writes nothing more (nothing runs)."""
        failure = self._flusher.failure if self._flusher is not None else None
        if failure is not None:
            raise ConfigurationError(
                f"SQLite store {self.file}: flushing its WAL to disk failed ({failure}); "
                "the last records may be lost, so it takes no more writes: reopen it"
            )

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every commit written with `flush="soon"` is on disk (True), or for
        `timeout` seconds (False)."""
        flusher = self._flusher
        return True if flusher is None else flusher.wait(timeout)

    @contextmanager
    def _writer_turn(self) -> Iterator[None]:
        """Writers of this file queue on an OS lock (`<db>.lock`) before BEGIN IMMEDIATE.

        SQLite's own busy handler polls with sleeps of 1 ms and more, so under contention
        a writer often sleeps long after the lock came free; a blocking `flock` wakes the
        next writer at once. SQLite's locking stays in force (other programs, NFS, a
        platform without flock): this only makes signoff's writers take turns politely.
        """
        if self._turns is None:
            yield
            return
        try:
            self._turns.acquire(self._wait)
        except ConfigurationError as exc:
            raise ConfigurationError(f"SQLite store {self.file}: {exc}") from None
        try:
            yield
        finally:
            self._turns.release()

    @contextmanager
    def _read(self) -> Iterator[SQLTx]:
        # a read transaction: several SELECTs see one snapshot (WAL readers never block)
        with self._lock:
            try:
                self._conn.execute("BEGIN")
                try:
                    yield self._tx
                finally:
                    self._conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                raise self._unusable(exc) from None

    def migrate(self) -> list[int]:
        applied_now: list[int] = []
        with self._read() as tx:  # the common case, an up-to-date file: no write lock
            found = tx.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
            ).fetchone()
            done = (
                [r[0] for r in tx.conn.execute("SELECT version FROM schema_migrations")]
                if found
                else []
            )  # a new file: no schema_migrations yet
        if found and migrations.up_to_date(done, "sqlite"):
            return applied_now
        with self._write() as tx:
            tx.conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
            )
            done = [r[0] for r in tx.conn.execute("SELECT version FROM schema_migrations")]
            migrations.check_not_newer(done, "sqlite", self.file)
            for version, script in migrations.load("sqlite"):
                if version in done:
                    continue
                for statement in migrations.sqlite_statements(script):
                    tx.conn.execute(statement)
                tx.conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?)", (version, time.time())
                )
                applied_now.append(version)
                log.info("SQLite store %s: applied migration %04d", self.file, version)
        return applied_now

    def _erased(self) -> None:
        # the deleted row's bytes may stay in a free page and in the WAL
        with self._lock:
            self._conn.execute("PRAGMA secure_delete = ON")
            self._conn.execute("VACUUM")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self, *, process_ends: bool = False) -> None:
        """Anchor the chain's head and close. The last connection to close folds the WAL
        into the database file (a checkpoint: two fsyncs, and the next process makes a
        new WAL, with a third for its directory): a hook process, which records one
        verdict, would pay three times what its commit cost. So when the process ends
        right after (`process_ends`: os._exit, no interpreter teardown) the connection is
        left for the exit to drop, unclosed: every commit is already on disk in the WAL
        (synchronous=FULL), which is what SQLite reads after a crash too; a WAL over
        `WAL_CHECKPOINT_PAGES` is checkpointed by the next commit, and the next process
        that closes last (any other command) checkpoints the rest. Should the process go
        on after all, its teardown closes the connection, checkpoint included."""
        self._anchor()
        with self._lock:
            if self._flusher is not None:  # what was written "soon" goes to disk first
                self._flusher.close()
                self._flusher = None
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None
            if process_ends:
                _LEFT_TO_THE_EXIT.append(self._conn)
            else:
                self._conn.close()
            if self._turns is not None:
                self._turns.close()
                self._turns = None
